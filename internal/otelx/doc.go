// Package otelx holds the OpenTelemetry plumbing every candor package shares,
// so that each instruments itself the same way.
//
// Libraries depend on the OpenTelemetry API only. Tracer and Meter take the
// provider a caller passed through the package's WithTracerProvider or
// WithMeterProvider option; nil means the global providers
// (otel.GetTracerProvider, otel.GetMeterProvider), which are no-ops unless
// the program installed an SDK. The instrumentation scope is the importing
// package's path, and the scope version is the module's Version.
//
// TracingOff and MetricsOff report that nothing can record (no provider
// given, none installed globally), so that a hot path skips building spans
// and attributes and costs nothing when telemetry is unused.
//
// Fail marks a span failed with a stable failure kind (the package's
// Classify value): it sets the attribute error.type and the span status
// Error with the kind as its description. It never records an error's text,
// which can carry evidence a peer sent (tokens echoed in a body).
//
// Propagator is the W3C trace-context propagator to inject into outgoing
// requests: the global one when the program set one, else
// propagation.TraceContext. Inject writes it into HTTP headers, and
// InjectMap into a map such as an MCP request's params._meta; Extract
// reads the context an incoming request carries.
//
// Duration converts a time.Duration to the seconds a duration histogram
// records; DurationBuckets are the bucket boundaries the semantic
// conventions recommend for such histograms.
//
// The test kit is the sub-package oteltest: an SDK recording to memory, and
// AssertNoSecrets, which scans everything recorded for a secret in any
// encoding.
//
// # Failure taxonomy
//
// The package returns no errors. A provider that fails to create an
// instrument yields the no-op instrument: telemetry never fails a call.
package otelx
