package oidctest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/candorkit/candor/tokenexchange/oidctest"
)

// Example starts the provider, mints a user's access token without a
// browser, verifies it as a resource server would, and shows one of the
// Keycloak rules: a client that is not in the subject token's aud may not
// exchange it.
func Example() {
	ctx := context.Background()
	p, err := oidctest.Start(oidctest.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close()
	err = errors.Join(
		p.AddUser(oidctest.User{ID: "alice", Username: "alice"}),
		// Tokens alice gets at the web front end name the agent in aud.
		p.AddClient(oidctest.Client{ID: "webapp", Secret: "webapp-secret", Audiences: []string{"agent"}, DefaultScopes: []string{"profile"}}),
		p.AddClient(oidctest.Client{ID: "agent", Secret: "agent-secret", TokenExchange: true}),
		p.AddClient(oidctest.Client{ID: "intruder", Secret: "intruder-secret", TokenExchange: true}),
	)
	if err != nil {
		fmt.Println(err)
		return
	}

	token, err := p.UserAccessToken(ctx, "alice", "webapp")
	if err != nil {
		fmt.Println(err)
		return
	}
	claims, err := p.VerifyAccessToken(ctx, token, "agent")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("sub:", claims.Subject, "azp:", claims.AuthorizedParty, "aud:", claims.Audience, "scopes:", claims.Scopes)

	_, err = p.VerifyAccessToken(ctx, token, "billing")
	fmt.Println("for billing:", errors.Is(err, oidctest.ErrTokenRejected))

	// The intruder is not in aud: 403 access_denied, as on Keycloak.
	form := url.Values{
		"grant_type":         {"urn:ietf:params:oauth:grant-type:token-exchange"},
		"subject_token":      {token},
		"subject_token_type": {"urn:ietf:params:oauth:token-type:access_token"},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.TokenURL(), strings.NewReader(form.Encode()))
	if err != nil {
		fmt.Println(err)
		return
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth("intruder", "intruder-secret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	var oauthErr struct {
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&oauthErr); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.StatusCode, oauthErr.Error+":", oauthErr.Description)
	fmt.Println("token endpoint requests:", p.TokenRequests())
	// Output:
	// sub: alice azp: webapp aud: [agent] scopes: [profile]
	// for billing: true
	// 403 access_denied: Client is not within the token audience
	// token endpoint requests: 1
}
