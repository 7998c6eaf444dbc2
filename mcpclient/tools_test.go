package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/candorkit/candor/mcpclient/mcptest"
)

// order is a tool with both schemas: it takes a product code and a
// positive quantity and answers a structured confirmation. With the code
// "S_BAD" it answers a structuredContent that breaks its own outputSchema;
// with "S_NONE" it answers no structuredContent at all.
var order = mcptest.Tool{
	Name:         "order",
	Description:  "order a quantity of a product",
	InputSchema:  json.RawMessage(`{"type":"object","properties":{"code":{"type":"string","pattern":"^S[0-9A-Z_]+$"},"qty":{"type":"integer","minimum":1}},"required":["code","qty"],"additionalProperties":false}`),
	OutputSchema: json.RawMessage(`{"type":"object","properties":{"code":{"type":"string"},"ordered":{"type":"integer"}},"required":["code","ordered"]}`),
	Handle: func(_ context.Context, args json.RawMessage) (mcptest.Result, error) {
		var a struct {
			Code string `json:"code"`
			Qty  int    `json:"qty"`
		}
		_ = json.Unmarshal(args, &a)
		switch a.Code {
		case "S_BAD":
			return mcptest.Result{Text: `{"code":"S_BAD","ordered":"many"}`, Structured: json.RawMessage(`{"code":"S_BAD","ordered":"many"}`)}, nil
		case "S_NONE":
			return mcptest.Result{Text: "ordered"}, nil
		}
		out := fmt.Sprintf(`{"code":%q,"ordered":%d}`, a.Code, a.Qty)
		return mcptest.Result{Text: out, Structured: json.RawMessage(out)}, nil
	},
}

func toolNames(tools []Tool) []string {
	var out []string
	for _, t := range tools {
		out = append(out, t.Name)
	}
	return out
}

func TestServerInfoFromInitialize(t *testing.T) {
	eachServer(t, func(t *testing.T, kind mcptest.Kind) {
		srv := mcptest.New(t, kind)
		c := dial(t, srv.URL)
		var info ServerInfo = c.Server()
		assert.Equal(t, "mcptest-"+string(kind), info.Name)
		assert.Empty(t, info.Title)
		assert.Empty(t, info.Instructions)
		var caps ServerCapabilities = info.Capabilities
		assert.Nil(t, caps.Resources)
		assert.Nil(t, caps.Completions)
		if caps.Logging != nil { // go-sdk declares logging, mcp-go does not
			assert.Equal(t, mcptest.GoSDK, kind)
		}
		assert.Equal(t, "1.0.0", info.Version)
		assert.Equal(t, DefaultProtocolVersion, info.ProtocolVersion)
		require.NotNil(t, info.Capabilities.Tools, "both servers declare tools")
		var tools Capability = *info.Capabilities.Tools
		assert.True(t, tools.ListChanged)
		assert.False(t, tools.Subscribe)
		assert.Nil(t, info.Capabilities.Prompts, "no prompts were added")
		assert.True(t, json.Valid(info.Raw))
		assert.True(t, json.Valid(info.Capabilities.Raw))
	})
}

func TestListToolsPagesToTheEnd(t *testing.T) {
	eachServer(t, func(t *testing.T, kind mcptest.Kind) {
		srv := mcptest.New(t, kind, mcptest.WithTools(order), mcptest.WithToolsPageSize(4))
		c := dial(t, srv.URL)
		sc, err := c.ListTools(t.Context(), ListToolsOptions{})
		require.NoError(t, err)
		assert.True(t, sc.Complete)
		assert.ElementsMatch(t, []string{"echo", "fail", "go-error", "text", "list", "big", "block", "elicit", "order"}, toolNames(sc.Items))
		assert.Equal(t, 3, sc.Pages, "9 tools at 4 a page")
		assert.Len(t, srv.Calls("tools/list"), 3)
		for _, tl := range sc.Items {
			if tl.Name == "order" {
				assert.JSONEq(t, string(order.InputSchema), string(tl.InputSchema))
				assert.JSONEq(t, string(order.OutputSchema), string(tl.OutputSchema))
				assert.Equal(t, order.Description, tl.Description)
				assert.Empty(t, tl.Title)
				if tl.Annotations != nil { // mcp-go sends {}
					assert.JSONEq(t, `{}`, string(tl.Annotations))
				}
			} else {
				assert.Nil(t, tl.OutputSchema, tl.Name)
			}
		}

		// A page cap stops the scan, which is then not complete.
		sc, err = c.ListTools(t.Context(), ListToolsOptions{MaxPages: 2})
		assert.Equal(t, KindIncomplete, Classify(err), "%v", err)
		assert.False(t, sc.Complete)
		assert.Len(t, sc.Items, 8)
		assert.NotEmpty(t, sc.Reason)

		n := 0
		for tl, err := range c.AllTools(t.Context(), ListToolsOptions{}) {
			require.NoError(t, err)
			assert.NotEmpty(t, tl.Name)
			n++
		}
		assert.Equal(t, 9, n)
	})
}

