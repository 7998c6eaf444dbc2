package tokenexchange_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/candorkit/candor/internal/leakcheck"
	"github.com/candorkit/candor/tokenexchange"
	"github.com/candorkit/candor/tokenexchange/oidctest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"
)

func TestExchangeSuccess(t *testing.T) {
	f := newFixture(t, oidctest.Options{}, 0)
	cfg := f.config()
	cfg.Scopes = []string{"inventory:read"}
	tok, err := cfg.Exchange(context.Background(), f.userToken())
	if err := f.record(err); err != nil {
		t.Fatal(err)
	}
	f.trackToken(tok)

	if tok.Subject != alice || tok.AuthorizedParty != agentClient {
		t.Errorf("sub=%q azp=%q, want %q/%q", tok.Subject, tok.AuthorizedParty, alice, agentClient)
	}
	if !slices.Equal(tok.Audience, []string{mcpServer}) {
		t.Errorf("aud = %q, want [%s]", tok.Audience, mcpServer)
	}
	if !slices.Contains(tok.Scopes, "inventory:read") {
		t.Errorf("scopes = %q, want inventory:read", tok.Scopes)
	}
	if tok.IssuedTokenType != tokenexchange.TokenTypeAccessToken || tok.Type() != "Bearer" || !tok.Valid() {
		t.Errorf("issued=%q type=%q valid=%v", tok.IssuedTokenType, tok.Type(), tok.Valid())
	}
	if tok.Issuer != f.op.Issuer() {
		t.Errorf("iss = %q, want %q", tok.Issuer, f.op.Issuer())
	}
	if got := tok.Extra("issued_token_type"); got != tokenexchange.TokenTypeAccessToken {
		t.Errorf("Extra(issued_token_type) = %v", got)
	}

	// The MCP server accepts the exchanged token; it names the user and the agent.
	claims, err := f.op.VerifyAccessToken(context.Background(), tok.AccessToken, mcpServer)
	if err != nil {
		t.Fatalf("resource server rejected the exchanged token: %v", err)
	}
	if claims.Subject != alice || claims.AuthorizedParty != agentClient {
		t.Errorf("verified sub=%q azp=%q", claims.Subject, claims.AuthorizedParty)
	}

	// Exactly one POST, carrying exactly the RFC 8693 parameters, client
	// authenticated with HTTP Basic.
	reqs := f.op.Requests()
	if len(reqs) != 1 {
		t.Fatalf("token requests = %d, want 1", len(reqs))
	}
	want := []string{"audience", "grant_type", "requested_token_type", "scope", "subject_token", "subject_token_type"}
	if r := reqs[0]; !slices.Equal(r.Params, want) || !r.BasicAuth || r.ClientID != agentClient ||
		r.GrantType != tokenexchange.GrantTypeTokenExchange || r.Status != http.StatusOK {
		t.Errorf("request = %+v, want params %q with Basic auth", r, want)
	}
}

func TestExchangeAuthStyleInParams(t *testing.T) {
	f := newFixture(t, oidctest.Options{}, 0)
	cfg := f.config()
	cfg.AuthStyle = oauth2.AuthStyleInParams
	tok, err := cfg.Exchange(context.Background(), f.userToken())
	if err := f.record(err); err != nil {
		t.Fatal(err)
	}
	f.trackToken(tok)
	r := f.op.Requests()
	if len(r) != 1 || r[0].BasicAuth || !slices.Contains(r[0].Params, "client_secret") || r[0].ClientID != agentClient {
		t.Errorf("requests = %+v, want one client_secret_post request", r)
	}
}

