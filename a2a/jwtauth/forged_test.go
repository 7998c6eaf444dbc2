package jwtauth_test

// These tests sign tokens with keys of their own, served by an in-process
// issuer (no network, so they run in a testing/synctest bubble), to reach
// claims and key sets the real provider never produces: a valid signature
// over a wrong issuer, a rotated key, a symmetric key in the set.

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/candorkit/candor/a2a"
	"github.com/candorkit/candor/a2a/jwtauth"
)

const fakeIssuer = "https://issuer.example"

// fakeIssuerServer serves discovery, a mutable key set and introspection
// from memory.
type fakeIssuerServer struct {
	mu         sync.Mutex
	keys       []jose.JSONWebKey
	jwksHits   int
	introspect func(w http.ResponseWriter, r *http.Request)
}

func (f *fakeIssuerServer) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	switch r.URL.Path {
	case "/.well-known/openid-configuration":
		_ = json.NewEncoder(rec).Encode(map[string]string{"issuer": fakeIssuer, "jwks_uri": fakeIssuer + "/keys",
			"introspection_endpoint": fakeIssuer + "/introspect"})
	case "/keys":
		f.mu.Lock()
		f.jwksHits++
		_ = json.NewEncoder(rec).Encode(jose.JSONWebKeySet{Keys: f.keys})
		f.mu.Unlock()
	case "/introspect":
		f.introspect(rec, r)
	default:
		rec.WriteHeader(http.StatusNotFound)
	}
	return rec.Result(), nil
}

func (f *fakeIssuerServer) publish(keys ...jose.JSONWebKey) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.keys = keys
}

func (f *fakeIssuerServer) hits() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.jwksHits
}

type signer struct {
	alg jose.SignatureAlgorithm
	kid string
	key any // private
	pub any
}

func newSigner(t *testing.T, alg jose.SignatureAlgorithm, kid string) signer {
	t.Helper()
	switch alg {
	case jose.RS256, jose.PS256:
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		require.NoError(t, err)
		return signer{alg, kid, k, &k.PublicKey}
	case jose.EdDSA:
		pub, k, err := ed25519.GenerateKey(rand.Reader)
		require.NoError(t, err)
		return signer{alg, kid, k, pub}
	case jose.ES384:
		k, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
		require.NoError(t, err)
		return signer{alg, kid, k, &k.PublicKey}
	}
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	return signer{jose.ES256, kid, k, &k.PublicKey}
}

func (s signer) jwk() jose.JSONWebKey {
	return jose.JSONWebKey{Key: s.pub, KeyID: s.kid, Algorithm: string(s.alg), Use: "sig"}
}

func (s signer) sign(t *testing.T, claims map[string]any) string {
	return signWith(t, s.alg, s.key, s.kid, claims)
}

func claims(now time.Time) map[string]any {
	return map[string]any{"iss": fakeIssuer, "sub": "alice", "aud": []string{"agent"},
		"exp": now.Add(5 * time.Minute).Unix(), "iat": now.Unix(), "scope": "read write"}
}

func fakeVerifier(t *testing.T, f *fakeIssuerServer, opts ...jwtauth.Option) *jwtauth.Verifier {
	t.Helper()
	v, err := jwtauth.New(fakeIssuer, "agent", append([]jwtauth.Option{jwtauth.WithHTTPClient(&http.Client{Transport: f})}, opts...)...)
	require.NoError(t, err)
	return v
}

