package otelx

import (
	"context"
	"net/http"
	"reflect"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Version is the instrumentation scope version of every candor package.
const Version = "0.0.0"

// ErrorType is the semantic-convention attribute key of a failure kind.
const ErrorType = attribute.Key("error.type")

// Tracer returns the tracer of scope from tp; nil tp means the global
// tracer provider.
func Tracer(tp trace.TracerProvider, scope string) trace.Tracer {
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	return tp.Tracer(scope, trace.WithInstrumentationVersion(Version))
}

// Meter returns the meter of scope from mp; nil mp means the global meter
// provider.
func Meter(mp metric.MeterProvider, scope string) metric.Meter {
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	return mp.Meter(scope, metric.WithInstrumentationVersion(Version))
}

// The global providers as the otel package starts: delegates that record
// nothing until the program installs a provider.
var (
	defaultTP = otel.GetTracerProvider()
	defaultMP = otel.GetMeterProvider()
)

// TracingOff reports whether no span from tp can be recorded: tp is nil
// and the program has installed no global tracer provider
// (otel.SetTracerProvider). A hot path checks it to skip starting a span
// and building its attributes, which allocate even when nothing records
// them. It never allocates. A provider passed explicitly (even a no-op
// one) is never off.
func TracingOff(tp trace.TracerProvider) bool {
	if tp != nil {
		return false
	}
	cur := otel.GetTracerProvider()
	return reflect.TypeOf(cur) == reflect.TypeOf(defaultTP) && cur == defaultTP
}

// MetricsOff is TracingOff for a meter provider: mp is nil and the
// program has installed no global meter provider (otel.SetMeterProvider).
func MetricsOff(mp metric.MeterProvider) bool {
	if mp != nil {
		return false
	}
	cur := otel.GetMeterProvider()
	return reflect.TypeOf(cur) == reflect.TypeOf(defaultMP) && cur == defaultMP
}

// Fail marks span failed with kind: attribute error.type=kind and status
// Error described by kind. An empty kind is recorded as "_OTHER", the
// conventions' fallback. It never records an error text.
func Fail(span trace.Span, kind string) {
	if kind == "" {
		kind = "_OTHER"
	}
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(ErrorType.String(kind))
	span.SetStatus(codes.Error, kind)
}

// Propagator returns the global text-map propagator when the program set
// one that carries fields, else the W3C trace-context propagator.
func Propagator() propagation.TextMapPropagator {
	if p := otel.GetTextMapPropagator(); len(p.Fields()) > 0 {
		return p
	}
	return propagation.TraceContext{}
}

// Inject writes the trace context of ctx (traceparent, tracestate) into h.
// It writes nothing when ctx carries no valid span context.
func Inject(ctx context.Context, h http.Header) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return
	}
	Propagator().Inject(ctx, propagation.HeaderCarrier(h))
}

// InjectMap writes the trace context of ctx into m, under the
// propagator's field names ("traceparent", "tracestate"). It writes
// nothing when ctx carries no valid span context.
func InjectMap(ctx context.Context, m map[string]any) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return
	}
	Propagator().Inject(ctx, mapCarrier(m))
}

// mapCarrier adapts a JSON property bag to propagation.TextMapCarrier.
type mapCarrier map[string]any

func (c mapCarrier) Get(key string) string {
	s, _ := c[key].(string)
	return s
}

func (c mapCarrier) Set(key, value string) { c[key] = value }

func (c mapCarrier) Keys() []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	return keys
}

// Duration returns d in seconds, the unit of every duration histogram.
func Duration(d time.Duration) float64 { return d.Seconds() }

// DurationBuckets are the explicit bucket boundaries, in seconds, the
// semantic conventions recommend for operation-duration histograms.
var DurationBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// Extract returns ctx with the remote trace context h carries (as a server
// reads an incoming request's traceparent), using Propagator.
func Extract(ctx context.Context, h http.Header) context.Context {
	return Propagator().Extract(ctx, propagation.HeaderCarrier(h))
}
