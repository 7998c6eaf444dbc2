package mcpauth_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"

	"github.com/candorkit/candor/mcpclient"
	"github.com/candorkit/candor/mcpclient/mcpauth"
	"github.com/candorkit/candor/tokenexchange/oidctest"
)

func grants(p *oidctest.Provider) []string {
	var out []string
	for _, r := range p.Requests() {
		out = append(out, r.GrantType)
	}
	return out
}

// assertOwnTokens checks that every request srv saw with a token carried
// one issued for srv's endpoint alone, and none that other saw.
func assertOwnTokens(t *testing.T, srv *protectedServer, others ...*protectedServer) {
	t.Helper()
	foreign := map[string]bool{}
	for _, o := range others {
		for _, r := range o.Seen() {
			if r.Token != "" {
				foreign[r.Token] = true
			}
		}
	}
	for _, r := range srv.Seen() {
		if r.Token == "" {
			continue
		}
		assert.False(t, foreign[r.Token], "%s %s carried another endpoint's token", r.Method, r.RPC)
		if r.Subject != "" {
			assert.Equal(t, []string{srv.URL}, r.Audience, "%s %s: audience", r.Method, r.RPC)
		}
	}
}

// The client credentials flow against the in-repo OpenID provider in
// front of a real MCP server: the first request goes without a token and
// is refused with 401; discovery follows resource_metadata; one token
// (resource = the endpoint, scope from the challenge) serves every later
// request; a tool needing more scope is refused with 403 and runs exactly
// once after the step-up.
func TestClientCredentialsAgainstProvider(t *testing.T) {
	ctx := context.Background()
	op := startProvider(t)
	srv := startProtected(t, op.Issuer(), withChallengeScope(scopeRead))
	require.NoError(t, setUpProvider(op, []string{scopeRead, scopeAdmin}, srv.URL))

	a, err := mcpauth.New(mcpauth.ClientCredentials(), mcpauth.WithClient(serviceID, serviceSecret))
	require.NoError(t, err)
	c, err := mcpclient.Dial(ctx, srv.URL, mcpclient.WithAuthorizer(a))
	require.NoError(t, err)
	defer c.Close()

	scan, err := c.ListTools(ctx, mcpclient.ListToolsOptions{})
	require.NoError(t, err)
	var names []string
	for _, tl := range scan.Items {
		names = append(names, tl.Name)
	}
	assert.ElementsMatch(t, []string{"echo", "admin"}, names)
	res, err := c.Call(ctx, "echo", map[string]any{"text": "hi"})
	require.NoError(t, err)
	assert.Equal(t, "echo: hi", res.Text())

	log := srv.Seen()
	require.NotEmpty(t, log)
	assert.Equal(t, seen{Method: http.MethodPost, RPC: "initialize", Status: http.StatusUnauthorized}, log[0], "the first request goes without a token")
	first := log[1].Token
	require.NotEmpty(t, first)
	for _, r := range log[1:] {
		assert.Equal(t, first, r.Token, "%s %s: one token serves every request", r.Method, r.RPC)
		assert.Equal(t, "service-account-"+serviceID, r.Subject)
		assert.Equal(t, []string{scopeRead}, r.Scopes, "the challenge's scope is what was asked")
	}
	reqs := op.Requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, mcpauth.GrantClientCredentials, reqs[0].GrantType)
	assert.True(t, reqs[0].BasicAuth, "client_secret_basic is preferred")
	assert.Equal(t, []string{"grant_type", "resource", "scope"}, reqs[0].Params)

	res, err = c.Call(ctx, "admin", nil)
	require.NoError(t, err)
	assert.Equal(t, "admin run 1", res.Text())
	assert.Equal(t, int64(1), srv.adminRuns.Load(), "the tool ran exactly once")
	var admin []seen
	for _, r := range srv.Seen() {
		if r.Tool == "admin" {
			admin = append(admin, r)
		}
	}
	require.Len(t, admin, 2)
	assert.Equal(t, http.StatusForbidden, admin[0].Status)
	assert.Equal(t, first, admin[0].Token)
	assert.Equal(t, http.StatusOK, admin[1].Status)
	assert.NotEqual(t, first, admin[1].Token)
	assert.ElementsMatch(t, []string{scopeRead, scopeAdmin}, admin[1].Scopes, "step-up asks for the union")
	assert.Equal(t, []string{mcpauth.GrantClientCredentials, mcpauth.GrantClientCredentials}, grants(op))
	assertOwnTokens(t, srv)
	for _, r := range op.Requests() {
		assert.Equal(t, serviceID, r.ClientID)
	}
}

