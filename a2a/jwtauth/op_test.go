package jwtauth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/candorkit/candor/a2a"
	"github.com/candorkit/candor/a2a/jwtauth"
	"github.com/candorkit/candor/tokenexchange/oidctest"
)

const agentSecret = "agent-s3cret/+&value"

// startOP runs the real OpenID provider with a user, a web front end whose
// tokens name the agent in aud, a short-lived client, and the agent.
func startOP(t *testing.T) *oidctest.Provider {
	t.Helper()
	p, err := oidctest.Start(oidctest.Options{})
	require.NoError(t, err)
	t.Cleanup(p.Close)
	require.NoError(t, errors.Join(
		p.AddUser(oidctest.User{ID: "alice", Username: "alice"}),
		p.AddClient(oidctest.Client{ID: "webapp", Secret: "webapp-secret", Audiences: []string{"agent"},
			DefaultScopes: []string{"profile"}, OptionalScopes: []string{"email"}}),
		p.AddClient(oidctest.Client{ID: "brief", Secret: "brief-secret", Audiences: []string{"agent"},
			AccessTokenLifetime: time.Nanosecond}),
		p.AddClient(oidctest.Client{ID: "agent", Secret: agentSecret}),
	))
	return p
}

func userToken(t *testing.T, p *oidctest.Provider, client string, scopes ...string) string {
	t.Helper()
	tok, err := p.UserAccessToken(context.Background(), "alice", client, scopes...)
	require.NoError(t, err)
	return tok
}

// counter counts the requests the verifier sends, by path.
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) RoundTrip(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[r.URL.Path]++
	c.mu.Unlock()
	return http.DefaultTransport.RoundTrip(r)
}

func (c *counter) get(path string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[path]
}

func (c *counter) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.n {
		n += v
	}
	return n
}

func newVerifier(t *testing.T, p *oidctest.Provider, audience string, opts ...jwtauth.Option) (*jwtauth.Verifier, *counter) {
	t.Helper()
	c := &counter{}
	v, err := jwtauth.New(p.Issuer(), audience, append([]jwtauth.Option{jwtauth.WithHTTPClient(&http.Client{Transport: c})}, opts...)...)
	require.NoError(t, err)
	return v, c
}

func invalidToken(t *testing.T, err error, reason string) {
	t.Helper()
	require.ErrorIs(t, err, a2a.ErrInvalidToken)
	assert.NotErrorIs(t, err, a2a.ErrInsufficientScope)
	var te *jwtauth.TokenError
	require.ErrorAs(t, err, &te)
	assert.Contains(t, te.Reason, reason)
}

func jwksPath(p *oidctest.Provider) string {
	return strings.TrimPrefix(p.JWKSURL(), p.Issuer())
}

func TestVerifyValidOPToken(t *testing.T) {
	ctx := context.Background()
	p := startOP(t)
	v, c := newVerifier(t, p, "agent")
	assert.Zero(t, c.total(), "New does no I/O")

	tok := userToken(t, p, "webapp", "email")
	caller, err := v.Verify(ctx, tok)
	require.NoError(t, err)
	assert.Equal(t, "alice", caller.Subject)
	assert.Equal(t, p.Issuer(), caller.Issuer)
	assert.Contains(t, caller.Audience, "agent")
	assert.Subset(t, caller.Scopes, []string{"profile", "email"})
	assert.True(t, caller.Expiry.After(time.Now()))
	assert.Equal(t, 1, c.get("/.well-known/openid-configuration"))
	assert.Equal(t, 1, c.get(jwksPath(p)))

	// The keys are cached.
	_, err = v.Verify(ctx, userToken(t, p, "webapp"))
	require.NoError(t, err)
	assert.Equal(t, 2, c.total())
	assert.Contains(t, v.String(), p.Issuer())
}

func TestVerifyExpired(t *testing.T) {
	ctx := context.Background()
	p := startOP(t)
	tok := userToken(t, p, "brief") // expires at once
	strict, _ := newVerifier(t, p, "agent", jwtauth.WithLeeway(0))
	_, err := strict.Verify(ctx, tok)
	invalidToken(t, err, "expired")

	// Within the default leeway the same token still passes.
	lenient, _ := newVerifier(t, p, "agent")
	_, err = lenient.Verify(ctx, tok)
	assert.NoError(t, err)
}

func TestVerifyWrongAudience(t *testing.T) {
	p := startOP(t)
	v, _ := newVerifier(t, p, "billing")
	_, err := v.Verify(context.Background(), userToken(t, p, "webapp"))
	invalidToken(t, err, `audience "billing"`)
}

