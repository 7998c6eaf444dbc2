package mcpclient

// The tests in this file use httptest servers for wire behaviours and
// faults that no real MCP server produces on request: event streams that
// end before the response and cannot be resumed, resumptions refused with
// 404, bodies larger than the client's caps, duplicated members, an
// initialize that hangs. Everything else is tested against real servers.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"
)

// rpcMsg is what the hostile server read of a request.
type rpcMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

// hostile is an httptest MCP server: it answers initialize and
// notifications like a stateful server (session ids "h-1", "h-2", …)
// unless handle takes the request, and records every request.
type hostile struct {
	srv *httptest.Server

	mu   sync.Mutex
	reqs []hostileReq
}

type hostileReq struct {
	httpMethod, rpcMethod, session, lastEventID, auth string
}

func newHostile(t *testing.T, handle func(w http.ResponseWriter, r *http.Request, m rpcMsg) bool) *hostile {
	h := &hostile{}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m rpcMsg
		if r.Method == http.MethodPost {
			if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&m); err != nil {
				http.Error(w, "bad json", http.StatusBadRequest)
				return
			}
		}
		h.mu.Lock()
		h.reqs = append(h.reqs, hostileReq{r.Method, m.Method, r.Header.Get("Mcp-Session-Id"), r.Header.Get("Last-Event-ID"), r.Header.Get("Authorization")})
		h.mu.Unlock()
		if handle(w, r, m) {
			return
		}
		switch {
		case m.Method == "initialize":
			w.Header().Set("Mcp-Session-Id", fmt.Sprintf("h-%d", h.count(http.MethodPost, "initialize")))
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"hostile","version":"0"}}}`, m.ID)
		case strings.HasPrefix(m.Method, "notifications/"), r.Method == http.MethodDelete:
			w.WriteHeader(http.StatusAccepted)
		default:
			http.Error(w, "unexpected request", http.StatusTeapot)
		}
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hostile) count(httpMethod, rpcMethod string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, r := range h.reqs {
		if r.httpMethod == httpMethod && r.rpcMethod == rpcMethod {
			n++
		}
	}
	return n
}

func (h *hostile) requests() []hostileReq {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]hostileReq(nil), h.reqs...)
}

// primeAndClose answers a POST with an event stream holding only a
// priming event (an id, a retry delay in milliseconds, empty data) and
// ends it: the server asks the client to resume.
func primeAndClose(w http.ResponseWriter, retryMS int) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fmt.Fprintf(w, "id: ev-1\nretry: %d\ndata:\n\n", retryMS)
}

func emptyStream(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
}

// resumeLoopServer ends every stream before the response; after
// giveUpAfter resumption GETs it answers 500, so that a client without a
// bound of its own still returns and the test can report the count.
func resumeLoopServer(t *testing.T, retryMS, giveUpAfter int) *hostile {
	var gets atomic.Int32
	return newHostile(t, func(w http.ResponseWriter, r *http.Request, m rpcMsg) bool {
		switch {
		case m.Method == "tools/call":
			primeAndClose(w, retryMS)
		case r.Method == http.MethodGet:
			if int(gets.Add(1)) > giveUpAfter {
				http.Error(w, "enough", http.StatusInternalServerError)
				return true
			}
			emptyStream(w)
		default:
			return false
		}
		return true
	})
}

func TestStreamResumesAreBounded(t *testing.T) {
	h := resumeLoopServer(t, 10, 50)
	c := dial(t, h.srv.URL)
	res, err := c.Call(context.Background(), "get", nil)
	assert.Nil(t, res)
	require.ErrorIs(t, err, ErrOutcomeUnknown)
	assert.Equal(t, KindOutcomeUnknown, Classify(err))
	oe, ok := errors.AsType[*OutcomeUnknownError](err)
	require.True(t, ok, "err = %v (%T)", err, err)
	assert.Equal(t, "get", oe.Tool)
	assert.Equal(t, maxResumes, oe.Resumes)
	assert.Equal(t, maxResumes, h.count(http.MethodGet, ""), "resumption GETs")
	assert.Equal(t, 1, h.count(http.MethodPost, "tools/call"), "the accepted call was sent again")
	assert.Equal(t, 1, h.count(http.MethodPost, "initialize"))
	for _, r := range h.requests() {
		if r.httpMethod == http.MethodGet {
			assert.Equal(t, "ev-1", r.lastEventID)
			assert.Equal(t, "h-1", r.session)
		}
	}
	assert.Equal(t, 1+maxResumes, c.Usage().Calls, "each resumption counts as a call")
}

func TestStreamResumesCountAgainstTheBudget(t *testing.T) {
	for _, maxCalls := range []int{1, 2} {
		t.Run(fmt.Sprint(maxCalls), func(t *testing.T) {
			h := resumeLoopServer(t, 1, 50)
			c := dial(t, h.srv.URL, WithBudget(Budget{MaxCalls: maxCalls, MaxBytes: 64 << 10}))
			_, err := c.Call(context.Background(), "get", nil)
			require.ErrorIs(t, err, ErrOutcomeUnknown)
			assert.ErrorIs(t, err, ErrBudgetExceeded)
			assert.Equal(t, KindOutcomeUnknown, Classify(err))
			assert.Equal(t, maxCalls-1, h.count(http.MethodGet, ""), "resumption GETs")
			assert.Equal(t, maxCalls, c.Usage().Calls)
		})
	}
}

func TestStreamResumeDelayIsBounded(t *testing.T) {
	h := resumeLoopServer(t, 3_600_000, 50)
	c := dial(t, h.srv.URL)
	_, err := c.Call(context.Background(), "get", nil)
	require.ErrorIs(t, err, ErrOutcomeUnknown)
	assert.Contains(t, err.Error(), "1h0m0s")
	assert.Equal(t, 0, h.count(http.MethodGet, ""))
}

func TestStreamResumedToTheResponse(t *testing.T) {
	var gets atomic.Int32
	var callID json.RawMessage
	h := newHostile(t, func(w http.ResponseWriter, r *http.Request, m rpcMsg) bool {
		switch {
		case m.Method == "tools/call":
			callID = m.ID
			w.Header().Set("Content-Type", "text/event-stream")
			// An unfinished event at the end of the stream, then a
			// resumption that first sends a notification.
			fmt.Fprint(w, "id: ev-1\nretry: 1\ndata:\n\nevent: message\n")
		case r.Method == http.MethodGet:
			if gets.Add(1) == 1 {
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprint(w, "id: ev-2\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n")
				return true
			}
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "id: ev-3\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}]}}\n\n", callID)
		default:
			return false
		}
		return true
	})
	c := dial(t, h.srv.URL, WithTokenSource(oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "tok"})))
	res, err := c.Call(t.Context(), "get", nil)
	require.NoError(t, err)
	assert.Equal(t, "ok", res.Text())
	var ids []string
	for _, r := range h.requests() {
		assert.Equal(t, "Bearer tok", r.auth, "%s %s", r.httpMethod, r.rpcMethod)
		if r.httpMethod == http.MethodGet {
			ids = append(ids, r.lastEventID)
		}
	}
	assert.Equal(t, []string{"ev-1", "ev-2"}, ids)
}

func TestAcceptedCallIsNeverSentAgain(t *testing.T) {
	for _, status := range []int{http.StatusNotFound, http.StatusBadRequest} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			h := newHostile(t, func(w http.ResponseWriter, r *http.Request, m rpcMsg) bool {
				switch {
				case m.Method == "tools/call":
					primeAndClose(w, 1)
				case r.Method == http.MethodGet:
					http.Error(w, "session not found: no valid session", status)
				default:
					return false
				}
				return true
			})
			c := dial(t, h.srv.URL)
			_, err := c.Call(context.Background(), "transfer", nil)
			require.ErrorIs(t, err, ErrOutcomeUnknown)
			assert.NotErrorIs(t, err, ErrSessionExpired)
			assert.Equal(t, KindOutcomeUnknown, Classify(err))
			se, ok := errors.AsType[*StatusError](err)
			require.True(t, ok, "err = %v", err)
			assert.Equal(t, status, se.StatusCode)
			assert.Equal(t, 1, h.count(http.MethodPost, "tools/call"), "the accepted call was sent again")
			assert.Equal(t, 1, h.count(http.MethodPost, "initialize"), "a resumption's status was read as session expiry")
			assert.Equal(t, "h-1", c.SessionID())
		})
	}
}

// A stream that breaks off (here: ends inside a line) after the server
// took the call is an unknown outcome too, never a reason to send again.
func TestStreamBrokenAfterAcceptIsOutcomeUnknown(t *testing.T) {
	h := newHostile(t, func(w http.ResponseWriter, r *http.Request, m rpcMsg) bool {
		if m.Method != "tools/call" {
			return false
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "id: ev-1\ndata: {\"jsonrpc\":")
		return true
	})
	c := dial(t, h.srv.URL)
	_, err := c.Call(t.Context(), "transfer", nil)
	require.ErrorIs(t, err, ErrOutcomeUnknown)
	assert.Equal(t, 1, h.count(http.MethodPost, "tools/call"))
	assert.Equal(t, 0, h.count(http.MethodGet, ""))
}

// countingDialer counts the bytes the client reads from its connections.
type countingDialer struct{ n atomic.Int64 }

type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.n.Add(int64(n))
	return n, err
}

func (d *countingDialer) client() *http.Client {
	return &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			var nd net.Dialer
			conn, err := nd.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return countingConn{conn, &d.n}, nil
		},
	}}
}

func TestByteCapsAreExact(t *testing.T) {
	const slack = 8 << 10 // headers and one read buffer
	for _, tc := range []struct {
		name  string
		body  int
		opts  []Option
		want  error
		limit int64
	}{
		{"budget", 2 << 20, []Option{WithBudget(Budget{MaxBytes: 1 << 20})}, ErrBudgetExceeded, 1 << 20},
		{"default-cap", 10 << 20, nil, ErrResponseTooLarge, DefaultMaxResponseBytes},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHostile(t, func(w http.ResponseWriter, r *http.Request, m rpcMsg) bool {
				if m.Method != "tools/call" {
					return false
				}
				head := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"`, m.ID)
				tail := `"}]}}`
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Content-Length", fmt.Sprint(len(head)+tc.body+len(tail)))
				_, _ = io.WriteString(w, head)
				chunk := strings.Repeat("x", 64<<10)
				for i := 0; i < tc.body; i += len(chunk) {
					if _, err := io.WriteString(w, chunk[:min(len(chunk), tc.body-i)]); err != nil {
						return true // the client hung up, as it should
					}
				}
				_, _ = io.WriteString(w, tail)
				return true
			})
			var d countingDialer
			c := dial(t, h.srv.URL, append(tc.opts, WithHTTPClient(d.client()))...)
			before := d.n.Load()
			_, err := c.Call(t.Context(), "big", nil)
			read := d.n.Load() - before
			require.ErrorIs(t, err, tc.want)
			assert.LessOrEqual(t, read, tc.limit+slack, "bytes read from the server for a %d-byte body", tc.body)
			t.Logf("read %d bytes of a %d-byte body under a %d-byte limit", read, tc.body, tc.limit)
		})
	}
}

