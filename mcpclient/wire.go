package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/client/transport"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/oauth2"

	"github.com/candorkit/candor/internal/httpx"
	"github.com/candorkit/candor/internal/otelx"
)

// maxErrorBody bounds how much of a non-2xx body is read and kept as
// evidence in a StatusError.
const maxErrorBody = 64 << 10

// budget counts the calls and bytes of a client and enforces WithBudget;
// a zero limit is no limit.
type budget struct {
	limits Budget
	calls  atomic.Int64
	bytes  atomic.Int64
}

func (b *budget) takeCall() error {
	if n := b.calls.Add(1); b.limits.MaxCalls > 0 && n > int64(b.limits.MaxCalls) {
		b.calls.Add(-1)
		return fmt.Errorf("%w: call limit %d reached", ErrBudgetExceeded, b.limits.MaxCalls)
	}
	return nil
}

// spent reports an error when no more bytes may be read.
func (b *budget) spent() error {
	if b.limits.MaxBytes <= 0 {
		return nil
	}
	if used := b.bytes.Load(); used >= b.limits.MaxBytes {
		return fmt.Errorf("%w: %d of %d bytes read", ErrBudgetExceeded, used, b.limits.MaxBytes)
	}
	return nil
}

// room returns how many more bytes may be read, or -1 for no limit.
func (b *budget) room() int64 {
	if b.limits.MaxBytes <= 0 {
		return -1
	}
	return max(b.limits.MaxBytes-b.bytes.Load(), 0)
}

// addBytes counts n bytes read and reports an error once the total goes
// over the limit.
func (b *budget) addBytes(n int) error {
	used := b.bytes.Add(int64(n))
	if b.limits.MaxBytes > 0 && used > b.limits.MaxBytes {
		return fmt.Errorf("%w: read %d bytes, limit %d", ErrBudgetExceeded, used, b.limits.MaxBytes)
	}
	return nil
}

// exchange records, for one JSON-RPC request, what happened on the wire
// whatever mcp-go makes of it afterwards: the status and header of the
// answer to its POST, a bounded copy of a non-2xx body, a cap or failure
// that cut the exchange off, and the response message exactly as received.
type exchange struct {
	mu      sync.Mutex
	status  int
	header  http.Header
	errBody []byte
	cut     error
	raw     []byte // the JSON body, or the data of the response event
	hasRaw  bool
	posted  bool // the request's own POST went out
}

// claim reports whether a POST is the request's own: the first one made
// with the exchange. mcp-go answers a request the server sends on the
// request's event stream (elicitation, sampling, roots) with a POST made
// from the same context; its status and body must not be taken for the
// request's.
func (ex *exchange) claim() bool {
	if ex == nil {
		return false
	}
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if ex.posted {
		return false
	}
	ex.posted = true
	return true
}

type exchangeKey struct{}

func withExchange(ctx context.Context, ex *exchange) context.Context {
	return context.WithValue(ctx, exchangeKey{}, ex)
}

// callEnv is what one caller's requests carry through the context, below
// mcp-go: the budget they count against, the token source of the caller
// (for a Pool) and the caller's extra headers (WithRequestHeader). A zero
// field means the client's own.
type callEnv struct {
	budget  *budget
	tokens  oauth2.TokenSource
	header  http.Header
	subject string // the Subject of a pooled Caller
}

// SubjectFromContext returns the Subject of the Pool's Caller a server
// request came for: in a RequestHandler, the Caller whose call's stream
// carried it, or whose session's standalone stream did. It is "" outside a
// Pool.
func SubjectFromContext(ctx context.Context) string { return envOf(ctx).subject }

type envKey struct{}

func envOf(ctx context.Context) callEnv {
	e, _ := ctx.Value(envKey{}).(callEnv)
	return e
}

func withEnv(ctx context.Context, e callEnv) context.Context {
	return context.WithValue(ctx, envKey{}, e)
}

func (ex *exchange) set(status int, header http.Header, body []byte) {
	if ex == nil {
		return
	}
	ex.mu.Lock()
	ex.status, ex.header, ex.errBody = status, header, body
	ex.mu.Unlock()
}

// fail records the first error that cut the exchange off and returns err.
func (ex *exchange) fail(err error) error {
	if ex == nil {
		return err
	}
	ex.mu.Lock()
	if ex.cut == nil {
		ex.cut = err
	}
	ex.mu.Unlock()
	return err
}

