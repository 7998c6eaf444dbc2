package a2a

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/candorkit/candor/internal/otelx"
)

// scope is the instrumentation scope of the Server's spans and metrics.
const scope = "github.com/candorkit/candor/a2a"

// Telemetry names (the package documentation lists the attributes).
const (
	// MetricTasks counts the tasks that reached a final state, by
	// a2a.task.state and error.type (the failure Kind).
	MetricTasks = "candor.a2a.tasks"
	// SpanTask is the name of the span of one task execution.
	SpanTask = "a2a.task"
)

// Attribute keys of the Server's spans and metrics.
const (
	attrRPCSystem    = attribute.Key("rpc.system")
	attrRPCMethod    = attribute.Key("rpc.method")
	attrRPCRequestID = attribute.Key("jsonrpc.request.id")
	attrRPCErrorCode = attribute.Key("rpc.jsonrpc.error_code")
	attrHTTPStatus   = attribute.Key("http.response.status_code")
	attrVersion      = attribute.Key("a2a.protocol.version")
	attrTaskID       = attribute.Key("a2a.task.id")
	attrContextID    = attribute.Key("a2a.context.id")
	attrTaskState    = attribute.Key("a2a.task.state")
)

type telemetry struct {
	tracer trace.Tracer
	tp     trace.TracerProvider // as given; nil means the global one
	tasks  metric.Int64Counter
}

// noSpan stands for a span not started.
var noSpan trace.Span = noop.Span{}

// tracing reports whether spans are to be started.
func (t *telemetry) tracing() bool {
	return !otelx.TracingOff(t.tp)
}

func newTelemetry(tp trace.TracerProvider, mp metric.MeterProvider) *telemetry {
	t := &telemetry{tracer: otelx.Tracer(tp, scope), tp: tp}
	// A meter that cannot make the instrument yields a no-op one.
	t.tasks, _ = otelx.Meter(mp, scope).Int64Counter(MetricTasks,
		metric.WithUnit("{task}"),
		metric.WithDescription("Tasks that reached a final state, by state and failure kind."))
	return t
}

// versionKey carries the A2A version a request was served in.
type versionKey struct{}

func versionFrom(ctx context.Context) string {
	v, _ := ctx.Value(versionKey{}).(string)
	return v
}

// rpcWriter records what was answered, for the request span.
type rpcWriter struct {
	http.ResponseWriter
	status  int
	rpcCode int // the JSON-RPC error code the Server wrote itself, 0 if none
}

func (w *rpcWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *rpcWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *rpcWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *rpcWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// endRequest closes the request span with what was answered. A refusal the
// Server wrote itself carries error.type: its JSON-RPC code, or the HTTP
// status when it is 4xx or 5xx.
func endRequest(span trace.Span, w *rpcWriter) {
	if span.IsRecording() {
		if w.status != 0 {
			span.SetAttributes(attrHTTPStatus.Int(w.status))
		}
		switch {
		case w.rpcCode != 0:
			span.SetAttributes(attrRPCErrorCode.Int(w.rpcCode))
			otelx.Fail(span, rpcKind(w.rpcCode))
		case w.status >= 400:
			otelx.Fail(span, http.StatusText(w.status))
		}
	}
	span.End()
}

// rpcKind names a JSON-RPC error code the Server writes, for error.type.
func rpcKind(code int) string {
	switch code {
	case CodeUnsupportedOperation:
		return "unsupported_operation"
	case CodeVersionNotSupported:
		return "version_not_supported"
	case codeContentTypeNotSupported:
		return "content_type_not_supported"
	case codeInvalidRequest:
		return "invalid_request"
	case codeInvalidParams:
		return "invalid_params"
	case codeInternal:
		return "internal"
	case codeUnauthenticated:
		return "unauthenticated"
	case codeUnauthorized:
		return "unauthorized"
	}
	return "_OTHER"
}

// startTask opens the span of one task execution.
func (t *telemetry) startTask(ctx context.Context, taskID, contextID string) (context.Context, trace.Span) {
	if !t.tracing() {
		return ctx, noSpan
	}
	ctx, span := t.tracer.Start(ctx, SpanTask, trace.WithSpanKind(trace.SpanKindInternal))
	if span.IsRecording() {
		span.SetAttributes(attrTaskID.String(taskID), attrContextID.String(contextID), attrVersion.String(versionFrom(ctx)))
	}
	return ctx, span
}

// endTask closes the task span and counts the task by its final state and
// failure kind.
func (t *telemetry) endTask(ctx context.Context, span trace.Span, out Outcome) {
	state, kind := string(out.State), string(Classify(out.Err))
	if span.IsRecording() {
		span.SetAttributes(attrTaskState.String(state))
		if kind != "" {
			otelx.Fail(span, kind)
		}
	}
	span.End()
	if t.tasks.Enabled(ctx) {
		attrs := []attribute.KeyValue{attrTaskState.String(state), attrVersion.String(versionFrom(ctx))}
		if kind != "" {
			attrs = append(attrs, otelx.ErrorType.String(kind))
		}
		t.tasks.Add(ctx, 1, metric.WithAttributes(attrs...))
	}
}
