package mcpauth

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/oauth2"

	"github.com/candorkit/candor/internal/httpx"
	"github.com/candorkit/candor/internal/secret"
	"github.com/candorkit/candor/mcpclient"
)

// protocolVersion is sent on metadata requests (MCP-Protocol-Version).
const protocolVersion = "2025-11-25"

// DefaultMaxResponseBytes bounds every metadata, registration and token
// answer unless WithMaxResponseBytes says otherwise.
const DefaultMaxResponseBytes int64 = 1 << 20

// DefaultTimeout bounds each request to a metadata host or authorization
// server when the caller brings no HTTP client.
const DefaultTimeout = 30 * time.Second

// Target is what a token is for: the MCP server and the authorization
// server that protects it, as discovered. Flows that get their tokens or
// assertions elsewhere (Delegated, JWTBearer) receive it.
type Target struct {
	Endpoint string   // the MCP endpoint
	Resource string   // the RFC 8707 resource indicator (the protected resource metadata's resource)
	Issuer   string   // the authorization server's issuer identifier
	Scopes   []string // the scopes to ask for (may be empty)
	// Server is the authorization server's metadata.
	Server *ServerMetadata
}

// LoginFunc is the user agent's part of the authorization code flow: it
// shows authURL to the user (a browser), waits for the authorization
// server to redirect to the redirect URL, and returns the URL it was
// redirected to, query included. mcpauth checks its state, its error and
// its iss, and redeems its code.
type LoginFunc func(ctx context.Context, authURL string) (callbackURL string, err error)

// TokenFunc obtains a token for t elsewhere, for example by exchanging the
// caller's own token for one whose audience is t.Resource
// (tokenexchange).
type TokenFunc func(ctx context.Context, t Target) (*oauth2.Token, error)

// AssertionFunc obtains an authorization grant assertion (a JWT, such as
// an identity assertion from the caller's identity provider) for t, which
// the client redeems with the JWT bearer grant (RFC 7523 §2.1).
type AssertionFunc func(ctx context.Context, t Target) (string, error)

type flowKind int

const (
	flowCode flowKind = iota + 1
	flowClientCredentials
	flowJWTBearer
	flowDelegated
)

// Flow is how an Authorizer obtains tokens; build one with
// AuthorizationCode, ClientCredentials, JWTBearer or Delegated.
type Flow struct {
	kind   flowKind
	login  LoginFunc
	assert AssertionFunc
	fetch  TokenFunc
}

// AuthorizationCode is the authorization code grant with PKCE (S256), for
// a program acting for a user who logs in through login. It needs
// WithRedirectURL.
func AuthorizationCode(login LoginFunc) Flow { return Flow{kind: flowCode, login: login} }

// ClientCredentials is the client credentials grant, for a program acting
// on its own behalf, with a client secret or a private key
// (private_key_jwt).
func ClientCredentials() Flow { return Flow{kind: flowClientCredentials} }

// JWTBearer redeems the assertion that assert returns with the JWT bearer
// grant, authenticating as the client.
func JWTBearer(assert AssertionFunc) Flow { return Flow{kind: flowJWTBearer, assert: assert} }

// Delegated takes its tokens from fetch, once the server's metadata has
// said which resource and authorization server they are for.
func Delegated(fetch TokenFunc) Flow { return Flow{kind: flowDelegated, fetch: fetch} }

// String names the flow, as the mcpauth.flow attribute does.
func (f Flow) String() string {
	switch f.kind {
	case flowCode:
		return "authorization_code"
	case flowClientCredentials:
		return "client_credentials"
	case flowJWTBearer:
		return "jwt_bearer"
	case flowDelegated:
		return "delegated"
	}
	return "none"
}

func (f Flow) grant() string {
	switch f.kind {
	case flowCode:
		return GrantAuthorizationCode
	case flowClientCredentials:
		return GrantClientCredentials
	case flowJWTBearer:
		return GrantJWTBearer
	}
	return ""
}

// Option configures New.
type Option func(*options)

type options struct {
	clientID     string
	clientSecret secret.Secret
	key          crypto.Signer
	keyID        string
	metadataURL  string
	clientName   string
	redirectURL  string
	offline      bool
	hc           *http.Client
	roots        *x509.CertPool
	maxBody      int64
	logger       *slog.Logger
	now          func() time.Time
	tp           trace.TracerProvider
	mp           metric.MeterProvider
	errs         []error
}

