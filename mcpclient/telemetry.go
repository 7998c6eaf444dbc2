package mcpclient

import (
	"context"
	"errors"
	"net/url"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"

	"github.com/candorkit/candor/internal/otelx"
)

// instrumentationScope names the package's tracer and meter.
const instrumentationScope = "github.com/candorkit/candor/mcpclient"

// The semantic-convention names the package records (MCP client
// conventions, with the generic server, network and JSON-RPC ones).
const (
	attrMethod          = attribute.Key("mcp.method.name")
	attrSessionID       = attribute.Key("mcp.session.id")
	attrProtocolVersion = attribute.Key("mcp.protocol.version")
	attrToolName        = attribute.Key("gen_ai.tool.name")
	attrOperationName   = attribute.Key("gen_ai.operation.name")
	attrRequestID       = attribute.Key("jsonrpc.request.id")
	attrRPCStatusCode   = attribute.Key("rpc.response.status_code")
	attrServerAddress   = attribute.Key("server.address")
	attrServerPort      = attribute.Key("server.port")
	attrNetTransport    = attribute.Key("network.transport")
	attrNetProtocol     = attribute.Key("network.protocol.name")

	metricOperationDuration = "mcp.client.operation.duration"
)

// WithTracerProvider makes the client (or pool) trace its requests with
// tp: one client span per initialize, tools/list page and tools/call (see
// the package documentation). Nil or absent means the global provider
// (otel.GetTracerProvider), a no-op unless the program installed one.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(o *options) { o.tp = tp }
}

// WithMeterProvider makes the client (or pool) record
// mcp.client.operation.duration with mp. Nil or absent means the global
// provider (otel.GetMeterProvider), a no-op unless the program installed
// one.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(o *options) { o.mp = mp }
}

// WithSessionIDAttribute records the session id as the span attribute
// mcp.session.id, as the MCP semantic conventions describe. It is off by
// default: on many servers the session id lets whoever holds it use the
// session, so the client treats it like a token and never prints or logs
// it; turn it on only when the trace backend may hold such values.
func WithSessionIDAttribute() Option { return func(o *options) { o.sessionIDAttr = true } }

// telemetry is the tracer, the instrument and the fixed attributes of the
// clients built from one configuration.
type telemetry struct {
	tp        trace.TracerProvider // as given: nil is the global provider
	mp        metric.MeterProvider
	tracer    trace.Tracer
	duration  metric.Float64Histogram
	server    []attribute.KeyValue // server.address, server.port, network.*
	sessionID bool
}

func newTelemetry(cfg *options, u *url.URL) *telemetry {
	t := &telemetry{tp: cfg.tp, mp: cfg.mp, tracer: otelx.Tracer(cfg.tp, instrumentationScope), sessionID: cfg.sessionIDAttr}
	h, err := otelx.Meter(cfg.mp, instrumentationScope).Float64Histogram(metricOperationDuration,
		metric.WithUnit("s"),
		metric.WithDescription("The duration of the MCP request as observed by the client, from the time it was sent until the response was read."),
		metric.WithExplicitBucketBoundaries(otelx.DurationBuckets...))
	if err != nil {
		h = noop.Float64Histogram{}
	}
	t.duration = h
	port := 443
	if u.Scheme == "http" {
		port = 80
	}
	if p, err := strconv.Atoi(u.Port()); err == nil {
		port = p
	}
	t.server = []attribute.KeyValue{
		attrServerAddress.String(u.Hostname()), attrServerPort.Int(port),
		attrNetTransport.String("tcp"), attrNetProtocol.String("http"),
	}
	return t
}

// op is one instrumented MCP request (its retry on a new session
// included). A nil *op records nothing: telemetry is off.
type op struct {
	t            *telemetry
	ctx          context.Context
	span         trace.Span // nil when tracing is off
	metrics      bool
	start        time.Time
	method, tool string
	version      string // the protocol version of the session it ran on
	session      string // the session id it ran on
	requestID    int64
}