func TestForgedClaimsWithValidSignature(t *testing.T) {
	ctx := context.Background()
	s := newSigner(t, jose.ES256, "k1")
	f := &fakeIssuerServer{}
	f.publish(s.jwk())
	v := fakeVerifier(t, f, jwtauth.WithLeeway(0))
	now := time.Now()

	c := claims(now)
	caller, err := v.Verify(ctx, s.sign(t, c))
	require.NoError(t, err)
	assert.Equal(t, []string{"read", "write"}, caller.Scopes)
	assert.Equal(t, fakeIssuer, caller.Issuer)

	cases := []struct {
		name   string
		edit   func(map[string]any)
		reason string
	}{
		{"wrong issuer", func(c map[string]any) { c["iss"] = "https://evil.example" }, "issuer"},
		{"issuer with a trailing slash", func(c map[string]any) { c["iss"] = fakeIssuer + "/" }, "issuer"},
		{"no issuer", func(c map[string]any) { delete(c, "iss") }, "issuer"},
		{"audience as another string", func(c map[string]any) { c["aud"] = "agent2" }, "audience"},
		{"no audience", func(c map[string]any) { delete(c, "aud") }, "audience"},
		{"no subject", func(c map[string]any) { delete(c, "sub") }, "subject"},
		{"no expiry", func(c map[string]any) { delete(c, "exp") }, "expiry"},
		{"expired", func(c map[string]any) { c["exp"] = now.Add(-2 * time.Second).Unix() }, "expired"},
		{"not yet valid", func(c map[string]any) { c["nbf"] = now.Add(time.Minute).Unix() }, "not valid before"},
		{"issued in the future", func(c map[string]any) { c["iat"] = now.Add(time.Minute).Unix() }, "future"},
		{"scope not a string", func(c map[string]any) { c["scope"] = 7 }, "scope"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := claims(now)
			tc.edit(c)
			_, err := v.Verify(ctx, s.sign(t, c))
			invalidToken(t, err, tc.reason)
		})
	}

	t.Run("audience as a single string", func(t *testing.T) {
		c := claims(now)
		c["aud"] = "agent"
		_, err := v.Verify(ctx, s.sign(t, c))
		assert.NoError(t, err)
	})
	t.Run("scp array", func(t *testing.T) {
		c := claims(now)
		delete(c, "scope")
		c["scp"] = []string{"read"}
		caller, err := v.Verify(ctx, s.sign(t, c))
		require.NoError(t, err)
		assert.Equal(t, []string{"read"}, caller.Scopes)
	})
	t.Run("leeway accepts a small skew", func(t *testing.T) {
		lenient := fakeVerifier(t, f, jwtauth.WithLeeway(time.Minute))
		c := claims(now)
		c["exp"] = now.Add(-10 * time.Second).Unix()
		c["nbf"] = now.Add(10 * time.Second).Unix()
		_, err := lenient.Verify(ctx, s.sign(t, c))
		assert.NoError(t, err)
	})
}

func TestAcceptedAlgorithms(t *testing.T) {
	ctx := context.Background()
	for _, alg := range []jose.SignatureAlgorithm{jose.RS256, jose.PS256, jose.ES256, jose.ES384, jose.EdDSA} {
		t.Run(string(alg), func(t *testing.T) {
			s := newSigner(t, alg, "k-"+string(alg))
			f := &fakeIssuerServer{}
			f.publish(s.jwk())
			_, err := fakeVerifier(t, f).Verify(ctx, s.sign(t, claims(time.Now())))
			assert.NoError(t, err)
		})
	}
}

func TestKeySelection(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	a, b := newSigner(t, jose.ES256, "a"), newSigner(t, jose.ES256, "b")

	t.Run("no kid with one key", func(t *testing.T) {
		f := &fakeIssuerServer{}
		f.publish(a.jwk())
		noKid := a
		noKid.kid = ""
		_, err := fakeVerifier(t, f).Verify(ctx, noKid.sign(t, claims(now)))
		assert.NoError(t, err)
	})
	t.Run("no kid with two keys", func(t *testing.T) {
		f := &fakeIssuerServer{}
		f.publish(a.jwk(), b.jwk())
		noKid := a
		noKid.kid = ""
		_, err := fakeVerifier(t, f).Verify(ctx, noKid.sign(t, claims(now)))
		invalidToken(t, err, "no key id")
	})
	t.Run("key published for another algorithm", func(t *testing.T) {
		f := &fakeIssuerServer{}
		k := a.jwk()
		k.Algorithm = string(jose.ES384)
		f.publish(k)
		_, err := fakeVerifier(t, f).Verify(ctx, a.sign(t, claims(now)))
		invalidToken(t, err, "no key")
	})
	t.Run("encryption key", func(t *testing.T) {
		f := &fakeIssuerServer{}
		k := a.jwk()
		k.Use = "enc"
		f.publish(k)
		_, err := fakeVerifier(t, f).Verify(ctx, a.sign(t, claims(now)))
		invalidToken(t, err, "no key")
	})
	t.Run("symmetric key in the set is never used", func(t *testing.T) {
		f := &fakeIssuerServer{}
		hmacKey := []byte("0123456789abcdef0123456789abcdef")
		f.publish(a.jwk(), jose.JSONWebKey{Key: hmacKey, KeyID: "h", Algorithm: string(jose.HS256), Use: "sig"})
		forged := signWith(t, jose.HS256, hmacKey, "h", claims(now))
		_, err := fakeVerifier(t, f).Verify(ctx, forged)
		invalidToken(t, err, "algorithm")
	})
}

