package retrieval

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/candorkit/candor/internal/otelx"
)

// scope is the instrumentation scope of the package's spans and metrics.
const scope = "github.com/candorkit/candor/retrieval"

// WithTracerProvider sets where the index's spans go (retrieval.open,
// retrieval.search; see the package documentation). Without it, or with
// nil, the global tracer provider is used, which records nothing unless
// the program installed one.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(o *options) { o.tp = tp }
}

// WithMeterProvider sets where the index's metrics go
// (retrieval.open.duration, retrieval.search.duration). Without it, or
// with nil, the global meter provider is used.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(o *options) { o.mp = mp }
}

// Attribute keys of the package's spans and metrics.
const (
	attrK        = attribute.Key("retrieval.k")
	attrQueries  = attribute.Key("retrieval.queries")
	attrAdmitted = attribute.Key("retrieval.rows.admitted")
	attrScanned  = attribute.Key("retrieval.rows.scanned")
	attrRescored = attribute.Key("retrieval.rows.rescored")
	attrRows     = attribute.Key("retrieval.rows")
	attrBytes    = attribute.Key("retrieval.bytes")
	attrKernel   = attribute.Key("retrieval.kernel")
	attrPrec     = attribute.Key("retrieval.precision")
	attrWorkers  = attribute.Key("retrieval.workers")
	attrReadOnly = attribute.Key("retrieval.read_only")
)

// telemetry holds a handle's providers and instruments.
type telemetry struct {
	tp     trace.TracerProvider // as given; nil means the global one
	mp     metric.MeterProvider
	tracer trace.Tracer
	search metric.Float64Histogram
	open   metric.Float64Histogram
}

func newTelemetry(tp trace.TracerProvider, mp metric.MeterProvider) *telemetry {
	t := &telemetry{tp: tp, mp: mp, tracer: otelx.Tracer(tp, scope)}
	m := otelx.Meter(mp, scope)
	t.search, _ = m.Float64Histogram("retrieval.search.duration",
		metric.WithDescription("Duration of Index.Search and Index.SearchBatch calls."),
		metric.WithUnit("s"), metric.WithExplicitBucketBoundaries(searchBuckets...))
	t.open, _ = m.Float64Histogram("retrieval.open.duration",
		metric.WithDescription("Duration of Open, the checks of every vector included."),
		metric.WithUnit("s"), metric.WithExplicitBucketBoundaries(otelx.DurationBuckets...))
	if t.search == nil || t.open == nil {
		// A provider that fails to create an instrument: record nothing.
		t.search, t.open = nil, nil
	}
	return t
}

// searchBuckets are finer than otelx.DurationBuckets: a search takes
// microseconds to tens of milliseconds.
var searchBuckets = []float64{0.0001, 0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5}

// off reports that nothing can record a span or a metric: the hot path
// then skips every piece of telemetry.
func (t *telemetry) off() bool {
	return t == nil || (otelx.TracingOff(t.tp) && otelx.MetricsOff(t.mp))
}

func precision(half bool) string {
	if half {
		return "float16"
	}
	return "float32"
}

// searchTraced is SearchBatch with its span and duration.
func (ix *Index) searchTraced(ctx context.Context, queries [][]float32, policy CorpusPolicy, k int) ([][]Hit, error) {
	t := ix.tel
	start := time.Now()
	ctx, span := t.tracer.Start(ctx, "retrieval.search", trace.WithSpanKind(trace.SpanKindInternal))
	defer span.End()
	var st searchStats
	res, err := ix.searchBatch(ctx, queries, policy, k, &st)
	common := []attribute.KeyValue{attrKernel.String(ix.kern.name), attrPrec.String(precision(ix.half))}
	if span.IsRecording() {
		span.SetAttributes(common...)
		span.SetAttributes(attrK.Int(k), attrQueries.Int(len(queries)),
			attrAdmitted.Int(st.admitted), attrScanned.Int(st.scanned),
			attrRescored.Int(st.rescored), attrWorkers.Int(st.workers))
	}
	if err != nil {
		kind := string(Classify(err))
		otelx.Fail(span, kind)
		common = append(common, otelx.ErrorType.String(kind))
	}
	if t.search != nil {
		t.search.Record(ctx, otelx.Duration(time.Since(start)), metric.WithAttributes(common...))
	}
	return res, err
}

// openTraced runs open inside the retrieval.open span.
func openTraced(ctx context.Context, t *telemetry, readOnly bool, open func(context.Context) (*Index, error)) (*Index, error) {
	if t.off() {
		return open(ctx)
	}
	start := time.Now()
	ctx, span := t.tracer.Start(ctx, "retrieval.open", trace.WithSpanKind(trace.SpanKindInternal))
	defer span.End()
	ix, err := open(ctx)
	attrs := []attribute.KeyValue{attrReadOnly.Bool(readOnly)}
	if err != nil {
		kind := string(Classify(err))
		otelx.Fail(span, kind)
		attrs = append(attrs, otelx.ErrorType.String(kind))
	} else {
		attrs = append(attrs, attrKernel.String(ix.kern.name), attrPrec.String(precision(ix.half)))
		if span.IsRecording() {
			ix.mu.RLock()
			rows, bytes := ix.rows-ix.dead, int64(0)
			if ix.mat != nil {
				bytes = ix.mat.bytes()
			}
			ix.mu.RUnlock()
			span.SetAttributes(attrRows.Int(rows), attrBytes.Int64(bytes))
		}
	}
	span.SetAttributes(attrs...)
	if t.open != nil {
		t.open.Record(ctx, otelx.Duration(time.Since(start)), metric.WithAttributes(attrs...))
	}
	return ix, err
}
