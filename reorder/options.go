package reorder

import (
	"log/slog"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// Option configures NewRunner, Plan and Run. WithLogger applies to all
// three; WithTracerProvider and WithMeterProvider to NewRunner and Plan
// (Run, the scheduler, records no telemetry of its own and refuses them).
type Option func(*options)

type options struct {
	logger *slog.Logger
	tp     trace.TracerProvider
	mp     metric.MeterProvider
	// otel: WithTracerProvider or WithMeterProvider was given.
	otel bool
}

// discard is the logger of a caller who gave none.
var discard = slog.New(slog.DiscardHandler)

func newOptions(opts []Option) options {
	var o options
	for _, f := range opts {
		if f != nil {
			f(&o)
		}
	}
	if o.logger == nil {
		o.logger = discard
	}
	return o
}

// WithLogger sets where NewRunner's Runner, Run and Plan log. Nil or absent
// means nothing is logged. Logs never hold a mandate's token; an error is
// logged under the key "error".
func WithLogger(l *slog.Logger) Option {
	return func(o *options) { o.logger = l }
}

// WithTracerProvider sets the OpenTelemetry tracer provider of the spans
// reorder.run (Runner.Run) and reorder.plan (Plan); nil or absent means the
// global provider. See the package documentation for the attributes.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(o *options) { o.tp, o.otel = tp, true }
}

// WithMeterProvider sets the OpenTelemetry meter provider of the metric
// reorder.run.duration; nil or absent means the global provider.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(o *options) { o.mp, o.otel = mp, true }
}
