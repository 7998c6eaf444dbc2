package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"

	"github.com/candorkit/candor/mcpclient/mcptest"
)

// The client declares no capability, and a request the server sends
// anyway on a call's event stream is answered "method not found", so the
// call never waits for an answer that will not come; the answer's POST is
// never taken for the call's own.
func TestServerRequestWithoutHandlerNeverHangs(t *testing.T) {
	eachServer(t, func(t *testing.T, kind mcptest.Kind) {
		srv := mcptest.New(t, kind)
		c := dial(t, srv.URL)
		var init struct {
			Params struct {
				Capabilities map[string]json.RawMessage `json:"capabilities"`
			} `json:"params"`
		}
		require.NoError(t, json.Unmarshal(srv.Calls("initialize")[0].Body, &init))
		assert.NotNil(t, init.Params.Capabilities)
		assert.Empty(t, init.Params.Capabilities, "no handler, no capability declared")

		_, err := c.Call(t.Context(), mcptest.ToolElicit, nil)
		var te *ToolError
		require.ErrorAs(t, err, &te, "the tool's own failure, not a hang or a transport error")
		assert.Contains(t, te.Text, "elicitation failed")
		answers := 0
		for _, r := range srv.Requests() {
			if r.HTTPMethod == http.MethodPost && r.RPCMethod == "" {
				answers++
			}
		}
		want := map[mcptest.Kind]int{mcptest.MCPGo: 1, mcptest.GoSDK: 0}[kind]
		assert.Equal(t, want, answers, "mcp-go asks anyway and gets the client's answer; go-sdk does not ask")
		t.Logf("%s: %s", kind, te.Text)
	})
}

// accept is an elicitation handler that accepts, recording the subject of
// the Caller the request came for.
type accept struct {
	mu       sync.Mutex
	subjects []string
	methods  []string
}

func (a *accept) handle(ctx context.Context, req ServerRequest) (json.RawMessage, error) {
	a.mu.Lock()
	a.subjects = append(a.subjects, SubjectFromContext(ctx))
	a.methods = append(a.methods, req.Method)
	a.mu.Unlock()
	if !json.Valid(req.Params) {
		return nil, errors.New("no params")
	}
	return json.RawMessage(`{"action":"accept","content":{"ok":true}}`), nil
}

// With a handler, the capability is declared and the server's request is
// answered, on a call's stream and on the standalone stream, through a
// Client and through a Pool.
func TestElicitationHandler(t *testing.T) {
	eachServer(t, func(t *testing.T, kind mcptest.Kind) {
		srv := mcptest.New(t, kind)
		h := &accept{}
		var handle RequestHandler = h.handle
		c := dial(t, srv.URL, WithElicitationHandler(handle))
		var init struct {
			Params struct {
				Capabilities map[string]json.RawMessage `json:"capabilities"`
			} `json:"params"`
		}
		require.NoError(t, json.Unmarshal(srv.Calls("initialize")[0].Body, &init))
		assert.Contains(t, init.Params.Capabilities, "elicitation")
		assert.Len(t, init.Params.Capabilities, 1)

		res, err := c.Call(t.Context(), mcptest.ToolElicit, nil)
		require.NoError(t, err)
		assert.Equal(t, "elicitation: accept", res.Text(), "answered on the call's stream")

		action, err := srv.Elicit(t.Context(), c.SessionID())
		require.NoError(t, err)
		assert.Equal(t, "accept", action, "answered on the standalone stream")
		assert.Equal(t, []string{MethodElicitation, MethodElicitation}, h.methods)

		p := newPool(t, srv.URL, WithElicitationHandler(h.handle))
		k := caller(t, p, "user-p", oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "user-p.0"}), Budget{})
		res, err = k.Call(t.Context(), mcptest.ToolElicit, nil)
		require.NoError(t, err)
		assert.Equal(t, "elicitation: accept", res.Text())
		calls := srv.Calls("tools/call")
		action, err = srv.Elicit(t.Context(), calls[len(calls)-1].SessionID)
		require.NoError(t, err)
		assert.Equal(t, "accept", action)
		assert.Equal(t, []string{"", "", "user-p", "user-p"}, h.subjects, "a pooled session's requests name its subject")
	})
}

func TestHandlerOptionsRefuseNil(t *testing.T) {
	srv := mcptest.New(t, mcptest.MCPGo)
	for _, o := range []Option{WithElicitationHandler(nil), WithSamplingHandler(nil), WithRootsHandler(nil)} {
		_, err := Dial(t.Context(), srv.URL, o)
		assert.Equal(t, KindInvalidArgument, Classify(err))
	}
	assert.Empty(t, srv.Requests())
}

// serve answers ping, a method without a handler, a handler's failure and
// a result that is not an object, never leaving the server waiting.
func TestServeAnswersEveryServerRequest(t *testing.T) {
	c := newClient(nil, options{})
	require.Nil(t, c.cfg.handlers)
	opt := WithSamplingHandler(func(_ context.Context, req ServerRequest) (json.RawMessage, error) {
		switch string(req.Params) {
		case `{"fail":"protocol"}`:
			return nil, &ProtocolError{Code: -1, Message: "user declined"}
		case `{"fail":"other"}`:
			return nil, errors.New("secret detail")
		case `{"fail":"array"}`:
			return json.RawMessage(`[]`), nil
		}
		return json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"ok"},"model":"m"}`), nil
	})
	opt(&c.cfg)
	WithRootsHandler(func(context.Context, ServerRequest) (json.RawMessage, error) {
		return json.RawMessage(`{"roots":[]}`), nil
	})(&c.cfg)
	assert.Equal(t, map[string]any{"sampling": map[string]any{}, "roots": map[string]any{}}, c.cfg.capabilities())

	ask := func(method string, params any) (json.RawMessage, int, string) {
		resp, err := c.serve(t.Context(), transport.JSONRPCRequest{ID: mcp.NewRequestId(int64(1)), Method: method, Params: params})
		require.NoError(t, err)
		if resp.Error != nil {
			return nil, resp.Error.Code, resp.Error.Message
		}
		return resp.Result, 0, ""
	}
	res, code, _ := ask("ping", nil)
	assert.JSONEq(t, `{}`, string(res))
	assert.Zero(t, code)
	_, code, _ = ask(MethodElicitation, map[string]any{})
	assert.Equal(t, mcp.METHOD_NOT_FOUND, code)
	res, code, _ = ask(MethodRoots, nil)
	assert.JSONEq(t, `{"roots":[]}`, string(res))
	assert.Zero(t, code)
	res, _, _ = ask(MethodSampling, map[string]any{"messages": []any{}})
	assert.Contains(t, string(res), "assistant")
	_, code, msg := ask(MethodSampling, map[string]any{"fail": "protocol"})
	assert.Equal(t, -1, code)
	assert.Equal(t, "user declined", msg)
	_, code, msg = ask(MethodSampling, map[string]any{"fail": "other"})
	assert.Equal(t, mcp.INTERNAL_ERROR, code)
	assert.NotContains(t, msg, "secret detail", "a handler's error is not quoted to the server")
	_, code, _ = ask(MethodSampling, map[string]any{"fail": "array"})
	assert.Equal(t, mcp.INTERNAL_ERROR, code)
}
