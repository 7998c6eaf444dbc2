package mandate_test

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"

	"github.com/candorkit/candor/internal/otelx/oteltest"
	"github.com/candorkit/candor/tokenexchange"
	"github.com/candorkit/candor/tokenexchange/mandate"
	"github.com/candorkit/candor/tokenexchange/oidctest"
)

// tracedStore opens a store at path recording to rec.
func (f *fixture) tracedStore(t *testing.T, rec *oteltest.Recorder, path string, key []byte, cfg *tokenexchange.Config) *mandate.Store {
	t.Helper()
	if cfg == nil {
		cfg = f.config()
	}
	s, err := mandate.Open(context.Background(), path, mandate.WithKey(key), mandate.WithAgent(agentClient, cfg),
		mandate.WithLogger(f.logger), mandate.WithTracerProvider(rec.TracerProvider()), mandate.WithMeterProvider(rec.MeterProvider()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestTelemetryOfARedemption(t *testing.T) {
	f := newFixture(t, oidctest.Options{})
	rec := oteltest.New(t)
	key := newKey(t)
	s := f.tracedStore(t, rec, filepath.Join(t.TempDir(), "m.db"), key, nil)
	ctx := context.Background()
	offline := f.offlineToken(alice)
	require.NoError(t, s.Grant(ctx, alice, agentClient, offline))
	tok, err := s.Token(ctx, alice, agentClient)
	require.NoError(t, f.record(err))
	f.trackToken(tok)

	red := rec.Span(t, "mandate redeem")
	a := oteltest.Attrs(red.Attributes())
	assert.Equal(t, agentClient, a["mandate.agent"].AsString())
	assert.Equal(t, "redeemed", a["mandate.outcome"].AsString())
	assert.Contains(t, a, "mandate.lease.wait")
	assert.GreaterOrEqual(t, a["mandate.lease.wait"].AsFloat64(), 0.0)
	assert.NotContains(t, a, "error.type")
	assert.Equal(t, codes.Unset, red.Status().Code)
	for _, child := range []string{"tokenexchange refresh", "tokenexchange exchange"} {
		assert.Equal(t, red.SpanContext().SpanID(), rec.Span(t, child).Parent().SpanID(), "%s is a child of the redemption", child)
	}
	for _, r := range f.op.Requests() {
		assert.Contains(t, r.Traceparent, red.SpanContext().TraceID().String(), r.GrantType)
	}

	m, ok := rec.Metric(ctx, "mandate.redemption.duration")
	require.True(t, ok)
	assert.Equal(t, uint64(1), oteltest.HistogramCount(m, attribute.String("mandate.agent", agentClient), attribute.String("mandate.outcome", "redeemed")))
	w, ok := rec.Metric(ctx, "mandate.lease.wait.duration")
	require.True(t, ok)
	assert.Equal(t, uint64(1), oteltest.HistogramCount(w))
	rec.AssertNoSecrets(t, offline, tok.AccessToken, f.agentSecret, string(key), alice)
}

// One failure of each kind a redemption can end with, with error.type the
// Classify kind on the span and the metric.
func TestTelemetryRedemptionFailures(t *testing.T) {
	f := newFixture(t, oidctest.Options{})
	ctx := context.Background()
	for _, tc := range []struct {
		want mandate.Kind
		run  func(t *testing.T, rec *oteltest.Recorder) error
	}{
		{mandate.KindNoMandate, func(t *testing.T, rec *oteltest.Recorder) error {
			s := f.tracedStore(t, rec, filepath.Join(t.TempDir(), "m.db"), newKey(t), nil)
			_, err := s.Token(ctx, "dave", agentClient)
			return err
		}},
		{mandate.KindUnknownAgent, func(t *testing.T, rec *oteltest.Recorder) error {
			s := f.tracedStore(t, rec, filepath.Join(t.TempDir(), "m.db"), newKey(t), nil)
			_, err := s.Token(ctx, alice, "other-agent")
			return err
		}},
		{mandate.KindRevoked, func(t *testing.T, rec *oteltest.Recorder) error {
			s := f.tracedStore(t, rec, filepath.Join(t.TempDir(), "m.db"), newKey(t), nil)
			require.NoError(t, s.Grant(ctx, "carol", agentClient, f.offlineToken("carol")))
			require.NoError(t, s.Revoke(ctx, "carol", agentClient))
			_, err := s.Token(ctx, "carol", agentClient)
			return err
		}},
		{mandate.KindUnreadable, func(t *testing.T, rec *oteltest.Recorder) error {
			path := filepath.Join(t.TempDir(), "m.db")
			require.NoError(t, f.store(t, path, newKey(t), nil).Grant(ctx, alice, agentClient, f.offlineToken(alice)))
			_, err := f.tracedStore(t, rec, path, newKey(t), nil).Token(ctx, alice, agentClient)
			return err
		}},
		{mandate.KindRejected, func(t *testing.T, rec *oteltest.Recorder) error {
			s := f.tracedStore(t, rec, filepath.Join(t.TempDir(), "m.db"), newKey(t), nil)
			require.NoError(t, s.Grant(ctx, "bob", agentClient, f.offlineToken("bob")))
			require.NoError(t, f.op.RevokeUserSessions(ctx, "bob", agentClient))
			_, err := s.Token(ctx, "bob", agentClient)
			return err
		}},
		{mandate.KindRotationNotPersisted, func(t *testing.T, rec *oteltest.Recorder) error {
			path := filepath.Join(t.TempDir(), "m.db")
			key := newKey(t)
			other := f.store(t, path, key, nil)
			cfg := f.config()
			cfg.HTTPClient = &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
				resp, err := http.DefaultTransport.RoundTrip(r)
				if err == nil {
					require.NoError(t, other.Revoke(context.Background(), alice, agentClient))
				}
				return resp, err
			})}
			s := f.tracedStore(t, rec, path, key, cfg)
			require.NoError(t, s.Grant(ctx, alice, agentClient, f.offlineToken(alice)))
			_, err := s.Token(ctx, alice, agentClient)
			return err
		}},
		{mandate.Kind(tokenexchange.KindInvalidRequest), func(t *testing.T, rec *oteltest.Recorder) error {
			cfg := f.config()
			cfg.Audience = []string{"billing"} // the refresh works, the exchange is refused
			s := f.tracedStore(t, rec, filepath.Join(t.TempDir(), "m.db"), newKey(t), cfg)
			require.NoError(t, s.Grant(ctx, "carol", agentClient, f.offlineToken("carol")))
			_, err := s.Token(ctx, "carol", agentClient)
			return err
		}},
	} {
		t.Run(string(tc.want), func(t *testing.T) {
			rec := oteltest.New(t)
			err := f.record(tc.run(t, rec))
			require.Equal(t, tc.want, mandate.Classify(err), "%v", err)
			red := rec.Span(t, "mandate redeem")
			a := oteltest.Attrs(red.Attributes())
			assert.Equal(t, string(tc.want), a["error.type"].AsString())
			assert.Equal(t, "failed", a["mandate.outcome"].AsString())
			assert.Equal(t, codes.Error, red.Status().Code)
			assert.Equal(t, string(tc.want), red.Status().Description)
			m, ok := rec.Metric(ctx, "mandate.redemption.duration")
			require.True(t, ok)
			assert.Equal(t, uint64(1), oteltest.HistogramCount(m, attribute.String("error.type", string(tc.want))))
			rec.AssertNoSecrets(t, f.Secrets()...)
		})
	}
}
