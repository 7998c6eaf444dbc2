package n8n

import (
	"context"
	"errors"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/candorkit/candor/internal/otelx"
)

// scope is the instrumentation scope of the package's telemetry.
const scope = "github.com/candorkit/candor/n8n"

// Attribute keys (see doc.go). The HTTP ones are the semantic conventions'.
const (
	attrMethod     = attribute.Key("http.request.method")
	attrStatus     = attribute.Key("http.response.status_code")
	attrTemplate   = attribute.Key("url.template")
	attrScheme     = attribute.Key("url.scheme")
	attrServer     = attribute.Key("server.address")
	attrPort       = attribute.Key("server.port")
	attrWorkflowID = attribute.Key("n8n.workflow.id")
	attrEdition    = attribute.Key("n8n.edition")
	attrState      = attribute.Key("n8n.deploy.state")
	attrLive       = attribute.Key("n8n.deploy.live")
	attrStep       = attribute.Key("n8n.deploy.step")
	attrFailedStep = attribute.Key("n8n.deploy.failed_step")
)

// instruments are the tracer and instruments of one pair of providers.
type instruments struct {
	tracer trace.Tracer
	// request is http.client.request.duration; deploy is n8n.deploy.duration.
	request, deploy metric.Float64Histogram
}

// telemetry is a Client's instruments and the attributes of its server.
type telemetry struct {
	instruments
	// server are the server.address, server.port and url.scheme of the
	// base URL.
	server []attribute.KeyValue
}

// global are the instruments of the global providers, made once: the
// global meter keeps every instrument made on it, to delegate it later.
var global = sync.OnceValue(func() instruments { return makeInstruments(nil, nil) })

func makeInstruments(tp trace.TracerProvider, mp metric.MeterProvider) instruments {
	m := otelx.Meter(mp, scope)
	t := instruments{tracer: otelx.Tracer(tp, scope)}
	t.request, _ = m.Float64Histogram("http.client.request.duration",
		metric.WithUnit("s"),
		metric.WithDescription("Duration of the HTTP requests the client sent to n8n."),
		metric.WithExplicitBucketBoundaries(otelx.DurationBuckets...))
	t.deploy, _ = m.Float64Histogram("n8n.deploy.duration",
		metric.WithUnit("s"),
		metric.WithDescription("Duration of a Deploy, by the state it left."),
		metric.WithExplicitBucketBoundaries(otelx.DurationBuckets...))
	return t
}

func newTelemetry(o options, base *url.URL) *telemetry {
	t := &telemetry{}
	if o.tp == nil && o.mp == nil {
		t.instruments = global()
	} else {
		t.instruments = makeInstruments(o.tp, o.mp)
	}
	port := base.Port()
	if port == "" {
		port = "80"
		if base.Scheme == "https" {
			port = "443"
		}
	}
	n, _ := strconv.Atoi(port)
	t.server = []attribute.KeyValue{attrServer.String(base.Hostname()), attrPort.Int(n), attrScheme.String(base.Scheme)}
	return t
}

// startCall opens the client span of one request.
func (t *telemetry) startCall(ctx context.Context, method, route string) (context.Context, trace.Span) {
	ctx, span := t.tracer.Start(ctx, method+" "+route, trace.WithSpanKind(trace.SpanKindClient))
	if span.IsRecording() {
		span.SetAttributes(t.server...)
		span.SetAttributes(attrMethod.String(method), attrTemplate.String(route))
	}
	return ctx, span
}

// endCall records the request's outcome on its span and in
// http.client.request.duration; status is 0 when no response came.
func (t *telemetry) endCall(ctx context.Context, span trace.Span, start time.Time, method, route string, status int, err error) {
	kind := ""
	if err != nil {
		kind = errorKind(err)
	}
	if t.request.Enabled(ctx) {
		attrs := make([]attribute.KeyValue, 0, 7)
		attrs = append(attrs, t.server[:2]...)
		attrs = append(attrs, attrMethod.String(method), attrTemplate.String(route))
		if status != 0 {
			attrs = append(attrs, attrStatus.Int(status))
		}
		if kind != "" {
			attrs = append(attrs, otelx.ErrorType.String(kind))
		}
		t.request.Record(ctx, otelx.Duration(time.Since(start)), metric.WithAttributes(attrs...))
	}
	if span.IsRecording() {
		if status != 0 {
			span.SetAttributes(attrStatus.Int(status))
		}
		if kind != "" {
			otelx.Fail(span, kind)
		}
	}
	span.End()
}