// begin starts the telemetry of a request: a client span named
// "{method} {tool}" (or "{method}") in the returned context. When neither
// traces nor metrics can be recorded it returns ctx and nil, with no
// allocation.
func (t *telemetry) begin(ctx context.Context, method, tool string) (context.Context, *op) {
	tracing, metrics := !otelx.TracingOff(t.tp), !otelx.MetricsOff(t.mp)
	if !tracing && !metrics {
		return ctx, nil
	}
	o := &op{t: t, metrics: metrics, start: time.Now(), method: method, tool: tool}
	if tracing {
		name := method
		attrs := make([]attribute.KeyValue, 0, 3+len(t.server))
		attrs = append(attrs, attrMethod.String(method))
		if tool != "" {
			name = method + " " + tool
			attrs = append(attrs, attrToolName.String(tool), attrOperationName.String("execute_tool"))
		}
		attrs = append(attrs, t.server...)
		ctx, o.span = t.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
		if !o.span.IsRecording() {
			o.span = nil
		}
	}
	o.ctx = ctx
	return ctx, o
}

// sent notes the session and JSON-RPC id of the request's latest attempt.
func (o *op) sent(s *session, id int64) {
	if o == nil {
		return
	}
	o.requestID = id
	if s.info.ProtocolVersion != "" {
		o.version = s.info.ProtocolVersion
	}
	if s.id != "" {
		o.session = s.id
	}
}

// agreed notes the protocol version and session an initialize obtained.
func (o *op) agreed(version, session string) {
	if o == nil {
		return
	}
	o.version, o.session = version, session
}

// end records the span's last attributes, its failure kind (Classify) when
// err is not nil, and the duration metric.
func (o *op) end(err error) {
	if o == nil {
		return
	}
	kind := ""
	if err != nil {
		kind = string(Classify(err))
	}
	if o.span != nil {
		attrs := make([]attribute.KeyValue, 0, 4)
		if o.requestID != 0 {
			attrs = append(attrs, attrRequestID.String(strconv.FormatInt(o.requestID, 10)))
		}
		if o.version != "" {
			attrs = append(attrs, attrProtocolVersion.String(o.version))
		}
		if o.t.sessionID && o.session != "" {
			attrs = append(attrs, attrSessionID.String(o.session))
		}
		if pe, ok := errors.AsType[*ProtocolError](err); ok {
			attrs = append(attrs, attrRPCStatusCode.String(strconv.Itoa(pe.Code)))
		}
		o.span.SetAttributes(attrs...)
		if kind != "" {
			otelx.Fail(o.span, kind)
		}
		o.span.End()
	}
	if o.metrics {
		attrs := make([]attribute.KeyValue, 0, 4+len(o.t.server))
		attrs = append(attrs, attrMethod.String(o.method))
		if o.tool != "" {
			attrs = append(attrs, attrToolName.String(o.tool))
		}
		if o.version != "" {
			attrs = append(attrs, attrProtocolVersion.String(o.version))
		}
		if kind != "" {
			attrs = append(attrs, otelx.ErrorType.String(kind))
		}
		attrs = append(attrs, o.t.server...)
		o.t.duration.Record(o.ctx, otelx.Duration(time.Since(o.start)), metric.WithAttributes(attrs...))
	}
}

// injectMeta puts the trace context of ctx in the request's params._meta,
// as the MCP conventions recommend (several messages can share one HTTP
// stream, whose headers then say nothing of each). Nothing is added when
// ctx carries no span context.
func injectMeta(ctx context.Context, params any) {
	m, ok := params.(map[string]any)
	if !ok || !trace.SpanContextFromContext(ctx).IsValid() {
		return
	}
	meta, _ := m["_meta"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
	}
	otelx.InjectMap(ctx, meta)
	m["_meta"] = meta
}
