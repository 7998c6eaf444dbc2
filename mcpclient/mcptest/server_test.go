package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func post(t *testing.T, url, session, auth, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
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
	require.NoError(t, err)
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
				resp := post(t, srv.URL, "", "", initBody)
				assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "no bearer")
				assert.Equal(t, `Bearer realm="mcptest"`, resp.Header.Get("WWW-Authenticate"))
				resp = post(t, srv.URL, "", "Bearer tok", initBody)
				sid := resp.Header.Get("Mcp-Session-Id")
				require.Equal(t, http.StatusOK, resp.StatusCode, "initialize")
				require.NotEmpty(t, sid, "session id")
				_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
				require.NoError(t, srv.Terminate(sid))
				assert.Error(t, srv.Terminate("no-such-session"))
				resp = post(t, srv.URL, sid, "Bearer tok", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{}}}`)
				want := http.StatusNotFound
				if ts400 {
					want = http.StatusBadRequest
				}
				assert.Equal(t, want, resp.StatusCode, "call on a terminated session")
				reqs := srv.Requests()
				require.Len(t, reqs, 3)
				assert.Equal(t, 401, reqs[0].Status)
				assert.Empty(t, reqs[0].Authorization)
				assert.Equal(t, "initialize", reqs[1].RPCMethod)
				assert.Equal(t, "Bearer tok", reqs[1].Authorization)
				assert.Equal(t, "tools/call", reqs[2].RPCMethod)
				assert.Equal(t, sid, reqs[2].SessionID)
				assert.Equal(t, want, reqs[2].Status)
				assert.Equal(t, "tok", BearerOf(reqs[1].Authorization))
				assert.Empty(t, BearerOf("Basic dXNlcjpwYXNz"))
			})
		}
	}
}

func TestStartUnknownKind(t *testing.T) {
	_, err := Start(Kind("nope"))
	assert.Error(t, err)
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

// mcp-go queues the list_changed of a tool that changes the list and
// forwards it from a goroutine that, without an event store, may drop it
// (when the result is ready first, or when a goroutine of an earlier
// request takes it); WithEventStore makes mcp-go write it on the call's
// stream before the result. The call is repeated because without the
// event store most single calls still carry the notice.
func TestMCPGoListChangedPrecedesTheResultOfTheCallThatChangedIt(t *testing.T) {
	var srv *Server
	grow := Tool{Name: "grow", Handle: func(context.Context, json.RawMessage) (Result, error) {
		if err := srv.AddTools(Tool{Name: "grown", Handle: func(context.Context, json.RawMessage) (Result, error) { return Result{Text: "ok"}, nil }}); err != nil {
			return Result{}, err
		}
		return Result{Text: "grown"}, nil
	}}
	srv = New(t, MCPGo, WithTools(grow), WithEventStore())
	resp := post(t, srv.URL, "", "", initBody)
	sid := resp.Header.Get("Mcp-Session-Id")
	require.NotEmpty(t, sid, "session id")
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp = post(t, srv.URL, sid, "", `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	require.Equal(t, http.StatusAccepted, resp.StatusCode, "notifications/initialized")
	for i := range 200 {
		id := i + 2
		resp := post(t, srv.URL, sid, "", fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"grow","arguments":{}}}`, id))
		require.Equal(t, http.StatusOK, resp.StatusCode)
		body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		require.NoError(t, err)
		notice := strings.Index(string(body), `"method":"notifications/tools/list_changed"`)
		result := strings.Index(string(body), fmt.Sprintf(`"id":%d,"result"`, id))
		require.GreaterOrEqual(t, result, 0, "call %d: the result is on the stream: %s", id, body)
		require.GreaterOrEqual(t, notice, 0, "call %d: the notice is on the call's stream: %s", id, body)
		assert.Less(t, notice, result, "call %d: the notice precedes the result", id)
	}
}
