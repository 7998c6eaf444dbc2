package mcptest

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

func post(t *testing.T, url, session, auth, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

func TestServersRecordAuthenticateAndTerminate(t *testing.T) {
	for _, kind := range Kinds() {
		for _, ts400 := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/400=%t", kind, ts400), func(t *testing.T) {
				opts := []Option{WithBearer("tok")}
				if ts400 {
					opts = append(opts, WithUnknownSession400())
				}
				srv := New(t, kind, opts...)
				if resp := post(t, srv.URL, "", "", initBody); resp.StatusCode != http.StatusUnauthorized {
					t.Fatalf("no bearer: %d", resp.StatusCode)
				}
				resp := post(t, srv.URL, "", "Bearer tok", initBody)
				sid := resp.Header.Get("Mcp-Session-Id")
				if resp.StatusCode != http.StatusOK || sid == "" {
					t.Fatalf("initialize: %d, session %q", resp.StatusCode, sid)
				}
				_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
				if err := srv.Terminate(sid); err != nil {
					t.Fatal(err)
				}
				resp = post(t, srv.URL, sid, "Bearer tok", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{}}}`)
				want := http.StatusNotFound
				if ts400 {
					want = http.StatusBadRequest
				}
				if resp.StatusCode != want {
					t.Fatalf("call on a terminated session: %d, want %d", resp.StatusCode, want)
				}
				reqs := srv.Requests()
				if len(reqs) != 3 || reqs[0].Status != 401 || reqs[0].Authorization != "" ||
					reqs[1].RPCMethod != "initialize" || reqs[1].Authorization != "Bearer tok" ||
					reqs[2].RPCMethod != "tools/call" || reqs[2].SessionID != sid || reqs[2].Status != want {
					t.Fatalf("recorded %+v", reqs)
				}
				if BearerOf(reqs[1].Authorization) != "tok" {
					t.Fatal("BearerOf")
				}
			})
		}
	}
}

func TestStartUnknownKind(t *testing.T) {
	if _, err := Start(Kind("nope")); err == nil {
		t.Fatal("unknown kind accepted")
	}
}

func ExampleStart() {
	srv, err := Start(MCPGo, WithBearer("demo-token"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	resp, err := http.Post(srv.URL, "application/json", strings.NewReader(initBody))
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	fmt.Println(resp.StatusCode, srv.Requests()[0].RPCMethod)
	// Output: 401 initialize
}
