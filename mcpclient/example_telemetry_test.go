package mcpclient_test

import (
	"context"
	"fmt"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/candorkit/candor/mcpclient"
	"github.com/candorkit/candor/mcpclient/mcptest"
)

// ExampleWithTracerProvider traces a session with the OpenTelemetry SDK
// (here recording to memory): one client span per request, and the trace
// context of each request sent to the server in its traceparent header and
// in params._meta.
func ExampleWithTracerProvider() {
	srv, err := mcptest.Start(mcptest.MCPGo)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	defer func() { _ = tp.Shutdown(context.Background()) }()

	ctx := context.Background()
	c, err := mcpclient.Dial(ctx, srv.URL, mcpclient.WithTracerProvider(tp))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	if _, err := c.Call(ctx, mcptest.ToolEcho, map[string]string{"productCode": "S10_1949"}); err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range spans.Ended() {
		fmt.Println("span:", s.Name())
	}
	call := spans.Ended()[1]
	got := srv.Calls("tools/call")[0]
	fmt.Println("trace id in the header:", mcptest.TraceID(got.Traceparent) == call.SpanContext().TraceID().String())
	fmt.Println("trace id in params._meta:", mcptest.TraceID(got.MetaTraceparent) == call.SpanContext().TraceID().String())
	// Output:
	// span: initialize
	// span: tools/call echo
	// trace id in the header: true
	// trace id in params._meta: true
}