// toolsListServer answers initialize normally and every tools/list with
// the page its function gives for the request's cursor.
func toolsListServer(t *testing.T, page func(cursor string) string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Cursor string `json:"cursor"`
			} `json:"params"`
		}
		_ = json.NewDecoder(r.Body).Decode(&msg)
		w.Header().Set("Mcp-Session-Id", "s1")
		switch msg.Method {
		case "initialize":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"t","version":"1"}}}`, msg.ID)
		case "tools/list":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, msg.ID, page(msg.Params.Cursor))
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A tools/list answer is complete only when its last page says so; a
// repeated cursor, a malformed page or a tool listed twice is an error,
// never a short list.
func TestListToolsIncomplete(t *testing.T) {
	tool := func(name string) string { return `{"name":"` + name + `","inputSchema":{"type":"object"}}` }
	for _, tc := range []struct {
		name string
		page func(string) string
		kind Kind
	}{
		{"repeat-cursor", func(c string) string { return `{"tools":[` + tool("t"+c) + `],"nextCursor":"c1"}` }, KindIncomplete},
		{"no-tools-array", func(string) string { return `{"nextCursor":null}` }, KindDecode},
		{"no-input-schema", func(string) string { return `{"tools":[{"name":"a"}]}` }, KindDecode},
		{"bad-cursor", func(string) string { return `{"tools":[],"nextCursor":7}` }, KindDecode},
		{"listed-twice", func(c string) string {
			if c == "" {
				return `{"tools":[` + tool("a") + `],"nextCursor":"c1"}`
			}
			return `{"tools":[` + tool("a") + `]}`
		}, KindDecode},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := toolsListServer(t, tc.page)
			c := dial(t, srv.URL+"/mcp")
			sc, err := c.ListTools(t.Context(), ListToolsOptions{})
			require.Error(t, err)
			assert.Equal(t, tc.kind, Classify(err), "%v", err)
			assert.False(t, sc.Complete)
			idx, _ := c.sess.tools.get()
			assert.Nil(t, idx, "an incomplete list never becomes the session's schemas")
		})
	}
}

func TestSchemasRefuseArgumentsBeforeSending(t *testing.T) {
	eachServer(t, func(t *testing.T, kind mcptest.Kind) {
		srv := mcptest.New(t, kind, mcptest.WithTools(order))
		c := dial(t, srv.URL, WithToolSchemas())

		got, err := CallJSON[map[string]any](t.Context(), c, "order", map[string]any{"code": "S10_1949", "qty": 3})
		require.NoError(t, err)
		assert.EqualValues(t, 3, got["ordered"])
		require.Len(t, srv.Calls("tools/list"), 1, "the tools are listed once, before the first call")

		_, err = c.Call(t.Context(), "order", map[string]any{"code": "nope", "qty": 0, "extra": true})
		var se *SchemaError
		require.ErrorAs(t, err, &se)
		assert.Equal(t, KindInvalidArgument, Classify(err))
		assert.Equal(t, "inputSchema", se.Schema)
		assert.Len(t, se.Violations, 2, "one per property that does not match: %q", se.Violations)
		assert.Contains(t, strings.Join(se.Violations, "\n"), `property "code"`)
		assert.Contains(t, strings.Join(se.Violations, "\n"), `property "qty"`)

		_, err = c.Call(t.Context(), "order", map[string]any{})
		require.ErrorAs(t, err, &se)
		assert.Equal(t, []string{`required property "code" is missing`, `required property "qty" is missing`}, se.Violations)

		_, err = c.Call(t.Context(), "no-such-tool", nil)
		assert.ErrorIs(t, err, ErrUnknownTool)
		assert.Equal(t, KindInvalidArgument, Classify(err))
		assert.Len(t, srv.Calls("tools/list"), 2, "a tool missing from the list makes the client list once more")

		assert.Len(t, srv.Calls("tools/call"), 1, "no refused call reached the server")
		assert.Len(t, srv.Calls("tools/list"), 2)
	})
}

func TestSchemasRefuseStructuredContentThatBreaksTheOutputSchema(t *testing.T) {
	eachServer(t, func(t *testing.T, kind mcptest.Kind) {
		srv := mcptest.New(t, kind, mcptest.WithTools(order))
		c := dial(t, srv.URL)
		// Without WithToolSchemas, a complete ListTools turns the checks on.
		_, err := c.Call(t.Context(), "order", map[string]any{"code": "S_BAD", "qty": 1})
		require.NoError(t, err, "no schemas known yet: the result is taken as it is")
		_, err = c.ListTools(t.Context(), ListToolsOptions{})
		require.NoError(t, err)

		res, err := c.Call(t.Context(), "order", map[string]any{"code": "S_BAD", "qty": 1})
		assert.Nil(t, res)
		var me *MalformedResultError
		require.ErrorAs(t, err, &me)
		assert.Equal(t, KindMalformedResult, Classify(err))
		var se *SchemaError
		require.ErrorAs(t, err, &se)
		assert.Equal(t, "outputSchema", se.Schema)
		assert.Contains(t, se.Violations[0], `property "ordered"`)
		assert.Contains(t, string(me.Raw), `"many"`, "the raw result is kept as evidence")

		_, err = CallJSON[map[string]any](t.Context(), c, "order", map[string]any{"code": "S_NONE", "qty": 1})
		require.ErrorAs(t, err, &me)
		assert.Contains(t, me.Reason, "no structuredContent")

		_, err = c.Call(t.Context(), "order", map[string]any{"code": "S1", "qty": 1})
		assert.NoError(t, err)
	})
}

// The schemas are read again when the server's list changes: on a
// notification the client reads, or when a call names a tool the cached
// list lacks.
func TestSchemasFollowTheToolList(t *testing.T) {
	eachServer(t, func(t *testing.T, kind mcptest.Kind) {
		srv := mcptest.New(t, kind)
		c := dial(t, srv.URL, WithToolSchemas())
		_, err := c.Call(t.Context(), mcptest.ToolEcho, nil)
		require.NoError(t, err)
		require.NoError(t, srv.AddTools(order))

		_, err = c.Call(t.Context(), "order", map[string]any{"code": "S1", "qty": 2})
		require.NoError(t, err, "the tool added after the first listing is found by listing again")
		_, err = c.Call(t.Context(), "order", map[string]any{"code": "S1", "qty": -2})
		assert.ErrorAs(t, err, new(*SchemaError))
		assert.Len(t, srv.Calls("tools/list"), 2)
	})
}

func TestUnusableSchemaRefusesTheCall(t *testing.T) {
	remote := order
	remote.Name = "remote"
	remote.InputSchema = json.RawMessage(`{"type":"object","properties":{"code":{"$ref":"https://schemas.example/code.json"}}}`)
	srv := mcptest.New(t, mcptest.MCPGo, mcptest.WithTools(remote))
	c := dial(t, srv.URL, WithToolSchemas())
	_, err := c.Call(t.Context(), "remote", map[string]any{"code": "S1"})
	var se *SchemaError
	require.ErrorAs(t, err, &se)
	assert.Contains(t, se.Violations[0], "cannot be used")
	assert.Empty(t, srv.Calls("tools/call"), "a schema with a remote reference is never fetched; the call is not sent")
}

// A notifications/tools/list_changed that arrives on the event stream of a
// call before its result makes the session's list stale before the call
// returns: the next checked call lists the tools again. mcp-go sends it on
// the stream of the call that changed the list, before the result only
// with an event store (without one it may drop it); go-sdk only on the
// standalone stream, which the client does not open here.
func TestListChangedNotificationMakesTheListStale(t *testing.T) {
	var srv *mcptest.Server
	grow := mcptest.Tool{Name: "grow", Handle: func(context.Context, json.RawMessage) (mcptest.Result, error) {
		if err := srv.AddTools(order); err != nil {
			return mcptest.Result{}, err
		}
		return mcptest.Result{Text: "grown"}, nil
	}}
	srv = mcptest.New(t, mcptest.MCPGo, mcptest.WithTools(grow), mcptest.WithEventStore())
	c := dial(t, srv.URL, WithToolSchemas())
	_, err := c.Call(t.Context(), "grow", nil)
	require.NoError(t, err)
	_, stale := c.sess.tools.get()
	assert.True(t, stale, "the notification on the call's stream marks the list stale")
	_, err = c.Call(t.Context(), mcptest.ToolEcho, nil)
	require.NoError(t, err)
	assert.Len(t, srv.Calls("tools/list"), 2, "a stale list is read again before the next call")
}

// A list_changed the client does not read leaves the session's list as it
// was: go-sdk sends it only on the standalone stream, which a client with
// no request handler does not open, so a schema changed in place is
// checked against the old one until ListTools reads the list again.
func TestAnUnseenListChangedKeepsTheListedSchemaUntilListTools(t *testing.T) {
	strict := order
	strict.InputSchema = json.RawMessage(`{"type":"object","properties":{"code":{"type":"string"},"qty":{"type":"integer","maximum":1}},"required":["code","qty"]}`)
	srv := mcptest.New(t, mcptest.GoSDK, mcptest.WithTools(order))
	c := dial(t, srv.URL, WithToolSchemas())
	two := map[string]any{"code": "S1", "qty": 2}
	_, err := c.Call(t.Context(), "order", two)
	require.NoError(t, err)
	require.NoError(t, srv.AddTools(strict))

	_, err = c.Call(t.Context(), "order", two)
	assert.NoError(t, err, "checked against the schema listed before the change")
	assert.Len(t, srv.Calls("tools/list"), 1, "no notice was read, so the list was not read again")

	_, err = c.ListTools(t.Context(), ListToolsOptions{})
	require.NoError(t, err)
	_, err = c.Call(t.Context(), "order", two)
	var se *SchemaError
	assert.ErrorAs(t, err, &se, "ListTools gave the session the new schema")
	assert.Len(t, srv.Calls("tools/call"), 2, "the refused call was not sent")
}