// WithClient identifies the program as a client pre-registered at the
// authorization server; secret is "" for a public client.
func WithClient(id, clientSecret string) Option {
	return func(o *options) {
		if id == "" {
			o.errs = append(o.errs, fmt.Errorf("WithClient: empty client ID"))
		}
		o.clientID, o.clientSecret = id, secret.New(clientSecret)
	}
}

// WithPrivateKey authenticates the client at the token endpoint with a
// JWT signed by key (private_key_jwt, RFC 7523 §2.2): ECDSA (ES256, ES384,
// ES512 by curve), RSA (RS256) or Ed25519 (EdDSA). keyID, if not "", goes
// in the JWT's kid header.
func WithPrivateKey(key crypto.Signer, keyID string) Option {
	return func(o *options) {
		if key == nil {
			o.errs = append(o.errs, fmt.Errorf("WithPrivateKey: nil key"))
		} else if _, err := signingAlg(key); err != nil {
			o.errs = append(o.errs, fmt.Errorf("WithPrivateKey: %w", err))
		}
		o.key, o.keyID = key, keyID
	}
}

// WithClientMetadataURL is the https URL of this client's metadata
// document, used as its client ID at authorization servers that accept
// client ID metadata documents (client_id_metadata_document_supported),
// when no pre-registered client is given.
func WithClientMetadataURL(u string) Option {
	return func(o *options) {
		if pu, err := url.Parse(u); err != nil || pu.Scheme != "https" || pu.Host == "" || pu.Path == "" || pu.Path == "/" {
			o.errs = append(o.errs, fmt.Errorf("WithClientMetadataURL: %q is not an https URL with a path", httpx.Excerpt([]byte(u), 100)))
		}
		o.metadataURL = u
	}
}

// WithClientName is the client_name of a dynamic registration.
func WithClientName(name string) Option { return func(o *options) { o.clientName = name } }

// WithRedirectURL is the redirect URI of the authorization code flow.
func WithRedirectURL(u string) Option {
	return func(o *options) {
		if pu, err := url.Parse(u); err != nil || pu.Host == "" || pu.Fragment != "" {
			o.errs = append(o.errs, fmt.Errorf("WithRedirectURL: %q is not an absolute URL without fragment", httpx.Excerpt([]byte(u), 100)))
		}
		o.redirectURL = u
	}
}

// WithOfflineAccess asks for a refresh token: the offline_access scope is
// requested when the authorization server lists it in scopes_supported
// (and never otherwise), and a dynamic registration includes the
// refresh_token grant type.
func WithOfflineAccess() Option { return func(o *options) { o.offline = true } }

// WithHTTPClient sends every request to metadata hosts and authorization
// servers with hc (its transport and timeout). Redirects are never
// followed, whatever its policy.
func WithHTTPClient(hc *http.Client) Option {
	return func(o *options) {
		if hc == nil {
			o.errs = append(o.errs, fmt.Errorf("WithHTTPClient: nil client"))
		}
		o.hc = hc
	}
}

// WithRootCAs verifies the servers' certificates against pool instead of
// the system's roots.
func WithRootCAs(pool *x509.CertPool) Option { return func(o *options) { o.roots = pool } }

// WithMaxResponseBytes bounds every answer read (default
// DefaultMaxResponseBytes); one byte more is an error, never a document.
func WithMaxResponseBytes(n int64) Option {
	return func(o *options) {
		if n <= 0 {
			o.errs = append(o.errs, fmt.Errorf("WithMaxResponseBytes: %d is not positive", n))
		}
		o.maxBody = n
	}
}

// WithLogger logs each authorization (debug: discovery; info: a token
// obtained, a step-up) to l; nil logs nothing. No token, code or secret is
// ever logged.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithClock replaces time.Now, for tests.
func WithClock(now func() time.Time) Option { return func(o *options) { o.now = now } }

// Authorizer answers MCP servers' authorization challenges and supplies
// their tokens; it implements mcpclient.Authorizer. It keeps, per MCP
// endpoint, what discovery found and the current token, and per
// authorization server the dynamically registered client, in memory. It
// is safe for concurrent use; acquisitions for one endpoint are
// serialised.
type Authorizer struct {
	options
	flow Flow
	hc   *http.Client
	log  *slog.Logger
	tel  *telemetry

	mu         sync.Mutex
	endpoints  map[string]*endpointState
	registered map[string]*client // by issuer
}

