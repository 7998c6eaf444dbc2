package oidctest_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/candorkit/candor/tokenexchange/oidctest"
)

// New starts a provider for the test and closes it at cleanup; Login hands
// a user's tokens to a client without touching the token endpoint.
func TestNewLogin(t *testing.T) {
	ctx := context.Background()
	var p *oidctest.Provider
	t.Run("provider", func(t *testing.T) {
		p = oidctest.New(t, oidctest.Options{})
		require.NoError(t, p.AddUser(oidctest.User{ID: "alice"}))
		require.NoError(t, p.AddClient(oidctest.Client{ID: "web", Secret: "web-secret", Audiences: []string{"api"}}))
		require.NoError(t, p.AddClient(oidctest.Client{ID: "spa", Audiences: []string{"api"}}))

		var tok oidctest.Tokens
		tok, err := p.Login(ctx, "alice", "web")
		require.NoError(t, err)
		assert.Empty(t, tok.RefreshToken)
		claims, err := p.VerifyAccessToken(ctx, tok.AccessToken, "api")
		require.NoError(t, err)
		assert.Equal(t, "alice", claims.Subject)
		assert.Equal(t, "web", claims.AuthorizedParty)

		tok, err = p.Login(ctx, "alice", "web", "offline_access")
		require.NoError(t, err)
		assert.NotEmpty(t, tok.RefreshToken)
		assert.Equal(t, 1, p.ActiveRefreshTokens("alice", "web"))

		_, err = p.Login(ctx, "alice", "spa", "offline_access")
		assert.Error(t, err, "a public client gets no offline token")
		_, err = p.Login(ctx, "bob", "web")
		assert.Error(t, err, "unknown user")
		assert.Zero(t, p.TokenRequests())
		var reqs []oidctest.TokenRequest = p.Requests()
		assert.Empty(t, reqs, "Login does not go through the token endpoint")
	})
	// The subtest's cleanup closed the provider.
	resp, err := http.Post(p.TokenURL(), "application/x-www-form-urlencoded", nil)
	if err == nil {
		resp.Body.Close()
	}
	assert.Error(t, err, "the provider still answers after its test ended")
}
