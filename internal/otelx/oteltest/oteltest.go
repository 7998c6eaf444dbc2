// Package oteltest records the telemetry of a test in memory: an
// OpenTelemetry SDK tracer provider and meter provider whose spans and
// metrics the test reads back, and AssertNoSecrets, which fails the test when
// any recorded text carries a secret in any encoding.
//
// It is a test kit: importing it pulls in the OpenTelemetry SDK, which
// library code never does.
//
//	rec := oteltest.New(t)
//	c, err := mcpclient.Dial(ctx, endpoint,
//		mcpclient.WithTracerProvider(rec.TracerProvider()),
//		mcpclient.WithMeterProvider(rec.MeterProvider()))
//	…
//	span := rec.Span(t, "tools/call lookup")
//	rec.AssertNoSecrets(t, token)
//
// # Failure taxonomy
//
// The package returns no errors: a lookup that finds nothing, and a secret
// found, fail the test through testing.TB.
package oteltest

import (
	"context"
	"fmt"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/candorkit/candor/internal/secret"
)

// Recorder holds an SDK tracer provider and meter provider that record to
// memory. Its spans are those ended so far.
type Recorder struct {
	t      testing.TB
	spans  *tracetest.SpanRecorder
	tp     *sdktrace.TracerProvider
	reader *sdkmetric.ManualReader
	mp     *sdkmetric.MeterProvider
}

// New returns a Recorder whose providers are shut down when t ends. Every
// span is sampled.
func New(t testing.TB) *Recorder {
	t.Helper()
	r := &Recorder{t: t, spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	r.tp = sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithSpanProcessor(r.spans))
	r.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(r.reader))
	t.Cleanup(func() {
		ctx := context.Background()
		_ = r.tp.Shutdown(ctx)
		_ = r.mp.Shutdown(ctx)
	})
	return r
}

// TracerProvider returns the recording tracer provider.
func (r *Recorder) TracerProvider() trace.TracerProvider { return r.tp }

// MeterProvider returns the recording meter provider.
func (r *Recorder) MeterProvider() metric.MeterProvider { return r.mp }

// Spans returns the spans ended so far, in the order they ended.
func (r *Recorder) Spans() []sdktrace.ReadOnlySpan { return r.spans.Ended() }

// SpansNamed returns the ended spans named name, in the order they ended.
func (r *Recorder) SpansNamed(name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range r.spans.Ended() {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

// Span returns the one ended span named name; it fails t unless there is
// exactly one (and returns nil when t.Fatalf returns).
func (r *Recorder) Span(t testing.TB, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	got := r.SpansNamed(name)
	if len(got) != 1 {
		names := make([]string, 0, len(r.spans.Ended()))
		for _, s := range r.spans.Ended() {
			names = append(names, s.Name())
		}
		t.Fatalf("oteltest: %d spans named %q, want 1 (ended: %q)", len(got), name, names)
		return nil
	}
	return got[0]
}

// Metrics collects the metrics recorded so far. A collection that fails
// fails the test: an empty result must never pass for "nothing recorded".
func (r *Recorder) Metrics(ctx context.Context) metricdata.ResourceMetrics {
	r.t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.reader.Collect(ctx, &rm); err != nil {
		r.t.Errorf("oteltest: collecting metrics: %v", err)
	}
	return rm
}

// Metric collects the metrics recorded so far and returns the one named
// name; ok is false when there is none.
func (r *Recorder) Metric(ctx context.Context, name string) (m metricdata.Metrics, ok bool) {
	rm := r.Metrics(ctx)
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == name {
				return m, true
			}
		}
	}
	return metricdata.Metrics{}, false
}

// Attrs returns the attributes of a span, or of a metric data point, as a
// map from key to value (the last value wins for a repeated key).
func Attrs(kvs []attribute.KeyValue) map[string]attribute.Value {
	m := make(map[string]attribute.Value, len(kvs))
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value
	}
	return m
}

// HistogramCount returns the total count recorded by the float64 histogram
// m over the data points whose attributes include every one of match.
func HistogramCount(m metricdata.Metrics, match ...attribute.KeyValue) uint64 {
	h, ok := m.Data.(metricdata.Histogram[float64])
	if !ok {
		return 0
	}
	var n uint64
	for _, dp := range h.DataPoints {
		if hasAll(dp.Attributes, match) {
			n += dp.Count
		}
	}
	return n
}

