package mcpauth

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/candorkit/candor/internal/otelx"
)

// scope is the instrumentation scope of the spans and metrics.
const scope = "github.com/candorkit/candor/mcpclient/mcpauth"

// MetricRequestDuration is the histogram of the durations of the requests
// to metadata hosts and authorization servers, in seconds, with
// mcpauth.operation (metadata, registration, token), server.address,
// http.response.status_code and error.type.
const MetricRequestDuration = "candor.mcpauth.request.duration"

// SpanAuthorize is the name of the span of one Authorize, or of a token
// obtained again by Token; its children are the client spans of the
// requests it made.
const SpanAuthorize = "mcpauth.authorize"

type telemetry struct {
	tp       trace.TracerProvider
	tracer   trace.Tracer
	duration metric.Float64Histogram
}

func newTelemetry(tp trace.TracerProvider, mp metric.MeterProvider) *telemetry {
	t := &telemetry{tp: tp, tracer: otelx.Tracer(tp, scope)}
	t.duration, _ = otelx.Meter(mp, scope).Float64Histogram(MetricRequestDuration,
		metric.WithUnit("s"),
		metric.WithDescription("Duration of the requests to metadata hosts and authorization servers."),
		metric.WithExplicitBucketBoundaries(otelx.DurationBuckets...))
	return t
}

// WithTracerProvider traces each authorization (SpanAuthorize) and each
// request it makes (client spans named by HTTP method); nil means the
// global provider. No span carries a token, code, secret or URL query.
func WithTracerProvider(tp trace.TracerProvider) Option { return func(o *options) { o.tp = tp } }

// WithMeterProvider records MetricRequestDuration; nil means the global
// provider.
func WithMeterProvider(mp metric.MeterProvider) Option { return func(o *options) { o.mp = mp } }

// authorizeSpan opens the span of one authorization of endpoint host.
func (t *telemetry) authorizeSpan(ctx context.Context, host string, status int, flow string) (context.Context, trace.Span) {
	if otelx.TracingOff(t.tp) {
		return ctx, trace.SpanFromContext(context.Background())
	}
	ctx, span := t.tracer.Start(ctx, SpanAuthorize, trace.WithAttributes(
		attribute.String("server.address", host),
		attribute.String("mcpauth.flow", flow),
	))
	if status != 0 {
		span.SetAttributes(attribute.Int("mcpauth.challenge.status_code", status))
	}
	return ctx, span
}

// endAuthorize closes an authorization span with its outcome.
func endAuthorize(span trace.Span, err error) {
	if err != nil && span.IsRecording() {
		otelx.Fail(span, string(Classify(err)))
	}
	span.End()
}

// do sends one request to a metadata host or an authorization server
// under a client span, with the trace context in its header, and records
// its duration.
func (a *Authorizer) do(req *http.Request, op string) (*http.Response, error) {
	ctx := req.Context()
	t := a.tel
	attrs := []attribute.KeyValue{
		attribute.String("mcpauth.operation", op),
		attribute.String("http.request.method", req.Method),
		attribute.String("server.address", req.URL.Hostname()),
		attribute.String("url.scheme", req.URL.Scheme),
	}
	if p, err := strconv.Atoi(req.URL.Port()); err == nil {
		attrs = append(attrs, attribute.Int("server.port", p))
	}
	span := trace.SpanFromContext(context.Background())
	if !otelx.TracingOff(t.tp) {
		ctx, span = t.tracer.Start(ctx, req.Method, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
		req = req.WithContext(ctx)
	}
	otelx.Inject(ctx, req.Header)
	started := time.Now()
	resp, err := a.hc.Do(req)
	status := 0
	if resp != nil {
		status = resp.StatusCode
	}
	kind := ""
	switch {
	case err != nil:
		kind = string(KindTransport)
	case status >= 500 || (op != "metadata" && status >= 400):
		kind = string(KindRejected)
	}
	if span.IsRecording() {
		if status != 0 {
			span.SetAttributes(attribute.Int("http.response.status_code", status))
		}
		if kind != "" {
			otelx.Fail(span, kind)
		}
	}
	span.End()
	if t.duration.Enabled(ctx) {
		if status != 0 {
			attrs = append(attrs, attribute.Int("http.response.status_code", status))
		}
		if kind != "" {
			attrs = append(attrs, attribute.String("error.type", kind))
		}
		t.duration.Record(ctx, otelx.Duration(time.Since(started)), metric.WithAttributes(attrs...))
	}
	return resp, err
}