// rawCall serves tools/call with body (%s is replaced by the request id).
func rawCall(t *testing.T, body string) *hostile {
	return newHostile(t, func(w http.ResponseWriter, r *http.Request, m rpcMsg) bool {
		if m.Method != "tools/call" {
			return false
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, strings.ReplaceAll(body, "%s", string(m.ID)))
		return true
	})
}

func TestProtocolErrorDataIsExact(t *testing.T) {
	const data = `{"n":12345678901234567890, "s":"\u00e9"}`
	h := rawCall(t, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32000,"message":"backend refused","data":`+data+`}}`)
	c := dial(t, h.srv.URL)
	_, err := c.Call(t.Context(), "get", nil)
	pe, ok := errors.AsType[*ProtocolError](err)
	require.True(t, ok, "err = %v", err)
	assert.Equal(t, data, string(pe.Data))
	assert.Equal(t, -32000, pe.Code)
	assert.Equal(t, KindProtocol, Classify(err))
}

func TestDuplicatedMembersAreMalformed(t *testing.T) {
	const ok = `{"content":[{"type":"text","text":"data"}]}`
	const bad = `{"content":[{"type":"text","text":"failed"}],"isError":true}`
	const rpcErr = `{"code":-32603,"message":"boom"}`
	for _, tc := range []struct {
		name    string
		body    string
		isError bool
	}{
		{"isError-true-false", `{"jsonrpc":"2.0","id":%s,"result":{"content":[],"isError":true,"isError":false}}`, true},
		{"isError-false-true", `{"jsonrpc":"2.0","id":%s,"result":{"content":[],"isError":false,"isError":true}}`, true},
		{"isError-spellings", `{"jsonrpc":"2.0","id":%s,"result":{"content":[],"isError":true,"IsError":false}}`, true},
		{"content-twice", `{"jsonrpc":"2.0","id":%s,"result":{"content":[],"content":[{"type":"text","text":"x"}]}}`, false},
		{"result-bad-ok", `{"jsonrpc":"2.0","id":%s,"result":` + bad + `,"result":` + ok + `}`, false},
		{"result-ok-bad", `{"jsonrpc":"2.0","id":%s,"result":` + ok + `,"result":` + bad + `}`, false},
		{"result-spellings", `{"jsonrpc":"2.0","id":%s,"result":` + bad + `,"Result":` + ok + `}`, false},
		{"error-then-result", `{"jsonrpc":"2.0","id":%s,"error":` + rpcErr + `,"result":` + ok + `}`, false},
		{"result-then-error", `{"jsonrpc":"2.0","id":%s,"result":` + ok + `,"error":` + rpcErr + `}`, false},
		{"error-twice", `{"jsonrpc":"2.0","id":%s,"error":` + rpcErr + `,"error":{"code":1,"message":"x"}}`, false},
		{"id-twice", `{"jsonrpc":"2.0","id":999,"id":%s,"result":` + ok + `}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, rawCall(t, tc.body).srv.URL)
			res, err := c.Call(t.Context(), "get", nil)
			assert.Nil(t, res)
			me, ok := errors.AsType[*MalformedResultError](err)
			require.True(t, ok, "err = %v (%T)", err, err)
			assert.Equal(t, "get", me.Tool)
			assert.Equal(t, tc.isError, me.IsError)
			assert.Equal(t, tc.isError, errors.Is(err, ErrToolFailed))
			assert.Equal(t, KindMalformedResult, Classify(err))
		})
	}
}