// errorKind is the error.type of a failure: the status code of a
// *StatusError (as the HTTP conventions have it), else a stable
// snake_case word; doc.go lists them.
func errorKind(err error) string {
	var se *StatusError
	var ve *ValidationError
	var pe *PublicationError
	var de *DecodeError
	var ne net.Error
	switch {
	case errors.As(err, &ve):
		return "validation"
	case errors.Is(err, ErrConflict):
		return "conflict"
	case errors.As(err, &pe):
		return "publication"
	case errors.Is(err, ErrUnverified):
		return "unverified"
	case errors.Is(err, ErrTagsNotAttached):
		return "tags_not_attached"
	case errors.As(err, &se):
		return strconv.Itoa(se.StatusCode)
	case errors.Is(err, ErrResponseTooLarge):
		return "response_too_large"
	case errors.As(err, &de):
		return "decode"
	case errors.Is(err, ErrIncompleteList):
		return "incomplete_list"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.As(err, &ne):
		return "transport"
	}
	return "_OTHER"
}

// routeOf is the url.template of a request path below the base URL: the
// collection and action names kept, every id (and the credential type of
// /credentials/schema/…) replaced by a placeholder, so that no id, key or
// cursor reaches a span name or a metric.
func routeOf(path string) string {
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	var b strings.Builder
	i := 0
	switch {
	case len(segs) >= 2 && segs[0] == "api" && segs[1] == "v1":
		b.WriteString("/api/v1")
		i = 2
	case len(segs) >= 1 && segs[0] == "rest":
		b.WriteString("/rest")
		i = 1
	default:
		return "/{path}"
	}
	for n := 0; i < len(segs); i, n = i+1, n+1 {
		seg := segs[i]
		b.WriteByte('/')
		switch {
		case n == 0 && collections[seg]:
			b.WriteString(seg)
		case n == 1 && segs[i-1] == "credentials" && seg == "schema":
			b.WriteString(seg)
			if i+1 < len(segs) {
				b.WriteString("/{type}")
				i++
			}
		case n == 1:
			b.WriteString("{id}")
		case n >= 2 && actions[seg]:
			b.WriteString(seg)
		default:
			b.WriteString("{segment}")
		}
	}
	return b.String()
}

var (
	collections = map[string]bool{"workflows": true, "executions": true, "credentials": true, "tags": true, "login": true}
	actions     = map[string]bool{"activate": true, "deactivate": true, "publish": true, "unpublish": true, "tags": true,
		"run": true, "publication-status": true}
)

// startDeploy opens the span of one Deploy.
func (t *telemetry) startDeploy(ctx context.Context, id ID) (context.Context, trace.Span) {
	ctx, span := t.tracer.Start(ctx, "n8n.deploy", trace.WithSpanKind(trace.SpanKindInternal))
	if span.IsRecording() {
		span.SetAttributes(attrWorkflowID.String(string(id)))
	}
	return ctx, span
}

// endDeploy records the deploy's outcome on its span and in
// n8n.deploy.duration.
func (t *telemetry) endDeploy(ctx context.Context, span trace.Span, start time.Time, rep Report, err error) {
	kind := ""
	if err != nil {
		kind = errorKind(err)
	}
	if t.deploy.Enabled(ctx) {
		attrs := []attribute.KeyValue{attrState.String(string(rep.State)), attrEdition.String(editionLabel(rep.Edition))}
		if kind != "" {
			attrs = append(attrs, otelx.ErrorType.String(kind))
		}
		t.deploy.Record(ctx, otelx.Duration(time.Since(start)), metric.WithAttributes(attrs...))
	}
	if span.IsRecording() {
		span.SetAttributes(attrState.String(string(rep.State)), attrEdition.String(editionLabel(rep.Edition)))
		if rep.Live != LiveNone {
			span.SetAttributes(attrLive.String(string(rep.Live)))
		}
		var de *DeployError
		if errors.As(err, &de) {
			span.SetAttributes(attrFailedStep.String(de.Step))
		}
		if kind != "" {
			otelx.Fail(span, kind)
		}
	}
	span.End()
}

// startStep opens the span of one deploy step.
func (t *telemetry) startStep(ctx context.Context, name string) (context.Context, trace.Span) {
	ctx, span := t.tracer.Start(ctx, "n8n.deploy."+name, trace.WithSpanKind(trace.SpanKindInternal))
	if span.IsRecording() {
		span.SetAttributes(attrStep.String(name))
	}
	return ctx, span
}

// endStep ends a step's span, failed with the error's kind.
func endStep(span trace.Span, err error) {
	if err != nil {
		otelx.Fail(span, errorKind(err))
	}
	span.End()
}

// endRestore ends the restore's span: failed unless the state is restored.
func endRestore(span trace.Span, state DeployState, err error) {
	if span.IsRecording() {
		span.SetAttributes(attrState.String(string(state)))
		switch {
		case err != nil:
			otelx.Fail(span, errorKind(err))
		case state != StateRestored:
			otelx.Fail(span, string(state))
		}
	}
	span.End()
}

// editionLabel is the n8n.edition attribute: "1", "2", or "unknown"
// before the edition is known.
func editionLabel(e Edition) string {
	switch e {
	case Edition1:
		return "1"
	case Edition2:
		return "2"
	}
	return "unknown"
}