func (ex *exchange) appendRaw(p []byte) {
	if ex == nil {
		return
	}
	ex.mu.Lock()
	ex.raw = append(ex.raw, p...)
	ex.hasRaw = true
	ex.mu.Unlock()
}

// setResponse records the response event of a stream; only the first
// counts, as for mcp-go.
func (ex *exchange) setResponse(data []byte) {
	if ex == nil {
		return
	}
	ex.mu.Lock()
	if !ex.hasRaw {
		ex.raw, ex.hasRaw = data, true
	}
	ex.mu.Unlock()
}

type snapshot struct {
	status  int
	header  http.Header
	errBody []byte
	cut     error
	raw     []byte
	hasRaw  bool
}

func (ex *exchange) snapshot() snapshot {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	return snapshot{ex.status, ex.header, ex.errBody, ex.cut, ex.raw, ex.hasRaw}
}

// wire is the http.RoundTripper under the mcp-go transport of one session.
// It adds the bearer to every request (mcp-go's own DELETE on Close
// included), bounds and counts every response body, records statuses and
// response bytes, and resumes event streams itself, within bounds.
type wire struct {
	base http.RoundTripper
	// tokens is the token source of requests that carry no caller's
	// (mcp-go's DELETE on Close): the client's, or for a pooled session the
	// one its subject used last.
	tokens  atomic.Pointer[tokenSource]
	origin  *url.URL
	maxBody int64
	budget  *budget
	resume  resumePolicy
	listen  bool // the standalone GET stream is allowed (a handler was given)
	auth    Authorizer

	// outcome of the DELETE that mcp-go sends on Close (it has no context
	// of ours, so it is recorded here).
	mu        sync.Mutex
	delStatus int
	delHeader http.Header
	delBody   []byte
	delErr    error
}

// tokenSource boxes a token source for an atomic pointer (nil: no bearer).
type tokenSource struct{ ts oauth2.TokenSource }

func (w *wire) setTokens(ts oauth2.TokenSource) { w.tokens.Store(&tokenSource{ts}) }

// budgetFor returns the budget a request counts against: its caller's, or
// the client's.
func (w *wire) budgetFor(ctx context.Context) *budget {
	if b := envOf(ctx).budget; b != nil {
		return b
	}
	return w.budget
}

func (w *wire) RoundTrip(req *http.Request) (*http.Response, error) {
	ex, _ := req.Context().Value(exchangeKey{}).(*exchange)
	if req.Method == http.MethodPost && !ex.claim() {
		ex = nil // not the request's own POST: record nothing of it
	}
	resp, err := w.roundTrip(req, ex, w.budgetFor(req.Context()))
	if req.Method == http.MethodDelete {
		w.mu.Lock()
		w.delErr = err
		if resp != nil {
			w.delStatus, w.delHeader = resp.StatusCode, resp.Header
		}
		w.mu.Unlock()
	}
	return resp, err
}

// authorize returns req with the caller's headers and the bearer set (a
// clone: a RoundTripper must not change the caller's request), and the
// token it carries (nil: none).
//
// The trace context of the request's context goes in the W3C traceparent
// and tracestate headers (over a caller's header of the same name).
func (w *wire) authorize(req *http.Request) (*http.Request, *oauth2.Token, error) {
	env := envOf(req.Context())
	traced := trace.SpanContextFromContext(req.Context()).IsValid()
	if len(env.header) > 0 || traced {
		req = req.Clone(req.Context())
		for k, vs := range env.header {
			req.Header[k] = append([]string(nil), vs...)
		}
		if traced {
			otelx.Inject(req.Context(), req.Header)
		}
	}
	var (
		tok *oauth2.Token
		err error
	)
	switch ts := env.tokens; {
	case ts != nil:
		tok, err = ts.Token()
	case w.auth != nil:
		tok, err = w.auth.Token(req.Context(), w.origin.String())
		if err == nil && tok == nil {
			return req, nil, nil // not authorized yet: the server's challenge will say how
		}
	default:
		p := w.tokens.Load()
		if p == nil || p.ts == nil {
			return req, nil, nil
		}
		tok, err = p.ts.Token()
	}
	if req.URL.Scheme != w.origin.Scheme || req.URL.Host != w.origin.Host {
		return nil, nil, fmt.Errorf("mcpclient: refusing to send the bearer token to %s://%s", req.URL.Scheme, req.URL.Host)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%w: token source: %w", ErrNoToken, err)
	}
	if tok == nil || tok.AccessToken == "" {
		return nil, nil, fmt.Errorf("%w: token source returned an empty token", ErrNoToken)
	}
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", tok.Type()+" "+tok.AccessToken)
	return req, tok, nil
}

