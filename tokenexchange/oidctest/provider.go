package oidctest

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/candorkit/candor/internal/httpstatus"
)

// Options configure a Provider. The zero value is usable.
type Options struct {
	// AccessTokenLifetime is the lifetime of access tokens for clients that
	// do not set their own. Default 5 minutes (Keycloak's default).
	AccessTokenLifetime time.Duration
	// OfflineLifetime bounds refresh tokens. Default 30 days (Keycloak's
	// offline session idle timeout).
	OfflineLifetime time.Duration
	// DisableRotation makes the refresh_token grant return the presented
	// refresh token again instead of a new one (Keycloak with "Revoke
	// Refresh Token" off keeps the old token valid). By default each refresh
	// returns a new refresh token and the old one is refused afterwards.
	DisableRotation bool
}

// TokenRequest records one request to the token endpoint (or, in
// RevocationRequests, to the revocation endpoint). It holds no secret:
// parameter names only, never their values.
type TokenRequest struct {
	GrantType string   // "" for a revocation request
	ClientID  string   // from the Authorization header or the client_id parameter
	BasicAuth bool     // client authenticated with the Authorization header
	Params    []string // sorted names of the form parameters
	Status    int      // HTTP status of the answer
	// Traceparent is the W3C trace-context header the request carried (""
	// when none), so a test can check that a trace reached the provider.
	Traceparent string
}

// Provider is a running OpenID provider on 127.0.0.1.
type Provider struct {
	st       *storage
	srv      *http.Server
	done     chan struct{}
	issuer   string
	provider *op.Provider

	tokenCount  atomic.Int64
	mu          sync.Mutex
	requests    []TokenRequest
	revocations []TokenRequest
	editRefresh func(answer map[string]any)
	hold        func(ctx context.Context) error
	presented   map[[32]byte]int // refresh_token grant presentations, by SHA-256 of the token
	reuses      int
}

// maxRecordedBody bounds how much of a token request the recorder reads.
const maxRecordedBody = 1 << 20

// Start runs a provider on a free loopback port. Close it when done.
func Start(opts Options) (*Provider, error) {
	if opts.AccessTokenLifetime <= 0 {
		opts.AccessTokenLifetime = 5 * time.Minute
	}
	if opts.OfflineLifetime <= 0 {
		opts.OfflineLifetime = 30 * 24 * time.Hour
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("oidctest: signing key: %w", err)
	}
	st := &storage{
		clients:  map[string]*client{},
		users:    map[string]User{},
		access:   map[string]*accessRecord{},
		refresh:  map[string]*refreshRecord{},
		auth:     map[string]*authRequest{},
		codes:    map[string]string{},
		key:      key,
		keyID:    randomString(8),
		rotate:   !opts.DisableRotation,
		lifetime: opts.AccessTokenLifetime,
		offline:  opts.OfflineLifetime,
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("oidctest: listen: %w", err)
	}
	issuer := "http://" + ln.Addr().String()

	var cryptoKey [32]byte
	_, _ = rand.Read(cryptoKey[:])
	config := &op.Config{
		CryptoKey:             cryptoKey,
		CodeMethodS256:        true,
		AuthMethodPost:        true,
		GrantTypeRefreshToken: true,
		SupportedScopes:       []string{oidc.ScopeOpenID, oidc.ScopeProfile, oidc.ScopeEmail, oidc.ScopeOfflineAccess},
	}
	prov, err := op.NewProvider(config, st, op.StaticIssuer(issuer), op.WithAllowInsecure())
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("oidctest: provider: %w", err)
	}
	endpoints := *op.DefaultEndpoints
	endpoints.DeviceAuthorization = nil
	server := &keycloakServer{LegacyServer: op.NewLegacyServer(prov, endpoints), st: st}
	handler := op.RegisterLegacyServer(server, op.AuthorizeCallbackHandler(prov))

	p := &Provider{st: st, issuer: issuer, provider: prov, done: make(chan struct{}), presented: map[[32]byte]int{}}
	mux := http.NewServeMux()
	mux.Handle(loginPath, http.HandlerFunc(p.login))
	mux.Handle("/", handler)
	p.srv = &http.Server{
		Handler:           p.record(endpoints.Token.Relative(), endpoints.Revocation.Relative(), mux),
		ReadHeaderTimeout: 10 * time.Second,
	}
	go func() {
		defer close(p.done)
		_ = p.srv.Serve(ln) // returns http.ErrServerClosed after Close
	}()
	return p, nil
}