var _ mcpclient.Authorizer = (*Authorizer)(nil)

// endpointState is what is known of one MCP endpoint.
type endpointState struct {
	acquire chan struct{} // a one-slot semaphore, held while discovering or obtaining a token

	mu      sync.Mutex
	disc    *discovery
	cl      *client
	tok     *oauth2.Token
	scopes  []string // what the current token was asked with
	granted []string // what it was granted (the answer's scope, else what was asked)
}

// New returns an Authorizer that obtains tokens with flow.
func New(flow Flow, opts ...Option) (*Authorizer, error) {
	a := &Authorizer{flow: flow, endpoints: map[string]*endpointState{}, registered: map[string]*client{}}
	a.maxBody = DefaultMaxResponseBytes
	for _, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("%w: nil Option", ErrConfig)
		}
		o(&a.options)
	}
	switch flow.kind {
	case flowCode:
		if flow.login == nil {
			a.errs = append(a.errs, fmt.Errorf("AuthorizationCode: nil LoginFunc"))
		}
		if a.redirectURL == "" {
			a.errs = append(a.errs, fmt.Errorf("AuthorizationCode needs WithRedirectURL"))
		}
	case flowClientCredentials:
		if a.clientID == "" && a.metadataURL == "" && a.key != nil {
			a.errs = append(a.errs, fmt.Errorf("ClientCredentials with a private key needs WithClient or WithClientMetadataURL"))
		}
	case flowJWTBearer:
		if flow.assert == nil {
			a.errs = append(a.errs, fmt.Errorf("JWTBearer: nil AssertionFunc"))
		}
	case flowDelegated:
		if flow.fetch == nil {
			a.errs = append(a.errs, fmt.Errorf("Delegated: nil TokenFunc"))
		}
	default:
		a.errs = append(a.errs, fmt.Errorf("no Flow (use AuthorizationCode, ClientCredentials, JWTBearer or Delegated)"))
	}
	if len(a.errs) > 0 {
		return nil, fmt.Errorf("%w: %v", ErrConfig, joinErrs(a.errs))
	}
	a.hc = httpx.NoRedirectClient(a.options.hc)
	if a.options.hc == nil {
		a.hc.Timeout = DefaultTimeout
	}
	if a.roots != nil {
		hc, err := httpx.WithRootCAs(a.hc, a.roots)
		if err != nil {
			return nil, fmt.Errorf("%w: WithRootCAs: %v", ErrConfig, err)
		}
		a.hc = hc
	}
	a.log = a.logger
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	if a.options.now == nil {
		a.options.now = time.Now
	}
	a.tel = newTelemetry(a.tp, a.mp)
	return a, nil
}

func joinErrs(errs []error) string {
	s := make([]string, len(errs))
	for i, e := range errs {
		s[i] = e.Error()
	}
	return strings.Join(s, "; ")
}

func (a *Authorizer) now() time.Time { return a.options.now() }

func (a *Authorizer) state(endpoint string) *endpointState {
	a.mu.Lock()
	defer a.mu.Unlock()
	st := a.endpoints[endpoint]
	if st == nil {
		st = &endpointState{acquire: make(chan struct{}, 1)}
		a.endpoints[endpoint] = st
	}
	return st
}

