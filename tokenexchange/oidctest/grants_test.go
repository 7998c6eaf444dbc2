package oidctest_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"

	"github.com/candorkit/candor/tokenexchange/oidctest"
)

// A client with ClientCredentials gets a service account token; a
// resource parameter narrows its audience to that resource (RFC 8707) and
// one outside the client's audiences is refused with invalid_target.
func TestClientCredentialsGrant(t *testing.T) {
	ctx := context.Background()
	p := oidctest.New(t, oidctest.Options{})
	require.NoError(t, p.AddClient(oidctest.Client{ID: "svc", Secret: "svc-secret", ClientCredentials: true,
		Audiences: []string{"https://a.example/mcp", "https://b.example/mcp"}, DefaultScopes: []string{"read"}, OptionalScopes: []string{"write"}}))
	require.NoError(t, p.AddClient(oidctest.Client{ID: "plain", Secret: "plain-secret"}))

	cc := url.Values{"grant_type": {"client_credentials"}, "scope": {"write"}, "resource": {"https://a.example/mcp"}}
	status, answer := post(t, ctx, p.TokenURL(), "svc", "svc-secret", cc)
	require.Equal(t, http.StatusOK, status, "%v", answer)
	assert.Equal(t, "read write", answer["scope"])
	at, _ := answer["access_token"].(string)
	claims, err := p.VerifyAccessToken(ctx, at, "https://a.example/mcp")
	require.NoError(t, err)
	assert.Equal(t, "service-account-svc", claims.Subject)
	assert.Equal(t, "svc", claims.AuthorizedParty)
	assert.Equal(t, []string{"https://a.example/mcp"}, claims.Audience, "not narrowed to the resource")
	_, err = p.VerifyAccessToken(ctx, at, "https://b.example/mcp")
	assert.ErrorIs(t, err, oidctest.ErrTokenRejected)

	cc.Set("resource", "https://c.example/mcp")
	status, answer = post(t, ctx, p.TokenURL(), "svc", "svc-secret", cc)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, "invalid_target", answer["error"])

	status, answer = post(t, ctx, p.TokenURL(), "svc", "svc-secret", url.Values{"grant_type": {"client_credentials"}, "scope": {"admin"}})
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, "invalid_scope", answer["error"])

	status, answer = post(t, ctx, p.TokenURL(), "plain", "plain-secret", url.Values{"grant_type": {"client_credentials"}})
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, "unauthorized_client", answer["error"], "%v", answer)
	status, _ = post(t, ctx, p.TokenURL(), "svc", "wrong", url.Values{"grant_type": {"client_credentials"}})
	assert.Equal(t, http.StatusUnauthorized, status)
}

// A public client with a loopback redirect URI runs the authorization code
// flow with PKCE: ApproveAuthorization logs the user in through the login
// page, the code is redeemed once, and DenyAuthorization comes back with
// access_denied.
func TestAuthorizationCodeGrant(t *testing.T) {
	ctx := context.Background()
	p := oidctest.New(t, oidctest.Options{})
	require.NoError(t, p.AddUser(oidctest.User{ID: "alice"}))
	require.NoError(t, p.AddClient(oidctest.Client{ID: "cli", RedirectURIs: []string{"http://127.0.0.1/callback"},
		Audiences: []string{"https://a.example/mcp", "https://b.example/mcp"}, OptionalScopes: []string{"read"}}))
	conf := oauth2.Config{ClientID: "cli", RedirectURL: "http://127.0.0.1:4711/callback", Scopes: []string{"read", "unknown"},
		Endpoint: oauth2.Endpoint{AuthURL: p.Issuer() + "/authorize", TokenURL: p.TokenURL(), AuthStyle: oauth2.AuthStyleInParams}}
	verifier := oauth2.GenerateVerifier()
	authURL := conf.AuthCodeURL("st4te", oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", "https://a.example/mcp"))

	cb, err := p.ApproveAuthorization(ctx, authURL, "alice")
	require.NoError(t, err)
	u, err := url.Parse(cb)
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1:4711", u.Host)
	assert.Equal(t, "st4te", u.Query().Get("state"))
	code := u.Query().Get("code")
	require.NotEmpty(t, code, cb)

	_, err = conf.Exchange(ctx, code)
	assert.Error(t, err, "a code redeemed without its verifier")
	tok, err := conf.Exchange(ctx, code, oauth2.VerifierOption(verifier), oauth2.SetAuthURLParam("resource", "https://a.example/mcp"))
	require.NoError(t, err)
	assert.Equal(t, "read", tok.Extra("scope"), "the unknown scope is dropped")
	claims, err := p.VerifyAccessToken(ctx, tok.AccessToken, "https://a.example/mcp")
	require.NoError(t, err)
	assert.Equal(t, "alice", claims.Subject)
	assert.Equal(t, []string{"https://a.example/mcp"}, claims.Audience)
	_, err = conf.Exchange(ctx, code, oauth2.VerifierOption(verifier))
	assert.Error(t, err, "a code redeemed twice")

	cb, err = p.DenyAuthorization(ctx, authURL)
	require.NoError(t, err)
	u, err = url.Parse(cb)
	require.NoError(t, err)
	assert.Equal(t, "access_denied", u.Query().Get("error"))
	assert.Equal(t, "st4te", u.Query().Get("state"))

	bad := conf.AuthCodeURL("s", oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", "https://c.example/mcp"))
	cb, err = p.ApproveAuthorization(ctx, bad, "alice")
	require.NoError(t, err)
	u, err = url.Parse(cb)
	require.NoError(t, err)
	assert.Equal(t, "invalid_target", u.Query().Get("error"))

	cb, err = p.ApproveAuthorization(ctx, conf.AuthCodeURL("s"), "alice")
	require.NoError(t, err)
	u, err = url.Parse(cb)
	require.NoError(t, err)
	assert.Equal(t, "invalid_request", u.Query().Get("error"), "a public client without PKCE")

	_, err = p.ApproveAuthorization(ctx, conf.AuthCodeURL("s", oauth2.S256ChallengeOption(verifier)), "mallory")
	assert.ErrorContains(t, err, "unknown user")
}
