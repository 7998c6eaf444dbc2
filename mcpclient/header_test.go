package mcpclient

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"

	"github.com/candorkit/candor/mcpclient/mcptest"
)

// Headers from the context go on the requests of that call only, through
// a Client and through a Pool, with no new Dial.
func TestRequestHeaderFromContext(t *testing.T) {
	eachServer(t, func(t *testing.T, kind mcptest.Kind) {
		srv := mcptest.New(t, kind, mcptest.WithBearerCheck(usersOnly))
		ts := &userTokens{user: "user-a", every: 1}
		c := dial(t, srv.URL, WithTokenSource(ts))
		ctx := WithRequestHeader(t.Context(), http.Header{"X-Tenant": {"t1"}})
		ctx = WithRequestHeader(ctx, http.Header{"x-request-id": {"r-42"}})
		_, err := c.Call(ctx, mcptest.ToolEcho, nil)
		require.NoError(t, err)
		_, err = c.Call(t.Context(), mcptest.ToolEcho, nil)
		require.NoError(t, err)
		calls := srv.Calls("tools/call")
		require.Len(t, calls, 2)
		assert.Equal(t, "t1", calls[0].Header.Get("X-Tenant"))
		assert.Equal(t, "r-42", calls[0].Header.Get("X-Request-Id"))
		assert.Empty(t, calls[1].Header.Get("X-Tenant"), "the next call without the context has none")
		assert.Len(t, srv.Calls("initialize"), 1, "no new Dial")

		p := newPool(t, srv.URL)
		k := caller(t, p, "user-b", &userTokens{user: "user-b", every: 1}, Budget{})
		_, err = k.Call(WithRequestHeader(t.Context(), http.Header{"X-Tenant": {"t2"}}), mcptest.ToolEcho, nil)
		require.NoError(t, err)
		inits := srv.Calls("initialize")
		assert.Equal(t, "t2", inits[len(inits)-1].Header.Get("X-Tenant"), "the initialize the call caused carries them too")
		calls = srv.Calls("tools/call")
		assert.Equal(t, "t2", calls[len(calls)-1].Header.Get("X-Tenant"))
		assert.Equal(t, "user-b", userOf(mcptest.BearerOf(calls[len(calls)-1].Authorization)), "the caller's bearer, not a header's")
	})
}

func TestRequestHeaderRefusesReservedNames(t *testing.T) {
	srv := mcptest.New(t, mcptest.MCPGo)
	c := dial(t, srv.URL, WithTokenSource(oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "tok"})))
	for _, name := range []string{"authorization", "Mcp-Session-Id", "MCP-Protocol-Version", "Host", "Last-Event-ID"} {
		ctx := WithRequestHeader(t.Context(), http.Header{name: {"x"}})
		_, err := c.Call(ctx, mcptest.ToolEcho, nil)
		assert.Equal(t, KindInvalidArgument, Classify(err), "%s: %v", name, err)
		_, err = c.ListTools(ctx, ListToolsOptions{})
		assert.Equal(t, KindInvalidArgument, Classify(err), "%s: %v", name, err)
	}
	assert.Empty(t, srv.Calls("tools/call"))
	assert.Empty(t, srv.Calls("tools/list"))
}
