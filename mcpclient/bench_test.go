package mcpclient

import (
	"testing"

	"github.com/candorkit/candor/internal/mcptest"
	mcpgoclient "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// benchArgs is the argument object both benchmarks send to the echo tool.
var benchArgs = map[string]any{"productCode": "S10_1949", "qty": 3}

// BenchmarkCall measures Client.Call against a real mcp-go server on
// loopback. Compare with BenchmarkRawCall (same server kind, same tool).
func BenchmarkCall(b *testing.B) {
	srv := mcptest.New(b, mcptest.MCPGo)
	c, err := Dial(b.Context(), srv.URL)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	b.ReportAllocs()
	for b.Loop() {
		res, err := c.Call(b.Context(), mcptest.ToolEcho, benchArgs)
		if err != nil || len(res.Content) != 1 {
			b.Fatal(res, err)
		}
	}
}

// BenchmarkRawCall is the baseline: a bare mcp-go v1.2.1 client (protocol
// pinned to 2025-11-25, no checks of ours) calling the same tool.
func BenchmarkRawCall(b *testing.B) {
	srv := mcptest.New(b, mcptest.MCPGo)
	tr, err := transport.NewStreamableHTTP(srv.URL)
	if err != nil {
		b.Fatal(err)
	}
	c := mcpgoclient.NewClient(tr, mcpgoclient.WithProtocolVersion(mcp.LATEST_LEGACY_PROTOCOL_VERSION))
	defer c.Close()
	if err := c.Start(b.Context()); err != nil {
		b.Fatal(err)
	}
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "bench", Version: "1"}
	if _, err := c.Initialize(b.Context(), init); err != nil {
		b.Fatal(err)
	}
	var req mcp.CallToolRequest
	req.Params.Name = mcptest.ToolEcho
	req.Params.Arguments = benchArgs
	b.ReportAllocs()
	for b.Loop() {
		res, err := c.CallTool(b.Context(), req)
		if err != nil || res.IsError || len(res.Content) != 1 {
			b.Fatal(res, err)
		}
	}
}
