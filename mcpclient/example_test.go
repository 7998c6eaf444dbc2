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
