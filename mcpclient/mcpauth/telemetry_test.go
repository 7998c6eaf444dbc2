package mcpauth_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/candorkit/candor/internal/otelx/oteltest"
	"github.com/candorkit/candor/mcpclient"
	"github.com/candorkit/candor/mcpclient/mcpauth"
)

// An authorization is one SpanAuthorize span whose children are the client
// spans of the discovery and token requests, each recorded in
// MetricRequestDuration; no span or metric carries the secret or a token.
func TestTelemetry(t *testing.T) {
	ctx := context.Background()
	op := startProvider(t)
	srv := startProtected(t, op.Issuer(), withChallengeScope(scopeRead))
	require.NoError(t, setUpProvider(op, []string{scopeRead, scopeAdmin}, srv.URL))
	rec := oteltest.New(t)
	a, err := mcpauth.New(mcpauth.ClientCredentials(), mcpauth.WithClient(serviceID, serviceSecret),
		mcpauth.WithTracerProvider(rec.TracerProvider()), mcpauth.WithMeterProvider(rec.MeterProvider()))
	require.NoError(t, err)
	c, err := mcpclient.Dial(ctx, srv.URL, mcpclient.WithAuthorizer(a))
	require.NoError(t, err)
	_, err = c.Call(ctx, "echo", map[string]any{"text": "hi"})
	require.NoError(t, err)
	_, err = c.Call(ctx, "admin", nil) // a 403, then the step-up
	require.NoError(t, err)
	require.NoError(t, c.Close())

	auths := rec.SpansNamed(mcpauth.SpanAuthorize)
	require.Len(t, auths, 2, "the first 401 and the step-up")
	first := oteltest.Attrs(auths[0].Attributes())
	assert.Equal(t, "client_credentials", first["mcpauth.flow"].AsString())
	assert.Equal(t, int64(http.StatusUnauthorized), first["mcpauth.challenge.status_code"].AsInt64())
	assert.Equal(t, int64(http.StatusForbidden), oteltest.Attrs(auths[1].Attributes())["mcpauth.challenge.status_code"].AsInt64())
	for _, s := range auths {
		assert.Equal(t, codes.Unset, s.Status().Code)
	}

	ops := map[string]int{}
	for _, s := range rec.Spans() {
		if s.SpanKind() != trace.SpanKindClient {
			continue
		}
		at := oteltest.Attrs(s.Attributes())
		op := at["mcpauth.operation"].AsString()
		ops[op]++
		assert.Equal(t, "127.0.0.1", at["server.address"].AsString())
		assert.NotZero(t, at["http.response.status_code"].AsInt64())
		parent := s.Parent().SpanID()
		assert.True(t, parent == auths[0].SpanContext().SpanID() || parent == auths[1].SpanContext().SpanID(),
			"a %s request is a child of an authorization", op)
	}
	assert.Equal(t, 2, ops["token"], "one token request per authorization")
	assert.GreaterOrEqual(t, ops["metadata"], 2, "resource and server metadata")

	m, ok := rec.Metric(ctx, mcpauth.MetricRequestDuration)
	require.True(t, ok)
	assert.Equal(t, uint64(2), oteltest.HistogramCount(m, attribute.String("mcpauth.operation", "token")))

	var tokens []string
	for _, r := range srv.Seen() {
		tokens = append(tokens, r.Token)
	}
	rec.AssertNoSecrets(t, append(tokens, serviceSecret)...)
}

// A failed authorization marks its span with the Classify kind.
func TestTelemetryFailure(t *testing.T) {
	ctx := context.Background()
	op := startProvider(t)
	srv := startProtected(t, op.Issuer(), withResource("https://elsewhere.example/mcp"))
	require.NoError(t, setUpProvider(op, []string{scopeRead}, srv.URL))
	rec := oteltest.New(t)
	a, err := mcpauth.New(mcpauth.ClientCredentials(), mcpauth.WithClient(serviceID, serviceSecret),
		mcpauth.WithTracerProvider(rec.TracerProvider()), mcpauth.WithMeterProvider(rec.MeterProvider()))
	require.NoError(t, err)
	_, err = mcpclient.Dial(ctx, srv.URL, mcpclient.WithAuthorizer(a))
	require.ErrorIs(t, err, mcpauth.ErrResourceMismatch)
	s := rec.Span(t, mcpauth.SpanAuthorize)
	assert.Equal(t, codes.Error, s.Status().Code)
	assert.Equal(t, string(mcpauth.KindResourceMismatch), oteltest.Attrs(s.Attributes())["error.type"].AsString())
}
