package mandate

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"

	"github.com/candorkit/candor/internal/otelx"
)

// instrumentationScope names the package's tracer and meter.
const instrumentationScope = "github.com/candorkit/candor/tokenexchange/mandate"

// The names the package records; doc.go lists them.
const (
	attrAgent     = attribute.Key("mandate.agent")
	attrOutcome   = attribute.Key("mandate.outcome")
	attrLeaseWait = attribute.Key("mandate.lease.wait")

	metricRedemption = "mandate.redemption.duration"
	metricLeaseWait  = "mandate.lease.wait.duration"
)

// WithTracerProvider traces each redemption (Store.Token) with tp: a span
// "mandate redeem" whose children are the refresh and the exchange of the
// agent's Config (an agent Config without a TracerProvider of its own
// gets tp). Nil or absent means the global provider
// (otel.GetTracerProvider), a no-op unless the program installed one.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(o *options) { o.tp = tp }
}

// WithMeterProvider records mandate.redemption.duration and
// mandate.lease.wait.duration with mp (an agent Config without a
// MeterProvider of its own gets mp). Nil or absent means the global
// provider (otel.GetMeterProvider).
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(o *options) { o.mp = mp }
}

type telemetry struct {
	tp         trace.TracerProvider
	mp         metric.MeterProvider
	tracer     trace.Tracer
	redemption metric.Float64Histogram
	leaseWait  metric.Float64Histogram
}

func newTelemetry(tp trace.TracerProvider, mp metric.MeterProvider) *telemetry {
	t := &telemetry{tp: tp, mp: mp, tracer: otelx.Tracer(tp, instrumentationScope)}
	m := otelx.Meter(mp, instrumentationScope)
	var err error
	if t.redemption, err = m.Float64Histogram(metricRedemption, metric.WithUnit("s"),
		metric.WithDescription("The duration of a mandate redemption (Store.Token), lease wait, refresh and exchange included."),
		metric.WithExplicitBucketBoundaries(otelx.DurationBuckets...)); err != nil {
		t.redemption = noop.Float64Histogram{}
	}
	if t.leaseWait, err = m.Float64Histogram(metricLeaseWait, metric.WithUnit("s"),
		metric.WithDescription("How long a redemption waited for the mandate's lease (another redemption of the same user and agent)."),
		metric.WithExplicitBucketBoundaries(otelx.DurationBuckets...)); err != nil {
		t.leaseWait = noop.Float64Histogram{}
	}
	return t
}

// redemption is one instrumented Store.Token; nil records nothing.
type redemption struct {
	t       *telemetry
	ctx     context.Context
	span    trace.Span // nil when tracing is off
	metrics bool
	agent   string
	start   time.Time
	waited  time.Duration
	leased  bool
}

func (t *telemetry) begin(ctx context.Context, agent string) (context.Context, *redemption) {
	tracing, metrics := !otelx.TracingOff(t.tp), !otelx.MetricsOff(t.mp)
	if !tracing && !metrics {
		return ctx, nil
	}
	r := &redemption{t: t, metrics: metrics, agent: agent, start: time.Now()}
	if tracing {
		ctx, r.span = t.tracer.Start(ctx, "mandate redeem", trace.WithSpanKind(trace.SpanKindInternal),
			trace.WithAttributes(attrAgent.String(agent)))
		if !r.span.IsRecording() {
			r.span = nil
		}
	}
	r.ctx = ctx
	return ctx, r
}

// leaseHeld notes that the lease was obtained, after waiting since begin.
func (r *redemption) leaseHeld() {
	if r == nil {
		return
	}
	r.waited, r.leased = time.Since(r.start), true
}

func (r *redemption) end(err error) {
	if r == nil {
		return
	}
	kind, outcome := "", "redeemed"
	if err != nil {
		kind, outcome = string(Classify(err)), "failed"
	}
	if r.span != nil {
		attrs := []attribute.KeyValue{attrOutcome.String(outcome)}
		if r.leased {
			attrs = append(attrs, attrLeaseWait.Float64(otelx.Duration(r.waited)))
		}
		r.span.SetAttributes(attrs...)
		if kind != "" {
			otelx.Fail(r.span, kind)
		}
		r.span.End()
	}
	if r.metrics {
		attrs := []attribute.KeyValue{attrAgent.String(r.agent), attrOutcome.String(outcome)}
		if kind != "" {
			attrs = append(attrs, otelx.ErrorType.String(kind))
		}
		r.t.redemption.Record(r.ctx, otelx.Duration(time.Since(r.start)), metric.WithAttributes(attrs...))
		if r.leased {
			r.t.leaseWait.Record(r.ctx, otelx.Duration(r.waited), metric.WithAttributes(attrAgent.String(r.agent)))
		}
	}
}
