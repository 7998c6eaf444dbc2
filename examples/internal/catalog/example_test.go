package catalog_test

import (
	"context"
	"fmt"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/candorkit/candor/examples/internal/catalog"
)

func Example() {
	ctx := context.Background()
	s, err := catalog.New()
	if err != nil {
		fmt.Println(err)
		return
	}
	url, stop, err := s.Start(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer stop()

	tr, err := transport.NewStreamableHTTP(url)
	if err != nil {
		fmt.Println(err)
		return
	}
	c := client.NewClient(tr, client.WithProtocolVersion(mcp.LATEST_LEGACY_PROTOCOL_VERSION))
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	if _, err := c.Initialize(ctx, init); err != nil {
		fmt.Println(err)
		return
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = catalog.ToolGetProduct
	req.Params.Arguments = map[string]any{"productCode": "NOPE"}
	res, err := c.CallTool(ctx, req)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.IsError, mcp.GetTextFromContent(res.Content[0]))
	fmt.Println("tool calls:", s.ToolCalls())
	// Output:
	// true HTTP call failed with status 404: {"detail":"Not found."}
	// tool calls: 1
}
