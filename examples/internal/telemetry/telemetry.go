package telemetry

import (
	"context"
	"errors"
	"net/url"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Variables Setup reads.
const (
	EnvEndpoint        = "OTEL_EXPORTER_OTLP_ENDPOINT"
	EnvTracesEndpoint  = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	EnvMetricsEndpoint = "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"
	EnvServiceName     = "OTEL_SERVICE_NAME"
	EnvSDKDisabled     = "OTEL_SDK_DISABLED"
)

// Usage is the paragraph a binary's -h prints about these variables.
const Usage = `OpenTelemetry (none set: nothing is exported):
  OTEL_EXPORTER_OTLP_ENDPOINT  base URL of an OTLP/HTTP collector (traces and metrics)
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_METRICS_ENDPOINT  per-signal URLs
  OTEL_SERVICE_NAME            service.name (default: the program's name)
  OTEL_SDK_DISABLED=true       export nothing
`

// ConfigError names a variable whose value cannot be used.
type ConfigError struct {
	Variable string
	Reason   string
}

func (e *ConfigError) Error() string { return e.Variable + " " + e.Reason }

// Telemetry is what Setup installed.
type Telemetry struct {
	// Enabled reports whether an SDK was installed (an endpoint was set).
	Enabled bool
	// Service is the service.name exported.
	Service string

	tp *sdktrace.TracerProvider
	mp *sdkmetric.MeterProvider
}

// Shutdown flushes and stops the exporters; it does nothing when nothing
// was installed.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	if t == nil || !t.Enabled {
		return nil
	}
	return errors.Join(t.tp.Shutdown(ctx), t.mp.Shutdown(ctx))
}

// Setup reads the environment through lookup and, when an OTLP endpoint is
// set, installs the SDK as the global providers for service (the
// program's name, unless OTEL_SERVICE_NAME). It does no I/O: the
// exporters connect when they first export.
func Setup(ctx context.Context, service string, lookup func(string) (string, bool)) (*Telemetry, error) {
	get := func(name string) string {
		v, _ := lookup(name)
		return strings.TrimSpace(v)
	}
	if name := get(EnvServiceName); name != "" {
		service = name
	}
	t := &Telemetry{Service: service}
	if strings.EqualFold(get(EnvSDKDisabled), "true") {
		return t, nil
	}
	base := get(EnvEndpoint)
	traces, metrics := get(EnvTracesEndpoint), get(EnvMetricsEndpoint)
	if base == "" && traces == "" && metrics == "" {
		return t, nil
	}
	if base != "" {
		if err := checkURL(EnvEndpoint, base); err != nil {
			return nil, err
		}
		if traces == "" {
			traces = strings.TrimSuffix(base, "/") + "/v1/traces"
		}
		if metrics == "" {
			metrics = strings.TrimSuffix(base, "/") + "/v1/metrics"
		}
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(attribute.String("service.name", service)))
	if err != nil {
		return nil, &ConfigError{Variable: EnvServiceName, Reason: "cannot form the resource: " + err.Error()}
	}
	var topts []sdktrace.TracerProviderOption
	topts = append(topts, sdktrace.WithResource(res))
	if traces != "" {
		if err := checkURL(EnvTracesEndpoint, traces); err != nil {
			return nil, err
		}
		exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(traces))
		if err != nil {
			return nil, &ConfigError{Variable: EnvTracesEndpoint, Reason: "cannot be used"}
		}
		topts = append(topts, sdktrace.WithBatcher(exp))
	}
	mopts := []sdkmetric.Option{sdkmetric.WithResource(res)}
	if metrics != "" {
		if err := checkURL(EnvMetricsEndpoint, metrics); err != nil {
			return nil, err
		}
		exp, err := otlpmetrichttp.New(ctx, otlpmetrichttp.WithEndpointURL(metrics))
		if err != nil {
			return nil, &ConfigError{Variable: EnvMetricsEndpoint, Reason: "cannot be used"}
		}
		mopts = append(mopts, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)))
	}
	t.Enabled = true
	t.tp = sdktrace.NewTracerProvider(topts...)
	t.mp = sdkmetric.NewMeterProvider(mopts...)
	otel.SetTracerProvider(t.tp)
	otel.SetMeterProvider(t.mp)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	return t, nil
}

func checkURL(name, v string) error {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return &ConfigError{Variable: name, Reason: "must be an absolute http or https URL"}
	}
	return nil
}
