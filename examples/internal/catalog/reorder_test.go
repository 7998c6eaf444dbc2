package catalog_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/candorkit/candor/examples/internal/catalog"
	"github.com/candorkit/candor/reorder"
)

// mcpCatalog adapts list-products to reorder.Catalog with the bare mcp-go
// client, strictly: isError, a missing items array or a missing nextCursor
// key is an error, never an empty last page.
type mcpCatalog struct{ c *client.Client }

func (m mcpCatalog) Page(ctx context.Context, cursor string, size int) (reorder.Batch, string, error) {
	args := map[string]any{"limit": size}
	if cursor != "" {
		args["cursor"] = cursor
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = catalog.ToolListProducts
	req.Params.Arguments = args
	res, err := m.c.CallTool(ctx, req)
	if err != nil {
		return reorder.Batch{}, "", err
	}
	if res.IsError {
		return reorder.Batch{}, "", fmt.Errorf("list-products isError: %s", mcp.GetTextFromContent(res.Content[0]))
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(res.RawStructuredContent, &keys); err != nil {
		return reorder.Batch{}, "", err
	}
	rawItems, hasItems := keys["items"]
	rawNext, hasNext := keys["nextCursor"]
	if !hasItems || !hasNext {
		return reorder.Batch{}, "", errors.New("malformed page: items or nextCursor missing")
	}
	var items []catalog.Product
	var next *string
	var total int
	if err := json.Unmarshal(rawItems, &items); err != nil || items == nil {
		return reorder.Batch{}, "", fmt.Errorf("malformed items: %v", err)
	}
	if err := json.Unmarshal(rawNext, &next); err != nil {
		return reorder.Batch{}, "", err
	}
	if t, ok := keys["total"]; ok {
		if err := json.Unmarshal(t, &total); err != nil {
			return reorder.Batch{}, "", err
		}
	}
	b := reorder.Batch{Total: total}
	for _, p := range items {
		b.Items = append(b.Items, reorder.Item{Code: p.Code, Name: p.Name, Vendor: p.Vendor, OnHand: p.QuantityInStock})
	}
	if next == nil {
		return b, "", nil
	}
	return b, *next, nil
}

// The reorder runner against the embedded server over MCP: with a mandate it
// proposes exactly S24_2000; without one the server is never contacted.
func TestReorderOverMCP(t *testing.T) {
	var mu sync.Mutex
	var tokens []string
	s, url := start(t, catalog.WithBearerCheck(func(_ context.Context, tok string) error {
		mu.Lock()
		defer mu.Unlock()
		tokens = append(tokens, tok)
		if tok != "mandate-token" {
			return errors.New("refused")
		}
		return nil
	}))
	open := func(ctx context.Context, m reorder.Mandate) (reorder.Catalog, error) {
		c, err := dial(t, url, true, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + m.Token}))
		if err != nil {
			return nil, err
		}
		return mcpCatalog{c}, nil
	}

	none := reorder.MandateFunc(func(context.Context) (reorder.Mandate, error) { return reorder.Mandate{}, reorder.ErrNoMandate })
	r, err := reorder.NewRunner(none, open, reorder.Thresholds{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Run(context.Background()); !errors.Is(err, reorder.ErrNoMandate) {
		t.Fatalf("no mandate: %v", err)
	}
	if s.Requests() != 0 || s.ToolCalls() != 0 {
		t.Fatalf("no mandate, yet %d requests and %d tool calls", s.Requests(), s.ToolCalls())
	}

	alice := reorder.MandateFunc(func(context.Context) (reorder.Mandate, error) {
		return reorder.Mandate{Subject: "alice", Token: "mandate-token"}, nil
	})
	r, _ = reorder.NewRunner(alice, open, reorder.Thresholds{PageSize: 50})
	p, err := r.Run(context.Background())
	if err != nil || !p.Complete || p.Scanned != 110 || p.Total != 110 || !p.Escalate {
		t.Fatalf("got %+v, %v", p, err)
	}
	want := reorder.Line{Code: "S24_2000", Name: "1960 BSA Gold Star DBD34", Vendor: "Highway 66 Mini Classics", OnHand: 15, Quantity: 135}
	if len(p.Lines) != 1 || p.Lines[0] != want {
		t.Fatalf("lines %+v", p.Lines)
	}
	if s.Calls(catalog.ToolListProducts) != 3 {
		t.Fatalf("list-products calls %d, want 3 pages of 50", s.Calls(catalog.ToolListProducts))
	}
	mu.Lock()
	for _, tok := range tokens {
		if tok != "mandate-token" {
			t.Fatalf("server saw token %q", tok)
		}
	}
	mu.Unlock()

	// One page of 50 allowed: not complete, and it says so.
	r, _ = reorder.NewRunner(alice, open, reorder.Thresholds{PageSize: 50, MaxPages: 1})
	p, err = r.Run(context.Background())
	if !errors.Is(err, reorder.ErrPageCap) || p.Complete || !p.Escalate || p.Scanned != 50 || p.Total != 110 {
		t.Fatalf("capped: %+v, %v", p, err)
	}
	if !strings.Contains(strings.Join(p.Reasons, "\n"), "page cap") {
		t.Fatalf("reasons %q", p.Reasons)
	}
}
