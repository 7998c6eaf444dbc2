package tokenexchange

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"

	"github.com/candorkit/candor/internal/otelx"
)

// instrumentationScope names the package's tracer and meter.
const instrumentationScope = "github.com/candorkit/candor/tokenexchange"

// The names the package records; doc.go lists them.
const (
	attrOperation     = attribute.Key("tokenexchange.operation")
	attrGrantType     = attribute.Key("oauth2.grant_type")
	attrClientID      = attribute.Key("oauth2.client_id")
	attrAudience      = attribute.Key("oauth2.audience")
	attrScope         = attribute.Key("oauth2.scope")
	attrRequestedType = attribute.Key("oauth2.requested_token_type")
	attrOutcome       = attribute.Key("tokenexchange.outcome")
	attrServerAddress = attribute.Key("server.address")
	attrServerPort    = attribute.Key("server.port")
	attrHTTPStatus    = attribute.Key("http.response.status_code")

	metricDuration = "tokenexchange.client.operation.duration"
)

// telemetry is the tracer and instrument of one prepared Config; nil when
// nothing can record (no provider given, none installed).
type telemetry struct {
	tp       trace.TracerProvider
	mp       metric.MeterProvider
	tracer   trace.Tracer
	duration metric.Float64Histogram
}

func newTelemetry(tp trace.TracerProvider, mp metric.MeterProvider) *telemetry {
	if otelx.TracingOff(tp) && otelx.MetricsOff(mp) {
		return nil
	}
	t := &telemetry{tp: tp, mp: mp, tracer: otelx.Tracer(tp, instrumentationScope)}
	h, err := otelx.Meter(mp, instrumentationScope).Float64Histogram(metricDuration,
		metric.WithUnit("s"),
		metric.WithDescription("The duration of a request to the token or revocation endpoint, until its answer was read and judged."),
		metric.WithExplicitBucketBoundaries(otelx.DurationBuckets...))
	if err != nil {
		h = noop.Float64Histogram{}
	}
	t.duration = h
	return t
}

// op is one instrumented request to the provider; a nil *op records
// nothing.
type op struct {
	t       *telemetry
	ctx     context.Context
	span    trace.Span // nil when tracing is off
	metrics bool
	start   time.Time
	base    []attribute.KeyValue // operation, grant type, server
	status  int
}

// begin starts the span "tokenexchange {operation}" (kind client) of one
// request to endpoint, with the attributes that say what was asked and
// never a token.
func (cl *client) begin(ctx context.Context, operation, grantType string, endpoint *url.URL) (context.Context, *op) {
	t := cl.tel
	if t == nil {
		return ctx, nil
	}
	tracing, metrics := !otelx.TracingOff(t.tp), !otelx.MetricsOff(t.mp)
	if !tracing && !metrics {
		return ctx, nil
	}
	port := 443
	if endpoint.Scheme == "http" {
		port = 80
	}
	if p, err := strconv.Atoi(endpoint.Port()); err == nil {
		port = p
	}
	o := &op{t: t, metrics: metrics, start: time.Now()}
	o.base = []attribute.KeyValue{attrOperation.String(operation), attrServerAddress.String(endpoint.Hostname()), attrServerPort.Int(port)}
	if grantType != "" {
		o.base = append(o.base, attrGrantType.String(grantType))
	}
	if tracing {
		attrs := append([]attribute.KeyValue{attrClientID.String(cl.clientID)}, o.base...)
		if operation == "exchange" {
			attrs = append(attrs, attrRequestedType.String(cl.requestedType))
			if len(cl.audience) > 0 {
				attrs = append(attrs, attrAudience.StringSlice(cl.audience))
			}
			if cl.scope != "" {
				attrs = append(attrs, attrScope.String(cl.scope))
			}
		}
		ctx, o.span = t.tracer.Start(ctx, "tokenexchange "+operation, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
		if !o.span.IsRecording() {
			o.span = nil
		}
	}
	o.ctx = ctx
	return ctx, o
}

// answered notes the HTTP status of the provider's answer.
func (o *op) answered(status int) {
	if o != nil {
		o.status = status
	}
}

// end records the outcome: error.type (the Classify kind) and status
// Error on failure, never the error's text.
func (o *op) end(err error) {
	if o == nil {
		return
	}
	kind, outcome := "", "success"
	if err != nil {
		kind, outcome = string(Classify(err)), "failure"
	}
	if o.span != nil {
		attrs := []attribute.KeyValue{attrOutcome.String(outcome)}
		if o.status != 0 {
			attrs = append(attrs, attrHTTPStatus.Int(o.status))
		}
		o.span.SetAttributes(attrs...)
		if kind != "" {
			otelx.Fail(o.span, kind)
		}
		o.span.End()
	}
	if o.metrics {
		attrs := append([]attribute.KeyValue{attrOutcome.String(outcome)}, o.base...)
		if kind != "" {
			attrs = append(attrs, otelx.ErrorType.String(kind))
		}
		o.t.duration.Record(o.ctx, otelx.Duration(time.Since(o.start)), metric.WithAttributes(attrs...))
	}
}

// inject puts the trace context of ctx in the request's headers.
func inject(ctx context.Context, h http.Header) { otelx.Inject(ctx, h) }