// A rotated key is picked up: at once after the first unknown kid, and
// again only after RefreshInterval.
func TestKeyRotation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		old, next, third := newSigner(t, jose.ES256, "old"), newSigner(t, jose.ES256, "next"), newSigner(t, jose.ES256, "third")
		f := &fakeIssuerServer{}
		f.publish(old.jwk())
		v := fakeVerifier(t, f)

		_, err := v.Verify(ctx, old.sign(t, claims(time.Now())))
		require.NoError(t, err)
		require.Equal(t, 1, f.hits())

		f.publish(old.jwk(), next.jwk())
		_, err = v.Verify(ctx, next.sign(t, claims(time.Now())))
		require.NoError(t, err, "the first unknown kid refetches at once")
		assert.Equal(t, 2, f.hits())

		f.publish(next.jwk(), third.jwk())
		_, err = v.Verify(ctx, third.sign(t, claims(time.Now())))
		invalidToken(t, err, "no key")
		assert.Equal(t, 2, f.hits(), "within RefreshInterval of the last refetch")

		time.Sleep(jwtauth.RefreshInterval)
		_, err = v.Verify(ctx, third.sign(t, claims(time.Now())))
		require.NoError(t, err)
		assert.Equal(t, 3, f.hits())

		// A key dropped from the set is no longer trusted once the set was
		// fetched again.
		_, err = v.Verify(ctx, old.sign(t, claims(time.Now())))
		invalidToken(t, err, "no key")

		// A known key id is served from the cache until MaxKeyAge, then the
		// set is fetched again.
		_, err = v.Verify(ctx, third.sign(t, claims(time.Now())))
		require.NoError(t, err)
		hits := f.hits()
		time.Sleep(jwtauth.MaxKeyAge)
		_, err = v.Verify(ctx, third.sign(t, claims(time.Now())))
		require.NoError(t, err)
		assert.Equal(t, hits+1, f.hits())
		assert.Equal(t, 4, f.hits())
	})
}