// A token of another issuer is refused: its key is not the issuer's.
func TestVerifyWrongIssuer(t *testing.T) {
	p, other := startOP(t), startOP(t)
	v, _ := newVerifier(t, p, "agent")
	_, err := v.Verify(context.Background(), userToken(t, other, "webapp"))
	invalidToken(t, err, "no key")
}

func TestVerifyBadSignature(t *testing.T) {
	ctx := context.Background()
	p := startOP(t)
	v, _ := newVerifier(t, p, "agent")
	tok := userToken(t, p, "webapp")
	parts := strings.Split(tok, ".")
	require.Len(t, parts, 3)

	// Another base64url character at one position: still a well-formed
	// JWT, whose signature no longer verifies. (Flipping bits of the
	// character could make a '.' or a character outside the alphabet,
	// which is a malformed token, not a bad signature.)
	sig := []byte(parts[2])
	sig[10] = 'A'
	if parts[2][10] == 'A' {
		sig[10] = 'B'
	}
	_, err := v.Verify(ctx, parts[0]+"."+parts[1]+"."+string(sig))
	invalidToken(t, err, "signature")

	// The signed payload with another subject.
	payload := decodeSegment(t, parts[1])
	payload["sub"] = "mallory"
	_, err = v.Verify(ctx, parts[0]+"."+encodeSegment(t, payload)+"."+parts[2])
	invalidToken(t, err, "signature")
}

func TestVerifyAlgNone(t *testing.T) {
	p := startOP(t)
	v, _ := newVerifier(t, p, "agent")
	parts := strings.Split(userToken(t, p, "webapp"), ".")
	h := decodeSegment(t, parts[0])
	for _, alg := range []string{"none", "None", ""} {
		h["alg"] = alg
		_, err := v.Verify(context.Background(), encodeSegment(t, h)+"."+parts[1]+".")
		invalidToken(t, err, "algorithm")
	}
}

// The issuer's public key, in every form it is published or encoded, used
// as an HMAC secret: refused before any signature check.
func TestVerifyHS256WithPublicKeyAsSecret(t *testing.T) {
	ctx := context.Background()
	p := startOP(t)
	v, _ := newVerifier(t, p, "agent")
	parts := strings.Split(userToken(t, p, "webapp"), ".")
	kid, _ := decodeSegment(t, parts[0])["kid"].(string)
	require.NotEmpty(t, kid)

	resp, err := http.Get(p.JWKSURL())
	require.NoError(t, err)
	rawSet, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	var set jose.JSONWebKeySet
	require.NoError(t, json.Unmarshal(rawSet, &set))
	keys := set.Key(kid)
	require.Len(t, keys, 1)
	pub, ok := keys[0].Key.(*ecdsa.PublicKey)
	require.True(t, ok)
	der, err := x509.MarshalPKIXPublicKey(pub)
	require.NoError(t, err)
	jwkJSON, err := keys[0].MarshalJSON()
	require.NoError(t, err)
	secrets := map[string][]byte{
		"jwk json": jwkJSON,
		"jwks":     rawSet,
		"der":      der,
		"pem":      pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}),
	}
	payload := decodeSegment(t, parts[1])
	for name, key := range secrets {
		for _, alg := range []jose.SignatureAlgorithm{jose.HS256, jose.HS384, jose.HS512} {
			forged := signWith(t, alg, key, kid, payload)
			_, err := v.Verify(ctx, forged)
			invalidToken(t, err, "algorithm")
			assert.NotContains(t, err.Error(), forged, name)
		}
	}
}

// An unknown key id makes the verifier fetch the key set again at once, and
// then not again within RefreshInterval, however many forged ids arrive.
func TestVerifyUnknownKidRefetchesOnce(t *testing.T) {
	ctx := context.Background()
	p, other := startOP(t), startOP(t)
	v, c := newVerifier(t, p, "agent")
	_, err := v.Verify(ctx, userToken(t, p, "webapp"))
	require.NoError(t, err)
	require.Equal(t, 1, c.get(jwksPath(p)))

	foreign := userToken(t, other, "webapp")
	_, err = v.Verify(ctx, foreign)
	invalidToken(t, err, "no key")
	assert.Equal(t, 2, c.get(jwksPath(p)), "refetched on the unknown kid")

	for range 5 {
		_, err = v.Verify(ctx, foreign)
		invalidToken(t, err, "no key")
	}
	assert.Equal(t, 2, c.get(jwksPath(p)), "no refetch within the interval")
	assert.Equal(t, 1, c.get("/.well-known/openid-configuration"))

	_, err = v.Verify(ctx, userToken(t, p, "webapp"))
	assert.NoError(t, err)
	assert.Equal(t, 2, c.get(jwksPath(p)))
}

