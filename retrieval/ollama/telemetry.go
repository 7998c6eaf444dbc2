package ollama

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/candorkit/candor/internal/otelx"
)

const scope = "github.com/candorkit/candor/retrieval/ollama"

// WithTracerProvider sets where the embedder's spans go: one HTTP client
// span per request (see the package documentation). Without it, or with
// nil, the global tracer provider is used, which records nothing unless the
// program installed one.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(o *options) { o.tp = tp }
}

// spanAttrs are the attributes every request span starts with: the
// server's host and port and the scheme, never the path or a query.
func spanAttrs(u *url.URL, model string) []attribute.KeyValue {
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	p, _ := strconv.Atoi(port)
	return []attribute.KeyValue{
		attribute.String("http.request.method", http.MethodPost),
		attribute.String("server.address", host),
		attribute.Int("server.port", p),
		attribute.String("url.scheme", u.Scheme),
		attribute.String("gen_ai.operation.name", "embeddings"),
		attribute.String("gen_ai.request.model", model),
	}
}

// errorType is the error.type of a failed request: the status code of a
// *StatusError, and otherwise a kind documented in the package
// documentation.
func errorType(err error) string {
	var se *StatusError
	var re *ResponseError
	switch {
	case errors.As(err, &se):
		return strconv.Itoa(se.StatusCode)
	case errors.As(err, &re):
		return "invalid_response"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "timeout"
	}
	return "request_failed"
}

// traced runs one request inside its client span.
func (e *Embedder) traced(ctx context.Context, n int, do func(context.Context, *int) ([][]float32, error)) ([][]float32, error) {
	if otelx.TracingOff(e.tp) {
		var status int
		return do(ctx, &status)
	}
	ctx, span := e.tracer.Start(ctx, http.MethodPost, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(e.attrs...), trace.WithAttributes(attribute.Int("gen_ai.request.inputs", n)))
	defer span.End()
	var status int
	vecs, err := do(ctx, &status)
	if status != 0 {
		span.SetAttributes(attribute.Int("http.response.status_code", status))
	}
	if err != nil {
		otelx.Fail(span, errorType(err))
	}
	return vecs, err
}