// oauthErr asserts err is a *StatusError with the given status and code,
// and that the *oauth2.RetrieveError is reachable with error and
// error_description.
func oauthErr(t *testing.T, err error, status int, code, desc string) {
	t.Helper()
	var e *tokenexchange.StatusError
	require.ErrorAs(t, err, &e)
	var re *oauth2.RetrieveError
	require.ErrorAs(t, err, &re, "err does not wrap *oauth2.RetrieveError")
	assert.Equal(t, status, e.StatusCode)
	assert.Equal(t, code, e.ErrorCode)
	assert.Equal(t, code, re.ErrorCode)
	assert.Equal(t, re.ErrorURI, e.ErrorURI)
	assert.Equal(t, tokenexchange.Kind(code), tokenexchange.Classify(err))
	if desc != "" {
		assert.Equal(t, desc, e.ErrorDescription)
		assert.Equal(t, desc, re.ErrorDescription)
	}
	if assert.NotNil(t, re.Response, "RetrieveError.Response") {
		assert.Equal(t, status, re.Response.StatusCode)
		assert.Nil(t, re.Response.Request, "RetrieveError.Response must carry no request")
	}
	assert.NotEmpty(t, e.Body, "the evidence is lost")
	assert.Equal(t, e.Body, re.Body)
	assert.NotEmpty(t, e.Header.Get("Content-Type"), "the response header is lost")
}

func TestExchangeErrors(t *testing.T) {
	f := newFixture(t, oidctest.Options{}, 0)
	subject := f.userToken()
	cases := []struct {
		name   string
		change func(*tokenexchange.Config)
		status int
		code   string
		desc   string
	}{
		{"refresh token as subject", func(c *tokenexchange.Config) { c.SubjectTokenType = tokenexchange.TokenTypeRefreshToken },
			400, "invalid_request", "Parameter 'subject_token' supports access tokens only"},
		{"audience not available", func(c *tokenexchange.Config) { c.Audience = []string{"billing"} },
			400, "invalid_request", "Requested audience not available: billing"},
		{"scope not allowed", func(c *tokenexchange.Config) { c.Scopes = []string{"admin"} },
			400, "invalid_scope", "Invalid scopes: admin"},
		{"requester not in aud", func(c *tokenexchange.Config) { c.ClientID, c.ClientSecret = intruder, f.intruderSecret },
			403, "access_denied", "Client is not within the token audience"},
		{"wrong secret (basic)", func(c *tokenexchange.Config) { c.ClientSecret = "wrong-secret-value" },
			401, "invalid_client", ""},
		{"wrong secret (post)", func(c *tokenexchange.Config) {
			c.ClientSecret, c.AuthStyle = "wrong-secret-value", oauth2.AuthStyleInParams
		}, 401, "invalid_client", ""},
		{"unknown client", func(c *tokenexchange.Config) { c.ClientID = "nobody" },
			401, "invalid_client", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := f.config()
			tc.change(cfg)
			before := f.tokenRequests()
			tok, err := cfg.Exchange(context.Background(), subject)
			f.record(err)
			if tok != nil || err == nil {
				t.Fatalf("got token %v, err %v; want an error and no token", tok, err)
			}
			oauthErr(t, err, tc.status, tc.code, tc.desc)
			if n := f.tokenRequests() - before; n != 1 {
				t.Errorf("%d POSTs for one attempt, want exactly 1", n)
			}
		})
	}
}

func TestExchangeInvalidSubjectToken(t *testing.T) {
	f := newFixture(t, oidctest.Options{}, 0)
	_, err := f.config().Exchange(context.Background(), "not-a-token-at-all")
	f.record(err)
	oauthErr(t, err, 400, "invalid_request", "subject_token is invalid")
}

func TestExchangeRefusedBeforeNetwork(t *testing.T) {
	f := newFixture(t, oidctest.Options{}, 0)
	good := f.config()
	cases := map[string]struct {
		cfg     *tokenexchange.Config
		subject string
		want    error
	}{
		"empty subject": {good, "", tokenexchange.ErrNoSubjectToken},
		"no client id":  {&tokenexchange.Config{TokenURL: good.TokenURL, ClientSecret: "b"}, "x", tokenexchange.ErrConfig},
		"relative resource": {&tokenexchange.Config{TokenURL: good.TokenURL, ClientID: "a", ClientSecret: "b", Resource: []string{"/mcp"}},
			"x", tokenexchange.ErrConfig},
		"plain http": {&tokenexchange.Config{TokenURL: "http://idp.example.com/token", ClientID: "a", ClientSecret: "b"}, "x", tokenexchange.ErrConfig},
		"plain http revocation": {&tokenexchange.Config{TokenURL: good.TokenURL, RevocationURL: "http://idp.example.com/revoke", ClientID: "a", ClientSecret: "b"},
			"x", tokenexchange.ErrConfig},
		"bad auth style": {&tokenexchange.Config{TokenURL: good.TokenURL, ClientID: "a", ClientSecret: "b", AuthStyle: 7}, "x", tokenexchange.ErrConfig},
		"nil config":     {nil, "x", tokenexchange.ErrConfig},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tok, err := tc.cfg.Exchange(context.Background(), tc.subject)
			f.record(err)
			if tok != nil || !errors.Is(err, tc.want) {
				t.Errorf("got %v, %v; want %v", tok, err, tc.want)
			}
		})
	}
	if n := f.tokenRequests(); n != 0 {
		t.Errorf("%d requests reached the OP, want 0", n)
	}
}