// record counts and describes every request to the token endpoint, and
// describes every request to the revocation endpoint.
func (p *Provider) record(tokenPath, revocationPath string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != tokenPath && r.URL.Path != revocationPath {
			next.ServeHTTP(w, r)
			return
		}
		isToken := r.URL.Path == tokenPath
		if isToken {
			p.tokenCount.Add(1)
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxRecordedBody))
		if err != nil {
			http.Error(w, "cannot read request body", http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		form, _ := url.ParseQuery(string(body)) // a malformed body is the OP's to refuse
		rec := TokenRequest{GrantType: form.Get("grant_type"), ClientID: form.Get("client_id"), Traceparent: r.Header.Get("Traceparent")}
		if id, _, ok := r.BasicAuth(); ok {
			rec.BasicAuth = true
			if u, err := url.QueryUnescape(id); err == nil {
				rec.ClientID = u
			}
		}
		for k := range form {
			rec.Params = append(rec.Params, k)
		}
		sort.Strings(rec.Params)
		p.mu.Lock()
		edit, hold := p.editRefresh, p.hold
		p.mu.Unlock()
		isRefresh := isToken && rec.GrantType == "refresh_token"
		if isRefresh && hold != nil {
			if err := hold(r.Context()); err != nil {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusServiceUnavailable)
				_, _ = io.WriteString(w, `{"error":"temporarily_unavailable","error_description":"refresh held and dropped by the test"}`)
				rec.Status = http.StatusServiceUnavailable
				p.mu.Lock()
				p.requests = append(p.requests, rec)
				p.mu.Unlock()
				return
			}
		}
		if isRefresh {
			sum := sha256.Sum256([]byte(form.Get("refresh_token")))
			p.mu.Lock()
			p.presented[sum]++
			if p.presented[sum] > 1 {
				p.reuses++
			}
			p.mu.Unlock()
		}
		if isToken && rec.GrantType == "refresh_token" && edit != nil {
			rec.Status = serveEdited(w, r, next, edit)
		} else {
			sw := &httpstatus.Recorder{ResponseWriter: w}
			next.ServeHTTP(sw, r)
			rec.Status = sw.Status
		}
		p.mu.Lock()
		if isToken {
			p.requests = append(p.requests, rec)
		} else {
			p.revocations = append(p.revocations, rec)
		}
		p.mu.Unlock()
	})
}

// EditRefreshAnswers passes every successful refresh_token answer through
// edit before it is sent: the provider has done its work (a rotated refresh
// token is issued and the presented one is stale) and the client receives
// what edit leaves of the JSON object. It reproduces providers whose answer
// a client refuses after the provider acted on it, such as one without
// token_type. A nil edit restores plain answers.
func (p *Provider) EditRefreshAnswers(edit func(answer map[string]any)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.editRefresh = edit
}

// HoldRefreshes calls hold with the request's context before the provider
// acts on each refresh_token grant request: hold may block (the request is
// then in flight, as at a slow provider) and returns nil to let the
// provider act, or an error to drop the request unanswered by the grant
// logic (the client receives 503 temporarily_unavailable, and nothing is
// rotated, redeemed or counted as presented). The context ends when the
// client goes away. A nil hold restores plain handling.
func (p *Provider) HoldRefreshes(hold func(ctx context.Context) error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hold = hold
}

