package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/candorkit/candor/mcpclient/mcptest"
	"golang.org/x/oauth2"
)

// eachServer runs f against every real server implementation.
func eachServer(t *testing.T, f func(t *testing.T, kind mcptest.Kind)) {
	t.Helper()
	for _, kind := range mcptest.Kinds() {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			f(t, kind)
		})
	}
}

func dial(t *testing.T, endpoint string, opts ...Option) *Client {
	t.Helper()
	c, err := Dial(t.Context(), endpoint, opts...)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// switchToken is a token source whose token the test can change.
type switchToken struct {
	mu  sync.Mutex
	tok string
}

func (s *switchToken) Token() (*oauth2.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return &oauth2.Token{AccessToken: s.tok, TokenType: "Bearer"}, nil
}

func (s *switchToken) set(tok string) {
	s.mu.Lock()
	s.tok = tok
	s.mu.Unlock()
}

func TestDialPinsProtocolAndTakesSessionFromInitialize(t *testing.T) {
	eachServer(t, func(t *testing.T, kind mcptest.Kind) {
		srv := mcptest.New(t, kind)
		c := dial(t, srv.URL)
		if got := c.ProtocolVersion(); got != DefaultProtocolVersion {
			t.Fatalf("protocol version = %q, want 2025-11-25", got)
		}
		if c.SessionID() == "" {
			t.Fatal("no session id from initialize")
		}
		if _, err := c.Call(t.Context(), mcptest.ToolEcho, nil); err != nil {
			t.Fatal(err)
		}
		reqs := srv.Requests()
		if len(reqs) != 3 || reqs[0].RPCMethod != "initialize" || reqs[1].RPCMethod != "notifications/initialized" || reqs[2].RPCMethod != "tools/call" {
			t.Fatalf("requests = %+v, want initialize, notifications/initialized, tools/call", reqs)
		}
		for _, r := range reqs[1:] {
			if r.SessionID != c.SessionID() || r.ProtocolVersion != "2025-11-25" {
				t.Errorf("request %s carried session %q version %q, want %q 2025-11-25", r.RPCMethod, r.SessionID, r.ProtocolVersion, c.SessionID())
			}
		}
	})
}

func TestOlderProtocolVersionOnRequest(t *testing.T) {
	eachServer(t, func(t *testing.T, kind mcptest.Kind) {
		srv := mcptest.New(t, kind)
		c := dial(t, srv.URL, WithProtocolVersion("2025-06-18"))
		if got := c.ProtocolVersion(); got != "2025-06-18" {
			t.Fatalf("protocol version = %q", got)
		}
		if _, err := c.Call(t.Context(), mcptest.ToolEcho, nil); err != nil {
			t.Fatal(err)
		}
	})
	if _, err := Dial(t.Context(), "http://127.0.0.1:1/mcp", WithProtocolVersion("2026-07-28")); err == nil {
		t.Fatal("Dial accepted the sessionless 2026-07-28 protocol")
	}
}

func TestWithoutInitializedNotification(t *testing.T) {
	eachServer(t, func(t *testing.T, kind mcptest.Kind) {
		srv := mcptest.New(t, kind)
		c := dial(t, srv.URL, WithoutInitializedNotification())
		if _, err := c.Call(t.Context(), mcptest.ToolEcho, map[string]string{"q": "x"}); err != nil {
			t.Fatal(err)
		}
		if n := len(srv.Calls("notifications/initialized")); n != 0 {
			t.Fatalf("sent %d notifications/initialized, want 0", n)
		}
		if n := len(srv.Requests()); n != 2 {
			t.Fatalf("server saw %d requests, want 2 (initialize, tools/call)", n)
		}
	})
}

func TestCallSuccessAndNilArgs(t *testing.T) {
	eachServer(t, func(t *testing.T, kind mcptest.Kind) {
		c := dial(t, mcptest.New(t, kind).URL)
		res, err := c.Call(t.Context(), mcptest.ToolEcho, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Text(); got != "{}" {
			t.Fatalf("nil args reached the server as %s, want {}", got)
		}
		var nilMap map[string]any
		res, err = c.Call(t.Context(), mcptest.ToolEcho, nilMap)
		if err != nil || res.Text() != "{}" {
			t.Fatalf("typed nil map: %v %v", res, err)
		}
		res, err = c.Call(t.Context(), mcptest.ToolEcho, map[string]any{"productCode": "S10_1949", "n": 12345678901234567})
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		dec := json.NewDecoder(strings.NewReader(string(res.Structured)))
		dec.UseNumber()
		if err := dec.Decode(&got); err != nil || got["n"] != json.Number("12345678901234567") {
			t.Fatalf("structured = %s (%v), want the big integer intact", res.Structured, err)
		}
		if res.IsError || len(res.Content) != 1 || res.Content[0].Type != "text" {
			t.Fatalf("result = %+v", res)
		}
		if _, err := c.Call(t.Context(), mcptest.ToolEcho, []int{1}); err == nil {
			t.Fatal("non-object arguments were sent")
		}
	})
}

func TestIsErrorNeverBecomesData(t *testing.T) {
	eachServer(t, func(t *testing.T, kind mcptest.Kind) {
		c := dial(t, mcptest.New(t, kind).URL)
		res, err := c.Call(t.Context(), mcptest.ToolFail, nil)
		if res != nil {
			t.Fatalf("isError result returned as data: %+v", res)
		}
		var te *ToolError
		if !errors.As(err, &te) {
			t.Fatalf("err = %v (%T), want *ToolError", err, err)
		}
		if te.Tool != mcptest.ToolFail || te.Text != mcptest.FailText || !te.Result.IsError || len(te.Result.Raw) == 0 {
			t.Fatalf("ToolError = %+v", te)
		}
		if !errors.Is(err, ErrToolFailed) {
			t.Fatal("ToolError does not match ErrToolFailed")
		}
		// CallJSON must not try to parse the failure text either.
		v, err := CallJSON[map[string]any](t.Context(), c, mcptest.ToolFail, nil)
		if v != nil || !errors.As(err, &te) {
			t.Fatalf("CallJSON on isError: %v, %v", v, err)
		}
	})
}

func TestGoErrorInHandler(t *testing.T) {
	eachServer(t, func(t *testing.T, kind mcptest.Kind) {
		c := dial(t, mcptest.New(t, kind).URL)
		res, err := c.Call(t.Context(), mcptest.ToolGoError, nil)
		if res != nil || err == nil {
			t.Fatalf("Go error returned as data: %v %v", res, err)
		}
		switch kind {
		case mcptest.MCPGo: // mcp-go answers a JSON-RPC error
			var pe *ProtocolError
			if !errors.As(err, &pe) || pe.Code != -32603 || pe.Tool != mcptest.ToolGoError || !strings.Contains(pe.Message, mcptest.GoErrorText) {
				t.Fatalf("err = %#v, want *ProtocolError -32603", err)
			}
		case mcptest.GoSDK: // go-sdk answers isError
			var te *ToolError
			if !errors.As(err, &te) || !strings.Contains(te.Text, mcptest.GoErrorText) {
				t.Fatalf("err = %#v, want *ToolError", err)
			}
		}
		var pe *ProtocolError
		_, err = c.Call(t.Context(), "no-such-tool", nil)
		if kind == mcptest.MCPGo && !errors.As(err, &pe) {
			t.Fatalf("unknown tool on mcp-go: %v", err)
		}
		if err == nil {
			t.Fatal("unknown tool succeeded")
		}
	})
}

type echoed struct {
	ProductCode string `json:"productCode"`
	Qty         int    `json:"qty"`
}

func TestCallJSON(t *testing.T) {
	eachServer(t, func(t *testing.T, kind mcptest.Kind) {
		c := dial(t, mcptest.New(t, kind).URL)
		got, err := CallJSON[echoed](t.Context(), c, mcptest.ToolEcho, echoed{"S10_1949", 7})
		if err != nil || got != (echoed{"S10_1949", 7}) {
			t.Fatalf("CallJSON = %+v, %v", got, err)
		}

		_, err = CallJSON[echoed](t.Context(), c, mcptest.ToolText, nil)
		var de *DecodeError
		if !errors.As(err, &de) || string(de.Raw) != mcptest.NonJSONText || de.Tool != mcptest.ToolText {
			t.Fatalf("non-JSON text: err = %v, want *DecodeError with the raw text", err)
		}

		list, err := CallJSON[[]int](t.Context(), c, mcptest.ToolEcho, map[string]int{"a": 1})
		if list != nil || !errors.As(err, &de) || string(de.Raw) != `{"a":1}` {
			t.Fatalf("wrong shape: %v, %v", list, err)
		}
	})
}

func TestBearerOnEveryRequestIncludingClose(t *testing.T) {
	eachServer(t, func(t *testing.T, kind mcptest.Kind) {
		srv := mcptest.New(t, kind, mcptest.WithBearer("tok-123"))
		c, err := Dial(t.Context(), srv.URL, WithTokenSource(oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "tok-123"})))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Call(t.Context(), mcptest.ToolEcho, nil); err != nil {
			t.Fatal(err)
		}
		if err := srv.Terminate(c.SessionID()); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Call(t.Context(), mcptest.ToolEcho, nil); err != nil { // re-initializes
			t.Fatal(err)
		}
		if err := c.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		reqs := srv.Requests()
		deletes := 0
		for _, r := range reqs {
			if r.Authorization != "Bearer tok-123" {
				t.Errorf("%s %s carried Authorization %q", r.HTTPMethod, r.RPCMethod, r.Authorization)
			}
			if r.HTTPMethod == http.MethodDelete {
				deletes++
				if r.Status < 200 || r.Status > 299 {
					t.Errorf("DELETE answered %d", r.Status)
				}
			}
		}
		if deletes != 1 || len(srv.Calls("initialize")) != 2 {
			t.Fatalf("requests = %+v, want 2 initialize and 1 DELETE", reqs)
		}
		if _, err := c.Call(t.Context(), mcptest.ToolEcho, nil); !errors.Is(err, ErrClosed) {
			t.Fatalf("call after Close: %v", err)
		}
	})
}