func TestVerifyRequiredScopes(t *testing.T) {
	ctx := context.Background()
	p := startOP(t)
	ok, _ := newVerifier(t, p, "agent", jwtauth.WithRequiredScopes("profile"))
	_, err := ok.Verify(ctx, userToken(t, p, "webapp"))
	require.NoError(t, err)

	v, _ := newVerifier(t, p, "agent", jwtauth.WithRequiredScopes("profile", "email", "admin"))
	caller, err := v.Verify(ctx, userToken(t, p, "webapp"))
	require.ErrorIs(t, err, a2a.ErrInsufficientScope)
	assert.NotErrorIs(t, err, a2a.ErrInvalidToken)
	var se *jwtauth.ScopeError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, []string{"email", "admin"}, se.Missing)
	assert.Zero(t, caller, "no caller with an error")
}

func TestVerifyNotAJWT(t *testing.T) {
	p := startOP(t)
	v, c := newVerifier(t, p, "agent")
	for _, tok := range []string{"", "opaque-token", "a.b", "a.b.c.d"} {
		_, err := v.Verify(context.Background(), tok)
		require.ErrorIs(t, err, a2a.ErrInvalidToken, tok)
	}
	_, err := v.Verify(context.Background(), "!!!.e30.x")
	invalidToken(t, err, "malformed")
	assert.Zero(t, c.total())
}

func TestIntrospectionAtTheOP(t *testing.T) {
	ctx := context.Background()
	p := startOP(t)
	for name, endpoint := range map[string]string{"explicit endpoint": p.IntrospectionURL(), "discovered endpoint": ""} {
		t.Run(name, func(t *testing.T) {
			v, _ := newVerifier(t, p, "agent", jwtauth.WithIntrospection(endpoint, "agent", agentSecret))
			_, err := v.Verify(ctx, "an-opaque-token-the-op-never-issued")
			invalidToken(t, err, "inactive")

			// JWTs are still verified locally.
			_, err = v.Verify(ctx, userToken(t, p, "webapp"))
			assert.NoError(t, err)
		})
	}

	t.Run("wrong client secret", func(t *testing.T) {
		v, _ := newVerifier(t, p, "agent", jwtauth.WithIntrospection(p.IntrospectionURL(), "agent", "wrong-"+agentSecret))
		const tok = "opaque-token-value-12345"
		_, err := v.Verify(ctx, tok)
		require.Error(t, err)
		assert.NotErrorIs(t, err, a2a.ErrInvalidToken, "the token could not be checked: not a 401 for the caller")
		var se *jwtauth.StatusError
		require.ErrorAs(t, err, &se)
		assert.Equal(t, "introspection", se.Op)
		assert.GreaterOrEqual(t, se.StatusCode, 400)
		for _, s := range []string{tok, agentSecret, "wrong-" + agentSecret} {
			assert.NotContains(t, err.Error(), s)
			assert.NotContains(t, string(se.Body), s)
		}
		t.Log(err)
	})
}

func TestDiscoveryIssuerMustMatch(t *testing.T) {
	p := startOP(t)
	c := &counter{}
	v, err := jwtauth.New(p.Issuer()+"/", "agent", jwtauth.WithHTTPClient(&http.Client{Transport: c}))
	require.NoError(t, err)
	_, err = v.Verify(context.Background(), userToken(t, p, "webapp"))
	require.ErrorIs(t, err, jwtauth.ErrDiscovery)
	assert.NotErrorIs(t, err, a2a.ErrInvalidToken)
	assert.Zero(t, c.get(jwksPath(p)), "no key set from an issuer that is not the one configured")
}

func TestMaxResponseBytes(t *testing.T) {
	p := startOP(t)
	v, _ := newVerifier(t, p, "agent", jwtauth.WithMaxResponseBytes(64))
	_, err := v.Verify(context.Background(), userToken(t, p, "webapp"))
	require.ErrorIs(t, err, jwtauth.ErrDiscovery)
	assert.Contains(t, err.Error(), "larger than 64 bytes")
}

func decodeSegment(t *testing.T, s string) map[string]any {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(s)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	return m
}

func encodeSegment(t *testing.T, m map[string]any) string {
	t.Helper()
	b, err := json.Marshal(m)
	require.NoError(t, err)
	return base64.RawURLEncoding.EncodeToString(b)
}

func signWith(t *testing.T, alg jose.SignatureAlgorithm, key any, kid string, claims map[string]any) string {
	t.Helper()
	opts := (&jose.SignerOptions{}).WithType("JWT")
	if kid != "" {
		opts = opts.WithHeader("kid", kid)
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, opts)
	require.NoError(t, err)
	b, err := json.Marshal(claims)
	require.NoError(t, err)
	obj, err := s.Sign(b)
	require.NoError(t, err)
	out, err := obj.CompactSerialize()
	require.NoError(t, err)
	return out
}