func TestReconnectDoesNotHoldTheClientLock(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	// The first initialize (Dial) goes through; the second blocks until
	// the test releases it.
	var inits atomic.Int32
	blocking := newHostile(t, func(w http.ResponseWriter, r *http.Request, m rpcMsg) bool {
		switch {
		case m.Method == "tools/call":
			http.Error(w, "session not found", http.StatusNotFound)
			return true
		case m.Method == "initialize" && inits.Add(1) == 2:
			close(entered)
			select {
			case <-release:
			case <-r.Context().Done():
			}
			http.Error(w, "gone", http.StatusServiceUnavailable)
			return true
		}
		return false
	})
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	c := dial(t, blocking.srv.URL)
	first := c.SessionID()
	errc := make(chan error, 1)
	go func() {
		_, err := c.Call(context.Background(), "get", nil)
		errc <- err
	}()
	<-entered
	// The re-initialization is now in flight on the server.
	require.True(t, c.mu.TryLock(), "the client lock is held during the re-initialize round trip")
	c.mu.Unlock()
	assert.Equal(t, first, c.SessionID())
	assert.Contains(t, c.String(), "session=true")
	require.NoError(t, c.Close())
	err := <-errc
	assert.ErrorIs(t, err, ErrClosed)
	assert.Equal(t, KindClosed, Classify(err))
}

