package reorder

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/candorkit/candor/internal/otelx"
)

// scope is the instrumentation scope of the package's telemetry.
const scope = "github.com/candorkit/candor/reorder"

// Attribute keys of the reorder.run and reorder.plan spans and of the
// reorder.run.duration metric.
const (
	attrOperation = attribute.Key("reorder.operation")
	attrComplete  = attribute.Key("reorder.complete")
	attrEscalate  = attribute.Key("reorder.escalate")
	attrScanned   = attribute.Key("reorder.items.scanned")
	attrTotal     = attribute.Key("reorder.items.total")
	attrLines     = attribute.Key("reorder.lines")
)

// telemetry holds the tracer and the run-duration histogram.
type telemetry struct {
	tracer   trace.Tracer
	duration metric.Float64Histogram
}

// global is the telemetry of the global providers, made once: the global
// meter keeps every instrument made on it, to delegate it later.
var global = sync.OnceValue(func() telemetry { return makeTelemetry(nil, nil) })

// newTelemetry returns the telemetry of o's providers.
func newTelemetry(o options) telemetry {
	if o.tp == nil && o.mp == nil {
		return global()
	}
	return makeTelemetry(o.tp, o.mp)
}

func makeTelemetry(tp trace.TracerProvider, mp metric.MeterProvider) telemetry {
	m := otelx.Meter(mp, scope)
	h, _ := m.Float64Histogram("reorder.run.duration",
		metric.WithUnit("s"),
		metric.WithDescription("Duration of a reorder run (Runner.Run) or plan (Plan), by outcome."),
		metric.WithExplicitBucketBoundaries(otelx.DurationBuckets...))
	return telemetry{tracer: otelx.Tracer(tp, scope), duration: h}
}

// start opens the span of one run or plan.
func (t telemetry) start(ctx context.Context, op string) (context.Context, trace.Span, time.Time) {
	name := "reorder.plan"
	if op == "run" {
		name = "reorder.run"
	}
	ctx, span := t.tracer.Start(ctx, name) // kind internal, the default
	if span.IsRecording() {
		span.SetAttributes(attrOperation.String(op))
	}
	return ctx, span, time.Now()
}

// end records the outcome on the span and the histogram, and ends the span.
func (t telemetry) end(ctx context.Context, span trace.Span, start time.Time, op string, p Proposal, err error) {
	var kind Kind
	if err != nil {
		kind = Classify(err)
	}
	if t.duration.Enabled(ctx) {
		attrs := []attribute.KeyValue{attrOperation.String(op), attrComplete.Bool(p.Complete)}
		if kind != "" {
			attrs = append(attrs, otelx.ErrorType.String(string(kind)))
		}
		t.duration.Record(ctx, otelx.Duration(time.Since(start)), metric.WithAttributes(attrs...))
	}
	if span.IsRecording() {
		span.SetAttributes(attrComplete.Bool(p.Complete), attrEscalate.Bool(p.Escalate),
			attrScanned.Int(p.Scanned), attrTotal.Int(p.Total), attrLines.Int(len(p.Lines)))
		if kind != "" {
			otelx.Fail(span, string(kind))
		}
	}
	span.End()
}