// lock takes the endpoint's acquisition slot, or gives up when ctx ends
// (another request may be waiting for a user to log in).
func (st *endpointState) lock(ctx context.Context) error {
	select {
	case st.acquire <- struct{}{}:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

func (st *endpointState) unlock() { <-st.acquire }

// expiryMargin is how long before its expiry a token is replaced.
const expiryMargin = 30 * time.Second

func (a *Authorizer) fresh(t *oauth2.Token) bool {
	return t != nil && (t.Expiry.IsZero() || a.now().Add(expiryMargin).Before(t.Expiry))
}

// Token returns the current token for endpoint: nil before the server's
// first challenge; a refreshed or newly obtained one when it expired.
func (a *Authorizer) Token(ctx context.Context, endpoint string) (*oauth2.Token, error) {
	st := a.state(endpoint)
	st.mu.Lock()
	tok, known := st.tok, st.disc != nil
	st.mu.Unlock()
	if a.fresh(tok) || !known {
		return tok, nil
	}
	if err := st.lock(ctx); err != nil {
		return nil, err
	}
	defer st.unlock()
	st.mu.Lock()
	tok, scopes := st.tok, st.scopes
	st.mu.Unlock()
	if a.fresh(tok) {
		return tok, nil
	}
	ctx, span := a.tel.authorizeSpan(ctx, hostOf(endpoint), 0, a.flow.String())
	nt, err := a.renew(ctx, endpoint, st, tok, scopes)
	endAuthorize(span, err)
	return nt, err
}

// renew replaces an expired token: by refresh when it has a refresh
// token, else by the flow.
func (a *Authorizer) renew(ctx context.Context, endpoint string, st *endpointState, tok *oauth2.Token, scopes []string) (*oauth2.Token, error) {
	if tok != nil && tok.RefreshToken != "" {
		if nt, err := a.refresh(ctx, st, tok); err == nil {
			return nt, nil
		} else {
			a.log.InfoContext(ctx, "mcp token refresh failed; authorizing again", "error", err)
		}
	}
	return a.obtain(ctx, endpoint, st, scopes)
}

// Authorize answers a 401 or 403 of the MCP server (see
// mcpclient.Authorizer). A 401 leads to discovery, when not done, and a
// new token (by refresh when the refused one has a refresh token); a 403
// with error="insufficient_scope" to a new authorization for the scopes
// held plus those the challenge names (step-up). It returns an error
// matching ErrInsufficientScope when stepping up cannot help.
func (a *Authorizer) Authorize(ctx context.Context, ch mcpclient.Challenge) (err error) {
	ctx, span := a.tel.authorizeSpan(ctx, hostOf(ch.Endpoint), ch.StatusCode, a.flow.String())
	defer func() { endAuthorize(span, err) }()
	return a.authorize(ctx, ch)
}

func (a *Authorizer) authorize(ctx context.Context, ch mcpclient.Challenge) error {
	endpoint, err := url.Parse(ch.Endpoint)
	if err != nil || endpoint.Host == "" {
		return fmt.Errorf("%w: endpoint is not an absolute URL", ErrConfig)
	}
	st := a.state(ch.Endpoint)
	if err := st.lock(ctx); err != nil {
		return err
	}
	defer st.unlock()

	st.mu.Lock()
	cur, disc, scopes, curGranted := st.tok, st.disc, st.scopes, st.granted
	st.mu.Unlock()
	if cur != nil && (ch.Token == nil || cur.AccessToken != ch.Token.AccessToken) && a.fresh(cur) {
		return nil // renewed meanwhile: send the request with the new token
	}
	params, _ := bearerParams(ch.Header)
	if params == nil {
		params = map[string]string{}
	}
	if disc == nil || (params["resource_metadata"] != "" && (disc.prm == nil || disc.prm.URL != params["resource_metadata"])) {
		if disc, err = a.discover(ctx, endpoint, params); err != nil {
			return err
		}
		a.log.DebugContext(ctx, "mcp authorization discovered", "resource", disc.resource, "issuer", disc.as.Issuer)
		st.mu.Lock()
		st.disc = disc
		st.mu.Unlock()
	}
	challenged := scopeList(params["scope"])
	switch {
	case ch.StatusCode == http.StatusForbidden:
		if params["error"] != "insufficient_scope" {
			return &ScopeError{Required: challenged, Granted: curGranted, Reason: "the server refused the token without asking for more scope (error=" + fmt.Sprintf("%q", httpx.Excerpt([]byte(params["error"]), 64)) + ")"}
		}
		if len(challenged) == 0 {
			return &ScopeError{Granted: curGranted, Reason: "the refusal names no scope"}
		}
		granted := grantedScopes(ch.Token) // nil without a token
		if ch.Token != nil && cur != nil && ch.Token.AccessToken == cur.AccessToken {
			granted = curGranted
		}
		if ch.Token != nil && containsAll(granted, challenged) {
			return &ScopeError{Required: challenged, Granted: granted, Reason: "the token already holds every scope the server asks for"}
		}
		want := union(scopes, granted, challenged)
		a.log.InfoContext(ctx, "mcp authorization step-up", "scope", strings.Join(want, " "))
		if _, err := a.obtain(ctx, ch.Endpoint, st, want); err != nil {
			return err
		}
		st.mu.Lock()
		got := st.granted
		st.mu.Unlock()
		if !containsAll(got, challenged) {
			return &ScopeError{Required: challenged, Granted: got, Reason: "the authorization server granted less than asked"}
		}
		return nil
	default:
		// A first challenge names the scopes to ask for; a token refused
		// later (expired, revoked) is replaced by one with at least the
		// scopes it was asked with, so that a step-up is not undone.
		want := challenged
		if ch.Token != nil || len(want) == 0 {
			want = union(scopes, challenged)
		}
		if len(want) == 0 && disc.prm != nil {
			want = disc.prm.ScopesSupported
		}
		if cur != nil && cur.RefreshToken != "" && ch.Token != nil && cur.AccessToken == ch.Token.AccessToken && slices.Equal(want, scopes) {
			if _, err := a.refresh(ctx, st, cur); err == nil {
				return nil
			}
		}
		_, err := a.obtain(ctx, ch.Endpoint, st, want)
		return err
	}
}

// obtain runs the flow for scopes (plus offline_access when asked for and
// offered) and makes the token the endpoint's current one.
func (a *Authorizer) obtain(ctx context.Context, endpoint string, st *endpointState, scopes []string) (*oauth2.Token, error) {
	st.mu.Lock()
	disc := st.disc
	st.mu.Unlock()
	as := disc.as
	asked := slices.Clone(scopes)
	if a.offline && a.flow.kind == flowCode && slices.Contains(as.ScopesSupported, "offline_access") && !slices.Contains(asked, "offline_access") {
		asked = append(asked, "offline_access")
	}
	t := Target{Endpoint: endpoint, Resource: disc.resource, Issuer: as.Issuer, Scopes: slices.Clone(asked), Server: as}
	var (
		tok *oauth2.Token
		err error
	)
	switch a.flow.kind {
	case flowDelegated:
		tok, err = a.flow.fetch(ctx, t)
		if err == nil && (tok == nil || tok.AccessToken == "") {
			err = &TokenResponseError{Reason: "the TokenFunc returned no access token"}
		}
	default:
		var cl *client
		if cl, err = a.clientFor(ctx, as); err == nil {
			st.mu.Lock()
			st.cl = cl
			st.mu.Unlock()
			tok, err = a.grant(ctx, t, cl)
		}
	}
	if err != nil {
		return nil, err
	}
	granted := asked // RFC 6749 §5.1: no scope in the answer means what was asked
	if sc, ok := tok.Extra("scope").(string); ok {
		granted = scopeList(sc)
	}
	st.mu.Lock()
	st.tok, st.scopes, st.granted = tok, scopes, granted
	st.mu.Unlock()
	a.log.InfoContext(ctx, "mcp token obtained", "resource", t.Resource, "scope", strings.Join(granted, " "))
	return tok, nil
}

// grant obtains a token from the token endpoint with the flow's grant.
func (a *Authorizer) grant(ctx context.Context, t Target, cl *client) (*oauth2.Token, error) {
	as := t.Server
	if as.GrantTypesSupported != nil && a.flow.kind != flowCode && !slices.Contains(as.GrantTypesSupported, a.flow.grant()) {
		return nil, fmt.Errorf("%w: grant type %s is not in grant_types_supported", ErrUnsupported, a.flow.grant())
	}
	form := url.Values{}
	if t.Resource != "" {
		form.Set("resource", t.Resource)
	}
	if len(t.Scopes) > 0 {
		form.Set("scope", strings.Join(t.Scopes, " "))
	}
	switch a.flow.kind {
	case flowClientCredentials:
		form.Set("grant_type", GrantClientCredentials)
		return a.tokenRequest(ctx, as, cl, form, t.Scopes)
	case flowJWTBearer:
		assertion, err := a.flow.assert(ctx, t)
		if err != nil {
			return nil, fmt.Errorf("mcpauth: assertion: %w", err)
		}
		form.Set("grant_type", GrantJWTBearer)
		form.Set("assertion", assertion)
		return a.tokenRequest(ctx, as, cl, form, t.Scopes, assertion)
	}
	return a.authorizationCode(ctx, t, cl)
}

// authorizationCode runs the authorization code flow with PKCE: the
// authorization URL goes to the LoginFunc, whose callback must carry this
// request's state (and the issuer, when it carries one); its code is
// redeemed with the verifier.
func (a *Authorizer) authorizationCode(ctx context.Context, t Target, cl *client) (*oauth2.Token, error) {
	as := t.Server
	if as.AuthorizationEndpoint == "" {
		return nil, fmt.Errorf("%w: no authorization_endpoint", ErrUnsupported)
	}
	if as.URL != "" && !slices.Contains(as.CodeChallengeMethodsSupported, "S256") {
		// The 2025-11-25 specification: without S256 listed, do not proceed.
		return nil, fmt.Errorf("%w: the authorization server does not list PKCE S256 in code_challenge_methods_supported", ErrUnsupported)
	}
	conf := oauth2.Config{
		ClientID:    cl.id,
		Endpoint:    oauth2.Endpoint{AuthURL: as.AuthorizationEndpoint, TokenURL: as.TokenEndpoint},
		RedirectURL: a.redirectURL,
		Scopes:      t.Scopes,
	}
	verifier := oauth2.GenerateVerifier()
	state := randomState()
	opts := []oauth2.AuthCodeOption{oauth2.S256ChallengeOption(verifier)}
	if t.Resource != "" {
		opts = append(opts, oauth2.SetAuthURLParam("resource", t.Resource))
	}
	authURL := conf.AuthCodeURL(state, opts...)
	cb, err := a.flow.login(ctx, authURL)
	if err != nil {
		return nil, fmt.Errorf("mcpauth: login: %w", err)
	}
	code, err := a.callback(cb, state, as)
	if err != nil {
		return nil, err
	}
	form := url.Values{
		"grant_type":    {GrantAuthorizationCode},
		"code":          {code},
		"redirect_uri":  {a.redirectURL},
		"code_verifier": {verifier},
	}
	if t.Resource != "" {
		form.Set("resource", t.Resource)
	}
	return a.tokenRequest(ctx, as, cl, form, t.Scopes, code, verifier)
}

// callback checks the redirect the user agent received and returns its
// code.
func (a *Authorizer) callback(raw, state string, as *ServerMetadata) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", &DeniedError{Reason: "the callback is not a URL"}
	}
	ru, _ := url.Parse(a.redirectURL)
	if u.Scheme != ru.Scheme || u.Host != ru.Host || u.Path != ru.Path {
		return "", &DeniedError{Reason: "the callback is not the redirect URL"}
	}
	q := u.Query()
	if q.Get("state") != state {
		return "", &DeniedError{Reason: "the callback's state is not this request's"}
	}
	if iss := q.Get("iss"); iss != "" && strings.TrimSuffix(iss, "/") != strings.TrimSuffix(as.Issuer, "/") {
		return "", &DeniedError{Reason: "the callback's iss is another authorization server (RFC 9207)"}
	}
	if e := q.Get("error"); e != "" {
		return "", &DeniedError{ErrorCode: e, ErrorDescription: q.Get("error_description")}
	}
	code := q.Get("code")
	if code == "" {
		return "", &DeniedError{Reason: errNoCode.Error()}
	}
	return code, nil
}

