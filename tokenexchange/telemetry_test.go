package tokenexchange_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/oauth2"

	"github.com/candorkit/candor/internal/otelx/oteltest"
	isecret "github.com/candorkit/candor/internal/secret"
	"github.com/candorkit/candor/tokenexchange"
	"github.com/candorkit/candor/tokenexchange/oidctest"
)

func traced(cfg *tokenexchange.Config, rec *oteltest.Recorder) *tokenexchange.Config {
	cfg.TracerProvider, cfg.MeterProvider = rec.TracerProvider(), rec.MeterProvider()
	return cfg
}

// noSecrets scans the recorded telemetry for the test's tokens and the
// client secret in every form it was sent in.
func noSecrets(t *testing.T, rec *oteltest.Recorder, cfg *tokenexchange.Config, tokens ...string) {
	t.Helper()
	rec.AssertNoSecrets(t, append(tokens, cfg.ClientSecret, isecret.Basic(cfg.ClientID, cfg.ClientSecret),
		isecret.Basic(url.QueryEscape(cfg.ClientID), url.QueryEscape(cfg.ClientSecret)))...)
}

func TestTelemetryOfExchangeRefreshRevoke(t *testing.T) {
	f := newFixture(t, oidctest.Options{}, 5*time.Minute)
	rec := oteltest.New(t)
	cfg := traced(f.config(), rec)
	cfg.RevocationURL = f.op.RevocationURL()
	ctx, parent := rec.TracerProvider().Tracer("test").Start(context.Background(), "agent run")
	subject, offline := f.userToken(), f.offlineToken()

	tok, err := cfg.Exchange(ctx, subject)
	require.NoError(t, f.record(err))
	f.trackToken(tok)
	refreshed, err := cfg.Refresh(ctx, offline, tokenexchange.RefreshOptions{})
	require.NoError(t, f.record(err))
	f.trackToken(refreshed)
	require.NoError(t, f.record(cfg.Revoke(ctx, refreshed.RefreshToken, tokenexchange.RevokeOptions{TokenTypeHint: "refresh_token"})))
	parent.End()

	ex := rec.Span(t, "tokenexchange exchange")
	a := oteltest.Attrs(ex.Attributes())
	assert.Equal(t, trace.SpanKindClient, ex.SpanKind())
	assert.Equal(t, codes.Unset, ex.Status().Code)
	assert.Equal(t, tokenexchange.GrantTypeTokenExchange, a["oauth2.grant_type"].AsString())
	assert.Equal(t, []string{mcpServer}, a["oauth2.audience"].AsStringSlice())
	assert.Equal(t, agentClient, a["oauth2.client_id"].AsString())
	assert.Equal(t, tokenexchange.TokenTypeAccessToken, a["oauth2.requested_token_type"].AsString())
	assert.Equal(t, "success", a["tokenexchange.outcome"].AsString())
	assert.Equal(t, int64(http.StatusOK), a["http.response.status_code"].AsInt64())
	assert.Equal(t, "127.0.0.1", a["server.address"].AsString())
	assert.NotContains(t, a, "error.type")
	assert.Equal(t, parent.SpanContext().SpanID(), ex.Parent().SpanID())

	assert.Equal(t, "refresh_token", oteltest.Attrs(rec.Span(t, "tokenexchange refresh").Attributes())["oauth2.grant_type"].AsString())
	assert.Equal(t, "success", oteltest.Attrs(rec.Span(t, "tokenexchange revoke").Attributes())["tokenexchange.outcome"].AsString())

	// The trace context reached the provider on each request.
	reqs := f.op.Requests()
	require.NotEmpty(t, reqs)
	for _, r := range append(reqs[len(reqs)-2:], f.op.RevocationRequests()...) {
		require.NotEmpty(t, r.Traceparent, "%s", r.GrantType)
		assert.Contains(t, r.Traceparent, parent.SpanContext().TraceID().String())
	}
	assert.Contains(t, reqs[len(reqs)-2].Traceparent, ex.SpanContext().SpanID().String(), "the exchange span is the parent at the provider")

	m, ok := rec.Metric(context.Background(), "tokenexchange.client.operation.duration")
	require.True(t, ok)
	assert.Equal(t, "s", m.Unit)
	for _, op := range []string{"exchange", "refresh", "revoke"} {
		assert.Equal(t, uint64(1), oteltest.HistogramCount(m, attribute.String("tokenexchange.operation", op), attribute.String("tokenexchange.outcome", "success")), op)
	}
	noSecrets(t, rec, cfg, subject, offline, tok.AccessToken, refreshed.AccessToken, refreshed.RefreshToken)
}

