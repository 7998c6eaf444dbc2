package mcpclient

// Tests in this file use httptest servers only to reproduce specific wire
// behaviours that real peers were seen to produce (docs/mcpclient.md) and
// that the real test servers cannot be made to produce: a response with
// another JSON-RPC id, malformed results as sent by other SDKs, a session
// that keeps expiring, an oversized error body.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"golang.org/x/oauth2"
)

type fakeMCP struct {
	srv *httptest.Server

	mu      sync.Mutex
	methods []string
	auth    []string
}

// newFakeMCP answers initialize and notifications like a stateful server
// and hands tools/call (and DELETE, as method "DELETE") to call.
func newFakeMCP(t *testing.T, call func(w http.ResponseWriter, id json.RawMessage)) *fakeMCP {
	f := &fakeMCP{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if r.Method == http.MethodPost {
			if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&msg); err != nil {
				http.Error(w, "bad json", http.StatusBadRequest)
				return
			}
		} else {
			msg.Method = r.Method
		}
		f.mu.Lock()
		f.methods = append(f.methods, msg.Method)
		f.auth = append(f.auth, r.Header.Get("Authorization"))
		f.mu.Unlock()
		switch {
		case msg.Method == "initialize":
			w.Header().Set("Mcp-Session-Id", fmt.Sprintf("fake-%d", f.count("initialize")))
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"fake","version":"0"}}}`, msg.ID)
		case strings.HasPrefix(msg.Method, "notifications/"):
			w.WriteHeader(http.StatusAccepted)
		default:
			call(w, msg.ID)
		}
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeMCP) count(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, m := range f.methods {
		if m == method {
			n++
		}
	}
	return n
}

func writeResult(w http.ResponseWriter, id json.RawMessage, result string) {
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, id, result)
}

func TestResponseIDMismatchIsAnError(t *testing.T) {
	f := newFakeMCP(t, func(w http.ResponseWriter, id json.RawMessage) {
		writeResult(w, json.RawMessage(`"someone-else"`), `{"content":[{"type":"text","text":"{\"stock\":12}"}]}`)
	})
	c := dial(t, f.srv.URL)
	res, err := c.Call(t.Context(), "get", nil)
	if res != nil || !errors.Is(err, ErrIDMismatch) {
		t.Fatalf("mismatched id: %v, %v", res, err)
	}
}

func TestMalformedResultKeepsRawAndIsError(t *testing.T) {
	for _, tc := range []struct {
		result  string
		isError bool
	}{
		{`{"content":[{"text":"HTTP call failed with status 404"}],"isError":true}`, true},
		{`{"content":[{"type":"text","text":"failed"}],"isError":"true"}`, true},
		{`{"isError":true}`, true},
		{`{"content":[{"type":"text"}]}`, false},
		{`{"content":null,"structuredContent":{"a":1}}`, false},
		{`[1,2]`, false},
	} {
		f := newFakeMCP(t, func(w http.ResponseWriter, id json.RawMessage) { writeResult(w, id, tc.result) })
		c := dial(t, f.srv.URL)
		res, err := c.Call(t.Context(), "get", nil)
		var me *MalformedResultError
		if res != nil || !errors.As(err, &me) {
			t.Fatalf("%s: %v, %v", tc.result, res, err)
		}
		if string(me.Raw) != tc.result || me.IsError != tc.isError || me.Tool != "get" {
			t.Fatalf("%s: error = %+v", tc.result, me)
		}
		if errors.Is(err, ErrToolFailed) != tc.isError {
			t.Fatalf("%s: errors.Is(ErrToolFailed) = %t", tc.result, !tc.isError)
		}
		if _, err := CallJSON[map[string]any](t.Context(), c, "get", nil); !errors.As(err, &me) {
			t.Fatalf("%s: CallJSON: %v", tc.result, err)
		}
	}
}

func TestSessionExpiringTwiceIsReturned(t *testing.T) {
	f := newFakeMCP(t, func(w http.ResponseWriter, id json.RawMessage) {
		http.Error(w, "session not found", http.StatusNotFound)
	})
	c := dial(t, f.srv.URL)
	res, err := c.Call(t.Context(), "get", nil)
	var se *StatusError
	if res != nil || !errors.Is(err, ErrSessionExpired) || !errors.As(err, &se) || se.StatusCode != 404 {
		t.Fatalf("call = %v, %v", res, err)
	}
	if f.count("initialize") != 2 || f.count("tools/call") != 2 {
		t.Fatalf("methods = %v, want 2 initialize and 2 tools/call", f.methods)
	}
}

func TestErrorBodiesAreBounded(t *testing.T) {
	big := strings.Repeat("e", 1<<20)
	f := newFakeMCP(t, func(w http.ResponseWriter, id json.RawMessage) {
		http.Error(w, big, http.StatusInternalServerError)
	})
	c := dial(t, f.srv.URL)
	_, err := c.Call(t.Context(), "get", nil)
	var se *StatusError
	if !errors.As(err, &se) {
		t.Fatalf("err = %v, want *StatusError", err)
	}
	if se.StatusCode != 500 || len(se.Body) != maxErrorBody {
		t.Fatalf("status %d, body %d bytes, want 500 and %d", se.StatusCode, len(se.Body), maxErrorBody)
	}
	if errors.Is(err, ErrSessionExpired) || f.count("initialize") != 1 {
		t.Fatal("a 500 was treated as session expiry")
	}
}

func TestRedirectIsNotFollowedWithTheBearer(t *testing.T) {
	other := newFakeMCP(t, func(w http.ResponseWriter, id json.RawMessage) {})
	f := newFakeMCP(t, func(w http.ResponseWriter, id json.RawMessage) {
		w.Header().Set("Location", other.srv.URL)
		w.WriteHeader(http.StatusTemporaryRedirect)
	})
	c, err := Dial(t.Context(), f.srv.URL, WithTokenSource(oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "secret"})))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.Call(t.Context(), "get", nil)
	var se *StatusError
	if !errors.As(err, &se) || se.StatusCode != http.StatusTemporaryRedirect {
		t.Fatalf("err = %v", err)
	}
	if n := other.count("initialize") + other.count("tools/call"); n != 0 {
		t.Fatalf("redirect target got %d requests", n)
	}
	if strings.Contains(err.Error(), "secret") {
		t.Fatal("token in error text")
	}
}
