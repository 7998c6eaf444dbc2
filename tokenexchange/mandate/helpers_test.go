package mandate_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/candorkit/candor/internal/leakcheck"
	"github.com/candorkit/candor/tokenexchange"
	"github.com/candorkit/candor/tokenexchange/mandate"
	"github.com/candorkit/candor/tokenexchange/oidctest"
)

// randomSecret is a new random value, not tracked.
func randomSecret(prefix string) string {
	b := make([]byte, 18)
	_, _ = rand.Read(b)
	return prefix + "-" + base64.RawURLEncoding.EncodeToString(b)
}

const (
	agentClient = "agent"
	mcpServer   = "mcp-server"
	alice       = "alice"
)

// fixture is a real OP with a Keycloak-like realm: the agent (token
// exchange on, audience mapper for the MCP server) and the users alice, bob,
// carol and dave. At cleanup it scans every log line and every recorded
// error for every token and secret the test used.
type fixture struct {
	*leakcheck.Watch
	t      testing.TB
	op     *oidctest.Provider
	logger *slog.Logger

	agentSecret string
}

func newFixture(t testing.TB, opts oidctest.Options) *fixture {
	t.Helper()
	op := oidctest.New(t, opts)
	w := leakcheck.New(t)
	f := &fixture{Watch: w, t: t, op: op, logger: w.Logger, agentSecret: w.Secret("agent")}
	for _, u := range []string{alice, "bob", "carol", "dave"} {
		require.NoError(t, op.AddUser(oidctest.User{ID: u, Username: u}))
	}
	require.NoError(t, op.AddClient(oidctest.Client{
		ID: agentClient, Secret: f.agentSecret, TokenExchange: true,
		Audiences: []string{mcpServer}, DefaultScopes: []string{"openid"},
	}))
	require.NoError(t, op.AddClient(oidctest.Client{ID: mcpServer, Secret: randomSecret("mcp")}))
	return f
}

// config is the agent's exchange config for the MCP server.
func (f *fixture) config() *tokenexchange.Config {
	return &tokenexchange.Config{
		TokenURL:     f.op.TokenURL(),
		ClientID:     agentClient,
		ClientSecret: f.agentSecret,
		Audience:     []string{mcpServer},
		Logger:       f.logger,
	}
}

func (f *fixture) offlineToken(user string) string {
	f.t.Helper()
	tok, err := f.op.OfflineToken(context.Background(), user, agentClient)
	require.NoError(f.t, err)
	f.track(tok)
	return tok
}

// store opens a store at path with the agent's config (or cfg).
func (f *fixture) store(t *testing.T, path string, key []byte, cfg *tokenexchange.Config) *mandate.Store {
	t.Helper()
	if cfg == nil {
		cfg = f.config()
	}
	s, err := mandate.Open(context.Background(), path,
		mandate.WithKey(key), mandate.WithAgent(agentClient, cfg), mandate.WithLogger(f.logger))
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// track adds values that must never be logged or formatted.
func (f *fixture) track(s ...string) { f.Track(s...) }

func (f *fixture) trackToken(t *tokenexchange.Token) {
	if t != nil && t.Token != nil {
		f.track(t.AccessToken)
		if t.RefreshToken != "" {
			f.track(t.RefreshToken)
		}
	}
}

// record keeps every rendering of err for the final scan and returns it.
func (f *fixture) record(err error) error { return f.Record(err) }

func newKey(t testing.TB) []byte {
	t.Helper()
	k := make([]byte, mandate.KeySize)
	_, _ = rand.Read(k)
	return k
}

func sealedOf(t *testing.T, s *mandate.Store, user string) []byte {
	t.Helper()
	var b []byte
	require.NoError(t, s.DB().QueryRow(`SELECT sealed FROM candor_mandates WHERE user_id = ? AND agent = ?`, user, agentClient).Scan(&b))
	return b
}