func TestUnauthorizedIsTypedAndNotRetried(t *testing.T) {
	eachServer(t, func(t *testing.T, kind mcptest.Kind) {
		srv := mcptest.New(t, kind, mcptest.WithBearer("right"))
		_, err := Dial(t.Context(), srv.URL, WithTokenSource(oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "wrong"})))
		var se *StatusError
		if !errors.Is(err, ErrUnauthorized) || !errors.As(err, &se) || se.StatusCode != 401 || !strings.Contains(err.Error(), "initialize") || se.Header.Get("WWW-Authenticate") == "" {
			t.Fatalf("Dial with a wrong token: %v", err)
		}
		if strings.Contains(err.Error(), "wrong") {
			t.Fatalf("error text leaks the token: %v", err)
		}
		// The server's body is "unauthorized\n": quoted without the newline.
		if msg := err.Error(); strings.ContainsAny(msg, "\r\n") || !strings.HasSuffix(msg, ": unauthorized") {
			t.Fatalf("Error() = %q, want the trimmed body excerpt", msg)
		}
		if string(se.Body) != "unauthorized\n" || se.Header.Get("WWW-Authenticate") != `Bearer realm="mcptest"` {
			t.Fatalf("StatusError body %q header %v, want them as received", se.Body, se.Header)
		}
		if n := len(srv.Requests()); n != 1 {
			t.Fatalf("server saw %d requests, want 1", n)
		}

		ts := &switchToken{tok: "right"}
		c, err := Dial(t.Context(), srv.URL, WithTokenSource(ts))
		if err != nil {
			t.Fatal(err)
		}
		ts.set("revoked")
		before := len(srv.Calls("tools/call"))
		res, err := c.Call(t.Context(), mcptest.ToolEcho, nil)
		if res != nil || !errors.Is(err, ErrUnauthorized) {
			t.Fatalf("call with a revoked token: %v %v", res, err)
		}
		if n := len(srv.Calls("tools/call")) - before; n != 1 {
			t.Fatalf("401 was retried: %d tools/call", n)
		}
		if n := len(srv.Calls("initialize")); n != 2 {
			t.Fatalf("401 triggered a re-initialize: %d initialize", n)
		}
		// The DELETE of Close carries the (now revoked) bearer and its 401 is reported.
		if err := c.Close(); !errors.Is(err, ErrUnauthorized) {
			t.Fatalf("Close with a revoked token: %v", err)
		}
		reqs := srv.Requests()
		last := reqs[len(reqs)-1]
		if last.HTTPMethod != http.MethodDelete || last.Authorization != "Bearer revoked" {
			t.Fatalf("last request = %+v, want a DELETE with the bearer", last)
		}
	})
}

