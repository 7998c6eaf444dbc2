package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/candorkit/candor/examples/internal/demo"
)

// Identities of the embedded demo.
const (
	demoUser    = demo.User            // the person asking (sub)
	webClient   = "availability-web"   // the front end she logged in at
	agentClient = "availability-agent" // this agent, a confidential client allowed to exchange
	mcpAudience = demo.Audience        // the catalog, a bearer-only resource server
)

// demoTokenLifetime is the lifetime of the demo user's token (long enough to
// try the -serve mode by hand).
const demoTokenLifetime = time.Hour

// startEmbedded starts the demo world of examples/internal/demo: the
// provider (the demo user, the front-end client, this agent's client, the
// catalog's audience) and the catalog, whose bearer check verifies every
// request's token at the provider for the catalog's audience, so that the
// caller's own token, issued for the agent, is refused and only the
// exchanged token gets through. extra adds options (demo.WithCallLog).
func startEmbedded(ctx context.Context, log *slog.Logger, extra ...demo.Option) (*demo.World, error) {
	opts := append([]demo.Option{demo.WithFrontEnd(webClient, demoTokenLifetime), demo.WithLogger(log)}, extra...)
	return demo.Start(ctx, agentClient, opts...)
}
