package mcpclient_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/candorkit/candor/mcpclient"
	"github.com/candorkit/candor/mcpclient/mcptest"
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

	scan, err := mcpclient.Pages[mcptest.Item](ctx, c, "list", nil, mcpclient.PageOptions{Size: 10})
	fmt.Println("items:", len(scan.Items), "pages:", scan.Pages, "complete:", scan.Complete, err)
	// Output:
	// protocol: 2025-11-25
	// echo: S10_1949 <nil>
	// tool failed: HTTP call failed with status 404: {"detail":"Not found."}
	// not JSON: "Products:"
	// items: 25 pages: 3 complete: true <nil>
}

// ExampleDial passes constructor knobs as options, in any order; an
// invalid one makes Dial fail before any request.
func ExampleDial() {
	srv, err := mcptest.Start(mcptest.GoSDK)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	ctx := context.Background()

	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	c, err := mcpclient.Dial(ctx, srv.URL,
		mcpclient.WithBudget(mcpclient.Budget{MaxCalls: 10, MaxBytes: 1 << 20}),
		mcpclient.WithMaxResponseBytes(256<<10),
		mcpclient.WithClientInfo("example-agent", "1"),
		mcpclient.WithLogger(logger))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	_, err = c.Call(ctx, "echo", map[string]int{"qty": 3})
	fmt.Println("call:", err, "calls used:", c.Usage().Calls)

	_, err = mcpclient.Dial(ctx, srv.URL, mcpclient.WithMaxResponseBytes(0))
	fmt.Println(mcpclient.Classify(err), err)
	// Output:
	// call: <nil> calls used: 1
	// invalid_argument mcpclient: WithMaxResponseBytes: 0 is not a positive number of bytes
}

// ExampleClassify decides by the class of a failure instead of a ladder of
// errors.As: a tool's own failure, a spent budget, an unknown outcome.
func ExampleClassify() {
	srv, err := mcptest.Start(mcptest.MCPGo)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	ctx := context.Background()
	c, err := mcpclient.Dial(ctx, srv.URL, mcpclient.WithBudget(mcpclient.Budget{MaxCalls: 2}))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	for _, tool := range []string{"fail", "no-such-tool", "echo"} {
		_, err := c.Call(ctx, tool, nil)
		switch kind := mcpclient.Classify(err); kind {
		case mcpclient.KindOutcomeUnknown:
			fmt.Println(tool, "may have run: check before trying again")
		case mcpclient.KindToolError, mcpclient.KindProtocol:
			fmt.Println(tool, "failed:", kind)
		default:
			fmt.Println(tool, "not called:", kind)
		}
	}
	// Output:
	// fail failed: tool_error
	// no-such-tool failed: protocol
	// echo not called: budget_exceeded
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

	opts := mcpclient.PageOptions{Size: 10}
	cursor, second := "", ""
	for {
		p, err := mcpclient.Page[mcptest.Item](ctx, c, "list", nil, cursor, opts)
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
	_, err = mcpclient.Page[mcptest.Item](ctx, c, "list", map[string]any{"fault": "missing-next"}, second, opts)
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

// ExampleAll ranges over a paged list with limit/offset paging; a scan
// that cannot finish ends with an error, here a repeated cursor.
func ExampleAll() {
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

	n := 0
	for item, err := range mcpclient.All[mcptest.Item](ctx, c, "list", nil, mcpclient.PageOptions{Size: 10, Offset: true}) {
		if err != nil {
			fmt.Println(err)
			return
		}
		n++
		_ = item
	}
	fmt.Println("items:", n)

	n = 0
	for _, err := range mcpclient.All[mcptest.Item](ctx, c, "list", map[string]any{"fault": "repeat-cursor"}, mcpclient.PageOptions{Size: 10}) {
		if err != nil {
			fmt.Println("after", n, "items:", mcpclient.Classify(err))
			break
		}
		n++
	}
	// Output:
	// items: 25
	// after 20 items: incomplete
}