func TestNoTokenStopsBeforeSending(t *testing.T) {
	srv := mcptest.New(t, mcptest.MCPGo)
	_, err := Dial(t.Context(), srv.URL, WithTokenSource(oauth2.StaticTokenSource(&oauth2.Token{})))
	if !errors.Is(err, ErrNoToken) {
		t.Fatalf("err = %v, want ErrNoToken", err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("server saw %d requests", n)
	}
	if _, err := Dial(t.Context(), "http://mcp.example.com/mcp", WithTokenSource(oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "t"}))); err == nil {
		t.Fatal("Dial agreed to send a bearer over plain http to a remote host")
	}
}

func TestSessionExpiryReinitializesOnce(t *testing.T) {
	for _, ts400 := range []bool{false, true} {
		name := "404"
		var opts []mcptest.Option
		if ts400 {
			name = "400-no-valid-session"
			opts = append(opts, mcptest.WithUnknownSession400())
		}
		t.Run(name, func(t *testing.T) {
			eachServer(t, func(t *testing.T, kind mcptest.Kind) {
				srv := mcptest.New(t, kind, opts...)
				c := dial(t, srv.URL)
				first := c.SessionID()
				if err := srv.Terminate(first); err != nil {
					t.Fatal(err)
				}
				got, err := CallJSON[echoed](t.Context(), c, mcptest.ToolEcho, echoed{"S10_1949", 1})
				if err != nil || got.ProductCode != "S10_1949" {
					t.Fatalf("call after expiry: %+v, %v", got, err)
				}
				if c.SessionID() == first || c.SessionID() == "" {
					t.Fatalf("session id %q after re-initialize, old %q", c.SessionID(), first)
				}
				if n := len(srv.Calls("initialize")); n != 2 {
					t.Fatalf("%d initialize, want 2", n)
				}
				calls := srv.Calls("tools/call")
				wantStatus := http.StatusNotFound
				if ts400 {
					wantStatus = http.StatusBadRequest
				}
				if len(calls) != 2 || calls[0].Status != wantStatus || calls[1].SessionID != c.SessionID() {
					t.Fatalf("tools/call = %+v", calls)
				}
			})
		})
	}
}

