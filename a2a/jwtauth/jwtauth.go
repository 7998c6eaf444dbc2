package jwtauth

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/candorkit/candor/a2a"
	"github.com/candorkit/candor/internal/httpx"
	"github.com/candorkit/candor/internal/secret"
)

// algorithms are the signing algorithms a JWT may use.
var algorithms = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512,
	jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512,
	jose.EdDSA,
}

// Verifier checks bearer tokens issued by one issuer for one audience. It
// implements a2a.Verifier and is safe for concurrent use.
type Verifier struct {
	issuer   string
	audience string
	hc       *http.Client
	timeout  time.Duration // per request, when hc has none
	maxBytes int64
	leeway   time.Duration
	scopes   []string

	introspect   bool
	endpoint     string // "" until known
	clientID     string
	clientSecret secret.Secret

	fetchMu sync.Mutex // serialises fetches

	mu        sync.Mutex
	disc      *discovery
	keys      []jose.JSONWebKey
	fetchedAt time.Time // zero until a key set was fetched
	// lastRefresh is when an unknown key id last caused a fetch.
	lastRefresh time.Time
}

var _ a2a.Verifier = (*Verifier)(nil)

type discovery struct {
	Issuer                string `json:"issuer"`
	JWKSURI               string `json:"jwks_uri"`
	IntrospectionEndpoint string `json:"introspection_endpoint"`
}

// New returns a Verifier for tokens that issuer issues for audience. It
// does no I/O: the issuer is first contacted by Verify.
func New(issuer, audience string, opts ...Option) (*Verifier, error) {
	if err := checkURL(issuer); err != nil {
		return nil, fmt.Errorf("jwtauth: issuer: %w", err)
	}
	if u, _ := url.Parse(issuer); u.RawQuery != "" || u.Fragment != "" {
		return nil, errors.New("jwtauth: issuer: must not have a query or fragment")
	}
	if audience == "" {
		return nil, errors.New("jwtauth: audience is empty")
	}
	o := options{maxBytes: DefaultMaxResponseBytes, leeway: DefaultLeeway}
	for _, opt := range opts {
		if opt == nil {
			return nil, errors.New("jwtauth: nil option")
		}
		opt(&o)
	}
	if err := errors.Join(o.errs...); err != nil {
		return nil, fmt.Errorf("jwtauth: %w", err)
	}
	hc := o.httpClient
	if hc == nil {
		hc = &http.Client{}
	}
	if o.rootCAs != nil {
		var err error
		if hc, err = httpx.WithRootCAs(hc, o.rootCAs); err != nil {
			return nil, fmt.Errorf("jwtauth: WithRootCAs: %w", err)
		}
	}
	hc = httpx.NoRedirectClient(hc)
	v := &Verifier{
		issuer:   issuer,
		audience: audience,
		hc:       hc,
		maxBytes: o.maxBytes,
		leeway:   o.leeway,
		scopes:   slices.Clone(o.scopes),
	}
	if hc.Timeout == 0 {
		v.timeout = DefaultTimeout
	}
	if o.withIntrospect {
		if o.introspect != "" {
			if err := checkURL(o.introspect); err != nil {
				return nil, fmt.Errorf("jwtauth: WithIntrospection endpoint: %w", err)
			}
		}
		v.introspect = true
		v.endpoint = o.introspect
		v.clientID = o.clientID
		v.clientSecret = secret.New(o.clientSecret)
	}
	return v, nil
}

// checkURL accepts an absolute https URL, or http on a loopback host.
func checkURL(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Host == "" || u.User != nil:
		return fmt.Errorf("%q is not an absolute URL without credentials", raw)
	case u.Scheme == "https":
		return nil
	case u.Scheme == "http" && httpx.IsLoopback(u.Host):
		return nil
	case u.Scheme == "http":
		return fmt.Errorf("%q: plain http is allowed only on a loopback address", raw)
	}
	return fmt.Errorf("%q is not an http(s) URL", raw)
}

// String names the verifier without any secret.
func (v *Verifier) String() string {
	return fmt.Sprintf("jwtauth.Verifier(issuer=%s audience=%s)", v.issuer, v.audience)
}

// Verify checks token and returns its caller; see the package
// documentation for the rules and the errors.
func (v *Verifier) Verify(ctx context.Context, token string) (a2a.Caller, error) {
	switch {
	case token == "":
		return a2a.Caller{}, invalid("empty token")
	case strings.Count(token, ".") == 2:
		return v.verifyJWT(ctx, token)
	case v.introspect:
		return v.introspectToken(ctx, token)
	}
	return a2a.Caller{}, invalid("not a JWT (and no introspection is configured)")
}

type header struct {
	Alg string `json:"alg"`
	Kid string `json:"kid"`
}

