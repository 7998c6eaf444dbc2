package oteltest_test

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

func traceEventAttr(k, v string) trace.EventOption {
	return trace.WithAttributes(attribute.String(k, v))
}