func TestBudgetCalls(t *testing.T) {
	eachServer(t, func(t *testing.T, kind mcptest.Kind) {
		srv := mcptest.New(t, kind)
		c := dial(t, srv.URL, WithBudget(Budget{MaxCalls: 2}))
		for range 2 {
			if _, err := c.Call(t.Context(), mcptest.ToolEcho, nil); err != nil {
				t.Fatal(err)
			}
		}
		res, err := c.Call(t.Context(), mcptest.ToolEcho, nil)
		if res != nil || !errors.Is(err, ErrBudgetExceeded) {
			t.Fatalf("third call: %v %v", res, err)
		}
		if n := len(srv.Calls("tools/call")); n != 2 {
			t.Fatalf("server saw %d calls, want 2", n)
		}
		if u := c.Usage(); u.Calls != 2 || u.Bytes <= 0 {
			t.Fatalf("usage = %+v", u)
		}
	})
}

func TestBudgetBytes(t *testing.T) {
	eachServer(t, func(t *testing.T, kind mcptest.Kind) {
		srv := mcptest.New(t, kind)
		c := dial(t, srv.URL, WithBudget(Budget{MaxBytes: 20_000}))
		if _, err := c.Call(t.Context(), mcptest.ToolBig, map[string]int{"bytes": 1000}); err != nil {
			t.Fatal(err)
		}
		res, err := c.Call(t.Context(), mcptest.ToolBig, map[string]int{"bytes": 50_000})
		if res != nil || !errors.Is(err, ErrBudgetExceeded) {
			t.Fatalf("over budget: %v, %v", res, err)
		}
		if u := c.Usage(); u.Bytes <= 20_000 || u.Bytes > 20_000+64<<10 {
			t.Fatalf("usage = %+v, want just over the limit", u)
		}
		before := len(srv.Requests())
		if _, err := c.Call(t.Context(), mcptest.ToolEcho, nil); !errors.Is(err, ErrBudgetExceeded) {
			t.Fatalf("call after budget spent: %v", err)
		}
		if n := len(srv.Requests()) - before; n != 0 {
			t.Fatalf("a spent budget still sent %d requests", n)
		}
		// Ending the session is still allowed.
		if err := c.Close(); err != nil {
			t.Fatalf("Close after the budget is spent: %v", err)
		}
		reqs := srv.Requests()
		if last := reqs[len(reqs)-1]; last.HTTPMethod != http.MethodDelete {
			t.Fatalf("last request %+v, want DELETE", last)
		}
	})
}

