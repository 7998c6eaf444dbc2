package tokenexchange_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/candorkit/candor/internal/oidctest"
	"github.com/candorkit/candor/tokenexchange"
)

// demoProvider starts an in-process OpenID provider with a Keycloak-like
// realm: alice logs in at "webapp", whose tokens name "agent" in aud; the
// agent may exchange them and its audience mapper produces "mcp-server".
func demoProvider() (*oidctest.Provider, error) {
	op, err := oidctest.Start(oidctest.Options{})
	if err != nil {
		return nil, err
	}
	err = errors.Join(
		op.AddUser(oidctest.User{ID: "alice", Username: "alice"}),
		op.AddClient(oidctest.Client{ID: "webapp", Secret: "webapp-secret", Audiences: []string{"agent"}}),
		op.AddClient(oidctest.Client{ID: "agent", Secret: "agent-secret", TokenExchange: true, Audiences: []string{"mcp-server"}}),
		op.AddClient(oidctest.Client{ID: "mcp-server", Secret: "mcp-secret"}),
	)
	if err != nil {
		op.Close()
		return nil, err
	}
	return op, nil
}

// The interactive flow: the agent exchanges the user's access token for one
// scoped to the tool server. sub stays the user, azp names the agent.
func Example_exchange() {
	ctx := context.Background()
	op, err := demoProvider()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer op.Close()
	userToken, err := op.UserAccessToken(ctx, "alice", "webapp")
	if err != nil {
		fmt.Println(err)
		return
	}

	cfg := &tokenexchange.Config{
		TokenURL:     op.TokenURL(),
		ClientID:     "agent",
		ClientSecret: "agent-secret",
		Audience:     []string{"mcp-server"},
	}
	tok, err := cfg.Exchange(ctx, userToken)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("sub:", tok.Subject, "azp:", tok.AuthorizedParty, "aud:", tok.Audience)

	// The provider never adds an audience: asking for another one fails.
	cfg.Audience = []string{"billing"}
	_, err = cfg.Exchange(ctx, userToken)
	var e *tokenexchange.Error
	if errors.As(err, &e) {
		fmt.Println(e.StatusCode, e.Code()+":", e.Description())
	}
	// Output:
	// sub: alice azp: agent aud: [mcp-server]
	// 400 invalid_request: Requested audience not available: billing
}

// The unattended flow: the user granted the agent a mandate (their offline
// refresh token, sealed at rest); at 06:00 the agent redeems it, or stops.
func Example_mandate() {
	ctx := context.Background()
	op, err := demoProvider()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer op.Close()
	dir, err := os.MkdirTemp("", "mandates")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	// The key comes from the environment in a real deployment.
	key, err := tokenexchange.ParseKey("ASNFZ4mrze8BI0VniavN7wEjRWeJq83vASNFZ4mrze8=")
	if err != nil {
		fmt.Println(err)
		return
	}
	store, err := tokenexchange.OpenMandateStore(ctx, filepath.Join(dir, "mandates.db"), tokenexchange.MandateOptions{
		Key: key,
		Agents: map[string]*tokenexchange.Config{"agent": {
			TokenURL: op.TokenURL(), RevocationURL: op.RevocationURL(),
			ClientID: "agent", ClientSecret: "agent-secret", Audience: []string{"mcp-server"},
		}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()

	// No mandate: no identity, no action, and no request to the provider.
	_, err = store.Token(ctx, "alice", "agent")
	fmt.Println("before grant, no mandate:", errors.Is(err, tokenexchange.ErrNoMandate), "requests:", op.TokenRequests())

	offline, err := op.OfflineToken(ctx, "alice", "agent")
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := store.Grant(ctx, "alice", "agent", offline); err != nil {
		fmt.Println(err)
		return
	}
	tok, err := store.Token(ctx, "alice", "agent")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("sub:", tok.Subject, "azp:", tok.AuthorizedParty, "aud:", tok.Audience)

	// Revoke erases the mandate, then revokes the refresh token at the
	// provider (RFC 7009) since the agent's Config names a RevocationURL.
	if err := store.Revoke(ctx, "alice", "agent"); err != nil {
		fmt.Println(err)
		return
	}
	_, err = store.Token(ctx, "alice", "agent")
	fmt.Println("after revoke:", errors.Is(err, tokenexchange.ErrMandateRevoked), errors.Is(err, tokenexchange.ErrNoMandate))
	fmt.Println("refresh tokens still valid at the provider:", op.ActiveRefreshTokens("alice", "agent"))
	// Output:
	// before grant, no mandate: true requests: 0
	// sub: alice azp: agent aud: [mcp-server]
	// after revoke: true true
	// refresh tokens still valid at the provider: 0
}
