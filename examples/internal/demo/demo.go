package demo

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/candorkit/candor/examples/internal/catalog"
	"github.com/candorkit/candor/tokenexchange"
	"github.com/candorkit/candor/tokenexchange/oidctest"
)

// Identities every demo world shares.
const (
	// User is the demo person: the sub claim of her tokens.
	User = "marie"
	// Audience is the catalog's client id at the provider, a bearer-only
	// resource server, and so the aud value a token must carry to reach it.
	Audience = "catalog-mcp"
)

// ErrNoFrontEnd is returned by UserToken when the world was started without
// WithFrontEnd.
var ErrNoFrontEnd = errors.New("demo: no front-end client (WithFrontEnd) to issue the user's token at")

// Option configures Start.
type Option func(*config)

type config struct {
	frontEnd         string
	frontEndLifetime time.Duration
	callLog          bool
	logger           *slog.Logger
}

// WithFrontEnd registers clientID as the public front end the demo user
// logged in at: the access tokens UserToken issues there name the agent as
// their audience (azp clientID, aud the agent) and live for lifetime (0 or
// less: the provider's default, 5 minutes).
func WithFrontEnd(clientID string, lifetime time.Duration) Option {
	return func(c *config) { c.frontEnd, c.frontEndLifetime = clientID, max(lifetime, 0) }
}

// WithCallLog keeps, for Calls, every catalog request's bearer token and
// what verifying it gave. Without it only Verified's counts are kept, which
// is what a long-running server wants: the log grows with every request.
func WithCallLog() Option {
	return func(c *config) { c.callLog = true }
}

// WithLogger sets the catalog server's logger (default: discard). A nil
// logger is ignored.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) {
		if l != nil {
			c.logger = l
		}
	}
}

// Call is one HTTP request the catalog's bearer check saw. Its String,
// GoString and LogValue hide the token.
type Call struct {
	// Token is the bearer token the request carried.
	Token string
	// Claims is what the provider verified; nil when it refused the token.
	Claims *oidctest.AccessClaims
	// Err is why the provider refused the token (an
	// oidctest.ErrTokenRejected); nil when verified.
	Err error
}

func (c Call) String() string {
	switch {
	case c.Err != nil:
		return fmt.Sprintf("catalog call{token=<redacted> refused: %v}", c.Err)
	case c.Claims == nil:
		return "catalog call{token=<redacted>}"
	}
	return fmt.Sprintf("catalog call{token=<redacted> sub=%q azp=%q aud=%q}", c.Claims.Subject, c.Claims.AuthorizedParty, c.Claims.Audience)
}

// GoString hides the token from %#v.
func (c Call) GoString() string { return c.String() }

// LogValue hides the token from slog.
func (c Call) LogValue() slog.Value { return slog.StringValue(c.String()) }

// World is a running demo world. Close it when done.
type World struct {
	// OP is the OpenID provider.
	OP *oidctest.Provider
	// Catalog is the MCP catalog server, served at MCPURL.
	Catalog *catalog.Server
	MCPURL  string
	// Agent is the agent's client id; AgentSecret its generated secret.
	Agent       string
	AgentSecret string

	frontEnd    string
	callLog     bool
	stopCatalog func()

	mu                sync.Mutex
	verified, refused int
	calls             []Call
}