func TestStatusErrorKeepsHeaderAndExcerpt(t *testing.T) {
	long := strings.Repeat("é", 300) // 600 bytes: the excerpt must cut between runes
	h := newHostile(t, func(w http.ResponseWriter, r *http.Request, m rpcMsg) bool {
		if m.Method != "tools/call" {
			return false
		}
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource"`)
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, "x"+long+"\n\n")
		return true
	})
	c := dial(t, h.srv.URL)
	_, err := c.Call(t.Context(), "get", nil)
	se, ok := errors.AsType[*StatusError](err)
	require.True(t, ok, "err = %v", err)
	assert.Equal(t, http.StatusForbidden, se.StatusCode)
	assert.Contains(t, se.Header.Get("WWW-Authenticate"), "resource_metadata")
	assert.Equal(t, "x"+long+"\n\n", string(se.Body))
	msg := err.Error()
	assert.True(t, utf8.ValidString(msg), "Error() is not valid UTF-8: %q", msg)
	assert.NotContains(t, msg, "\n")
	assert.True(t, strings.HasSuffix(msg, "…"), "Error() = %q", msg)
	assert.Contains(t, msg, `tool "get"`)
	assert.Equal(t, KindForbidden, Classify(err))
}

// recorder is a slog.Handler that keeps every record.
type recorder struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (r *recorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, rec.Clone())
	return nil
}
func (r *recorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *recorder) WithGroup(string) slog.Handler      { return r }

// mcp-go logs the broken stream; through WithLogger its records arrive at
// debug level with the error under "error". Without WithLogger nothing
// reaches slog.Default.
func TestLogsOnlyThroughWithLogger(t *testing.T) {
	h := newHostile(t, func(w http.ResponseWriter, r *http.Request, m rpcMsg) bool {
		if m.Method != "tools/call" {
			return false
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "id: ev-1\ndata: {\"jsonrpc\":")
		return true
	})
	def := &recorder{}
	old := slog.Default()
	slog.SetDefault(slog.New(def))
	t.Cleanup(func() { slog.SetDefault(old) })

	c := dial(t, h.srv.URL)
	_, err := c.Call(t.Context(), "get", nil)
	require.ErrorIs(t, err, ErrOutcomeUnknown)
	require.NoError(t, c.Close())
	assert.Empty(t, def.recs, "records reached slog.Default without WithLogger")

	var rec recorder
	c = dial(t, h.srv.URL, WithLogger(slog.New(&rec)))
	_, err = c.Call(t.Context(), "get", nil)
	require.ErrorIs(t, err, ErrOutcomeUnknown)
	require.NoError(t, c.Close())
	rec.mu.Lock()
	defer rec.mu.Unlock()
	require.NotEmpty(t, rec.recs, "mcp-go's record of the broken stream")
	for _, r := range rec.recs {
		assert.Equal(t, slog.LevelDebug, r.Level, r.Message)
		r.Attrs(func(a slog.Attr) bool {
			assert.NotEqual(t, "err", a.Key, r.Message)
			return true
		})
	}
	assert.Empty(t, def.recs)
}
