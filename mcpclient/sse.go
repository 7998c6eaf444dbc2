package mcpclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Bounds of stream resumption. A server may end the event stream of a
// request before the response, after an event with an id, and expect the
// client to resume it with a GET carrying Last-Event-ID, after the delay
// of the stream's retry field. The client does so at most maxResumes times
// per request, and not at all when the server asks to wait longer than
// maxResumeDelay: then the request fails with an *OutcomeUnknownError.
const (
	maxResumes         = 3
	defaultResumeDelay = time.Second
	maxResumeDelay     = 30 * time.Second
)

// resumePolicy holds the bounds above (a field of wire, so that they are
// read in one place).
type resumePolicy struct {
	max                    int
	defaultDelay, maxDelay time.Duration
}

var defaultResumePolicy = resumePolicy{max: maxResumes, defaultDelay: defaultResumeDelay, maxDelay: maxResumeDelay}

// sseStream is the event stream answering one POST, as mcp-go reads it.
// It passes the bytes through unchanged while parsing them; when the
// server ends the stream before the response, it resumes it itself (a GET
// with Last-Event-ID, bounded in number and delay, each counted against the
// budget as a call and for its bytes) and splices the new stream in, so
// that mcp-go never runs its own unbounded resumption loop. It returns
// io.EOF only after the response event; a stream that cannot deliver one
// fails with an *OutcomeUnknownError.
type sseStream struct {
	w      *wire
	budget *budget // the budget of the request's caller
	ctx    context.Context
	post   *http.Request
	p      sseParser

	mu      sync.Mutex // guards cur and closed against a concurrent Close
	cur     io.ReadCloser
	closed  bool
	resumes int
	newline bool // write "\n" first: the last stream ended inside an event
	eof     bool // cur has ended
	err     error
}

func (s *sseStream) Read(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	if s.newline {
		s.newline = false
		p[0] = '\n'
		return 1, nil
	}
	for {
		if s.eof {
			if err := s.ended(); err != nil {
				s.err = err
				return 0, err
			}
			if s.newline {
				s.newline = false
				p[0] = '\n'
				return 1, nil
			}
		}
		s.mu.Lock()
		cur := s.cur
		s.mu.Unlock()
		n, err := cur.Read(p)
		if n > 0 {
			s.p.feed(p[:n])
		}
		switch {
		case err == io.EOF:
			s.eof = true
		case err != nil:
			switch {
			case s.p.seen:
				// The response is in hand: mcp-go closes the body once it
				// has it, which fails a read still waiting for the end of
				// the stream. A read that fails after the response says
				// nothing about the call: this is no unknown outcome.
				s.err = err
			case s.ctx.Err() != nil || errors.Is(err, ErrBudgetExceeded):
				s.err = err // the context ended, or the budget cut the body off
			default:
				s.err = s.unknown("the event stream broke off before the response", err)
			}
			if n > 0 {
				return n, nil
			}
			return 0, s.err
		}
		if n > 0 {
			return n, nil
		}
	}
}

// ended handles the end of the current stream: nil when the stream goes on
// (a resumption was spliced in), io.EOF after the response, or the error.
func (s *sseStream) ended() error {
	s.p.finish()
	switch {
	case s.p.seen:
		return io.EOF
	case s.p.partial:
		return s.unknown("the event stream ended inside a line", nil)
	case s.p.lastID == "":
		return s.unknown("the event stream ended without a response or an event id to resume from", nil)
	}
	if err := s.resumeStream(); err != nil {
		return err
	}
	s.eof = false
	if s.p.pending {
		s.newline = true // mcp-go has the fields of an unfinished event: end it there
	}
	s.p.restart()
	return nil
}

func (s *sseStream) unknown(reason string, cause error) error {
	return &OutcomeUnknownError{Reason: reason, Resumes: s.resumes, Err: cause}
}