// One Authorizer serving two MCP servers of the same provider keeps a
// token per endpoint: each server only ever sees tokens whose audience is
// itself, never the other's.
func TestTokensStayWithTheirEndpoint(t *testing.T) {
	ctx := context.Background()
	op := startProvider(t)
	s1 := startProtected(t, op.Issuer())
	s2 := startProtected(t, op.Issuer())
	require.NoError(t, setUpProvider(op, []string{scopeRead, scopeAdmin}, s1.URL, s2.URL))
	a, err := mcpauth.New(mcpauth.ClientCredentials(), mcpauth.WithClient(serviceID, serviceSecret))
	require.NoError(t, err)
	for _, s := range []*protectedServer{s1, s2, s1} {
		c, err := mcpclient.Dial(ctx, s.URL, mcpclient.WithAuthorizer(a))
		require.NoError(t, err)
		_, err = c.Call(ctx, "echo", map[string]any{"text": "x"})
		require.NoError(t, err)
		require.NoError(t, c.Close())
	}
	assertOwnTokens(t, s1, s2)
	assertOwnTokens(t, s2, s1)
	assert.Len(t, op.Requests(), 2, "one token per endpoint, reused by the second client of s1")
	// No challenge scope: the PRM's scopes_supported are asked.
	for _, r := range s1.Seen() {
		if r.Subject != "" {
			assert.ElementsMatch(t, []string{scopeRead, scopeAdmin}, r.Scopes)
		}
	}
}

// loginRecorder is a LoginFunc that plays alice's browser at the provider
// and keeps every authorization URL it was given.
type loginRecorder struct {
	op   *oidctest.Provider
	deny bool
	mu   sync.Mutex
	urls []*url.URL
}

func (l *loginRecorder) login(ctx context.Context, authURL string) (string, error) {
	u, err := url.Parse(authURL)
	if err != nil {
		return "", err
	}
	l.mu.Lock()
	l.urls = append(l.urls, u)
	l.mu.Unlock()
	if l.deny {
		return l.op.DenyAuthorization(ctx, authURL)
	}
	return l.op.ApproveAuthorization(ctx, authURL, "alice")
}

func (l *loginRecorder) seen() []*url.URL {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.urls)
}

// The authorization code flow with a public client: the login step runs
// over HTTP at the provider's login page; the authorization request
// carries PKCE S256, state and the resource; the code is redeemed with
// the verifier and the resource; a 403 insufficient_scope leads to a
// second login for the union of scopes and the tool runs once; an
// expired token is refreshed with the resource.
func TestAuthorizationCodeAgainstProvider(t *testing.T) {
	ctx := context.Background()
	op := startProvider(t)
	srv := startProtected(t, op.Issuer(), withChallengeScope(scopeRead))
	require.NoError(t, setUpProvider(op, []string{scopeRead, scopeAdmin}, srv.URL))
	var clock atomic.Int64
	clock.Store(time.Now().UnixNano())
	now := func() time.Time { return time.Unix(0, clock.Load()) }

	l := &loginRecorder{op: op}
	a, err := mcpauth.New(mcpauth.AuthorizationCode(l.login), mcpauth.WithClient(publicID, ""),
		mcpauth.WithRedirectURL(redirectURL), mcpauth.WithOfflineAccess(), mcpauth.WithClock(now))
	require.NoError(t, err)
	c, err := mcpclient.Dial(ctx, srv.URL, mcpclient.WithAuthorizer(a))
	require.NoError(t, err)
	defer c.Close()
	res, err := c.Call(ctx, "echo", map[string]any{"text": "code"})
	require.NoError(t, err)
	assert.Equal(t, "echo: code", res.Text())

	urls := l.seen()
	require.Len(t, urls, 1)
	q := urls[0].Query()
	assert.Equal(t, op.Issuer()+"/authorize", urls[0].Scheme+"://"+urls[0].Host+urls[0].Path)
	assert.Equal(t, "S256", q.Get("code_challenge_method"))
	assert.NotEmpty(t, q.Get("code_challenge"))
	assert.GreaterOrEqual(t, len(q.Get("state")), 32, "an unguessable state")
	assert.Equal(t, srv.URL, q.Get("resource"))
	assert.Equal(t, redirectURL, q.Get("redirect_uri"))
	assert.Equal(t, publicID, q.Get("client_id"))
	assert.Equal(t, scopeRead+" offline_access", q.Get("scope"), "offline_access is asked because the provider lists it")

	reqs := op.Requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, mcpauth.GrantAuthorizationCode, reqs[0].GrantType)
	assert.False(t, reqs[0].BasicAuth)
	assert.Equal(t, []string{"client_id", "code", "code_verifier", "grant_type", "redirect_uri", "resource"}, reqs[0].Params)
	for _, r := range srv.Seen()[1:] {
		assert.Equal(t, "alice", r.Subject)
		assert.Equal(t, []string{srv.URL}, r.Audience)
	}

	// Step-up: a second login, for the union.
	res, err = c.Call(ctx, "admin", nil)
	require.NoError(t, err)
	assert.Equal(t, "admin run 1", res.Text())
	assert.Equal(t, int64(1), srv.adminRuns.Load())
	urls = l.seen()
	require.Len(t, urls, 2)
	assert.ElementsMatch(t, []string{scopeRead, scopeAdmin, "offline_access"}, strings.Fields(urls[1].Query().Get("scope")))

	// The token expires: the next request refreshes it, with the resource.
	before := len(srv.Seen())
	clock.Add(int64(time.Hour))
	_, err = c.Call(ctx, "echo", map[string]any{"text": "later"})
	require.NoError(t, err)
	reqs = op.Requests()
	require.Len(t, reqs, 3)
	assert.Equal(t, mcpauth.GrantRefreshToken, reqs[2].GrantType)
	assert.Contains(t, reqs[2].Params, "resource")
	after := srv.Seen()[before:]
	require.NotEmpty(t, after)
	assert.Equal(t, http.StatusOK, after[0].Status, "the refreshed token was accepted without a challenge")
	assert.Len(t, l.seen(), 2, "no login for a refresh")
	assertOwnTokens(t, srv)
}

