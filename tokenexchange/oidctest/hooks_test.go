package oidctest_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/candorkit/candor/tokenexchange/oidctest"
)

func startAgentProvider(t *testing.T, agent oidctest.Client) *oidctest.Provider {
	t.Helper()
	p := oidctest.New(t, oidctest.Options{})
	require.NoError(t, p.AddUser(oidctest.User{ID: "alice"}))
	require.NoError(t, p.AddClient(agent))
	require.NoError(t, p.AddClient(oidctest.Client{ID: "api", Secret: "api-secret"}))
	return p
}

// post sends form to url as client agent and returns the status and the
// decoded JSON answer.
func post(t *testing.T, ctx context.Context, u, id, secret string, form url.Values) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(id, secret)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	require.NoError(t, err)
	var answer map[string]any
	require.NoError(t, json.Unmarshal(body, &answer), "%s", body)
	return resp.StatusCode, answer
}

func refresh(t *testing.T, p *oidctest.Provider, rt string) (int, map[string]any) {
	return post(t, context.Background(), p.TokenURL(), "agent", "agent-secret",
		url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}})
}

// The provider rotates refresh tokens, refuses a used one, and counts
// every presentation, so a test can prove no token was presented twice.
func TestRefreshReuseCounted(t *testing.T) {
	p := startAgentProvider(t, oidctest.Client{ID: "agent", Secret: "agent-secret", Audiences: []string{"api"}})
	rt0, err := p.OfflineToken(context.Background(), "alice", "agent")
	require.NoError(t, err)

	status, answer := refresh(t, p, rt0)
	require.Equal(t, http.StatusOK, status, "%v", answer)
	rt1, _ := answer["refresh_token"].(string)
	require.NotEmpty(t, rt1)
	assert.NotEqual(t, rt0, rt1, "not rotated")
	assert.Zero(t, p.RefreshTokenReuses())

	status, answer = refresh(t, p, rt0)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, "invalid_grant", answer["error"])
	assert.Equal(t, 1, p.RefreshTokenReuses())
	assert.Equal(t, 2, p.RefreshGrants())
}

// HoldRefreshes keeps a refresh in flight until the test lets it go, and a
// hold that returns an error drops the request before the provider acts:
// the token is not consumed and the request is not counted.
func TestHoldRefreshes(t *testing.T) {
	p := startAgentProvider(t, oidctest.Client{ID: "agent", Secret: "agent-secret", Audiences: []string{"api"}})
	rt0, err := p.OfflineToken(context.Background(), "alice", "agent")
	require.NoError(t, err)

	p.HoldRefreshes(func(context.Context) error { return errors.New("drop") })
	status, answer := refresh(t, p, rt0)
	assert.Equal(t, http.StatusServiceUnavailable, status)
	assert.Equal(t, "temporarily_unavailable", answer["error"])
	assert.Zero(t, p.RefreshGrants())

	arrived, release := make(chan struct{}), make(chan struct{})
	p.HoldRefreshes(func(ctx context.Context) error {
		close(arrived)
		<-release
		return nil
	})
	done := make(chan int, 1)
	go func() {
		status, _ := refresh(t, p, rt0)
		done <- status
	}()
	<-arrived
	assert.Zero(t, p.RefreshGrants(), "counted before the provider acted")
	close(release)
	assert.Equal(t, http.StatusOK, <-done, "the dropped request consumed the token")
	assert.Equal(t, 1, p.RefreshGrants())

	// The hold's context ends when the client goes away.
	held, dropped := make(chan struct{}), make(chan struct{})
	p.HoldRefreshes(func(ctx context.Context) error {
		close(held)
		<-ctx.Done()
		close(dropped)
		return ctx.Err()
	})
	rt, err := p.OfflineToken(context.Background(), "alice", "agent")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.TokenURL(),
		strings.NewReader(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}}.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth("agent", "agent-secret")
	go func() {
		<-held
		cancel()
	}()
	_, err = http.DefaultClient.Do(req)
	assert.ErrorIs(t, err, context.Canceled)
	<-dropped
	p.HoldRefreshes(nil)
	status, answer = refresh(t, p, rt)
	assert.Equal(t, http.StatusOK, status, "the abandoned request consumed the token: %v", answer)
}