// A Config without ClientSecret is a public client: its client_id goes in
// the body, no Authorization header and no client_secret are sent, and the
// Resource values go out as resource parameters. The provider, whose agent
// client is confidential, refuses it; what reached it is what is checked.
func TestPublicClientSendsIDAndResource(t *testing.T) {
	f := newFixture(t, oidctest.Options{}, 0)
	cfg := f.config()
	cfg.ClientSecret = ""
	cfg.AuthStyle = oauth2.AuthStyleInHeader // ignored without a secret
	cfg.Resource = []string{"https://mcp.example.com/mcp"}
	_, err := cfg.Exchange(context.Background(), f.userToken())
	f.record(err)
	require.Error(t, err)
	reqs := f.op.Requests()
	require.NotEmpty(t, reqs)
	last := reqs[len(reqs)-1]
	assert.False(t, last.BasicAuth, "a public client sends no Authorization header")
	assert.Equal(t, agentClient, last.ClientID)
	assert.Contains(t, last.Params, "client_id")
	assert.Contains(t, last.Params, "resource")
	assert.NotContains(t, last.Params, "client_secret")
}

// Observed on golang.org/x/oauth2 used for token exchange: a 200 answer
// without issued_token_type is accepted. Reproduced with httptest because
// the real OP always sends the field.
func TestMissingIssuedTokenType(t *testing.T) {
	const access = "eyJhbGciOiJub25lIn0.eyJzdWIiOiJhbGljZSJ9.leaked-if-printed"
	var hits int
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits++
		mu.Unlock()
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"access_token":%q,"token_type":"Bearer","expires_in":300}`, access)
	}))
	defer srv.Close()
	logs := leakcheck.New(t)
	cfg := &tokenexchange.Config{TokenURL: srv.URL, ClientID: "agent", ClientSecret: "agent-secret-123", Logger: logs.Logger}
	tok, err := cfg.Exchange(context.Background(), "subject-token-value")
	if tok != nil || !errors.Is(err, tokenexchange.ErrInvalidResponse) {
		t.Fatalf("got %v, %v; want ErrInvalidResponse", tok, err)
	}
	var re *tokenexchange.ResponseError
	if !errors.As(err, &re) || !strings.Contains(re.Reason, "issued_token_type") || re.StatusCode != 200 {
		t.Fatalf("err = %v, want a ResponseError naming issued_token_type", err)
	}
	if len(re.Body) == 0 || strings.Contains(string(re.Body), access) {
		t.Errorf("evidence body = %q: must be kept, with the token blanked", re.Body)
	}
	for _, s := range []string{err.Error(), fmt.Sprintf("%+v %#v", err, err), logs.Logs()} {
		if strings.Contains(s, access) {
			t.Errorf("access token leaked: %q", s)
		}
	}
	if hits != 1 {
		t.Errorf("%d POSTs, want 1", hits)
	}
}

func TestExchangeDoesNotFollowRedirects(t *testing.T) {
	var other int
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { other++ }))
	defer target.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL, http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	cfg := &tokenexchange.Config{TokenURL: srv.URL, ClientID: "agent", ClientSecret: "agent-secret-123", HTTPClient: srv.Client()}
	_, err := cfg.Exchange(context.Background(), "subject-token-value")
	var e *tokenexchange.StatusError
	require.ErrorAs(t, err, &e)
	assert.Equal(t, http.StatusTemporaryRedirect, e.StatusCode)
	assert.Equal(t, target.URL, e.Header.Get("Location"))
	assert.Equal(t, tokenexchange.KindHTTPStatus, tokenexchange.Classify(err))
	assert.Zero(t, other, "the subject token was re-POSTed to the redirect target")
}

func TestCacheReusesUntilExpiry(t *testing.T) {
	f := newFixture(t, oidctest.Options{}, 5*time.Minute)
	subject := f.userToken()
	cache, err := tokenexchange.NewCache(f.config())
	require.NoError(t, err)
	a, err := cache.Token(context.Background(), subject)
	must(t, f.record(err))
	b, err := cache.Token(context.Background(), subject)
	must(t, f.record(err))
	f.trackToken(a)
	if a.AccessToken != b.AccessToken || f.tokenRequests() != 1 {
		t.Errorf("second call: same token %v, requests %d; want the cached token and 1 request", a.AccessToken == b.AccessToken, f.tokenRequests())
	}
	b.Audience[0] = "mutated"
	c, err := cache.Token(context.Background(), subject)
	must(t, f.record(err))
	if c.Audience[0] != mcpServer {
		t.Errorf("a caller's change reached the cache: %q", c.Audience)
	}

	// A margin longer than the lifetime means the token is always due.
	cfg := f.config()
	cfg.ExpiryMargin = 10 * time.Minute
	ts := cfg.TokenSource(context.Background(), subject)
	for range 2 {
		ot, err := ts.Token()
		must(t, f.record(err))
		f.track(ot.AccessToken)
	}
	if n := f.tokenRequests(); n != 3 {
		t.Errorf("requests = %d, want 3 (tokens inside the margin are not reused)", n)
	}
}

// Concurrent callers for one subject share one exchange. The callers run
// in a synctest bubble: synctest.Wait returns once every one of them is
// blocked on the flight, with no polling.
func TestCacheSingleFlight(t *testing.T) {
	f := newFixture(t, oidctest.Options{}, 5*time.Minute)
	subject := f.userToken()
	synctest.Test(t, func(t *testing.T) {
		transport := &http.Transport{} // its connections belong to this bubble
		defer transport.CloseIdleConnections()
		cfg := f.config()
		gate := make(chan struct{})
		cfg.HTTPClient = &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
			<-gate
			return transport.RoundTrip(r)
		})}
		cfg.ExpiryMargin = 10 * time.Minute // nothing is cached: only the single flight can merge calls
		cache, err := tokenexchange.NewCache(cfg)
		require.NoError(t, err)

		const callers = 8
		type result struct {
			tok *tokenexchange.Token
			err error
		}
		results := make(chan result, callers)
		for range callers {
			go func() {
				tok, err := cache.Token(context.Background(), subject)
				results <- result{tok, err}
			}()
		}
		synctest.Wait()
		require.Equal(t, callers, cache.Waiters(subject), "callers waiting on the one flight")
		close(gate)
		var first string
		for range callers {
			r := <-results
			require.NoError(t, f.record(r.err))
			f.trackToken(r.tok)
			if first == "" {
				first = r.tok.AccessToken
			}
			assert.Equal(t, first, r.tok.AccessToken, "callers got different tokens")
		}
		assert.EqualValues(t, 1, f.tokenRequests(), "exchanges for %d concurrent callers", callers)
		assert.Zero(t, cache.Len(), "a token inside the margin stayed cached")
	})
}

// A waiter that gives up leaves the flight; a later caller starts afresh
// and is not handed the abandoned flight's cancellation.
func TestCacheWaiterCancellation(t *testing.T) {
	f := newFixture(t, oidctest.Options{}, 5*time.Minute)
	subject := f.userToken()
	synctest.Test(t, func(t *testing.T) {
		transport := &http.Transport{}
		defer transport.CloseIdleConnections()
		cfg := f.config()
		gate := make(chan struct{})
		cfg.HTTPClient = &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
			select {
			case <-gate:
				return transport.RoundTrip(r)
			case <-r.Context().Done():
				return nil, r.Context().Err()
			}
		})}
		cache, err := tokenexchange.NewCache(cfg)
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := cache.Token(ctx, subject)
			done <- err
		}()
		synctest.Wait()
		require.Equal(t, 1, cache.Waiters(subject), "the caller joined the flight")
		cancel()
		require.ErrorIs(t, <-done, context.Canceled)
		synctest.Wait() // the abandoned flight has ended
		assert.Zero(t, cache.Len())

		close(gate)
		tok, err := cache.Token(context.Background(), subject)
		require.NoError(t, f.record(err), "caller after a cancelled flight")
		f.trackToken(tok)
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestRedaction(t *testing.T) {
	f := newFixture(t, oidctest.Options{}, 0)
	cfg := f.config()
	tok, err := cfg.Exchange(context.Background(), f.userToken())
	must(t, f.record(err))
	f.trackToken(tok)
	ts := cfg.TokenSource(context.Background(), f.userToken())
	cache, err := tokenexchange.NewCache(cfg)
	require.NoError(t, err)
	for _, v := range []any{tok, *tok, cfg, *cfg, ts, cache} {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x"} {
			f.Note(fmt.Sprintf(verb, v))
		}
		f.logger.Info("value", slog.Any("v", v))
	}
	if s := tok.String(); !strings.Contains(s, "sub=\"alice\"") || !strings.Contains(s, "[REDACTED]") {
		t.Errorf("Token.String() = %q, want audit fields and a redaction marker", s)
	}
	// The scan at cleanup checks every rendering above.
}

func TestErrorBodyScrubbed(t *testing.T) {
	const subject = "subject-token-echoed-back-123"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":"invalid_request","error_description":"bad token %s"}`, r.PostForm.Get("subject_token"))
	}))
	defer srv.Close()
	cfg := &tokenexchange.Config{TokenURL: srv.URL, ClientID: "agent", ClientSecret: "agent-secret-123"}
	_, err := cfg.Exchange(context.Background(), subject)
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) || re.ErrorCode != "invalid_request" {
		t.Fatalf("err = %v", err)
	}
	for _, s := range []string{err.Error(), re.Error(), string(re.Body), re.ErrorDescription, fmt.Sprintf("%+v", err)} {
		if strings.Contains(s, subject) {
			t.Errorf("echoed subject token kept: %q", s)
		}
	}
	if re.ErrorDescription != "bad token [REDACTED]" {
		t.Errorf("description = %q", re.ErrorDescription)
	}
}

