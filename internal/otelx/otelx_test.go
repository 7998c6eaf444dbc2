package otelx_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/candorkit/candor/internal/otelx"
	"github.com/candorkit/candor/internal/otelx/oteltest"
)

const scope = "github.com/candorkit/candor/internal/otelx"

func TestTracerAndMeterUseGivenProviders(t *testing.T) {
	rec := oteltest.New(t)
	ctx := t.Context()
	_, span := otelx.Tracer(rec.TracerProvider(), scope).Start(ctx, "op")
	span.End()
	h, err := otelx.Meter(rec.MeterProvider(), scope).Float64Histogram("op.duration",
		metricBuckets()...)
	require.NoError(t, err)
	h.Record(ctx, otelx.Duration(1500*time.Millisecond))

	s := rec.Span(t, "op")
	assert.Equal(t, scope, s.InstrumentationScope().Name)
	assert.Equal(t, otelx.Version, s.InstrumentationScope().Version)
	m, ok := rec.Metric(ctx, "op.duration")
	require.True(t, ok)
	assert.Equal(t, uint64(1), oteltest.HistogramCount(m))
}

func TestNilProvidersAreTheGlobalNoops(t *testing.T) {
	ctx, span := otelx.Tracer(nil, scope).Start(t.Context(), "op")
	defer span.End()
	assert.False(t, span.IsRecording())
	assert.False(t, trace.SpanContextFromContext(ctx).IsValid())
	c, err := otelx.Meter(nil, scope).Int64Counter("n")
	require.NoError(t, err)
	c.Add(ctx, 1)
	h := http.Header{}
	otelx.Inject(ctx, h)
	assert.Empty(t, h, "no span context, nothing injected")
	m := map[string]any{}
	otelx.InjectMap(ctx, m)
	assert.Empty(t, m)
}

func TestOffOnlyWithoutAnyProvider(t *testing.T) {
	rec := oteltest.New(t)
	assert.True(t, otelx.TracingOff(nil))
	assert.True(t, otelx.MetricsOff(nil))
	assert.False(t, otelx.TracingOff(rec.TracerProvider()))
	assert.False(t, otelx.MetricsOff(rec.MeterProvider()))
	assert.Zero(t, testing.AllocsPerRun(100, func() { _ = otelx.TracingOff(nil) || otelx.MetricsOff(nil) }))

	prevT, prevM := otel.GetTracerProvider(), otel.GetMeterProvider()
	t.Cleanup(func() { otel.SetTracerProvider(prevT); otel.SetMeterProvider(prevM) })
	otel.SetTracerProvider(rec.TracerProvider())
	otel.SetMeterProvider(rec.MeterProvider())
	assert.False(t, otelx.TracingOff(nil), "a global provider was installed")
	assert.False(t, otelx.MetricsOff(nil))
}

func TestFailSetsKindNeverText(t *testing.T) {
	rec := oteltest.New(t)
	_, span := otelx.Tracer(rec.TracerProvider(), scope).Start(t.Context(), "op")
	otelx.Fail(span, "rejected")
	span.End()
	_, other := otelx.Tracer(rec.TracerProvider(), scope).Start(t.Context(), "other")
	otelx.Fail(other, "")
	other.End()

	s := rec.Span(t, "op")
	assert.Equal(t, codes.Error, s.Status().Code)
	assert.Equal(t, "rejected", s.Status().Description)
	assert.Equal(t, "rejected", oteltest.Attrs(s.Attributes())[string(otelx.ErrorType)].AsString())
	assert.Empty(t, s.Events(), "no exception event")
	assert.Equal(t, "_OTHER", oteltest.Attrs(rec.Span(t, "other").Attributes())["error.type"].AsString())

	_, noop := otelx.Tracer(nil, scope).Start(t.Context(), "noop")
	otelx.Fail(noop, "x") // a non-recording span is left alone
	noop.End()
}

func TestInjectExtractRoundTrip(t *testing.T) {
	rec := oteltest.New(t)
	ctx, span := otelx.Tracer(rec.TracerProvider(), scope).Start(t.Context(), "op")
	defer span.End()
	want := span.SpanContext()

	h := http.Header{}
	otelx.Inject(ctx, h)
	require.NotEmpty(t, h.Get("traceparent"))
	got := trace.SpanContextFromContext(otelx.Extract(context.Background(), h))
	assert.Equal(t, want.TraceID(), got.TraceID())
	assert.Equal(t, want.SpanID(), got.SpanID())
	assert.True(t, got.IsRemote())

	meta := map[string]any{"other": 1}
	otelx.InjectMap(ctx, meta)
	tp, ok := meta["traceparent"].(string)
	require.True(t, ok)
	assert.Equal(t, h.Get("traceparent"), tp)
	assert.Equal(t, 1, meta["other"])
}

func TestPropagatorPrefersGlobal(t *testing.T) {
	assert.Equal(t, propagation.TraceContext{}, otelx.Propagator())
	prev := otel.GetTextMapPropagator()
	t.Cleanup(func() { otel.SetTextMapPropagator(prev) })
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	assert.Contains(t, otelx.Propagator().Fields(), "baggage")
}

func TestDurationBucketsAscend(t *testing.T) {
	assert.IsIncreasing(t, otelx.DurationBuckets)
}