func TestMaxResponseBytes(t *testing.T) {
	eachServer(t, func(t *testing.T, kind mcptest.Kind) {
		c := dial(t, mcptest.New(t, kind).URL, WithMaxResponseBytes(8_000))
		res, err := c.Call(t.Context(), mcptest.ToolBig, map[string]int{"bytes": 20_000})
		if res != nil || !errors.Is(err, ErrResponseTooLarge) {
			t.Fatalf("oversized body: %v, %v", res, err)
		}
		if !strings.Contains(err.Error(), `"big"`) {
			t.Fatalf("error does not name the tool: %v", err)
		}
		if _, err := c.Call(t.Context(), mcptest.ToolBig, map[string]int{"bytes": 100}); err != nil {
			t.Fatalf("a small body after a large one: %v", err)
		}
	})
}

func TestContextCancel(t *testing.T) {
	eachServer(t, func(t *testing.T, kind mcptest.Kind) {
		srv := mcptest.New(t, kind)
		c := dial(t, srv.URL)
		ctx, cancel := context.WithCancel(t.Context())
		go func() {
			<-srv.Entered()
			cancel()
		}()
		res, err := c.Call(ctx, mcptest.ToolBlock, nil)
		if res != nil || !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled call: %v, %v", res, err)
		}
		done, stop := context.WithCancel(t.Context())
		stop()
		if _, err := c.Call(done, mcptest.ToolEcho, nil); !errors.Is(err, context.Canceled) {
			t.Fatalf("call with a cancelled context: %v", err)
		}
		if _, err := c.Call(t.Context(), mcptest.ToolEcho, nil); err != nil {
			t.Fatalf("client unusable after a cancel: %v", err)
		}
		if err := c.Close(); err != nil { // waits for notifications/cancelled
			t.Fatal(err)
		}
		if n := len(srv.Calls("notifications/cancelled")); n != 1 {
			t.Fatalf("%d notifications/cancelled, want 1 (for the blocked call only)", n)
		}
	})
}

