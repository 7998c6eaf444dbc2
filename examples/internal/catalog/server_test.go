package catalog_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/candorkit/candor/examples/internal/catalog"
)

func start(t *testing.T, opts ...catalog.Option) (*catalog.Server, string) {
	t.Helper()
	s, err := catalog.New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	url, stop, err := s.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return s, url
}

// dial connects the bare mcp-go client, closed when the test ends (at once
// when initialize fails). legacy pins protocol 2025-11-25 (initialize
// handshake, session id); otherwise the client negotiates the way it does by
// default.
func dial(t *testing.T, url string, legacy bool, topts ...transport.StreamableHTTPCOption) (*client.Client, error) {
	t.Helper()
	tr, err := transport.NewStreamableHTTP(url, topts...)
	if err != nil {
		t.Fatal(err)
	}
	var copts []client.ClientOption
	if legacy {
		copts = append(copts, client.WithProtocolVersion(mcp.LATEST_LEGACY_PROTOCOL_VERSION))
	}
	c := client.NewClient(tr, copts...)
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	req := mcp.InitializeRequest{}
	req.Params.ClientInfo = mcp.Implementation{Name: "catalog-test", Version: "0"}
	if legacy {
		req.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	}
	if _, err := c.Initialize(ctx, req); err != nil {
		_ = c.Close()
		return nil, err
	}
	t.Cleanup(func() { _ = c.Close() })
	return c, nil
}

func call(t *testing.T, c *client.Client, tool string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatalf("%s %v: %v", tool, args, err)
	}
	return res
}

func text(t *testing.T, r *mcp.CallToolResult) string {
	t.Helper()
	if len(r.Content) != 1 {
		t.Fatalf("content %+v", r.Content)
	}
	tc, ok := mcp.AsTextContent(r.Content[0])
	if !ok {
		t.Fatalf("content %T", r.Content[0])
	}
	return tc.Text
}

type page struct {
	Items      []catalog.Product `json:"items"`
	NextCursor *string           `json:"nextCursor"`
	Total      *int              `json:"total"`
}

func decodePage(t *testing.T, r *mcp.CallToolResult) (page, map[string]json.RawMessage) {
	t.Helper()
	if r.IsError {
		t.Fatalf("isError: %s", text(t, r))
	}
	if !bytes.Equal(bytes.TrimSpace(r.RawStructuredContent), []byte(text(t, r))) {
		t.Fatalf("structured and text differ:\n%s\n%s", r.RawStructuredContent, text(t, r))
	}
	var p page
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(r.RawStructuredContent, &p); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(r.RawStructuredContent, &keys); err != nil {
		t.Fatal(err)
	}
	return p, keys
}

func TestListProductsPaging(t *testing.T) {
	want, err := catalog.Products()
	if err != nil || len(want) != 110 {
		t.Fatalf("embedded catalog: %d products, %v", len(want), err)
	}
	for _, legacy := range []bool{false, true} {
		t.Run(fmt.Sprintf("legacy=%t", legacy), func(t *testing.T) {
			s, url := start(t)
			c, err := dial(t, url, legacy)
			if err != nil {
				t.Fatal(err)
			}
			if legacy && !strings.HasPrefix(c.GetSessionId(), "mcp-session-") {
				t.Fatalf("stateful session id %q", c.GetSessionId())
			}

			var got []catalog.Product
			var sizes []int
			args := map[string]any{"limit": 50}
			for {
				p, keys := decodePage(t, call(t, c, catalog.ToolListProducts, args))
				if _, ok := keys["nextCursor"]; !ok {
					t.Fatal("nextCursor key missing")
				}
				if p.Total == nil || *p.Total != 110 {
					t.Fatalf("total %v", p.Total)
				}
				got = append(got, p.Items...)
				sizes = append(sizes, len(p.Items))
				if p.NextCursor == nil {
					if string(keys["nextCursor"]) != "null" {
						t.Fatalf("last page nextCursor %s", keys["nextCursor"])
					}
					break
				}
				if *p.NextCursor == "" {
					t.Fatal("empty nextCursor on a non-last page")
				}
				args = map[string]any{"limit": 50, "cursor": *p.NextCursor}
			}
			if !slices.Equal(sizes, []int{50, 50, 10}) {
				t.Fatalf("page sizes %v", sizes)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatal("paged items differ from the embedded catalog")
			}
			if s.Calls(catalog.ToolListProducts) != 3 || s.Calls(catalog.ToolGetProduct) != 0 || s.ToolCalls() != 3 {
				t.Fatalf("counters list=%d get=%d", s.Calls(catalog.ToolListProducts), s.Calls(catalog.ToolGetProduct))
			}
		})
	}
}

