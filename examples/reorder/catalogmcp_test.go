package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/candorkit/candor/mcpclient"
)

// pageServer starts a real mcp-go server on loopback whose tool "pages"
// answers with the text pages[cursor] (no structuredContent), the cursor
// being the "cursor" argument ("" when absent). It answers isError when the
// limit is not 10 or the cursor is unknown.
func pageServer(t *testing.T, pages map[string]string) *mcpclient.Client {
	t.Helper()
	srv := server.NewMCPServer("reorder-pages", "1")
	srv.AddTool(mcp.NewTool("pages"), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if req.GetInt("limit", 0) != 10 {
			return mcp.NewToolResultError("limit must be 10"), nil
		}
		page, ok := pages[req.GetString("cursor", "")]
		if !ok {
			return mcp.NewToolResultError("unknown cursor"), nil
		}
		return mcp.NewToolResultText(page), nil
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: server.NewStreamableHTTPServer(srv)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = hs.Serve(ln)
	}()
	t.Cleanup(func() {
		_ = hs.Close()
		<-done
	})
	c, err := mcpclient.Dial(t.Context(), "http://"+ln.Addr().String()+"/mcp")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// The adapter's page checks, through mcpclient.Page on a real server: the
// paging convention and product types are mcpclient's (*mcpclient.DecodeError),
// the product fields the agent needs are the adapter's (*pageFormatError);
// both keep the page exactly as received.
func TestCatalogPageChecks(t *testing.T) {
	const (
		ok   = `{"items":[{"productCode":"A","productName":"a","productVendor":"v","quantityInStock":3}],"nextCursor":"c2","total":2}`
		last = `{"items":[],"nextCursor":null}`
	)
	type want int
	const (
		byClient want = iota // *mcpclient.DecodeError
		byAgent              // *pageFormatError
	)
	cases := map[string]struct {
		raw string
		by  want
	}{
		"not an object":     {`[1]`, byClient},
		"null":              {`null`, byClient},
		"no items":          {`{"nextCursor":null}`, byClient},
		"null items":        {`{"items":null,"nextCursor":null}`, byClient},
		"no nextCursor":     {`{"items":[]}`, byClient},
		"numeric cursor":    {`{"items":[],"nextCursor":3}`, byClient},
		"bad total":         {`{"items":[],"nextCursor":null,"total":"110"}`, byClient},
		"negative total":    {`{"items":[],"nextCursor":null,"total":-1}`, byClient},
		"fraction quantity": {`{"items":[{"productCode":"A","quantityInStock":1.5}],"nextCursor":null}`, byClient},
		"string quantity":   {`{"items":[{"productCode":"A","quantityInStock":"15"}],"nextCursor":null}`, byClient},
		"item not object":   {`{"items":[7],"nextCursor":null}`, byClient},
		"no quantity":       {`{"items":[{"productCode":"A"}],"nextCursor":null}`, byAgent},
		"null quantity":     {`{"items":[{"productCode":"A","quantityInStock":null}],"nextCursor":null}`, byAgent},
		"no code":           {`{"items":[{"quantityInStock":1}],"nextCursor":null}`, byAgent},
		"empty code":        {`{"items":[{"productCode":"","quantityInStock":1}],"nextCursor":null}`, byAgent},
		"second item bad":   {`{"items":[{"productCode":"A","quantityInStock":1},{"productCode":"B"}],"nextCursor":null}`, byAgent},
	}
	pages := map[string]string{"": ok, "last": last}
	for name, tc := range cases {
		pages[name] = tc.raw
	}
	cat := &mcpCatalog{c: pageServer(t, pages), tool: "pages"}

	b, next, err := cat.Page(t.Context(), "", 10)
	if err != nil || next != "c2" || b.Total != 2 || len(b.Items) != 1 || b.Items[0].OnHand != 3 || b.Items[0].Code != "A" ||
		b.Items[0].Name != "a" || b.Items[0].Vendor != "v" {
		t.Fatalf("%+v %q %v", b, next, err)
	}
	if b, next, err := cat.Page(t.Context(), "last", 10); err != nil || next != "" || b.Total != 0 || b.Items == nil {
		t.Errorf("last page: %+v %q %v", b, next, err)
	}
	for name, tc := range cases {
		b, next, err := cat.Page(t.Context(), name, 10)
		if b.Items != nil || next != "" {
			t.Errorf("%s: data returned with the error: %+v %q", name, b, next)
		}
		var de *mcpclient.DecodeError
		var pe *pageFormatError
		switch tc.by {
		case byClient:
			if !errors.As(err, &de) || !bytes.Equal(de.Raw, []byte(tc.raw)) || errors.As(err, &pe) {
				t.Errorf("%s: err = %v, want a *mcpclient.DecodeError keeping the page", name, err)
			}
		case byAgent:
			if !errors.As(err, &pe) || !bytes.Equal(pe.Raw, []byte(tc.raw)) || pe.Tool != "pages" {
				t.Errorf("%s: err = %v, want a *pageFormatError keeping the page", name, err)
			}
		}
	}

	// A tool failure is the tool's error, never an empty page.
	_, _, err = cat.Page(t.Context(), "no such cursor", 10)
	if !errors.Is(err, mcpclient.ErrToolFailed) {
		t.Errorf("unknown cursor: err = %v, want ErrToolFailed", err)
	}
}