// A user who denies the login: Dial fails with *mcpclient.AuthorizationError
// of the 401, and errors.As reaches the *mcpauth.DeniedError.
func TestDeniedLoginSurfaces(t *testing.T) {
	ctx := context.Background()
	op := startProvider(t)
	srv := startProtected(t, op.Issuer(), withChallengeScope(scopeRead))
	require.NoError(t, setUpProvider(op, []string{scopeRead}, srv.URL))
	l := &loginRecorder{op: op, deny: true}
	a, err := mcpauth.New(mcpauth.AuthorizationCode(l.login), mcpauth.WithClient(publicID, ""), mcpauth.WithRedirectURL(redirectURL))
	require.NoError(t, err)
	_, err = mcpclient.Dial(ctx, srv.URL, mcpclient.WithAuthorizer(a))
	require.Error(t, err)
	ae, ok := errors.AsType[*mcpclient.AuthorizationError](err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, http.StatusUnauthorized, ae.StatusCode)
	assert.Contains(t, ae.Header.Get("WWW-Authenticate"), "resource_metadata=")
	de, ok := errors.AsType[*mcpauth.DeniedError](err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, "access_denied", de.ErrorCode)
	assert.ErrorIs(t, err, mcpauth.ErrDenied)
	assert.ErrorIs(t, err, mcpclient.ErrUnauthorized)
	assert.Equal(t, mcpauth.KindDenied, mcpauth.Classify(err))
	assert.Equal(t, mcpclient.KindUnauthorized, mcpclient.Classify(err))
	assert.Zero(t, op.TokenRequests(), "nothing to redeem")
	assert.Equal(t, 1, srv.Posts())
}

// Step-up that the provider cannot satisfy: the public client is not
// allowed mcp:admin, the provider drops it from the grant, and the call
// fails with a *ScopeError (granted less than asked) inside an
// *mcpclient.AuthorizationError of the 403; the tool never runs.
func TestStepUpGrantedLess(t *testing.T) {
	ctx := context.Background()
	op := startProvider(t)
	srv := startProtected(t, op.Issuer(), withChallengeScope(scopeRead))
	require.NoError(t, setUpProvider(op, []string{scopeRead}, srv.URL))
	l := &loginRecorder{op: op}
	a, err := mcpauth.New(mcpauth.AuthorizationCode(l.login), mcpauth.WithClient(publicID, ""), mcpauth.WithRedirectURL(redirectURL))
	require.NoError(t, err)
	c, err := mcpclient.Dial(ctx, srv.URL, mcpclient.WithAuthorizer(a))
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Call(ctx, "admin", nil)
	require.Error(t, err)
	ae, ok := errors.AsType[*mcpclient.AuthorizationError](err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, http.StatusForbidden, ae.StatusCode)
	se, ok := errors.AsType[*mcpauth.ScopeError](err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, []string{scopeRead, scopeAdmin}, se.Required)
	assert.Equal(t, []string{scopeRead}, se.Granted)
	assert.ErrorIs(t, err, mcpauth.ErrInsufficientScope)
	assert.Equal(t, mcpauth.KindInsufficientScope, mcpauth.Classify(err))
	assert.Equal(t, mcpclient.KindForbidden, mcpclient.Classify(err))
	assert.Zero(t, srv.adminRuns.Load())
	assert.Len(t, l.seen(), 2)
}

