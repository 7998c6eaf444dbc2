package otelx_test

import (
	"go.opentelemetry.io/otel/metric"

	"github.com/candorkit/candor/internal/otelx"
)

func metricBuckets() []metric.Float64HistogramOption {
	return []metric.Float64HistogramOption{metric.WithUnit("s"), metric.WithExplicitBucketBoundaries(otelx.DurationBuckets...)}
}