// resumeStream waits the delay the server asked for and reopens the
// stream from the last event id.
func (s *sseStream) resumeStream() error {
	pol := s.w.resume
	if s.resumes >= pol.max {
		return s.unknown(fmt.Sprintf("the event stream ended without a response and the client resumes it at most %d times", pol.max), nil)
	}
	delay := pol.defaultDelay
	if s.p.hasRetry {
		delay = s.p.retry
	}
	if delay > pol.maxDelay {
		return s.unknown(fmt.Sprintf("the server asked to wait %v before resuming the event stream, more than the %v the client waits", delay, pol.maxDelay), nil)
	}
	t := time.NewTimer(delay)
	select {
	case <-t.C:
	case <-s.ctx.Done():
		t.Stop()
		return context.Cause(s.ctx)
	}
	s.resumes++
	if err := s.budget.takeCall(); err != nil {
		return s.unknown("the budget does not allow resuming the event stream", err)
	}
	if err := s.budget.spent(); err != nil {
		return s.unknown("the budget does not allow resuming the event stream", err)
	}
	req, err := http.NewRequestWithContext(s.ctx, http.MethodGet, s.post.URL.String(), nil)
	if err != nil {
		return s.unknown("cannot build the resumption request", err)
	}
	for _, h := range []string{"Mcp-Session-Id", "Mcp-Protocol-Version"} {
		if v := s.post.Header.Get(h); v != "" {
			req.Header.Set(h, v)
		}
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Last-Event-ID", s.p.lastID)
	if req, _, err = s.w.authorize(req); err != nil {
		return s.unknown("cannot authorize the resumption request", err)
	}
	resp, err := s.w.base.RoundTrip(req)
	if err != nil {
		if s.ctx.Err() != nil {
			return context.Cause(s.ctx)
		}
		return s.unknown("the resumption request failed", err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		// Whatever the status, even 404, it says nothing about whether the
		// accepted request ran: it is never read as session expiry.
		data := s.w.readErrorBody(resp, s.budget)
		se := &StatusError{StatusCode: resp.StatusCode, Header: resp.Header.Clone(), Body: data, method: "GET (resume)"}
		return s.unknown("the server refused to resume the event stream", se)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		resp.Body.Close()
		return s.unknown(fmt.Sprintf("the resumed stream has content type %q", resp.Header.Get("Content-Type")), nil)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		resp.Body.Close()
		return errors.New("mcpclient: event stream closed")
	}
	_ = s.cur.Close()
	s.cur = &meter{rc: resp.Body, budget: s.budget}
	return nil
}

func (s *sseStream) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return s.cur.Close()
}

// sseParser follows an event stream as mcp-go reads it: lines end with
// "\n" (a trailing "\r" is dropped), a blank line dispatches the event and
// commits its id, data lines are joined with "\n". It records the last
// committed id, the retry field and whether the response event was seen.
type sseParser struct {
	line     []byte
	data     []byte
	id       string
	hasID    bool
	lastID   string
	retry    time.Duration
	hasRetry bool
	pending  bool // field lines since the last blank line
	partial  bool // the stream ended inside a line
	seen     bool

	onResponse func(data []byte)
}

func (p *sseParser) feed(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			p.line = append(p.line, b...)
			return
		}
		if len(p.line) > 0 {
			p.line = append(p.line, b[:i]...)
			p.handle(p.line)
			p.line = p.line[:0]
		} else {
			p.handle(b[:i])
		}
		b = b[i+1:]
	}
}

func (p *sseParser) handle(line []byte) {
	line = bytes.TrimRight(line, "\r\n")
	if len(line) == 0 {
		if p.hasID {
			p.lastID = p.id
		}
		p.hasID, p.pending = false, false
		p.dispatch()
		return
	}
	p.pending = true
	switch {
	case bytes.HasPrefix(line, []byte("data:")):
		v := bytes.TrimPrefix(line[5:], []byte(" "))
		if len(p.data) > 0 {
			p.data = append(p.data, '\n')
		}
		p.data = append(p.data, v...)
	case bytes.HasPrefix(line, []byte("id:")):
		if v := bytes.TrimPrefix(line[3:], []byte(" ")); bytes.IndexByte(v, 0) < 0 {
			p.id, p.hasID = string(v), true
		}
	case bytes.HasPrefix(line, []byte("retry:")):
		v := string(bytes.TrimPrefix(line[6:], []byte(" ")))
		if ms, err := strconv.ParseUint(v, 10, 31); err == nil {
			p.retry, p.hasRetry = time.Duration(ms)*time.Millisecond, true
		}
	}
}

// dispatch ends an event: mcp-go takes the first event whose data is a
// JSON-RPC response as the response.
func (p *sseParser) dispatch() {
	if len(p.data) > 0 && !p.seen && isResponse(p.data) {
		p.seen = true
		if p.onResponse != nil {
			p.onResponse(bytes.Clone(p.data))
		}
	}
	p.data = p.data[:0]
}

// finish handles the end of a stream as mcp-go does: a partial line is
// dropped, pending data is dispatched, the id of the unfinished event is
// not committed.
func (p *sseParser) finish() {
	p.partial = len(p.line) > 0
	p.line = p.line[:0]
	p.dispatch()
}

// restart begins a new stream (a resumption): the last id and the retry
// delay carry over.
func (p *sseParser) restart() {
	p.hasID, p.pending, p.partial = false, false, false
}