func TestListProductsLimits(t *testing.T) {
	_, url := start(t)
	c, err := dial(t, url, true)
	if err != nil {
		t.Fatal(err)
	}

	// No limit: 50. A limit above the maximum is served as 200, i.e. all.
	p, _ := decodePage(t, call(t, c, catalog.ToolListProducts, map[string]any{}))
	if len(p.Items) != 50 || p.NextCursor == nil {
		t.Fatalf("default page: %d items, next %v", len(p.Items), p.NextCursor)
	}
	p, _ = decodePage(t, call(t, c, catalog.ToolListProducts, map[string]any{"limit": 1000}))
	if len(p.Items) != 110 || p.NextCursor != nil {
		t.Fatalf("big page: %d items, next %v", len(p.Items), p.NextCursor)
	}
	first := p.Items[0]
	if first != (catalog.Product{Code: "S10_1678", Name: "1969 Harley Davidson Ultimate Chopper", Line: "Motorcycles", Scale: "1:10", Vendor: "Min Lin Diecast", QuantityInStock: 7933, BuyPrice: 48.81}) {
		t.Fatalf("first product %+v", first)
	}

	for _, bad := range []map[string]any{
		{"limit": 0}, {"limit": -3}, {"limit": 2.5}, {"limit": "ten"},
		{"cursor": "not-a-cursor"}, {"cursor": 7}, {"cursor": "b2Zmc2V0Ojk5OTk"}, // offset:9999
	} {
		r := call(t, c, catalog.ToolListProducts, bad)
		if !r.IsError || !strings.Contains(text(t, r), "invalid") {
			t.Errorf("args %v: isError=%t %q", bad, r.IsError, text(t, r))
		}
	}
}

func TestMaxPageSize(t *testing.T) {
	_, url := start(t, catalog.WithMaxPageSize(30))
	c, err := dial(t, url, true)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := decodePage(t, call(t, c, catalog.ToolListProducts, map[string]any{"limit": 100}))
	if len(p.Items) != 30 || p.NextCursor == nil {
		t.Fatalf("capped page: %d items", len(p.Items))
	}
}

func TestGetProduct(t *testing.T) {
	s, url := start(t)
	c, err := dial(t, url, false)
	if err != nil {
		t.Fatal(err)
	}

	r := call(t, c, catalog.ToolGetProduct, map[string]any{"productCode": "S24_2000"})
	if r.IsError {
		t.Fatal(text(t, r))
	}
	var p catalog.Product
	if err := json.Unmarshal(r.RawStructuredContent, &p); err != nil {
		t.Fatal(err)
	}
	if p.Code != "S24_2000" || p.Name != "1960 BSA Gold Star DBD34" || p.Vendor != "Highway 66 Mini Classics" || p.QuantityInStock != 15 {
		t.Fatalf("product %+v", p)
	}
	if text(t, r) != string(r.RawStructuredContent) {
		t.Fatalf("text %q vs structured %s", text(t, r), r.RawStructuredContent)
	}
	if !strings.Contains(text(t, r), `"quantityInStock":15`) || !strings.Contains(text(t, r), `"buyPrice":37.32`) {
		t.Fatalf("wire fields: %s", text(t, r))
	}

	r = call(t, c, catalog.ToolGetProduct, map[string]any{"productCode": "S99_0000"})
	if !r.IsError || text(t, r) != `HTTP call failed with status 404: {"detail":"Not found."}` {
		t.Fatalf("unknown code: isError=%t %q", r.IsError, text(t, r))
	}
	r = call(t, c, catalog.ToolGetProduct, map[string]any{})
	if !r.IsError {
		t.Fatal("missing productCode accepted")
	}
	if s.Calls(catalog.ToolGetProduct) != 3 || s.Calls(catalog.ToolListProducts) != 0 {
		t.Fatalf("counters %d %d", s.Calls(catalog.ToolGetProduct), s.Calls(catalog.ToolListProducts))
	}

	tools, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
		if tool.Annotations.ReadOnlyHint == nil || !*tool.Annotations.ReadOnlyHint {
			t.Errorf("%s is not marked read-only", tool.Name)
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"get-product", "list-products"}) {
		t.Fatalf("tools %v", names)
	}
}