// refresh redeems tok's refresh token (with the resource) and makes the
// answer the current token; a new refresh token replaces the old one, and
// one the answer omits is kept.
func (a *Authorizer) refresh(ctx context.Context, st *endpointState, tok *oauth2.Token) (*oauth2.Token, error) {
	st.mu.Lock()
	disc, cl, scopes, granted := st.disc, st.cl, st.scopes, st.granted
	st.mu.Unlock()
	if disc == nil || cl == nil {
		return nil, fmt.Errorf("%w: nothing to refresh with", ErrConfig)
	}
	form := url.Values{"grant_type": {GrantRefreshToken}, "refresh_token": {tok.RefreshToken}}
	if disc.resource != "" {
		form.Set("resource", disc.resource)
	}
	nt, err := a.tokenRequest(ctx, disc.as, cl, form, granted, tok.RefreshToken)
	if err != nil {
		return nil, err
	}
	if nt.RefreshToken == "" {
		nt.RefreshToken = tok.RefreshToken
	}
	st.mu.Lock()
	st.tok, st.scopes, st.granted = nt, scopes, grantedScopes(nt)
	st.mu.Unlock()
	return nt, nil
}

// hostOf is the host of a URL, for telemetry ("" if it has none).
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

func randomState() string {
	var b [24]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func containsAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// union returns the scopes of every list, each once, in first-seen order.
func union(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		for _, s := range l {
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}