// Sum returns the total of the int64 counter or up-down counter m over the
// data points whose attributes include every one of match.
func Sum(m metricdata.Metrics, match ...attribute.KeyValue) int64 {
	s, ok := m.Data.(metricdata.Sum[int64])
	if !ok {
		return 0
	}
	var n int64
	for _, dp := range s.DataPoints {
		if hasAll(dp.Attributes, match) {
			n += dp.Value
		}
	}
	return n
}

func hasAll(set attribute.Set, match []attribute.KeyValue) bool {
	for _, kv := range match {
		v, ok := set.Value(kv.Key)
		if !ok || v != kv.Value {
			return false
		}
	}
	return true
}

// AssertNoSecrets fails t for each secret found, in any encoding
// internal/secret recognises (raw, URL query- and path-escaped,
// JSON-escaped, base64), in any span name, attribute, event, link, status
// or resource, or in any metric's name, description, unit or attribute
// recorded so far. Empty secrets are ignored. It reports where a secret
// was found, never the secret.
func (r *Recorder) AssertNoSecrets(t testing.TB, secrets ...string) {
	t.Helper()
	var nonEmpty []string
	for _, s := range secrets {
		if s != "" {
			nonEmpty = append(nonEmpty, s)
		}
	}
	if len(nonEmpty) == 0 {
		return
	}
	check := func(where, text string) {
		if text == "" {
			return
		}
		for i, s := range nonEmpty {
			if secret.Redact(text, s) != text {
				t.Errorf("oteltest: secret #%d found in %s", i, where)
			}
		}
	}
	checkAttrs := func(where string, kvs []attribute.KeyValue) {
		for _, kv := range kvs {
			check(where+" attribute key", string(kv.Key))
			check(fmt.Sprintf("%s attribute %s", where, kv.Key), kv.Value.String())
		}
	}
	for _, s := range r.spans.Ended() {
		where := fmt.Sprintf("span %q", s.Name())
		check("span name", s.Name())
		checkAttrs(where, s.Attributes())
		for _, e := range s.Events() {
			check(where+" event name", e.Name)
			checkAttrs(where+" event "+e.Name, e.Attributes)
		}
		for _, l := range s.Links() {
			checkAttrs(where+" link", l.Attributes)
			check(where+" link tracestate", l.SpanContext.TraceState().String())
		}
		check(where+" tracestate", s.SpanContext().TraceState().String())
		check(where+" status", s.Status().Description)
		if res := s.Resource(); res != nil {
			checkAttrs(where+" resource", res.Attributes())
		}
		check(where+" scope", s.InstrumentationScope().Name)
	}
	rm := r.Metrics(context.Background())
	if rm.Resource != nil {
		checkAttrs("metric resource", rm.Resource.Attributes())
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			where := fmt.Sprintf("metric %q", m.Name)
			check("metric name", m.Name)
			check(where+" description", m.Description)
			check(where+" unit", m.Unit)
			for _, set := range pointAttrs(m.Data) {
				checkAttrs(where, set.ToSlice())
			}
		}
	}
}

// pointAttrs returns the attribute sets of every data point of data.
func pointAttrs(data metricdata.Aggregation) []attribute.Set {
	var out []attribute.Set
	switch d := data.(type) {
	case metricdata.Sum[int64]:
		for _, dp := range d.DataPoints {
			out = append(out, dp.Attributes)
		}
	case metricdata.Sum[float64]:
		for _, dp := range d.DataPoints {
			out = append(out, dp.Attributes)
		}
	case metricdata.Gauge[int64]:
		for _, dp := range d.DataPoints {
			out = append(out, dp.Attributes)
		}
	case metricdata.Gauge[float64]:
		for _, dp := range d.DataPoints {
			out = append(out, dp.Attributes)
		}
	case metricdata.Histogram[int64]:
		for _, dp := range d.DataPoints {
			out = append(out, dp.Attributes)
		}
	case metricdata.Histogram[float64]:
		for _, dp := range d.DataPoints {
			out = append(out, dp.Attributes)
		}
	case metricdata.ExponentialHistogram[int64]:
		for _, dp := range d.DataPoints {
			out = append(out, dp.Attributes)
		}
	case metricdata.ExponentialHistogram[float64]:
		for _, dp := range d.DataPoints {
			out = append(out, dp.Attributes)
		}
	}
	return out
}