func TestBearerCheck(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	s, url := start(t, catalog.WithBearerCheck(func(_ context.Context, tok string) error {
		mu.Lock()
		seen = append(seen, tok)
		mu.Unlock()
		if tok != "good-token" {
			return errors.New("unknown token")
		}
		return nil
	}))

	for _, legacy := range []bool{false, true} {
		_, err := dial(t, url, legacy)
		if !errors.Is(err, transport.ErrAuthorizationRequired) {
			t.Fatalf("legacy=%t without token: %v", legacy, err)
		}
		_, err = dial(t, url, legacy, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer bad-token"}))
		if !errors.Is(err, transport.ErrAuthorizationRequired) {
			t.Fatalf("legacy=%t bad token: %v", legacy, err)
		}
	}
	if s.ToolCalls() != 0 || s.Rejected() == 0 || s.Requests() < s.Rejected() {
		t.Fatalf("calls %d rejected %d requests %d", s.ToolCalls(), s.Rejected(), s.Requests())
	}
	mu.Lock()
	for _, tok := range seen {
		if tok != "bad-token" {
			t.Fatalf("check saw %q (a missing header must not reach it)", tok)
		}
	}
	seen = nil
	mu.Unlock()

	c, err := dial(t, url, true, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer good-token"}))
	if err != nil {
		t.Fatal(err)
	}
	r := call(t, c, catalog.ToolGetProduct, map[string]any{"productCode": "S10_1949"})
	if r.IsError || s.Calls(catalog.ToolGetProduct) != 1 {
		t.Fatalf("authorised call: %s", text(t, r))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) < 2 || slices.ContainsFunc(seen, func(s string) bool { return s != "good-token" }) {
		t.Fatalf("tokens seen %q", seen)
	}
}

// rawPost sends one JSON-RPC body to the server, bypassing the client.
func rawPost(t *testing.T, url string, body []byte, hdr map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	return resp.StatusCode, string(b)
}

func TestStatefulSessions(t *testing.T) {
	_, url := start(t)
	call := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get-product","arguments":{"productCode":"S10_1949"}}}`)
	status, body := rawPost(t, url, call, map[string]string{
		"Mcp-Session-Id":       "mcp-session-00000000-0000-4000-8000-000000000000",
		"Mcp-Protocol-Version": mcp.LATEST_LEGACY_PROTOCOL_VERSION,
	})
	if status != http.StatusNotFound {
		t.Fatalf("unknown session: %d %s", status, body)
	}
}

func TestRequestBodyBound(t *testing.T) {
	s, url := start(t)
	huge := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get-product","arguments":{"productCode":"%s"}}}`,
		strings.Repeat("x", catalog.MaxRequestBytes))
	status, body := rawPost(t, url, huge, nil)
	if status != http.StatusBadRequest || !strings.Contains(body, "-32700") || !strings.Contains(body, "request body too large") {
		t.Fatalf("oversized body: %d %s", status, body)
	}
	if s.ToolCalls() != 0 {
		t.Fatalf("oversized body reached a tool")
	}
}

func TestStartStop(t *testing.T) {
	s, err := catalog.New()
	if err != nil {
		t.Fatal(err)
	}
	if s.Requests() != 0 || s.ToolCalls() != 0 || s.Len() != 110 {
		t.Fatal("fresh server not at zero")
	}
	ctx, cancel := context.WithCancel(context.Background())
	url, stop, err := s.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/mcp") {
		t.Fatalf("url %q", url)
	}
	c, err := dial(t, url, true)
	if err != nil {
		t.Fatal(err)
	}
	cancel() // ends the server through ctx
	stop()   // and stop is idempotent
	req := mcp.CallToolRequest{}
	req.Params.Name = catalog.ToolGetProduct
	req.Params.Arguments = map[string]any{"productCode": "S10_1949"}
	if _, err := c.CallTool(context.Background(), req); err == nil {
		t.Fatal("call succeeded after stop")
	}
}

func TestNewRejectsBadProducts(t *testing.T) {
	for _, ps := range [][]catalog.Product{
		{{Code: ""}},
		{{Code: "A"}, {Code: "A"}},
	} {
		if _, err := catalog.New(catalog.WithProducts(ps)); err == nil {
			t.Errorf("New accepted %+v", ps)
		}
	}
	s, err := catalog.New(catalog.WithProducts(nil))
	if err != nil || s.Len() != 0 {
		t.Fatalf("empty catalog: %v", err)
	}
}

func TestParseCSV(t *testing.T) {
	const head = "productCode,productName,productLine,productScale,productVendor,quantityInStock,buyPrice\n"
	good := head + "A1,Car,Cars,1:10,V,5,1.5\n"
	ps, err := catalog.ParseCSV(strings.NewReader(good))
	if err != nil || len(ps) != 1 || ps[0].QuantityInStock != 5 || ps[0].BuyPrice != 1.5 {
		t.Fatalf("%+v %v", ps, err)
	}
	for name, in := range map[string]string{
		"header":    "code,name\nA,B\n",
		"qty":       head + "A1,Car,Cars,1:10,V,five,1.5\n",
		"price":     head + "A1,Car,Cars,1:10,V,5,cheap\n",
		"duplicate": head + "A1,Car,Cars,1:10,V,5,1.5\nA1,Car,Cars,1:10,V,5,1.5\n",
		"empty":     head + ",Car,Cars,1:10,V,5,1.5\n",
		"fields":    head + "A1,Car,Cars\n",
		"nothing":   "",
	} {
		if _, err := catalog.ParseCSV(strings.NewReader(in)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