// Without a provider the token request carries no traceparent.
func TestNoTraceparentWithoutTelemetry(t *testing.T) {
	f := newFixture(t, oidctest.Options{}, 5*time.Minute)
	tok, err := f.config().Exchange(context.Background(), f.userToken())
	require.NoError(t, f.record(err))
	f.trackToken(tok)
	reqs := f.op.Requests()
	require.NotEmpty(t, reqs)
	assert.Empty(t, reqs[len(reqs)-1].Traceparent)
}

// One failure of each kind a request can end with: error.type is the
// Classify kind, the status says Error with the kind (never the text),
// and the metric has the same error.type.
func TestTelemetryFailureKinds(t *testing.T) {
	f := newFixture(t, oidctest.Options{}, 5*time.Minute)
	subject := f.userToken()
	// A provider double for answers the real one is not made to give.
	answers := map[string]struct {
		status int
		body   string
	}{
		"invalid_target":      {400, `{"error":"invalid_target"}`},
		"unauthorized_client": {400, `{"error":"unauthorized_client"}`},
		"oauth_error":         {400, `{"error":"slow_down"}`},
		"unavailable":         {503, ``},
		"unauthorized":        {401, ``},
		"http_status":         {404, ``},
		"invalid_response":    {200, `{"access_token":"tel-opaque-access-token-1234","token_type":"Bearer"}`},
	}
	double := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := answers[strings.TrimPrefix(r.URL.Path, "/")]
		if a.body != "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(a.status)
		fmt.Fprint(w, a.body)
	}))
	t.Cleanup(double.Close)
	doubleCfg := func(kind string) *tokenexchange.Config {
		return &tokenexchange.Config{TokenURL: double.URL + "/" + kind, ClientID: agentClient, ClientSecret: f.agentSecret}
	}
	type run func(t *testing.T, rec *oteltest.Recorder) (*tokenexchange.Config, error)
	exchangeWith := func(change func(*tokenexchange.Config)) run {
		return func(t *testing.T, rec *oteltest.Recorder) (*tokenexchange.Config, error) {
			cfg := f.config()
			change(cfg)
			_, err := traced(cfg, rec).Exchange(context.Background(), subject)
			return cfg, err
		}
	}
	cases := []struct {
		want tokenexchange.Kind
		span string
		run  run
	}{
		{tokenexchange.KindNoSubjectToken, "exchange", func(t *testing.T, rec *oteltest.Recorder) (*tokenexchange.Config, error) {
			cfg := traced(f.config(), rec)
			_, err := cfg.Exchange(context.Background(), "")
			return cfg, err
		}},
		{tokenexchange.KindInvalidRequest, "exchange", exchangeWith(func(c *tokenexchange.Config) { c.Audience = []string{"billing"} })},
		{tokenexchange.KindInvalidScope, "exchange", exchangeWith(func(c *tokenexchange.Config) { c.Scopes = []string{"admin"} })},
		{tokenexchange.KindAccessDenied, "exchange", exchangeWith(func(c *tokenexchange.Config) { c.ClientID, c.ClientSecret = intruder, f.intruderSecret })},
		{tokenexchange.KindInvalidClient, "exchange", exchangeWith(func(c *tokenexchange.Config) { c.ClientSecret = "tel-wrong-client-secret" })},
		{tokenexchange.KindInvalidGrant, "refresh", func(t *testing.T, rec *oteltest.Recorder) (*tokenexchange.Config, error) {
			cfg := traced(f.config(), rec)
			_, err := cfg.Refresh(context.Background(), "tel-not-a-refresh-token-5678", tokenexchange.RefreshOptions{})
			return cfg, err
		}},
		{tokenexchange.KindRotationNotPersisted, "refresh", func(t *testing.T, rec *oteltest.Recorder) (*tokenexchange.Config, error) {
			cfg := traced(f.config(), rec)
			_, err := cfg.Refresh(context.Background(), f.offlineToken(), tokenexchange.RefreshOptions{
				Rotated: func(ctx context.Context, next string) error { f.track(next); return errors.New("disk full") },
			})
			return cfg, err
		}},
		{tokenexchange.KindCanceled, "exchange", func(t *testing.T, rec *oteltest.Recorder) (*tokenexchange.Config, error) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			cfg := traced(f.config(), rec)
			_, err := cfg.Exchange(ctx, subject)
			return cfg, err
		}},
		{tokenexchange.KindTimeout, "exchange", func(t *testing.T, rec *oteltest.Recorder) (*tokenexchange.Config, error) {
			ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
			defer cancel()
			cfg := traced(f.config(), rec)
			_, err := cfg.Exchange(ctx, subject)
			return cfg, err
		}},
		{tokenexchange.KindTransport, "exchange", func(t *testing.T, rec *oteltest.Recorder) (*tokenexchange.Config, error) {
			cfg := traced(&tokenexchange.Config{TokenURL: "http://127.0.0.1:1/token", ClientID: agentClient, ClientSecret: f.agentSecret}, rec)
			_, err := cfg.Exchange(context.Background(), subject)
			return cfg, err
		}},
	}
	for kind := range answers {
		cases = append(cases, struct {
			want tokenexchange.Kind
			span string
			run  run
		}{tokenexchange.Kind(kind), "exchange", func(t *testing.T, rec *oteltest.Recorder) (*tokenexchange.Config, error) {
			cfg := traced(doubleCfg(kind), rec)
			_, err := cfg.Exchange(context.Background(), subject)
			return cfg, err
		}})
	}
	for _, tc := range cases {
		t.Run(string(tc.want), func(t *testing.T) {
			rec := oteltest.New(t)
			cfg, err := tc.run(t, rec)
			f.record(err)
			require.Equal(t, tc.want, tokenexchange.Classify(err), "%v", err)
			s := rec.Span(t, "tokenexchange "+tc.span)
			a := oteltest.Attrs(s.Attributes())
			assert.Equal(t, string(tc.want), a["error.type"].AsString())
			assert.Equal(t, "failure", a["tokenexchange.outcome"].AsString())
			assert.Equal(t, codes.Error, s.Status().Code)
			assert.Equal(t, string(tc.want), s.Status().Description)
			assert.Empty(t, s.Events())
			m, ok := rec.Metric(context.Background(), "tokenexchange.client.operation.duration")
			require.True(t, ok)
			assert.Equal(t, uint64(1), oteltest.HistogramCount(m, attribute.String("error.type", string(tc.want))))
			noSecrets(t, rec, cfg, subject, "tel-opaque-access-token-1234", "tel-not-a-refresh-token-5678", f.agentSecret, f.intruderSecret)
		})
	}
}

// An invalid Config is refused before anything could be traced.
func TestTelemetryConfigErrorHasNoSpan(t *testing.T) {
	rec := oteltest.New(t)
	cfg := &tokenexchange.Config{TokenURL: "http://idp.example.com/token", ClientID: "a", ClientSecret: "b",
		TracerProvider: rec.TracerProvider(), MeterProvider: rec.MeterProvider(), AuthStyle: oauth2.AuthStyleInHeader}
	_, err := cfg.Exchange(context.Background(), "x")
	assert.Equal(t, tokenexchange.KindConfig, tokenexchange.Classify(err))
	assert.Empty(t, rec.Spans())
}
