package mcptest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"

	"github.com/candorkit/candor/mcpclient"
	"github.com/candorkit/candor/mcpclient/mcptest"
)

// stock is a caller's tool: it answers structured data, isError for an
// unknown code, and a Go error when asked to.
var stock = mcptest.Tool{
	Name:        "stock",
	Description: "quantity in stock of a product",
	Handle: func(_ context.Context, args json.RawMessage) (mcptest.Result, error) {
		var a struct {
			Code string `json:"code"`
		}
		if err := json.Unmarshal(args, &a); err != nil {
			return mcptest.Result{}, err
		}
		switch a.Code {
		case "S10_1949":
			return mcptest.Result{Text: `{"qty":7305}`, Structured: json.RawMessage(`{"qty":7305}`)}, nil
		case "boom":
			return mcptest.Result{}, errors.New("warehouse offline")
		}
		return mcptest.Result{Text: "no such product", IsError: true}, nil
	},
}

func TestCallerToolsOnBothServers(t *testing.T) {
	for _, kind := range mcptest.Kinds() {
		t.Run(string(kind), func(t *testing.T) {
			echo := mcptest.Tool{Name: mcptest.ToolEcho, Handle: func(context.Context, json.RawMessage) (mcptest.Result, error) {
				return mcptest.Result{Text: "replaced"}, nil
			}}
			srv := mcptest.New(t, kind, mcptest.WithTools(stock, echo), mcptest.WithBearer("tok"))
			c, err := mcpclient.Dial(t.Context(), srv.URL, mcpclient.WithTokenSource(staticToken("tok")))
			require.NoError(t, err)
			t.Cleanup(func() { _ = c.Close() })

			got, err := mcpclient.CallJSON[map[string]int](t.Context(), c, "stock", map[string]string{"code": "S10_1949"})
			require.NoError(t, err)
			assert.Equal(t, 7305, got["qty"])

			_, err = c.Call(t.Context(), "stock", map[string]string{"code": "nope"})
			assert.Equal(t, mcpclient.KindToolError, mcpclient.Classify(err))

			_, err = c.Call(t.Context(), "stock", map[string]string{"code": "boom"})
			want := map[mcptest.Kind]mcpclient.Kind{mcptest.MCPGo: mcpclient.KindProtocol, mcptest.GoSDK: mcpclient.KindToolError}[kind]
			assert.Equal(t, want, mcpclient.Classify(err), "%v", err)
			assert.ErrorContains(t, err, "warehouse offline")

			res, err := c.Call(t.Context(), mcptest.ToolEcho, map[string]int{"a": 1})
			require.NoError(t, err)
			assert.Equal(t, "replaced", res.Text(), "a caller tool replaces the built-in of that name")

			var calls []mcptest.Request = callsOf(srv)
			require.Len(t, calls, 4)
			for _, r := range calls {
				assert.Equal(t, "Bearer tok", r.Authorization)
				assert.Equal(t, c.SessionID(), r.SessionID)
				assert.Equal(t, http.StatusOK, r.Status)
			}
		})
	}
}

func callsOf(srv *mcptest.Server) []mcptest.Request { return srv.Calls("tools/call") }

func TestStartRefusesBadOptions(t *testing.T) {
	for _, o := range []mcptest.Option{
		mcptest.WithItems(-1),
		mcptest.WithTools(mcptest.Tool{Name: "x"}),
		mcptest.WithTools(mcptest.Tool{Handle: stock.Handle}),
	} {
		_, err := mcptest.Start(mcptest.MCPGo, o)
		assert.Error(t, err)
	}
}

func staticToken(tok string) oauth2.TokenSource {
	return oauth2.StaticTokenSource(&oauth2.Token{AccessToken: tok})
}

// ExampleWithTools starts a server with a tool of one's own and calls it
// through mcpclient.
func ExampleWithTools() {
	srv, err := mcptest.Start(mcptest.GoSDK, mcptest.WithTools(stock))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	ctx := context.Background()
	c, err := mcpclient.Dial(ctx, srv.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	got, err := mcpclient.CallJSON[map[string]int](ctx, c, "stock", map[string]string{"code": "S10_1949"})
	fmt.Println(got["qty"], err)
	_, err = c.Call(ctx, "stock", map[string]string{"code": "S24_0000"})
	fmt.Println(mcpclient.Classify(err))
	fmt.Println(len(srv.Calls("tools/call")), "calls logged")
	// Output:
	// 7305 <nil>
	// tool_error
	// 2 calls logged
}

func TestAddToolsAndPagedToolList(t *testing.T) {
	for _, kind := range mcptest.Kinds() {
		t.Run(string(kind), func(t *testing.T) {
			srv := mcptest.New(t, kind, mcptest.WithToolsPageSize(2))
			c, err := mcpclient.Dial(t.Context(), srv.URL)
			require.NoError(t, err)
			t.Cleanup(func() { _ = c.Close() })
			require.NoError(t, srv.AddTools(mcptest.Tool{
				Name:         "late",
				InputSchema:  json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`),
				OutputSchema: json.RawMessage(`{"type":"object"}`),
				Handle: func(context.Context, json.RawMessage) (mcptest.Result, error) {
					return mcptest.Result{Text: "{}", Structured: json.RawMessage(`{}`)}, nil
				},
			}))
			sc, err := c.ListTools(t.Context(), mcpclient.ListToolsOptions{})
			require.NoError(t, err)
			var late *mcpclient.Tool
			for i := range sc.Items {
				if sc.Items[i].Name == "late" {
					late = &sc.Items[i]
				}
			}
			require.NotNil(t, late)
			assert.JSONEq(t, `{"type":"object"}`, string(late.OutputSchema))
			assert.GreaterOrEqual(t, sc.Pages, 5, "9 tools at 2 a page")
			assert.Error(t, srv.AddTools(mcptest.Tool{Name: "bad", InputSchema: json.RawMessage(`{"type":"string"}`), Handle: stock.Handle}))
		})
	}
	for _, o := range []mcptest.Option{mcptest.WithToolsPageSize(0), mcptest.WithBearerCheck(nil)} {
		_, err := mcptest.Start(mcptest.MCPGo, o)
		assert.Error(t, err)
	}
}
