package mcpclient_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/candorkit/candor/internal/mcptest"
	"github.com/candorkit/candor/mcpclient"
)

// Example calls tools of a real mcp-go server on loopback: a success, a
// tool that reports isError, a tool whose text is not JSON, and a paged list.
func Example() {
	srv, err := mcptest.Start(mcptest.MCPGo)
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
	fmt.Println("protocol:", c.ProtocolVersion())

	type product struct {
		ProductCode string `json:"productCode"`
	}
	p, err := mcpclient.CallJSON[product](ctx, c, "echo", map[string]string{"productCode": "S10_1949"})
	fmt.Println("echo:", p.ProductCode, err)

	// isError is a failure, not a product.
	_, err = mcpclient.CallJSON[product](ctx, c, "fail", map[string]string{"productCode": "nope"})
	var te *mcpclient.ToolError
	if errors.As(err, &te) {
		fmt.Println("tool failed:", te.Text)
	}

	// Text that is not JSON is a DecodeError that keeps the text.
	_, err = mcpclient.CallJSON[product](ctx, c, "text", nil)
	var de *mcpclient.DecodeError
	if errors.As(err, &de) {
		fmt.Printf("not JSON: %q\n", de.Raw[:9])
	}

	scan, err := mcpclient.Pages[mcptest.Item](ctx, c, "list", nil, 10)
	fmt.Println("items:", len(scan.Items), "pages:", scan.Pages, "complete:", scan.Complete, err)
	// Output:
	// protocol: 2025-11-25
	// echo: S10_1949 <nil>
	// tool failed: HTTP call failed with status 404: {"detail":"Not found."}
	// not JSON: "Products:"
	// items: 25 pages: 3 complete: true <nil>
}

// ExamplePage reads a paged list one page at a time, as a caller that keeps
// its own limits between pages does, then meets a page without nextCursor.
func ExamplePage() {
	srv, err := mcptest.Start(mcptest.MCPGo)
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

	cursor, second := "", ""
	for {
		p, err := mcpclient.Page[mcptest.Item](ctx, c, "list", nil, 10, cursor)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%d items from %s, total %d, last %t\n", len(p.Items), p.Items[0].Name, p.Total, p.Last)
		if p.Last {
			break
		}
		if second == "" {
			second = p.NextCursor
		}
		cursor = p.NextCursor
	}

	// This fault drops nextCursor from the second page: the page does not
	// say whether it is the last, so it is an error, not an end of list.
	_, err = mcpclient.Page[mcptest.Item](ctx, c, "list", map[string]any{"fault": "missing-next"}, 10, second)
	var de *mcpclient.DecodeError
	if errors.As(err, &de) {
		fmt.Println("malformed:", de.Err)
	}
	// Output:
	// 10 items from item-001, total 25, last false
	// 10 items from item-011, total 25, last false
	// 5 items from item-021, total 25, last true
	// malformed: page has no "nextCursor" key
}