// The client credentials grant asked for a scope the client may not have:
// the provider answers invalid_scope, surfaced as *mcpauth.StatusError
// (KindRejected) with the secret nowhere in the error.
func TestStepUpRefusedByProvider(t *testing.T) {
	ctx := context.Background()
	op := startProvider(t)
	srv := startProtected(t, op.Issuer(), withChallengeScope(scopeRead))
	require.NoError(t, setUpProvider(op, []string{scopeRead}, srv.URL))
	a, err := mcpauth.New(mcpauth.ClientCredentials(), mcpauth.WithClient(serviceID, serviceSecret))
	require.NoError(t, err)
	c, err := mcpclient.Dial(ctx, srv.URL, mcpclient.WithAuthorizer(a))
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Call(ctx, "admin", nil)
	require.Error(t, err)
	se, ok := errors.AsType[*mcpauth.StatusError](err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, "token", se.Op)
	assert.Equal(t, "invalid_scope", se.ErrorCode)
	assert.Equal(t, mcpauth.KindRejected, mcpauth.Classify(err))
	assert.NotContains(t, err.Error(), serviceSecret)
	assert.Zero(t, srv.adminRuns.Load())
}

// A PRM naming another resource stops before any authorization: no token
// request reaches the provider.
func TestResourceMismatchAgainstProvider(t *testing.T) {
	ctx := context.Background()
	op := startProvider(t)
	srv := startProtected(t, op.Issuer(), withResource("http://127.0.0.1:1/other"))
	require.NoError(t, setUpProvider(op, []string{scopeRead}, srv.URL))
	a, err := mcpauth.New(mcpauth.ClientCredentials(), mcpauth.WithClient(serviceID, serviceSecret))
	require.NoError(t, err)
	_, err = mcpclient.Dial(ctx, srv.URL, mcpclient.WithAuthorizer(a))
	require.Error(t, err)
	assert.ErrorIs(t, err, mcpauth.ErrResourceMismatch)
	assert.Equal(t, mcpauth.KindResourceMismatch, mcpauth.Classify(err))
	_, ok := errors.AsType[*mcpclient.AuthorizationError](err)
	assert.True(t, ok)
	assert.Zero(t, op.TokenRequests())
}

// A server that keeps answering 401 to freshly obtained tokens is asked
// at most 1+MaxAuthorizeRetries times; the request then fails with the
// last 401.
func TestRetriesAreBounded(t *testing.T) {
	ctx := context.Background()
	op := startProvider(t)
	srv := startProtected(t, op.Issuer(), refusingAll())
	require.NoError(t, setUpProvider(op, []string{scopeRead, scopeAdmin}, srv.URL))
	a, err := mcpauth.New(mcpauth.ClientCredentials(), mcpauth.WithClient(serviceID, serviceSecret))
	require.NoError(t, err)
	_, err = mcpclient.Dial(ctx, srv.URL, mcpclient.WithAuthorizer(a))
	require.Error(t, err)
	assert.Equal(t, 1+mcpclient.MaxAuthorizeRetries, srv.Posts(), "initialize sent at most 1+MaxAuthorizeRetries times")
	_, isStatus := errors.AsType[*mcpclient.StatusError](err)
	_, isAuth := errors.AsType[*mcpclient.AuthorizationError](err)
	assert.True(t, isStatus || isAuth, "%T %v", err, err)
	assert.ErrorIs(t, err, mcpclient.ErrUnauthorized)
	assert.Equal(t, int64(mcpclient.MaxAuthorizeRetries), op.TokenRequests(), "a new token for each refusal")
}

// WithAuthorizer is refused by NewPool, and together with WithTokenSource
// by Dial, before anything is sent.
func TestAuthorizerOptionConflicts(t *testing.T) {
	ctx := context.Background()
	op := startProvider(t)
	srv := startProtected(t, op.Issuer())
	a, err := mcpauth.New(mcpauth.ClientCredentials(), mcpauth.WithClient(serviceID, serviceSecret))
	require.NoError(t, err)
	_, err = mcpclient.NewPool(srv.URL, mcpclient.WithAuthorizer(a))
	assert.ErrorContains(t, err, "WithAuthorizer")
	assert.Equal(t, mcpclient.KindInvalidArgument, mcpclient.Classify(err))
	ts := oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "static"})
	_, err = mcpclient.Dial(ctx, srv.URL, mcpclient.WithAuthorizer(a), mcpclient.WithTokenSource(ts))
	assert.ErrorContains(t, err, "exclude each other")
	assert.Equal(t, mcpclient.KindInvalidArgument, mcpclient.Classify(err))
	_, err = mcpclient.Dial(ctx, srv.URL, mcpclient.WithAuthorizer(nil))
	assert.Error(t, err)
	assert.Empty(t, srv.Seen(), "nothing was sent")
	assert.Zero(t, op.TokenRequests())
}
