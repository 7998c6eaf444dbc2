package reply

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/candorkit/candor/internal/otelx"
)

// scope is the instrumentation scope of the spans and metrics.
const scope = "github.com/candorkit/candor/reply"

// MetricWebhookDuration is the histogram of webhook call durations, in
// seconds, one measurement per Call that sent a request.
const MetricWebhookDuration = "candor.webhook.duration"

// telemetry holds a Client's tracer and instruments, and the attributes
// every call shares: the webhook's scheme, host and port, never its path.
type telemetry struct {
	tracer   trace.Tracer
	tp       trace.TracerProvider // as given; nil means the global one
	duration metric.Float64Histogram
	attrs    []attribute.KeyValue
}

// noSpan stands for a span not started.
var noSpan trace.Span = noop.Span{}

func newTelemetry(u *url.URL, tp trace.TracerProvider, mp metric.MeterProvider) *telemetry {
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	p, _ := strconv.Atoi(port)
	t := &telemetry{
		tracer: otelx.Tracer(tp, scope),
		tp:     tp,
		attrs: []attribute.KeyValue{
			attribute.String("http.request.method", http.MethodPost),
			attribute.String("server.address", host),
			attribute.Int("server.port", p),
			attribute.String("url.scheme", u.Scheme),
		},
	}
	// A meter that cannot make the instrument yields a no-op one.
	t.duration, _ = otelx.Meter(mp, scope).Float64Histogram(MetricWebhookDuration,
		metric.WithUnit("s"),
		metric.WithDescription("Duration of the webhook calls that sent a request."),
		metric.WithExplicitBucketBoundaries(otelx.DurationBuckets...))
	return t
}

// start opens the client span of one call.
func (t *telemetry) start(ctx context.Context) (context.Context, trace.Span, time.Time) {
	if otelx.TracingOff(t.tp) {
		return ctx, noSpan, time.Now()
	}
	ctx, span := t.tracer.Start(ctx, http.MethodPost, trace.WithSpanKind(trace.SpanKindClient))
	if span.IsRecording() {
		span.SetAttributes(t.attrs...)
	}
	return ctx, span, time.Now()
}

// inject writes the W3C trace context of ctx into the request header.
func (t *telemetry) inject(ctx context.Context, h http.Header) { otelx.Inject(ctx, h) }

// end closes the span and records the duration of a call that sent a
// request: status is the answer's HTTP status (0 without one), err the
// call's error, classified with Classify.
func (t *telemetry) end(ctx context.Context, span trace.Span, started time.Time, status int, err error) {
	kind := Classify(err)
	if kind == KindNoIdentity || (kind == KindOther && status == 0) {
		// Nothing was sent: no duration to record.
		if span.IsRecording() {
			otelx.Fail(span, string(kind))
		}
		span.End()
		return
	}
	recording := span.IsRecording()
	if recording {
		if status != 0 {
			span.SetAttributes(attribute.Int("http.response.status_code", status))
		}
		if kind != KindNone {
			otelx.Fail(span, string(kind))
		}
	}
	span.End()
	if t.duration.Enabled(ctx) {
		attrs := make([]attribute.KeyValue, 0, len(t.attrs)+2)
		attrs = append(attrs, t.attrs...)
		if status != 0 {
			attrs = append(attrs, attribute.Int("http.response.status_code", status))
		}
		if kind != KindNone {
			attrs = append(attrs, attribute.String("error.type", string(kind)))
		}
		t.duration.Record(ctx, otelx.Duration(time.Since(started)), metric.WithAttributes(attrs...))
	}
}
