package tokenexchange_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/candorkit/candor/tokenexchange"
	"github.com/candorkit/candor/tokenexchange/oidctest"
)

// syncBuffer collects everything the package logs during one test.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

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
	t       testing.TB
	op      *oidctest.Provider
	logs    *syncBuffer
	logger  *slog.Logger
	secrets []string
	mu      sync.Mutex
	errs    []string

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
	f := &fixture{t: t, op: op, logs: &syncBuffer{}, agentSecret: secret("agent"), intruderSecret: secret("intruder")}
	f.logger = slog.New(slog.NewJSONHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	f.secrets = append(f.secrets, f.agentSecret, f.intruderSecret)
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
	t.Cleanup(f.scan)
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

// track adds a value that must never be logged or formatted.
func (f *fixture) track(s ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.secrets = append(f.secrets, s...)
}

func (f *fixture) trackToken(t *tokenexchange.Token) {
	if t != nil && t.Token != nil {
		f.track(t.AccessToken)
		if t.RefreshToken != "" {
			f.track(t.RefreshToken)
		}
	}
}

// record keeps every rendering of err for the final scan and returns it.
func (f *fixture) record(err error) error {
	if err != nil {
		f.mu.Lock()
		f.errs = append(f.errs, err.Error(), fmt.Sprintf("%v|%+v|%#v|%s|%q", err, err, err, err, err))
		f.mu.Unlock()
		f.logger.Error("test observed error", slog.Any("error", err))
	}
	return err
}

func (f *fixture) scan() {
	f.mu.Lock()
	defer f.mu.Unlock()
	haystacks := append([]string{f.logs.String()}, f.errs...)
	for _, s := range f.secrets {
		if len(s) < 8 {
			f.t.Errorf("tracked secret too short to scan for: %d bytes", len(s))
			continue
		}
		for _, h := range haystacks {
			if strings.Contains(h, s) {
				f.t.Errorf("a secret (%.6s…) appears in logs or an error string: %.200q", s, h)
			}
		}
	}
}

func (f *fixture) tokenRequests() int64 { return f.op.TokenRequests() }