func TestNon2xxWithoutOAuthError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "<html>bad gateway</html>", http.StatusBadGateway)
	}))
	defer srv.Close()
	cfg := &tokenexchange.Config{TokenURL: srv.URL, ClientID: "agent", ClientSecret: "agent-secret-123"}
	tok, err := cfg.Exchange(context.Background(), "subject-token-value")
	var e *tokenexchange.StatusError
	require.ErrorAs(t, err, &e)
	assert.Nil(t, tok)
	assert.Equal(t, 502, e.StatusCode)
	assert.Empty(t, e.ErrorCode)
	assert.Contains(t, string(e.Body), "bad gateway")
	assert.Equal(t, tokenexchange.KindUnavailable, tokenexchange.Classify(err))
	// The Error text quotes an excerpt, without the body's trailing newline.
	assert.Equal(t, "tokenexchange: exchange: HTTP 502 Bad Gateway: <html>bad gateway</html>", err.Error())
}

// A nil Config is refused with ErrConfig by every entry point, never a panic.
func TestNilConfigTokenSource(t *testing.T) {
	var cfg *tokenexchange.Config
	ts := cfg.TokenSource(context.Background(), "subject-token-value")
	if tok, err := ts.Token(); tok != nil || !errors.Is(err, tokenexchange.ErrConfig) {
		t.Fatalf("nil Config: %v, %v; want ErrConfig", tok, err)
	}
	if s := fmt.Sprint(ts); strings.Contains(s, "PANIC") {
		t.Fatalf("formatting panics: %s", s)
	}
	cache, err := tokenexchange.NewCache(nil)
	assert.Nil(t, cache)
	assert.ErrorIs(t, err, tokenexchange.ErrConfig)
}
