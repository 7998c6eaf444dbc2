package tokenexchange_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"log/slog"
	"testing"
	"time"

	"github.com/candorkit/candor/internal/leakcheck"
	"github.com/candorkit/candor/tokenexchange"
	"github.com/candorkit/candor/tokenexchange/oidctest"
)

// secret is a new random value, not tracked (a client's that never
// leaves the provider).
func secret(prefix string) string {
	b := make([]byte, 18)
	_, _ = rand.Read(b)
	return prefix + "-" + base64.RawURLEncoding.EncodeToString(b)
}

// fixture is a real OP with a Keycloak-like realm: a web front end whose
// tokens carry the agent in aud, the agent (token exchange on, audience
// mapper for the MCP server), an intruder client, and the user alice.
// At cleanup it scans every log line and every recorded error for every
// token and secret the test used.
type fixture struct {
	*leakcheck.Watch
	t      testing.TB
	op     *oidctest.Provider
	logger *slog.Logger

	agentSecret, intruderSecret string
}

const (
	webClient   = "webapp"
	agentClient = "agent"
	intruder    = "intruder"
	mcpServer   = "mcp-server"
	alice       = "alice"
)

func newFixture(t testing.TB, opts oidctest.Options, agentLifetime time.Duration) *fixture {
	t.Helper()
	op := oidctest.New(t, opts)
	w := leakcheck.New(t)
	f := &fixture{Watch: w, t: t, op: op, logger: w.Logger, agentSecret: w.Secret("agent"), intruderSecret: w.Secret("intruder")}
	must(t, op.AddUser(oidctest.User{ID: alice, Username: "alice", Email: "alice@example.com"}))
	must(t, op.AddClient(oidctest.Client{ID: webClient, Secret: secret("web"), Audiences: []string{agentClient}, DefaultScopes: []string{"openid", "profile"}}))
	must(t, op.AddClient(oidctest.Client{
		ID: agentClient, Secret: f.agentSecret, TokenExchange: true,
		Audiences:     []string{mcpServer},
		DefaultScopes: []string{"openid"}, OptionalScopes: []string{"inventory:read"},
		AccessTokenLifetime: agentLifetime,
	}))
	must(t, op.AddClient(oidctest.Client{ID: intruder, Secret: f.intruderSecret, TokenExchange: true, Audiences: []string{mcpServer}}))
	must(t, op.AddClient(oidctest.Client{ID: mcpServer, Secret: secret("mcp")}))
	return f
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
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

// userToken is alice's access token from the web front end (aud = agent).
func (f *fixture) userToken() string {
	f.t.Helper()
	tok, err := f.op.UserAccessToken(context.Background(), alice, webClient)
	must(f.t, err)
	f.track(tok)
	return tok
}

func (f *fixture) offlineToken() string {
	f.t.Helper()
	tok, err := f.op.OfflineToken(context.Background(), alice, agentClient)
	must(f.t, err)
	f.track(tok)
	return tok
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

func (f *fixture) tokenRequests() int64 { return f.op.TokenRequests() }