func (v *Verifier) verifyJWT(ctx context.Context, token string) (a2a.Caller, error) {
	seg, _, _ := strings.Cut(token, ".")
	raw, err := base64.RawURLEncoding.DecodeString(seg)
	var h header
	if err != nil || json.Unmarshal(raw, &h) != nil {
		return a2a.Caller{}, invalid("malformed JWT header")
	}
	if !slices.Contains(algorithms, jose.SignatureAlgorithm(h.Alg)) {
		return a2a.Caller{}, invalid(fmt.Sprintf("signing algorithm %.16q is not accepted", h.Alg))
	}
	tok, err := jwt.ParseSigned(token, algorithms)
	if err != nil || len(tok.Headers) != 1 {
		return a2a.Caller{}, invalid("malformed JWT")
	}
	alg, kid := tok.Headers[0].Algorithm, tok.Headers[0].KeyID
	key, err := v.key(ctx, kid, alg)
	if err != nil {
		return a2a.Caller{}, err
	}
	var c jwt.Claims
	var extra struct {
		Scope json.RawMessage `json:"scope"`
		Scp   json.RawMessage `json:"scp"`
	}
	if err := tok.Claims(key.Key, &c, &extra); err != nil {
		return a2a.Caller{}, invalid("the signature does not verify with the issuer's key, or the claims are malformed")
	}
	now := time.Now()
	switch {
	case c.Issuer != v.issuer:
		return a2a.Caller{}, invalid(fmt.Sprintf("issuer %.128q is not %q", c.Issuer, v.issuer))
	case !c.Audience.Contains(v.audience):
		return a2a.Caller{}, invalid(fmt.Sprintf("audience %q is not in aud", v.audience))
	case c.Subject == "":
		return a2a.Caller{}, invalid("no subject")
	case c.Expiry == nil:
		return a2a.Caller{}, invalid("no expiry")
	case now.After(c.Expiry.Time().Add(v.leeway)):
		return a2a.Caller{}, invalid("expired at " + c.Expiry.Time().UTC().Format(time.RFC3339))
	case c.NotBefore != nil && now.Add(v.leeway).Before(c.NotBefore.Time()):
		return a2a.Caller{}, invalid("not valid before " + c.NotBefore.Time().UTC().Format(time.RFC3339))
	case c.IssuedAt != nil && now.Add(v.leeway).Before(c.IssuedAt.Time()):
		return a2a.Caller{}, invalid("issued in the future")
	}
	scopes, ok := parseScopes(extra.Scope)
	if !ok {
		return a2a.Caller{}, invalid("malformed scope claim")
	}
	if len(scopes) == 0 {
		if scopes, ok = parseScopes(extra.Scp); !ok {
			return a2a.Caller{}, invalid("malformed scp claim")
		}
	}
	caller := a2a.Caller{
		Subject:  c.Subject,
		Issuer:   c.Issuer,
		Audience: slices.Clone([]string(c.Audience)),
		Scopes:   scopes,
		Expiry:   c.Expiry.Time(),
	}
	if err := v.checkScopes(scopes); err != nil {
		return a2a.Caller{}, err
	}
	return caller, nil
}

func (v *Verifier) checkScopes(have []string) error {
	var missing []string
	for _, s := range v.scopes {
		if !slices.Contains(have, s) {
			missing = append(missing, s)
		}
	}
	if len(missing) > 0 {
		return &ScopeError{Missing: missing}
	}
	return nil
}

// parseScopes reads a space-separated string or an array of strings.
func parseScopes(raw json.RawMessage) ([]string, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, true
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strings.Fields(s), true
	}
	var a []string
	if json.Unmarshal(raw, &a) == nil {
		return a, true
	}
	return nil, false
}

// key returns the issuer's key for kid and alg. The key set is fetched
// when the cache has none or is older than MaxKeyAge, and again when it
// lacks kid, at most once per RefreshInterval.
func (v *Verifier) key(ctx context.Context, kid string, alg string) (jose.JSONWebKey, error) {
	v.mu.Lock()
	keys, at := v.keys, v.fetchedAt
	v.mu.Unlock()
	if !at.IsZero() && time.Since(at) < MaxKeyAge {
		if k, ok := pick(keys, kid, alg); ok {
			return k, nil
		}
	}
	v.fetchMu.Lock()
	defer v.fetchMu.Unlock()
	v.mu.Lock()
	keys, at, last := v.keys, v.fetchedAt, v.lastRefresh
	v.mu.Unlock()
	unknownKid := false
	if !at.IsZero() && time.Since(at) < MaxKeyAge {
		if k, ok := pick(keys, kid, alg); ok {
			return k, nil // fetched by another caller meanwhile
		}
		if !last.IsZero() && time.Since(last) < RefreshInterval {
			return jose.JSONWebKey{}, unknownKey(kid)
		}
		unknownKid = true
	}
	fresh, err := v.fetchKeys(ctx)
	if err != nil {
		return jose.JSONWebKey{}, err
	}
	now := time.Now()
	v.mu.Lock()
	v.keys, v.fetchedAt = fresh, now
	if unknownKid {
		v.lastRefresh = now
	}
	v.mu.Unlock()
	if k, ok := pick(fresh, kid, alg); ok {
		return k, nil
	}
	return jose.JSONWebKey{}, unknownKey(kid)
}

