package mcpclient

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/candorkit/candor/internal/otelx/oteltest"
	"github.com/candorkit/candor/mcpclient/mcptest"
	mcpgoclient "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/oauth2"
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

// BenchmarkCallTraced is BenchmarkCall with the OpenTelemetry SDK
// recording every span and the duration metric to memory. Its baseline is
// BenchmarkCall (no provider) in the same run.
func BenchmarkCallTraced(b *testing.B) {
	srv := mcptest.New(b, mcptest.MCPGo)
	rec := oteltest.New(b)
	c, err := Dial(b.Context(), srv.URL, WithTracerProvider(rec.TracerProvider()), WithMeterProvider(rec.MeterProvider()))
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

// BenchmarkCallPropagated is BenchmarkCall with a caller's span context
// in the context and no provider: the cost of carrying the trace context
// alone (the traceparent header and params._meta, which the in-process
// server decodes too), without recording anything. Its baseline is
// BenchmarkCall in the same run.
func BenchmarkCallPropagated(b *testing.B) {
	srv := mcptest.New(b, mcptest.MCPGo)
	c, err := Dial(b.Context(), srv.URL)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := trace.ContextWithRemoteSpanContext(b.Context(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled, Remote: true}))
	b.ReportAllocs()
	for b.Loop() {
		res, err := c.Call(ctx, mcptest.ToolEcho, benchArgs)
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

// benchTokens is the bearer of the pool benchmark and of its baseline.
var benchTokens = oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "bench-token", TokenType: "Bearer"})

// BenchmarkCallDialledOnce is the baseline of BenchmarkPoolCall: one
// client dialled once with the same bearer, calling the same tool of the
// same server kind.
func BenchmarkCallDialledOnce(b *testing.B) {
	srv := mcptest.New(b, mcptest.MCPGo, mcptest.WithBearer("bench-token"))
	c, err := Dial(b.Context(), srv.URL, WithTokenSource(benchTokens))
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

// BenchmarkPoolCall measures a call through a Pool whose session for the
// subject is already open: a new Caller (one agent run) per call, as a
// service answering many questions does.
func BenchmarkPoolCall(b *testing.B) {
	srv := mcptest.New(b, mcptest.MCPGo, mcptest.WithBearer("bench-token"))
	p, err := NewPool(srv.URL)
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	id := Identity{Subject: "bench", Tokens: benchTokens}
	b.ReportAllocs()
	for b.Loop() {
		k, err := p.Caller(id, CallerOptions{Budget: Budget{MaxCalls: 1}})
		if err != nil {
			b.Fatal(err)
		}
		res, err := k.Call(b.Context(), mcptest.ToolEcho, benchArgs)
		if err != nil || len(res.Content) != 1 {
			b.Fatal(res, err)
		}
	}
}

// benchQuestions asks 100 questions, 10 from each of 10 users, one
// get-product-like call each, with ask, and reports the catalog HTTP
// requests per question (DELETEs that end sessions excluded: a pool sends
// them when a session has been idle for its bound) and the latency of a
// question.
func benchQuestions(b *testing.B, ask func(user int, q int) error, done func()) {
	b.Helper()
	for b.Loop() {
		for q := range 10 {
			for u := range 10 {
				if err := ask(u, q); err != nil {
					b.Fatal(err)
				}
			}
		}
		done()
	}
}

func userToken(u int) oauth2.TokenSource {
	return oauth2.StaticTokenSource(&oauth2.Token{AccessToken: fmt.Sprintf("user-%d.0", u), TokenType: "Bearer"})
}

func reportQuestions(b *testing.B, srv *mcptest.Server) {
	n := 0
	for _, r := range srv.Requests() {
		if r.HTTPMethod != http.MethodDelete {
			n++
		}
	}
	questions := float64(b.N * 100)
	b.ReportMetric(float64(n)/questions, "req/question")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/questions, "ns/question")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkQuestionsDialled is how a service answered before the pool: a
// session of its own per question (Dial, the call, Close).
func BenchmarkQuestionsDialled(b *testing.B) {
	srv := mcptest.New(b, mcptest.MCPGo, mcptest.WithBearerCheck(usersOnly))
	benchQuestions(b, func(u, q int) error {
		c, err := Dial(b.Context(), srv.URL, WithTokenSource(userToken(u)), WithBudget(Budget{MaxCalls: 1, MaxBytes: 1 << 20}))
		if err != nil {
			return err
		}
		defer c.Close()
		_, err = c.Call(b.Context(), mcptest.ToolEcho, map[string]any{"productCode": "S10_1949", "q": q})
		return err
	}, func() {})
	reportQuestions(b, srv)
}

// BenchmarkQuestionsPooled answers the same questions through a Pool, a
// new one for each round of 100 questions (so every round opens its 10
// sessions), with one Caller and budget per question.
func BenchmarkQuestionsPooled(b *testing.B) {
	srv := mcptest.New(b, mcptest.MCPGo, mcptest.WithBearerCheck(usersOnly))
	var p *Pool
	newRound := func() {
		var err error
		if p, err = NewPool(srv.URL); err != nil {
			b.Fatal(err)
		}
	}
	newRound()
	benchQuestions(b, func(u, q int) error {
		k, err := p.Caller(Identity{Subject: fmt.Sprintf("user-%d", u), Tokens: userToken(u)},
			CallerOptions{Budget: Budget{MaxCalls: 1, MaxBytes: 1 << 20}})
		if err != nil {
			return err
		}
		_, err = k.Call(b.Context(), mcptest.ToolEcho, map[string]any{"productCode": "S10_1949", "q": q})
		return err
	}, func() {
		if err := p.Close(); err != nil {
			b.Fatal(err)
		}
		newRound()
	})
	_ = p.Close()
	reportQuestions(b, srv)
}
