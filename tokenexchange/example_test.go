package tokenexchange_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/candorkit/candor/tokenexchange"
	"github.com/candorkit/candor/tokenexchange/oidctest"
)

// A configuration that cannot be used is refused before any request: here
// a plain-http token endpoint that is not on loopback, which would send the
// person's token in clear.
func ExampleClassify() {
	cfg := &tokenexchange.Config{
		TokenURL:     "http://idp.example.com/realms/shop/protocol/openid-connect/token",
		ClientID:     "agent",
		ClientSecret: "agent-secret",
		Audience:     []string{"mcp-server"},
	}
	_, err := cfg.Exchange(context.Background(), "the-person's-access-token")
	fmt.Println(tokenexchange.Classify(err), errors.Is(err, tokenexchange.ErrConfig))
	fmt.Println(err)

	// A context that ends before the answer is a "canceled" or "timeout"
	// failure; a nil error is KindNone.
	fmt.Printf("%q %q\n", tokenexchange.Classify(context.Canceled), tokenexchange.Classify(nil))
	// Output:
	// config true
	// tokenexchange: invalid config: TokenURL must be https (plain http only on loopback)
	// "canceled" ""
}

// A TokenSource for one incoming request: the agent's exchanged token, kept
// until ExpiryMargin before it expires, for use with oauth2.NewClient or an
// MCP client. The Config is validated here, once; printing the source shows
// neither the subject token nor the client secret.
func ExampleConfig_TokenSource() {
	cfg := &tokenexchange.Config{
		TokenURL:     "https://idp.example.com/realms/shop/protocol/openid-connect/token",
		ClientID:     "agent",
		ClientSecret: "agent-secret",
		Audience:     []string{"mcp-server"},
		ExpiryMargin: time.Minute,
	}
	ts := cfg.TokenSource(context.Background(), "the-person's-access-token")
	fmt.Println(ts)
	fmt.Println(cfg)

	cfg.ClientID = ""
	_, err := cfg.TokenSource(context.Background(), "the-person's-access-token").Token()
	fmt.Println(err)
	// Output:
	// tokenexchange.TokenSource{client_id="agent"}
	// tokenexchange.Config{TokenURL="https://idp.example.com/realms/shop/protocol/openid-connect/token" RevocationURL="" ClientID="agent" ClientSecret=[REDACTED] Audience=["mcp-server"] Resource=[] Scopes=[] RequestedTokenType="" AuthStyle=0}
	// tokenexchange: invalid config: ClientID is required
}

// The interactive flow, against an in-process OpenID provider as strict as
// Keycloak's token exchange: the agent exchanges the person's access token
// for one scoped to the tool server. sub stays the person, azp names the
// agent; an audience the provider does not grant is refused.
func Example_exchange() {
	ctx := context.Background()
	op, err := oidctest.Start(oidctest.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer op.Close()
	err = errors.Join(
		op.AddUser(oidctest.User{ID: "alice", Username: "alice"}),
		// Tokens alice gets at the web front end name the agent in aud.
		op.AddClient(oidctest.Client{ID: "webapp", Secret: "webapp-secret", Audiences: []string{"agent"}}),
		op.AddClient(oidctest.Client{ID: "agent", Secret: "agent-secret", TokenExchange: true, Audiences: []string{"mcp-server"}}),
		op.AddClient(oidctest.Client{ID: "mcp-server", Secret: "mcp-secret"}),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	login, err := op.Login(ctx, "alice", "webapp")
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
	tok, err := cfg.Exchange(ctx, login.AccessToken)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("sub:", tok.Subject, "azp:", tok.AuthorizedParty, "aud:", tok.Audience)

	// The provider never adds an audience: asking for another one fails.
	cfg.Audience = []string{"billing"}
	_, err = cfg.Exchange(ctx, login.AccessToken)
	fmt.Println(tokenexchange.Classify(err))
	var se *tokenexchange.StatusError
	if errors.As(err, &se) {
		fmt.Println(se.StatusCode, se.ErrorCode+":", se.ErrorDescription)
	}
	fmt.Println("token requests:", op.TokenRequests())
	// Output:
	// sub: alice azp: agent aud: [mcp-server]
	// invalid_request
	// 400 invalid_request: Requested audience not available: billing
	// token requests: 2
}