// send makes one HTTP request with the bearer, answering a 401 or 403
// through the client's Authorizer, if any, and sending the request again
// when it says a new token is ready (at most MaxAuthorizeRetries times).
// A refusal is a request the server did not act on, so sending it again
// repeats nothing. The DELETE that ends a session is not re-authorized.
func (w *wire) send(req *http.Request, ex *exchange, bud *budget) (*http.Response, *http.Request, error) {
	areq, sent, err := w.authorize(req)
	if err != nil {
		closeBody(req)
		return nil, nil, ex.fail(err)
	}
	resp, err := w.base.RoundTrip(areq)
	for tries := 0; err == nil && w.auth != nil && req.Method != http.MethodDelete && challenged(resp.StatusCode) && tries < MaxAuthorizeRetries; tries++ {
		data := w.readErrorBody(resp, bud)
		ch := Challenge{Endpoint: w.origin.String(), StatusCode: resp.StatusCode, Header: resp.Header.Clone(), Token: sent}
		if aerr := w.auth.Authorize(req.Context(), ch); aerr != nil {
			return nil, nil, ex.fail(&AuthorizationError{StatusCode: ch.StatusCode, Header: ch.Header, Body: data, Err: aerr})
		}
		next := req.Clone(req.Context())
		if req.Body != nil && req.Body != http.NoBody {
			if req.GetBody == nil {
				return nil, nil, ex.fail(&AuthorizationError{StatusCode: ch.StatusCode, Header: ch.Header, Body: data,
					Err: errors.New("the request body cannot be sent again")})
			}
			if next.Body, err = req.GetBody(); err != nil {
				return nil, nil, ex.fail(err)
			}
		}
		if areq, sent, err = w.authorize(next); err != nil {
			closeBody(next)
			return nil, nil, ex.fail(err)
		}
		resp, err = w.base.RoundTrip(areq)
	}
	return resp, areq, err
}

func (w *wire) roundTrip(req *http.Request, ex *exchange, bud *budget) (*http.Response, error) {
	if req.Method == http.MethodGet && w.listen && req.Header.Get("Last-Event-ID") == "" && ex == nil {
		return w.standalone(req, bud)
	}
	if req.Method == http.MethodGet {
		// mcp-go resumes a stream that ended before its response with a
		// GET carrying Last-Event-ID, without bound. This client resumes
		// streams itself (see sseStream), so a GET from mcp-go means the
		// stream could not be resumed: the request was accepted and its
		// outcome is unknown.
		closeBody(req)
		return nil, ex.fail(&OutcomeUnknownError{Reason: "the event stream ended without a response"})
	}
	// A spent budget stops every request except the DELETE that ends the
	// session, so that the server is not left with it.
	if err := bud.spent(); err != nil && req.Method != http.MethodDelete {
		closeBody(req)
		return nil, ex.fail(err)
	}
	resp, areq, err := w.send(req, ex, bud)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		data := w.readErrorBody(resp, bud)
		ex.set(resp.StatusCode, resp.Header.Clone(), data)
		if req.Method == http.MethodDelete {
			w.mu.Lock()
			w.delBody = data
			w.mu.Unlock()
		}
		resp.Body = io.NopCloser(strings.NewReader(string(data)))
		return resp, nil
	}
	ex.set(resp.StatusCode, nil, nil)
	b := &body{ex: ex, limit: w.maxBody}
	src := &meter{rc: resp.Body, budget: bud}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "text/event-stream" && req.Method == http.MethodPost {
		s := &sseStream{w: w, ctx: areq.Context(), post: areq, cur: src, budget: bud}
		s.p.onResponse = ex.setResponse
		b.src = s
	} else {
		b.capture, b.src = true, src
	}
	b.r = httpx.NewCappedReader(b.src, w.maxBody)
	resp.Body = b
	return resp, nil
}