func TestIntrospectionAnswers(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	answer := func(body map[string]any) func(http.ResponseWriter, *http.Request) {
		return func(w http.ResponseWriter, r *http.Request) {
			_ = json.NewEncoder(w).Encode(body)
		}
	}
	const id, pw = "agent client", "p/ss+w&rd"
	t.Run("active", func(t *testing.T) {
		var gotUser, gotPass, gotToken string
		f := &fakeIssuerServer{introspect: func(w http.ResponseWriter, r *http.Request) {
			gotUser, gotPass, _ = r.BasicAuth()
			_ = r.ParseForm()
			gotToken = r.PostForm.Get("token")
			answer(map[string]any{"active": true, "sub": "alice", "aud": "agent", "iss": fakeIssuer,
				"scope": "read", "exp": now.Add(time.Minute).Unix()})(w, r)
		}}
		v := fakeVerifier(t, f, jwtauth.WithIntrospection("", id, pw), jwtauth.WithRequiredScopes("read"))
		caller, err := v.Verify(ctx, "opaque-1")
		require.NoError(t, err)
		assert.Equal(t, a2a.Caller{Subject: "alice", Issuer: fakeIssuer, Audience: []string{"agent"}, Scopes: []string{"read"},
			Expiry: time.Unix(now.Add(time.Minute).Unix(), 0)}, caller)
		assert.Equal(t, url.QueryEscape(id), gotUser)
		assert.Equal(t, url.QueryEscape(pw), gotPass)
		assert.Equal(t, "opaque-1", gotToken)
	})
	for _, tc := range []struct {
		name   string
		body   map[string]any
		reason string
	}{
		{"inactive", map[string]any{"active": false}, "inactive"},
		{"other issuer", map[string]any{"active": true, "sub": "a", "aud": "agent", "iss": "https://evil.example"}, "issuer"},
		{"other audience", map[string]any{"active": true, "sub": "a", "aud": []string{"billing"}}, "audience"},
		{"no audience", map[string]any{"active": true, "sub": "a"}, "audience"},
		{"no subject", map[string]any{"active": true, "aud": "agent"}, "subject"},
		{"expired", map[string]any{"active": true, "sub": "a", "aud": "agent", "exp": now.Add(-time.Hour).Unix()}, "expired"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeIssuerServer{introspect: answer(tc.body)}
			_, err := fakeVerifier(t, f, jwtauth.WithIntrospection(fakeIssuer+"/introspect", id, pw)).Verify(ctx, "opaque-2")
			invalidToken(t, err, tc.reason)
		})
	}
	t.Run("scope missing", func(t *testing.T) {
		f := &fakeIssuerServer{introspect: answer(map[string]any{"active": true, "sub": "a", "aud": "agent", "scope": "read"})}
		_, err := fakeVerifier(t, f, jwtauth.WithIntrospection("", id, pw), jwtauth.WithRequiredScopes("write")).Verify(ctx, "opaque-3")
		assert.ErrorIs(t, err, a2a.ErrInsufficientScope)
	})
	t.Run("no active field is not a verdict", func(t *testing.T) {
		f := &fakeIssuerServer{introspect: answer(map[string]any{"sub": "a", "aud": "agent"})}
		_, err := fakeVerifier(t, f, jwtauth.WithIntrospection("", id, pw)).Verify(ctx, "opaque-4")
		require.Error(t, err)
		assert.NotErrorIs(t, err, a2a.ErrInvalidToken)
	})
	t.Run("echoed secrets are redacted", func(t *testing.T) {
		f := &fakeIssuerServer{introspect: func(w http.ResponseWriter, r *http.Request) {
			body, _ := json.Marshal(map[string]string{"error": "server_error", "authorization": r.Header.Get("Authorization")})
			w.WriteHeader(http.StatusInternalServerError)
			_ = r.ParseForm()
			_, _ = w.Write(append(body, []byte(" form="+r.PostForm.Encode())...))
		}}
		const tok = "opaque-secret-token-5"
		_, err := fakeVerifier(t, f, jwtauth.WithIntrospection("", id, pw)).Verify(ctx, tok)
		var se *jwtauth.StatusError
		require.ErrorAs(t, err, &se)
		assert.Equal(t, http.StatusInternalServerError, se.StatusCode)
		assert.Contains(t, string(se.Body), "server_error")
		for _, s := range []string{tok, pw, url.QueryEscape(pw), "Basic YWdl"} {
			assert.NotContains(t, string(se.Body), s)
			assert.NotContains(t, err.Error(), s)
		}
	})
}

func TestNewValidates(t *testing.T) {
	for name, c := range map[string]struct {
		issuer, audience string
		opts             []jwtauth.Option
	}{
		"empty audience":          {fakeIssuer, "", nil},
		"plain http not loopback": {"http://issuer.example", "agent", nil},
		"not a URL":               {"issuer", "agent", nil},
		"issuer with a query":     {fakeIssuer + "?x=1", "agent", nil},
		"issuer with credentials": {"https://u:p@issuer.example", "agent", nil},
		"nil client":              {fakeIssuer, "agent", []jwtauth.Option{jwtauth.WithHTTPClient(nil)}},
		"nil pool":                {fakeIssuer, "agent", []jwtauth.Option{jwtauth.WithRootCAs(nil)}},
		"zero max bytes":          {fakeIssuer, "agent", []jwtauth.Option{jwtauth.WithMaxResponseBytes(0)}},
		"negative leeway":         {fakeIssuer, "agent", []jwtauth.Option{jwtauth.WithLeeway(-time.Second)}},
		"empty scope":             {fakeIssuer, "agent", []jwtauth.Option{jwtauth.WithRequiredScopes("")}},
		"introspection no secret": {fakeIssuer, "agent", []jwtauth.Option{jwtauth.WithIntrospection("", "id", "")}},
		"introspection over http": {fakeIssuer, "agent", []jwtauth.Option{jwtauth.WithIntrospection("http://idp.example/i", "id", "s")}},
		"nil option":              {fakeIssuer, "agent", []jwtauth.Option{nil}},
		"roots on a custom transport": {fakeIssuer, "agent", []jwtauth.Option{
			jwtauth.WithHTTPClient(&http.Client{Transport: &fakeIssuerServer{}}), jwtauth.WithRootCAs(x509Pool())}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := jwtauth.New(c.issuer, c.audience, c.opts...)
			assert.Error(t, err)
		})
	}
	_, err := jwtauth.New("http://127.0.0.1:9/", "agent", jwtauth.WithRootCAs(x509Pool()), jwtauth.WithLeeway(0))
	assert.NoError(t, err, "loopback http is allowed")
}

