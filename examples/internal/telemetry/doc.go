// Package telemetry configures the OpenTelemetry SDK of an example binary
// from the standard environment, so that every binary exports the same way.
//
// Setup reads, through the lookup function it is given (os.LookupEnv in a
// binary):
//
//	OTEL_EXPORTER_OTLP_ENDPOINT          base URL of an OTLP/HTTP collector
//	                                     (traces to /v1/traces, metrics to /v1/metrics)
//	OTEL_EXPORTER_OTLP_TRACES_ENDPOINT   full URL for traces (overrides the base)
//	OTEL_EXPORTER_OTLP_METRICS_ENDPOINT  full URL for metrics (overrides the base)
//	OTEL_SERVICE_NAME                    service.name of the resource (default: the program's name)
//	OTEL_SDK_DISABLED                    "true": export nothing
//
// With none of the endpoints set, nothing is installed and nothing is
// exported: the libraries keep the global no-op providers. Otherwise Setup
// installs an SDK tracer provider (batching to otlptracehttp) and meter
// provider (a periodic reader over otlpmetrichttp) as the global providers,
// and the W3C trace-context and baggage propagator, so every candor package
// of the program, which falls back to the global providers, exports. The
// exporters read the rest of the standard OTEL_EXPORTER_OTLP_* variables
// (headers, timeout, compression) themselves.
//
// # Failure taxonomy
//
//   - *ConfigError: a variable holds a value Setup cannot use (an endpoint
//     that is not an absolute http or https URL); a binary exits 3. Its
//     message names the variable, never the value (an endpoint URL can
//     carry credentials).
//   - Shutdown returns the exporters' flush errors, joined.
package telemetry