// standalone sends the GET that opens the session's standalone stream,
// which mcp-go reads for server requests and notifications. Its body is
// capped like any response (WithMaxResponseBytes for each connection of
// the stream; mcp-go reconnects after one that breaks) and counts against
// the client's budget.
func (w *wire) standalone(req *http.Request, bud *budget) (*http.Response, error) {
	if err := bud.spent(); err != nil {
		return nil, err
	}
	resp, _, err := w.send(req, nil, bud)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		data := w.readErrorBody(resp, bud)
		resp.Body = io.NopCloser(strings.NewReader(string(data)))
		return resp, nil
	}
	b := &body{src: &meter{rc: resp.Body, budget: bud}, limit: w.maxBody}
	b.r = httpx.NewCappedReader(b.src, w.maxBody)
	resp.Body = b
	return resp, nil
}

// readErrorBody reads at most maxErrorBody (or maxBody if smaller) of a
// non-2xx body as evidence. Its size is never an error of its own: the
// status is the failure to report. Its bytes count against the budget.
func (w *wire) readErrorBody(resp *http.Response, bud *budget) []byte {
	limit := min(int64(maxErrorBody), w.maxBody)
	m := &meter{rc: resp.Body, budget: bud}
	data, err := io.ReadAll(io.LimitReader(m, limit))
	resp.Body.Close()
	if err != nil && !errors.Is(err, ErrBudgetExceeded) {
		data = append(data, []byte(" [body read failed]")...)
	}
	return data
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// meter counts the bytes of one response body against the budget. It
// never asks its source for more than one byte past what the budget
// allows, and fails the read that goes over.
type meter struct {
	rc     io.ReadCloser
	budget *budget
	err    error
}

func (m *meter) Read(p []byte) (int, error) {
	if m.err != nil {
		return 0, m.err
	}
	if room := m.budget.room(); room >= 0 && int64(len(p)) > room+1 {
		p = p[:room+1]
	}
	n, err := m.rc.Read(p)
	if n > 0 {
		if berr := m.budget.addBytes(n); berr != nil {
			m.err = berr
			return 0, berr
		}
	}
	return n, err
}

func (m *meter) Close() error { return m.rc.Close() }

// body is the response body mcp-go reads from: an exact cap over the
// whole exchange (a stream and its resumptions count as one response),
// the capture of a JSON body, and the record of what cut it off.
type body struct {
	r       *httpx.CappedReader
	src     io.ReadCloser
	ex      *exchange
	limit   int64
	capture bool
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if b.capture && n > 0 {
		b.ex.appendRaw(p[:n])
	}
	if err != nil && err != io.EOF {
		if errors.Is(err, httpx.ErrTooLarge) {
			err = fmt.Errorf("%w: more than %d bytes", ErrResponseTooLarge, b.limit)
		}
		if errors.Is(err, ErrBudgetExceeded) || errors.Is(err, ErrResponseTooLarge) || errors.Is(err, ErrOutcomeUnknown) {
			b.ex.fail(err)
		}
	}
	return n, err
}

func (b *body) Close() error { return b.src.Close() }

// sessionGone reports whether a non-2xx answer to a request that carried a
// session id says the server no longer knows that session: 404, or 400 with
// a body about an unknown/invalid session (TypeScript SDK servers).
func sessionGone(status int, body []byte) bool {
	switch status {
	case http.StatusNotFound:
		return true
	case http.StatusBadRequest:
		b := strings.ToLower(string(body))
		if !strings.Contains(b, "session") {
			return false
		}
		for _, s := range []string{"no valid", "invalid", "unknown", "not found", "expired", "terminated"} {
			if strings.Contains(b, s) {
				return true
			}
		}
	}
	return false
}

// isResponse reports whether mcp-go takes the SSE event data for the
// response to its request: a JSON-RPC message with an id and no method.
func isResponse(data []byte) bool {
	var msg transport.JSONRPCResponse
	if json.Unmarshal(data, &msg) != nil || msg.ID.IsNil() {
		return false
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(data, &fields) == nil {
		if _, ok := fields["method"]; ok {
			var req transport.JSONRPCRequest
			if json.Unmarshal(data, &req) == nil {
				return false // a request from the server
			}
		}
	}
	return true
}