// RefreshTokenReuses is the number of refresh_token grant requests the
// provider acted on that presented a refresh token some earlier request had
// already presented: 0 means no refresh token was ever presented twice
// (whether the provider accepted or refused the reuse). Only a digest of
// each token is kept.
func (p *Provider) RefreshTokenReuses() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.reuses
}

// RefreshGrants is the number of refresh_token grant requests the provider
// acted on (held and dropped ones excluded).
func (p *Provider) RefreshGrants() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, c := range p.presented {
		n += c
	}
	return n
}

// RotateKey replaces the provider's signing key with a new one. Tokens
// signed before stay verifiable: the old public key stays in the JWKS
// (JWKSURL) beside the new one, which signs everything from now on. It
// returns the new key's ID (the kid of tokens signed from now on).
func (p *Provider) RotateKey() (string, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", fmt.Errorf("oidctest: signing key: %w", err)
	}
	st := p.st
	st.keyMu.Lock()
	defer st.keyMu.Unlock()
	st.retired = append(st.retired, signingKey{id: st.keyID, key: st.key})
	st.key, st.keyID = key, randomString(8)
	return st.keyID, nil
}

// serveEdited runs next into a buffer and, when it answered 200 with a JSON
// object, sends the object as edit leaves it. It returns the status sent.
func serveEdited(w http.ResponseWriter, r *http.Request, next http.Handler, edit func(map[string]any)) int {
	buf := &bufferedWriter{header: http.Header{}}
	next.ServeHTTP(buf, r)
	if buf.status == 0 {
		buf.status = http.StatusOK
	}
	body := buf.body.Bytes()
	if buf.status == http.StatusOK {
		var answer map[string]any
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		if dec.Decode(&answer) == nil && answer != nil {
			edit(answer)
			if b, err := json.Marshal(answer); err == nil {
				body = b
			}
		}
	}
	for k, v := range buf.header {
		if k != "Content-Length" {
			w.Header()[k] = v
		}
	}
	w.WriteHeader(buf.status)
	_, _ = w.Write(body)
	return buf.status
}

type bufferedWriter struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedWriter) Header() http.Header { return b.header }
func (b *bufferedWriter) WriteHeader(code int) {
	if b.status == 0 {
		b.status = code
	}
}
func (b *bufferedWriter) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}

// Close stops the provider and waits for its listener to end.
func (p *Provider) Close() {
	_ = p.srv.Close()
	<-p.done
}

// Issuer is the provider's issuer URL (http://127.0.0.1:port).
func (p *Provider) Issuer() string { return p.issuer }

// TokenURL is the token endpoint.
func (p *Provider) TokenURL() string { return p.issuer + op.DefaultEndpoints.Token.Relative() }

// IntrospectionURL is the RFC 7662 introspection endpoint; a confidential
// client (for instance a resource server registered with a secret) may call it.
func (p *Provider) IntrospectionURL() string {
	return p.issuer + op.DefaultEndpoints.Introspection.Relative()
}

// RevocationURL is the RFC 7009 token revocation endpoint. A confidential
// client revokes the refresh tokens issued to it there.
func (p *Provider) RevocationURL() string {
	return p.issuer + op.DefaultEndpoints.Revocation.Relative()
}

// JWKSURL is the endpoint serving the public signing keys.
func (p *Provider) JWKSURL() string { return p.issuer + op.DefaultEndpoints.JwksURI.Relative() }

// TokenRequests is the number of requests that reached the token endpoint.
func (p *Provider) TokenRequests() int64 { return p.tokenCount.Load() }

// Requests returns a copy of the recorded token endpoint requests.
func (p *Provider) Requests() []TokenRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return cloneRequests(p.requests)
}

// RevocationRequests returns a copy of the recorded revocation endpoint
// requests. They are not counted by TokenRequests.
func (p *Provider) RevocationRequests() []TokenRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return cloneRequests(p.revocations)
}