// After RotateKey, new tokens are signed with the new key and tokens
// signed before still verify: the JWKS publishes both keys.
func TestRotateKey(t *testing.T) {
	ctx := context.Background()
	p := startAgentProvider(t, oidctest.Client{ID: "agent", Secret: "agent-secret", Audiences: []string{"api"}})
	before, err := p.UserAccessToken(ctx, "alice", "agent")
	require.NoError(t, err)
	kid, err := p.RotateKey()
	require.NoError(t, err)
	after, err := p.UserAccessToken(ctx, "alice", "agent")
	require.NoError(t, err)
	for _, tok := range []string{before, after} {
		_, err := p.VerifyAccessToken(ctx, tok, "api")
		assert.NoError(t, err)
	}
	assert.Equal(t, kid, headerKID(t, after))
	assert.NotEqual(t, kid, headerKID(t, before))

	resp, err := http.Get(p.JWKSURL())
	require.NoError(t, err)
	defer resp.Body.Close()
	var jwks struct {
		Keys []struct {
			Kid string `json:"kid"`
		} `json:"keys"`
	}
	require.NoError(t, json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&jwks))
	var kids []string
	for _, k := range jwks.Keys {
		kids = append(kids, k.Kid)
	}
	assert.ElementsMatch(t, []string{headerKID(t, before), kid}, kids)
}

func headerKID(t *testing.T, jwt string) string {
	t.Helper()
	h, _, ok := strings.Cut(jwt, ".")
	require.True(t, ok, "not a JWT")
	raw, err := decodeSegment(h)
	require.NoError(t, err)
	var hdr struct {
		Kid string `json:"kid"`
	}
	require.NoError(t, json.Unmarshal(raw, &hdr))
	return hdr.Kid
}

// A client with OpaqueAccessTokens gets opaque access tokens, from Login
// and from the token endpoint; the provider verifies and introspects them.
func TestOpaqueAccessTokens(t *testing.T) {
	ctx := context.Background()
	p := startAgentProvider(t, oidctest.Client{ID: "agent", Secret: "agent-secret", Audiences: []string{"api"}, OpaqueAccessTokens: true})
	at, err := p.UserAccessToken(ctx, "alice", "agent")
	require.NoError(t, err)
	assert.NotEqual(t, 2, strings.Count(at, "."), "a JWT, not an opaque token")
	claims, err := p.VerifyAccessToken(ctx, at, "api")
	require.NoError(t, err)
	assert.Equal(t, "alice", claims.Subject)
	assert.Equal(t, "agent", claims.AuthorizedParty)
	_, err = p.VerifyAccessToken(ctx, at, "other")
	assert.ErrorIs(t, err, oidctest.ErrTokenRejected)

	rt, err := p.OfflineToken(ctx, "alice", "agent")
	require.NoError(t, err)
	status, answer := refresh(t, p, rt)
	require.Equal(t, http.StatusOK, status, "%v", answer)
	fromGrant, _ := answer["access_token"].(string)
	assert.NotEqual(t, 2, strings.Count(fromGrant, "."), "the token endpoint issued a JWT")

	for _, tok := range []string{at, fromGrant} {
		status, answer = post(t, ctx, p.IntrospectionURL(), "api", "api-secret", url.Values{"token": {tok}})
		require.Equal(t, http.StatusOK, status)
		assert.Equal(t, true, answer["active"], "%v", answer)
		assert.Equal(t, "alice", answer["sub"])
	}
	require.NoError(t, p.RevokeUserSessions(ctx, "alice", "agent"))
}

func decodeSegment(s string) ([]byte, error) {
	return base64.RawURLEncoding.DecodeString(s)
}
