package mcpclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/oauth2"
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
// whatever mcp-go makes of it afterwards: the HTTP status, a bounded copy of
// a non-2xx body, and a cap that cut the body off.
type exchange struct {
	mu      sync.Mutex
	status  int
	errBody []byte
	cut     error
}

type exchangeKey struct{}

func withExchange(ctx context.Context, ex *exchange) context.Context {
	return context.WithValue(ctx, exchangeKey{}, ex)
}

func (ex *exchange) set(status int, body []byte) {
	if ex == nil {
		return
	}
	ex.mu.Lock()
	ex.status, ex.errBody = status, body
	ex.mu.Unlock()
}

func (ex *exchange) setCut(err error) {
	if ex == nil {
		return
	}
	ex.mu.Lock()
	if ex.cut == nil {
		ex.cut = err
	}
	ex.mu.Unlock()
}

func (ex *exchange) snapshot() (status int, body []byte, cut error) {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	return ex.status, ex.errBody, ex.cut
}

// wire is the http.RoundTripper under the mcp-go transport of one session.
// It adds the bearer to every request (mcp-go's own DELETE on Close
// included), bounds and counts every response body, and records statuses.
type wire struct {
	base    http.RoundTripper
	tokens  oauth2.TokenSource
	origin  *url.URL
	maxBody int64
	budget  *budget

	// outcome of the DELETE that mcp-go sends on Close (it has no context
	// of ours, so it is recorded here).
	mu        sync.Mutex
	delStatus int
	delBody   []byte
	delErr    error
}

func (w *wire) RoundTrip(req *http.Request) (*http.Response, error) {
	ex, _ := req.Context().Value(exchangeKey{}).(*exchange)
	resp, err := w.roundTrip(req, ex)
	if req.Method == http.MethodDelete {
		w.mu.Lock()
		w.delErr = err
		if resp != nil {
			w.delStatus = resp.StatusCode
		}
		w.mu.Unlock()
	}
	return resp, err
}

func (w *wire) roundTrip(req *http.Request, ex *exchange) (*http.Response, error) {
	// A spent budget stops every request except the DELETE that ends the
	// session, so that the server is not left with it.
	if err := w.budget.spent(); err != nil && req.Method != http.MethodDelete {
		closeBody(req)
		ex.setCut(err)
		return nil, err
	}
	if w.tokens != nil {
		if req.URL.Scheme != w.origin.Scheme || req.URL.Host != w.origin.Host {
			closeBody(req)
			return nil, fmt.Errorf("mcpclient: refusing to send the bearer token to %s://%s", req.URL.Scheme, req.URL.Host)
		}
		tok, err := w.tokens.Token()
		if err != nil {
			closeBody(req)
			err = fmt.Errorf("%w: token source: %w", ErrNoToken, err)
			ex.setCut(err)
			return nil, err
		}
		if tok == nil || tok.AccessToken == "" {
			closeBody(req)
			err := fmt.Errorf("%w: token source returned an empty token", ErrNoToken)
			ex.setCut(err)
			return nil, err
		}
		req = req.Clone(req.Context()) // a RoundTripper must not change the caller's request
		req.Header.Set("Authorization", tok.Type()+" "+tok.AccessToken)
	}
	resp, err := w.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		// Read the error body now, keep at most maxErrorBody (or maxBody if
		// smaller) of it as evidence and hand mcp-go a copy. Its size is
		// never an error of its own: the status is the failure to report.
		// Its bytes count against the budget.
		limit := int64(maxErrorBody)
		if w.maxBody > 0 && w.maxBody < limit {
			limit = w.maxBody
		}
		counted := &cappedBody{rc: resp.Body, budget: w.budget, ex: ex}
		data, rerr := io.ReadAll(io.LimitReader(counted, limit))
		resp.Body.Close()
		if rerr != nil && !errors.Is(rerr, ErrBudgetExceeded) {
			data = append(data, []byte(" [body read failed]")...)
		}
		ex.set(resp.StatusCode, data)
		if req.Method == http.MethodDelete {
			w.mu.Lock()
			w.delBody = data
			w.mu.Unlock()
		}
		resp.Body = io.NopCloser(bytes.NewReader(data))
		return resp, nil
	}
	ex.set(resp.StatusCode, nil)
	resp.Body = &cappedBody{rc: resp.Body, limit: w.maxBody, budget: w.budget, ex: ex}
	return resp, nil
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// cappedBody counts the bytes of a response body against the per-response
// limit and the budget, and fails the read that goes over either.
type cappedBody struct {
	rc     io.ReadCloser
	n      int64
	limit  int64
	budget *budget
	ex     *exchange
	err    error
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.rc.Read(p)
	if n > 0 {
		b.n += int64(n)
		if b.limit > 0 && b.n > b.limit {
			b.err = fmt.Errorf("%w: more than %d bytes", ErrResponseTooLarge, b.limit)
		}
		if berr := b.budget.addBytes(n); berr != nil && b.err == nil {
			b.err = berr
		}
		if b.err != nil {
			b.ex.setCut(b.err)
			return 0, b.err
		}
	}
	return n, err
}

func (b *cappedBody) Close() error { return b.rc.Close() }

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

// noRedirect refuses redirects: a bearer must not follow a redirect to
// another place, and MCP endpoints do not redirect POSTs.
func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
