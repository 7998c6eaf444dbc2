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
	"time"

	"github.com/candorkit/candor/internal/oidctest"
	"github.com/candorkit/candor/tokenexchange"
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

// oauthErr asserts err is an *Error with the given status and code, and that
// the *oauth2.RetrieveError is reachable with error and error_description.
func oauthErr(t *testing.T, err error, status int, code, desc string) {
	t.Helper()
	var e *tokenexchange.Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v (%T), want *tokenexchange.Error", err, err)
	}
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) {
		t.Fatalf("err does not wrap *oauth2.RetrieveError")
	}
	if e.StatusCode != status || re.ErrorCode != code || (desc != "" && re.ErrorDescription != desc) {
		t.Errorf("status=%d error=%q description=%q, want %d %q %q", e.StatusCode, re.ErrorCode, re.ErrorDescription, status, code, desc)
	}
	if re.Response == nil || re.Response.StatusCode != status || re.Response.Request != nil {
		t.Errorf("RetrieveError.Response must carry the status and no request: %+v", re.Response)
	}
	if len(re.Body) == 0 {
		t.Errorf("RetrieveError.Body is empty; the evidence is lost")
	}
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
		"no secret":     {&tokenexchange.Config{TokenURL: good.TokenURL, ClientID: agentClient}, "x", tokenexchange.ErrConfig},
		"plain http":    {&tokenexchange.Config{TokenURL: "http://idp.example.com/token", ClientID: "a", ClientSecret: "b"}, "x", tokenexchange.ErrConfig},
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
	logs := &syncBuffer{}
	cfg := &tokenexchange.Config{TokenURL: srv.URL, ClientID: "agent", ClientSecret: "agent-secret-123",
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
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
	for _, s := range []string{err.Error(), fmt.Sprintf("%+v %#v", err, err), logs.String()} {
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
	var e *tokenexchange.Error
	if !errors.As(err, &e) || e.StatusCode != http.StatusTemporaryRedirect {
		t.Fatalf("err = %v, want *Error with status 307", err)
	}
	if other != 0 {
		t.Errorf("the subject token was re-POSTed to the redirect target")
	}
}

func TestCacheReusesUntilExpiry(t *testing.T) {
	f := newFixture(t, oidctest.Options{}, 5*time.Minute)
	subject := f.userToken()
	cache := tokenexchange.NewCache(f.config())
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

func TestCacheSingleFlight(t *testing.T) {
	f := newFixture(t, oidctest.Options{}, 5*time.Minute)
	subject := f.userToken()
	cfg := f.config()
	gate := make(chan struct{})
	cfg.HTTPClient = &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
		<-gate
		return http.DefaultTransport.RoundTrip(r)
	})}
	cfg.ExpiryMargin = 10 * time.Minute // nothing is cached: only the single flight can merge calls
	cache := tokenexchange.NewCache(cfg)

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
	deadline := time.Now().Add(10 * time.Second)
	for cache.Waiters(subject) != callers {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d callers joined the flight", cache.Waiters(subject), callers)
		}
		runtimeGosched()
	}
	close(gate)
	var first string
	for range callers {
		r := <-results
		if err := f.record(r.err); err != nil {
			t.Fatal(err)
		}
		f.trackToken(r.tok)
		if first == "" {
			first = r.tok.AccessToken
		} else if r.tok.AccessToken != first {
			t.Errorf("callers got different tokens")
		}
	}
	if n := f.tokenRequests(); n != 1 {
		t.Errorf("%d exchanges for %d concurrent callers, want 1", n, callers)
	}
	if cache.Len() != 0 {
		t.Errorf("a token inside the margin stayed cached")
	}
}

func TestCacheWaiterCancellation(t *testing.T) {
	f := newFixture(t, oidctest.Options{}, 5*time.Minute)
	subject := f.userToken()
	cfg := f.config()
	gate := make(chan struct{})
	cfg.HTTPClient = &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
		select {
		case <-gate:
			return http.DefaultTransport.RoundTrip(r)
		case <-r.Context().Done():
			return nil, r.Context().Err()
		}
	})}
	cache := tokenexchange.NewCache(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := cache.Token(ctx, subject)
		done <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for cache.Waiters(subject) != 1 {
		if time.Now().After(deadline) {
			t.Fatal("caller never joined")
		}
		runtimeGosched()
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled caller got %v", err)
	}
	// A new caller is not handed the abandoned flight's cancellation.
	close(gate)
	tok, err := cache.Token(context.Background(), subject)
	if err := f.record(err); err != nil {
		t.Fatalf("caller after a cancelled flight: %v", err)
	}
	f.trackToken(tok)
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
	cache := tokenexchange.NewCache(cfg)
	for _, v := range []any{tok, *tok, cfg, *cfg, ts, cache} {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x"} {
			out := fmt.Sprintf(verb, v)
			f.mu.Lock()
			f.errs = append(f.errs, out)
			f.mu.Unlock()
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
	var e *tokenexchange.Error
	if tok != nil || !errors.As(err, &e) || e.StatusCode != 502 || e.Code() != "" || !strings.Contains(string(e.Retrieve.Body), "bad gateway") {
		t.Fatalf("got %v, %v; want *Error 502 with the body kept", tok, err)
	}
}

// A nil Config is refused with ErrConfig by every entry point, never a panic.
func TestNilConfigTokenSource(t *testing.T) {
	var cfg *tokenexchange.Config
	ts := cfg.TokenSource(context.Background(), "subject-token-value")
	if tok, err := ts.Token(); tok != nil || !errors.Is(err, tokenexchange.ErrConfig) {
		t.Fatalf("nil Config: %v, %v; want ErrConfig", tok, err)
	}
	if s := fmt.Sprint(ts, tokenexchange.NewCache(nil)); strings.Contains(s, "PANIC") {
		t.Fatalf("formatting panics: %s", s)
	}
}