// Start starts the provider (User, the agent's client agent, the catalog's
// Audience and, with WithFrontEnd, the front end) and the catalog behind
// its bearer check, both on 127.0.0.1 at free ports. The catalog also stops
// when ctx ends.
func Start(ctx context.Context, agent string, opts ...Option) (_ *World, err error) {
	cfg := config{logger: slog.New(slog.DiscardHandler)}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	if agent == "" || agent == Audience || agent == cfg.frontEnd {
		return nil, fmt.Errorf("demo: agent client id %q must be set and differ from the catalog's and the front end's", agent)
	}
	op, err := oidctest.Start(oidctest.Options{})
	if err != nil {
		return nil, fmt.Errorf("starting the embedded OpenID provider: %w", err)
	}
	defer func() {
		if err != nil {
			op.Close()
		}
	}()
	secret := make([]byte, 24)
	_, _ = rand.Read(secret) // crypto/rand.Read never fails
	w := &World{OP: op, Agent: agent, AgentSecret: hex.EncodeToString(secret), frontEnd: cfg.frontEnd, callLog: cfg.callLog}

	regs := []error{
		op.AddUser(oidctest.User{ID: User, Username: User, Name: "Marie Martin", Email: "marie@example.com"}),
		op.AddClient(oidctest.Client{ID: agent, Secret: w.AgentSecret, TokenExchange: true, Audiences: []string{Audience}}),
		op.AddClient(oidctest.Client{ID: Audience}),
	}
	if cfg.frontEnd != "" {
		regs = append(regs, op.AddClient(oidctest.Client{ID: cfg.frontEnd, Audiences: []string{agent}, AccessTokenLifetime: cfg.frontEndLifetime}))
	}
	if err := errors.Join(regs...); err != nil {
		return nil, fmt.Errorf("configuring the embedded OpenID provider: %w", err)
	}

	if w.Catalog, err = catalog.New(catalog.WithBearerCheck(w.check), catalog.WithLogger(cfg.logger)); err != nil {
		return nil, err
	}
	if w.MCPURL, w.stopCatalog, err = w.Catalog.Start(ctx); err != nil {
		return nil, err
	}
	return w, nil
}

// check is the catalog's bearer check: the token must be a live access
// token of the provider with the catalog in its audience.
func (w *World) check(ctx context.Context, token string) error {
	claims, err := w.OP.VerifyAccessToken(ctx, token, Audience)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		w.refused++
	} else {
		w.verified++
	}
	if w.callLog {
		w.calls = append(w.calls, Call{Token: token, Claims: claims, Err: err})
	}
	return err
}

// Verified returns how many catalog requests carried a token the provider
// verified for the catalog, and how many were refused. Requests without a
// bearer token are refused by the catalog before the check: see
// Catalog.Rejected.
func (w *World) Verified() (ok, refused int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.verified, w.refused
}

// Calls returns, in order, what the catalog's bearer check saw; nil without
// WithCallLog.
func (w *World) Calls() []Call {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Call(nil), w.calls...)
}

// AgentConfig is the agent's token configuration at the provider: its
// client credentials and the catalog's audience. Set Logger as needed.
func (w *World) AgentConfig() *tokenexchange.Config {
	return &tokenexchange.Config{
		TokenURL: w.OP.TokenURL(), ClientID: w.Agent, ClientSecret: w.AgentSecret,
		Audience: []string{Audience},
	}
}

// UserToken issues the demo user's access token at the front end (sub User,
// azp the front end, aud the agent), as if she had just logged in there.
func (w *World) UserToken(ctx context.Context) (string, error) {
	if w.frontEnd == "" {
		return "", ErrNoFrontEnd
	}
	tok, err := w.OP.UserAccessToken(ctx, User, w.frontEnd)
	if err != nil {
		return "", fmt.Errorf("issuing the demo user's token: %w", err)
	}
	return tok, nil
}

// OfflineToken issues the refresh token (scope offline_access) by which
// the demo user grants the agent a standing mandate; the agent redeems it
// at the provider with AgentConfig's credentials.
func (w *World) OfflineToken(ctx context.Context) (string, error) {
	tok, err := w.OP.OfflineToken(ctx, User, w.Agent)
	if err != nil {
		return "", fmt.Errorf("issuing %s's offline token: %w", User, err)
	}
	return tok, nil
}

// String names the world's parts and hides the agent's secret.
func (w *World) String() string {
	return fmt.Sprintf("demo world{catalog=%s provider=%s agent=%s secret=<redacted>}", w.MCPURL, w.OP.Issuer(), w.Agent)
}

// GoString hides the agent's secret from %#v.
func (w *World) GoString() string { return w.String() }

// Close stops the catalog, then the provider.
func (w *World) Close() {
	w.stopCatalog()
	w.OP.Close()
}