func cloneRequests(in []TokenRequest) []TokenRequest {
	out := make([]TokenRequest, len(in))
	for i, r := range in {
		r.Params = slices.Clone(r.Params)
		out[i] = r
	}
	return out
}

// ActiveRefreshTokens counts the refresh tokens of userID held by clientID
// that the provider would still redeem: not revoked, not rotated away, not
// expired. It lets a test see a revocation from the provider's side.
func (p *Provider) ActiveRefreshTokens(userID, clientID string) int {
	p.st.mu.Lock()
	defer p.st.mu.Unlock()
	n := 0
	now := time.Now()
	for _, r := range p.st.refresh {
		if r.subject == userID && r.clientID == clientID && !r.revoked && !r.used && now.Before(r.expires) {
			n++
		}
	}
	return n
}

// AddClient registers a client. Registering an existing ID replaces it.
func (p *Provider) AddClient(c Client) error {
	if c.ID == "" {
		return errors.New("oidctest: client ID is empty")
	}
	if slices.Contains(c.Audiences, c.ID) {
		return fmt.Errorf("oidctest: client %q cannot be its own audience", c.ID)
	}
	c.Audiences = slices.Clone(c.Audiences)
	c.DefaultScopes = slices.Clone(c.DefaultScopes)
	c.OptionalScopes = slices.Clone(c.OptionalScopes)
	c.RedirectURIs = slices.Clone(c.RedirectURIs)
	p.st.mu.Lock()
	defer p.st.mu.Unlock()
	p.st.clients[c.ID] = &client{Client: c}
	return nil
}

// AddUser registers a user.
func (p *Provider) AddUser(u User) error {
	if u.ID == "" {
		return errors.New("oidctest: user ID is empty")
	}
	p.st.mu.Lock()
	defer p.st.mu.Unlock()
	p.st.users[u.ID] = u
	return nil
}

func (p *Provider) userGrant(userID, clientID string, scopes []string) (grant, *client, error) {
	p.st.mu.Lock()
	defer p.st.mu.Unlock()
	if _, ok := p.st.users[userID]; !ok {
		return grant{}, nil, fmt.Errorf("oidctest: unknown user %q", userID)
	}
	c, ok := p.st.clients[clientID]
	if !ok {
		return grant{}, nil, fmt.Errorf("oidctest: unknown client %q", clientID)
	}
	granted := slices.Clone(c.DefaultScopes)
	for _, s := range scopes {
		if !c.allows(s) {
			return grant{}, nil, fmt.Errorf("oidctest: client %q does not allow scope %q", clientID, s)
		}
		if !slices.Contains(granted, s) {
			granted = append(granted, s)
		}
	}
	return grant{
		subject:  userID,
		clientID: clientID,
		audience: slices.Clone(c.Audiences),
		scopes:   granted,
		authTime: time.Now(),
	}, c, nil
}

// UserAccessToken issues, without a browser, the access token a user would
// get after logging in at clientID (for example a web front end): a signed
// JWT with sub = the user, azp = clientID and aud = the client's Audiences.
// It does not touch the token endpoint and is not counted.
func (p *Provider) UserAccessToken(ctx context.Context, userID, clientID string, scopes ...string) (string, error) {
	g, c, err := p.userGrant(userID, clientID, scopes)
	if err != nil {
		return "", err
	}
	p.st.mu.Lock()
	id, exp, err := p.st.newAccessLocked(g)
	p.st.mu.Unlock()
	if err != nil {
		return "", err
	}
	if c.OpaqueAccessTokens {
		return op.CreateBearerToken(id, userID, p.provider.Crypto())
	}
	ctx = op.ContextWithIssuer(ctx, p.issuer)
	return op.CreateJWT(ctx, p.issuer, &g, exp, id, c, p.st)
}