func x509Pool() *x509.CertPool { return x509.NewCertPool() }

// The default leeway tolerates a clock skew smaller than itself.
func TestDefaultLeeway(t *testing.T) {
	s := newSigner(t, jose.ES256, "k")
	f := &fakeIssuerServer{}
	f.publish(s.jwk())
	v := fakeVerifier(t, f)
	now := time.Now()
	c := claims(now)
	c["exp"] = now.Add(-jwtauth.DefaultLeeway / 2).Unix()
	_, err := v.Verify(context.Background(), s.sign(t, c))
	assert.NoError(t, err)
	c["exp"] = now.Add(-2 * jwtauth.DefaultLeeway).Unix()
	_, err = v.Verify(context.Background(), s.sign(t, c))
	invalidToken(t, err, "expired")
}

// paddedKeys serves a key set of exactly n bytes.
type paddedKeys struct {
	fakeIssuerServer
	n int
}

func (p *paddedKeys) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Path != "/keys" {
		return p.fakeIssuerServer.RoundTrip(r)
	}
	p.mu.Lock()
	set, _ := json.Marshal(jose.JSONWebKeySet{Keys: p.keys})
	p.mu.Unlock()
	body := append(set[:len(set)-1], []byte(`,"pad":"`)...)
	body = append(body, bytes.Repeat([]byte("x"), p.n-len(body)-2)...)
	body = append(body, '"', '}')
	rec := httptest.NewRecorder()
	_, _ = rec.Write(body)
	return rec.Result(), nil
}

// The cap on each body read from the issuer is exact.
func TestDefaultMaxResponseBytesIsExact(t *testing.T) {
	s := newSigner(t, jose.ES256, "k")
	for _, c := range []struct {
		n  int64
		ok bool
	}{{jwtauth.DefaultMaxResponseBytes, true}, {jwtauth.DefaultMaxResponseBytes + 1, false}} {
		p := &paddedKeys{n: int(c.n)}
		p.publish(s.jwk())
		v, err := jwtauth.New(fakeIssuer, "agent", jwtauth.WithHTTPClient(&http.Client{Transport: p}))
		require.NoError(t, err)
		_, err = v.Verify(context.Background(), s.sign(t, claims(time.Now())))
		if c.ok {
			assert.NoError(t, err, c.n)
		} else {
			assert.ErrorIs(t, err, jwtauth.ErrDiscovery, c.n)
		}
	}
}

// hangingIssuer never answers; it returns when the request is cancelled.
type hangingIssuer struct{}

func (hangingIssuer) RoundTrip(r *http.Request) (*http.Response, error) {
	<-r.Context().Done()
	return nil, r.Context().Err()
}

// Without a client timeout, each request to the issuer is bounded by
// DefaultTimeout.
func TestDefaultTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		v, err := jwtauth.New(fakeIssuer, "agent", jwtauth.WithHTTPClient(&http.Client{Transport: hangingIssuer{}}))
		require.NoError(t, err)
		start := time.Now()
		_, err = v.Verify(context.Background(), newSigner(t, jose.ES256, "k").sign(t, claims(start)))
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.NotErrorIs(t, err, a2a.ErrInvalidToken)
		assert.Equal(t, jwtauth.DefaultTimeout, time.Since(start))
	})
}
