package ollama

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/candorkit/candor/internal/otelx/oteltest"
)

// Each request is an HTTP client span naming the server by host and port
// only, with the W3C trace context sent to the server; a failure carries
// its error.type; no input text appears in any span.
func TestTelemetryClientSpans(t *testing.T) {
	rec := oteltest.New(t)
	var traceparents []string
	srv, _ := server(t, func(w http.ResponseWriter, req request) bool {
		if len(req.Input) > 0 && req.Input[0] == "garbage" {
			_, _ = io.WriteString(w, `not json`)
			return true
		}
		return false
	})
	inner := srv.Config.Handler
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		traceparents = append(traceparents, r.Header.Get("traceparent"))
		inner.ServeHTTP(w, r)
	})
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	e, err := New(srv.URL, "nomic-embed-text", WithTracerProvider(rec.TracerProvider()))
	require.NoError(t, err)
	ctx := t.Context()

	texts := []string{"the first private passage", "the second private passage"}
	_, err = e.Embed(ctx, texts)
	require.NoError(t, err)
	missing, err := New(srv.URL, "no-such-model", WithTracerProvider(rec.TracerProvider()))
	require.NoError(t, err)
	_, err = missing.Embed(ctx, []string{"a third private passage"})
	require.Error(t, err)
	_, err = e.Embed(ctx, []string{"garbage"})
	require.Error(t, err)
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = e.Embed(canceled, []string{"a fourth private passage"})
	require.Error(t, err)

	spans := rec.SpansNamed("POST")
	require.Len(t, spans, 4)
	var kinds []string
	for _, sp := range spans {
		a := oteltest.Attrs(sp.Attributes())
		assert.Equal(t, u.Hostname(), a["server.address"].AsString())
		assert.Equal(t, u.Port(), strconv.FormatInt(a["server.port"].AsInt64(), 10))
		assert.Equal(t, "embeddings", a["gen_ai.operation.name"].AsString())
		kinds = append(kinds, a["error.type"].AsString())
	}
	assert.Equal(t, []string{"", "404", "invalid_response", "canceled"}, kinds)
	assert.Equal(t, int64(200), oteltest.Attrs(spans[0].Attributes())["http.response.status_code"].AsInt64())
	require.Len(t, traceparents, 3, "the canceled request never left")
	for i, tp := range traceparents {
		assert.Contains(t, tp, spans[i].SpanContext().TraceID().String())
	}
	rec.AssertNoSecrets(t, append(texts, "a third private passage", "a fourth private passage", "/api/embed")...)
}