// OfflineToken issues, without a browser, the offline refresh token a user
// grants clientID (scope offline_access): the mandate an unattended agent
// later redeems with the refresh_token grant. It is not counted.
func (p *Provider) OfflineToken(_ context.Context, userID, clientID string, scopes ...string) (string, error) {
	if !slices.Contains(scopes, oidc.ScopeOfflineAccess) {
		scopes = append(slices.Clone(scopes), oidc.ScopeOfflineAccess)
	}
	g, c, err := p.userGrant(userID, clientID, scopes)
	if err != nil {
		return "", err
	}
	if c.Secret == "" {
		return "", fmt.Errorf("oidctest: client %q is not confidential", clientID)
	}
	p.st.mu.Lock()
	defer p.st.mu.Unlock()
	return p.st.newRefreshLocked(g), nil
}

// RevokeUserSessions revokes every refresh token of userID held by clientID,
// as an administrator logging the user's offline sessions out would.
func (p *Provider) RevokeUserSessions(ctx context.Context, userID, clientID string) error {
	return p.st.TerminateSession(ctx, userID, clientID)
}

// AccessClaims is what a resource server learns from a verified access token.
type AccessClaims struct {
	Subject         string
	AuthorizedParty string
	Audience        []string
	Scopes          []string
	Expiry          time.Time
}

// ErrTokenRejected is returned by VerifyAccessToken for a token that is not a
// currently valid access token of this provider for the audience.
var ErrTokenRejected = errors.New("oidctest: access token rejected")

// VerifyAccessToken checks a token the way a resource server should: the
// signature against the provider's key, the issuer, the expiry, that it is
// still active (not revoked), and that audience is in aud.
func (p *Provider) VerifyAccessToken(ctx context.Context, token, audience string) (*AccessClaims, error) {
	if idSub, err := p.provider.Crypto().Decrypt(token); err == nil {
		return p.verifyOpaque(idSub, audience)
	}
	ctx = op.ContextWithIssuer(ctx, p.issuer)
	claims, err := op.VerifyAccessToken[*oidc.AccessTokenClaims](ctx, token, p.provider.AccessTokenVerifier(ctx))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrTokenRejected, err)
	}
	p.st.mu.Lock()
	rec, ok := p.st.access[claims.JWTID]
	active := ok && !rec.revoked && time.Now().Before(rec.expires)
	p.st.mu.Unlock()
	if !active {
		return nil, fmt.Errorf("%w: token is not active", ErrTokenRejected)
	}
	if !slices.Contains(claims.Audience, audience) {
		return nil, fmt.Errorf("%w: audience %q not in aud", ErrTokenRejected, audience)
	}
	out := &AccessClaims{
		Subject:  claims.Subject,
		Audience: slices.Clone(claims.Audience),
		Scopes:   slices.Clone(rec.scopes),
		Expiry:   claims.Expiration.AsTime(),
	}
	if azp, ok := claims.Claims["azp"].(string); ok {
		out.AuthorizedParty = azp
	}
	return out, nil
}

// verifyOpaque checks an opaque access token, whose decrypted form is
// "tokenID:subject".
func (p *Provider) verifyOpaque(idSub, audience string) (*AccessClaims, error) {
	id, sub, ok := strings.Cut(idSub, ":")
	if !ok {
		return nil, fmt.Errorf("%w: malformed opaque token", ErrTokenRejected)
	}
	p.st.mu.Lock()
	rec, found := p.st.access[id]
	var out *AccessClaims
	if found && !rec.revoked && time.Now().Before(rec.expires) && rec.subject == sub {
		out = &AccessClaims{
			Subject:         rec.subject,
			AuthorizedParty: rec.clientID,
			Audience:        slices.Clone(rec.audience),
			Scopes:          slices.Clone(rec.scopes),
			Expiry:          rec.expires,
		}
	}
	p.st.mu.Unlock()
	if out == nil {
		return nil, fmt.Errorf("%w: token is not active", ErrTokenRejected)
	}
	if !slices.Contains(out.Audience, audience) {
		return nil, fmt.Errorf("%w: audience %q not in aud", ErrTokenRejected, audience)
	}
	return out, nil
}