func unknownKey(kid string) error {
	if kid == "" {
		return invalid("no key id, and the issuer does not publish exactly one key for the algorithm")
	}
	return invalid(fmt.Sprintf("the issuer publishes no key %.64q for the algorithm", kid))
}

// pick finds the one public signing key for kid (or, without kid, the only
// one) that suits alg.
func pick(keys []jose.JSONWebKey, kid, alg string) (jose.JSONWebKey, bool) {
	var found []jose.JSONWebKey
	for _, k := range keys {
		if kid != "" && k.KeyID != kid {
			continue
		}
		if (k.Use != "" && k.Use != "sig") || (k.Algorithm != "" && k.Algorithm != alg) || !suits(k.Key, alg) {
			continue
		}
		found = append(found, k)
	}
	if len(found) != 1 {
		return jose.JSONWebKey{}, false
	}
	return found[0], true
}

// suits reports whether key is a public key of the kind alg needs.
func suits(key any, alg string) bool {
	switch k := key.(type) {
	case *rsa.PublicKey:
		return strings.HasPrefix(alg, "RS") || strings.HasPrefix(alg, "PS")
	case *ecdsa.PublicKey:
		switch alg {
		case "ES256":
			return k.Curve == elliptic.P256()
		case "ES384":
			return k.Curve == elliptic.P384()
		case "ES512":
			return k.Curve == elliptic.P521()
		}
	case ed25519.PublicKey:
		return alg == "EdDSA"
	}
	return false
}

// discover reads (once) the issuer's discovery document.
func (v *Verifier) discover(ctx context.Context) (*discovery, error) {
	v.mu.Lock()
	d := v.disc
	v.mu.Unlock()
	if d != nil {
		return d, nil
	}
	body, err := v.get(ctx, "discovery", strings.TrimSuffix(v.issuer, "/")+"/.well-known/openid-configuration")
	if err != nil {
		return nil, err
	}
	var doc discovery
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("%w: the discovery document is not JSON: %v", ErrDiscovery, err)
	}
	if doc.Issuer != v.issuer {
		return nil, fmt.Errorf("%w: the discovery document names issuer %.256q, not %q", ErrDiscovery, doc.Issuer, v.issuer)
	}
	if doc.JWKSURI == "" {
		return nil, fmt.Errorf("%w: the discovery document has no jwks_uri", ErrDiscovery)
	}
	if err := checkURL(doc.JWKSURI); err != nil {
		return nil, fmt.Errorf("%w: jwks_uri: %v", ErrDiscovery, err)
	}
	if doc.IntrospectionEndpoint != "" {
		if err := checkURL(doc.IntrospectionEndpoint); err != nil {
			doc.IntrospectionEndpoint = "" // unusable; an explicit endpoint still works
		}
	}
	v.mu.Lock()
	v.disc = &doc
	v.mu.Unlock()
	return &doc, nil
}

func (v *Verifier) fetchKeys(ctx context.Context) ([]jose.JSONWebKey, error) {
	d, err := v.discover(ctx)
	if err != nil {
		return nil, err
	}
	body, err := v.get(ctx, "jwks", d.JWKSURI)
	if err != nil {
		return nil, err
	}
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &set); err != nil {
		return nil, fmt.Errorf("%w: the key set is not JSON: %v", ErrDiscovery, err)
	}
	var keys []jose.JSONWebKey
	for _, raw := range set.Keys {
		var k jose.JSONWebKey
		if json.Unmarshal(raw, &k) != nil || !k.Valid() || !k.IsPublic() {
			continue // a key type this package does not use, or a private key
		}
		keys = append(keys, k)
	}
	return keys, nil
}

func (v *Verifier) get(ctx context.Context, op, u string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("jwtauth: %s: %w", op, err)
	}
	req.Header.Set("Accept", "application/json")
	return v.do(req, op, nil)
}

// do sends req and returns the 200 body, capped; secrets are redacted from
// any error body.
func (v *Verifier) do(req *http.Request, op string, secrets []string) ([]byte, error) {
	if v.timeout > 0 {
		ctx, cancel := context.WithTimeout(req.Context(), v.timeout)
		defer cancel()
		req = req.WithContext(ctx)
	}
	resp, err := v.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("jwtauth: %s: %w", op, httpx.StripURL(err))
	}
	defer resp.Body.Close()
	body, err := httpx.ReadAll(resp.Body, v.maxBytes)
	if resp.StatusCode != http.StatusOK {
		return nil, &StatusError{Op: op, StatusCode: resp.StatusCode, Header: resp.Header.Clone(),
			Body: secret.RedactBytes(body, secrets...)}
	}
	if errors.Is(err, httpx.ErrTooLarge) {
		return nil, fmt.Errorf("%w: %s answer: %w", ErrDiscovery, op, err)
	}
	if err != nil {
		return nil, fmt.Errorf("jwtauth: %s: reading the answer: %w", op, err)
	}
	return body, nil
}