func TestConcurrentCallsShareOneReinitialize(t *testing.T) {
	eachServer(t, func(t *testing.T, kind mcptest.Kind) {
		srv := mcptest.New(t, kind)
		c := dial(t, srv.URL)
		if err := srv.Terminate(c.SessionID()); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for i := range 8 {
			wg.Go(func() {
				got, err := CallJSON[map[string]int](t.Context(), c, mcptest.ToolEcho, map[string]int{"i": i})
				if err == nil && got["i"] != i {
					err = errors.New("answer of another call")
				}
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		if n := len(srv.Calls("initialize")); n != 2 {
			t.Fatalf("%d initialize for one expiry, want 2 in all", n)
		}
	})
}

// tokenFunc is an oauth2.TokenSource made of a function.
type tokenFunc func() (*oauth2.Token, error)

func (f tokenFunc) Token() (*oauth2.Token, error) { return f() }

// A re-initialization that fails (here the token source fails for the
// initialize request only) must not leave the client stuck on a session the
// server ended: mcp-go then refuses to send anything on the old transport
// without an HTTP request, and the next call has to re-initialize.
func TestFailedReinitializeIsRetriedByTheNextCall(t *testing.T) {
	eachServer(t, func(t *testing.T, kind mcptest.Kind) {
		srv := mcptest.New(t, kind)
		var failAfter atomic.Int32 // the Token call that fails, counting down; 0 = none
		ts := tokenFunc(func() (*oauth2.Token, error) {
			if failAfter.Load() > 0 && failAfter.Add(-1) == 0 {
				return nil, errors.New("identity provider unavailable")
			}
			return &oauth2.Token{AccessToken: "tok-123"}, nil
		})
		c := dial(t, srv.URL, WithTokenSource(ts))
		if err := srv.Terminate(c.SessionID()); err != nil {
			t.Fatal(err)
		}
		failAfter.Store(2) // the tools/call gets its token, the initialize after the 404 does not
		if res, err := c.Call(t.Context(), mcptest.ToolEcho, nil); res != nil || !errors.Is(err, ErrNoToken) {
			t.Fatalf("call whose re-initialize fails: %v, %v", res, err)
		}
		got, err := CallJSON[echoed](t.Context(), c, mcptest.ToolEcho, echoed{"S10_1949", 2})
		if err != nil || got.Qty != 2 {
			t.Fatalf("next call after a failed re-initialize: %+v, %v", got, err)
		}
		if n := len(srv.Calls("initialize")); n != 2 {
			t.Fatalf("%d initialize reached the server, want 2", n)
		}
	})
}

// A non-2xx body larger than WithMaxResponseBytes is evidence, not a reason
// to hide the status: a 401 stays ErrUnauthorized.
func TestSmallResponseCapKeepsTheStatus(t *testing.T) {
	eachServer(t, func(t *testing.T, kind mcptest.Kind) {
		srv := mcptest.New(t, kind, mcptest.WithBearer("right"))
		_, err := Dial(t.Context(), srv.URL, WithMaxResponseBytes(8),
			WithTokenSource(oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "wrong"})))
		var se *StatusError
		if !errors.Is(err, ErrUnauthorized) || !errors.As(err, &se) || se.StatusCode != http.StatusUnauthorized || len(se.Body) != 8 {
			t.Fatalf("Dial with a wrong token and an 8-byte cap: %v", err)
		}
	})
}

// The production failure, without isError: the tool answers the upstream's
// error object as plain data. Decoded into a product it would be an empty
// product with a nil error; it must be a *DecodeError keeping the payload.
func TestCallJSONRefusesAnObjectWithNoFieldOfT(t *testing.T) {
	eachServer(t, func(t *testing.T, kind mcptest.Kind) {
		c := dial(t, mcptest.New(t, kind).URL)
		for _, args := range []any{map[string]string{"detail": "Not found."}, map[string]any{}} {
			got, err := CallJSON[echoed](t.Context(), c, mcptest.ToolEcho, args)
			var de *DecodeError
			if !errors.As(err, &de) || got != (echoed{}) || !strings.Contains(err.Error(), "none of the fields") {
				t.Fatalf("%v: %+v, %v; want a *DecodeError", args, got, err)
			}
			want, _ := json.Marshal(args)
			if string(de.Raw) != string(want) {
				t.Fatalf("Raw = %s, want %s", de.Raw, want)
			}
			if p, err := CallJSON[*echoed](t.Context(), c, mcptest.ToolEcho, args); p != nil || !errors.As(err, &de) {
				t.Fatalf("%v as *echoed: %v, %v", args, p, err)
			}
		}
		// A field present with its zero value is data.
		got, err := CallJSON[echoed](t.Context(), c, mcptest.ToolEcho, map[string]any{"productCode": "", "qty": 0})
		if err != nil || got != (echoed{}) {
			t.Fatalf("zero fields sent explicitly: %+v, %v", got, err)
		}
		// Maps and raw JSON take any object.
		if m, err := CallJSON[map[string]string](t.Context(), c, mcptest.ToolEcho, map[string]string{"detail": "x"}); err != nil || m["detail"] != "x" {
			t.Fatalf("map: %v, %v", m, err)
		}
	})
}

// valueTokenSource is a token source held by value, as a caller may write
// one: printing anything that holds it must not print its token.
type valueTokenSource struct{ tok string }

func (v valueTokenSource) Token() (*oauth2.Token, error) {
	return &oauth2.Token{AccessToken: v.tok}, nil
}

func TestClientFormattingHidesTheTokenSource(t *testing.T) {
	const secret = "bearer-secret-value-123"
	srv := mcptest.New(t, mcptest.MCPGo)
	c := dial(t, srv.URL, WithTokenSource(valueTokenSource{secret}))
	var logs strings.Builder
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	logger.Info("client", "c", c)
	out := []string{logs.String()}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		out = append(out, fmt.Sprintf(verb, c))
	}
	for _, s := range out {
		if strings.Contains(s, secret) || strings.Contains(s, c.SessionID()) {
			t.Fatalf("a rendering of *Client shows the token or the session id: %q", s)
		}
	}
	if s := fmt.Sprint(c); !strings.Contains(s, srv.URL) || !strings.Contains(s, "session=true") {
		t.Fatalf("String() = %q, want the endpoint and that a session is held", s)
	}
}
