package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/candorkit/candor/examples/internal/catalog"
	"github.com/candorkit/candor/internal/oidctest"
)

// Identities of the embedded demo.
const (
	demoUser    = "marie"              // the person asking (sub)
	webClient   = "availability-web"   // the front end she logged in at
	agentClient = "availability-agent" // this agent, a confidential client allowed to exchange
	mcpAudience = "catalog-mcp"        // the catalog, a bearer-only resource server
)

// demoTokenLifetime is the lifetime of the demo user's token (long enough to
// try the -serve mode by hand).
const demoTokenLifetime = time.Hour

// catalogCall is one HTTP request the embedded catalog's bearer check saw:
// the token it carried and what verifying it at the provider gave.
type catalogCall struct {
	Token  string
	Claims *oidctest.AccessClaims // nil when refused
	Err    error
}

// embedded is the catalog and the OpenID provider the demo starts on
// 127.0.0.1 when no real service is named.
type embedded struct {
	Catalog     *catalog.Server
	OP          *oidctest.Provider
	MCPURL      string
	AgentSecret string

	stopCatalog func()

	mu    sync.Mutex
	calls []catalogCall
}

// startEmbedded starts the provider (demo user, front-end client, agent
// client, catalog audience) and the catalog, whose bearer check verifies
// every request's token at the provider for the catalog's audience
// (signature, issuer, expiry, aud): the caller's own token, issued for the
// agent, is refused; only the exchanged token gets through.
func startEmbedded(ctx context.Context, log *slog.Logger) (_ *embedded, err error) {
	op, err := oidctest.Start(oidctest.Options{})
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			op.Close()
		}
	}()
	secret := make([]byte, 24)
	_, _ = rand.Read(secret) // crypto/rand.Read never fails
	e := &embedded{OP: op, AgentSecret: hex.EncodeToString(secret)}
	for _, c := range []oidctest.Client{
		{ID: webClient, Audiences: []string{agentClient}, AccessTokenLifetime: demoTokenLifetime},
		{ID: agentClient, Secret: e.AgentSecret, TokenExchange: true, Audiences: []string{mcpAudience}},
		{ID: mcpAudience},
	} {
		if err := op.AddClient(c); err != nil {
			return nil, err
		}
	}
	if err := op.AddUser(oidctest.User{ID: demoUser, Username: demoUser, Name: "Marie Martin", Email: "marie@example.com"}); err != nil {
		return nil, err
	}

	e.Catalog, err = catalog.New(catalog.WithBearerCheck(e.check), catalog.WithLogger(log))
	if err != nil {
		return nil, err
	}
	e.MCPURL, e.stopCatalog, err = e.Catalog.Start(ctx)
	if err != nil {
		return nil, err
	}
	return e, nil
}

// check is the catalog's bearer check: the token must be a live access token
// of the provider with the catalog in its audience.
func (e *embedded) check(ctx context.Context, token string) error {
	claims, err := e.OP.VerifyAccessToken(ctx, token, mcpAudience)
	e.mu.Lock()
	e.calls = append(e.calls, catalogCall{Token: token, Claims: claims, Err: err})
	e.mu.Unlock()
	return err
}

// Calls returns what the catalog's bearer check saw, in order.
func (e *embedded) Calls() []catalogCall {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]catalogCall(nil), e.calls...)
}

// UserToken issues the demo user's access token at the front-end client:
// sub marie, azp availability-web, aud availability-agent.
func (e *embedded) UserToken(ctx context.Context) (string, error) {
	tok, err := e.OP.UserAccessToken(ctx, demoUser, webClient)
	if err != nil {
		return "", fmt.Errorf("issuing the demo user's token: %w", err)
	}
	return tok, nil
}

// Close stops the catalog and the provider.
func (e *embedded) Close() {
	e.stopCatalog()
	e.OP.Close()
}
