package tokenexchange

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/oauth2"

	"github.com/candorkit/candor/internal/httpx"
	"github.com/candorkit/candor/internal/secret"
)

// RFC 8693 identifiers.
const (
	GrantTypeTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
	TokenTypeAccessToken   = "urn:ietf:params:oauth:token-type:access_token"
	TokenTypeRefreshToken  = "urn:ietf:params:oauth:token-type:refresh_token"
	TokenTypeIDToken       = "urn:ietf:params:oauth:token-type:id_token"
	TokenTypeJWT           = "urn:ietf:params:oauth:token-type:jwt"
)

// MaxResponseBytes is the exact cap on every token or revocation endpoint
// answer this package reads (1 MiB). A larger 2xx answer is an
// ErrInvalidResponse; a larger error answer keeps its first
// MaxResponseBytes.
const MaxResponseBytes = 1 << 20

// DefaultExpiryMargin is how long before its expiry a cached token is
// replaced when Config.ExpiryMargin is zero.
const DefaultExpiryMargin = 30 * time.Second

// defaultTimeout bounds one token request when the caller brings no
// HTTPClient.
const defaultTimeout = 30 * time.Second

// Config describes one client's token exchange at one token endpoint, in
// the manner of golang.org/x/oauth2's Config: a plain value a program loads
// from its own configuration. Copy it freely, but do not change it while it
// is in use.
type Config struct {
	// TokenURL is the token endpoint. It must be https, except on a
	// loopback host (127.0.0.1, ::1, localhost).
	TokenURL string
	// RevocationURL is the provider's token revocation endpoint (RFC 7009;
	// Keycloak: .../protocol/openid-connect/revoke), under the same https
	// rule. Optional; Revoke needs it.
	RevocationURL string
	// ClientID and ClientSecret authenticate the requesting client, for
	// example the agent. A public client has no ClientSecret: its client_id
	// goes in the request body and no secret is sent (AuthStyle is then
	// ignored).
	ClientID     string
	ClientSecret string
	// Audience values are sent as repeated audience parameters.
	Audience []string
	// Resource values are sent as repeated resource parameters (RFC 8693
	// §2.1, RFC 8707): absolute URIs of the services the token is for.
	Resource []string
	// Scopes are sent space-separated as the scope parameter.
	Scopes []string
	// RequestedTokenType is sent as requested_token_type; the response's
	// issued_token_type must equal it. Default TokenTypeAccessToken.
	RequestedTokenType string
	// SubjectTokenType is sent as subject_token_type. Default
	// TokenTypeAccessToken (the only type Keycloak accepts).
	SubjectTokenType string
	// AuthStyle selects client authentication: oauth2.AuthStyleInHeader
	// (client_secret_basic, also used for the zero value) or
	// oauth2.AuthStyleInParams (client_secret_post). There is no
	// auto-detection: every attempt is exactly one POST.
	AuthStyle oauth2.AuthStyle
	// HTTPClient sends the requests (its transport and timeout). Default: a
	// client with a 30 s timeout. Redirects are never followed, whatever
	// the client's policy.
	HTTPClient *http.Client
	// Logger receives the package's logs; nil logs nothing. No token or
	// secret is ever logged.
	Logger *slog.Logger
	// ExpiryMargin is how long before expiry Cache and TokenSource replace
	// a token. Default DefaultExpiryMargin.
	ExpiryMargin time.Duration
	// TracerProvider traces each request to the provider (a client span
	// per Exchange, Refresh and Revoke; see the package documentation);
	// nil means the global provider (otel.GetTracerProvider), a no-op
	// unless the program installed one. No span carries a token or secret.
	TracerProvider trace.TracerProvider
	// MeterProvider records the duration of each request to the provider;
	// nil means the global provider (otel.GetMeterProvider).
	MeterProvider metric.MeterProvider
}

// Validate checks everything about c that can be checked without the
// network, and returns an error matching ErrConfig that names the first bad
// field. Exchange, Refresh, Revoke, NewCache and TokenSource call it.
func (c *Config) Validate() error {
	_, err := c.prepare()
	return err
}

// client is a validated Config, prepared once: URLs parsed, the client
// secret held as a secret.Secret, its redaction forms computed.
type client struct {
	tokenURL      *url.URL
	revocationURL *url.URL // nil without RevocationURL
	clientID      string
	clientSecret  secret.Secret
	audience      []string
	resource      []string
	scope         string
	requestedType string
	subjectType   string
	inParams      bool
	hc            *http.Client
	log           *slog.Logger // nil: log nothing
	margin        time.Duration
	// credentials are the client secret and the Basic pairs it is sent in,
	// for redaction.
	credentials []string
	tel         *telemetry // nil: nothing records
}

func (c *Config) prepare() (*client, error) {
	if c == nil {
		return nil, fmt.Errorf("%w: nil Config", ErrConfig)
	}
	if c.ClientID == "" {
		return nil, fmt.Errorf("%w: ClientID is required", ErrConfig)
	}
	for _, r := range c.Resource {
		if u, err := url.Parse(r); err != nil || !u.IsAbs() || u.Fragment != "" {
			return nil, fmt.Errorf("%w: Resource %q is not an absolute URI without fragment", ErrConfig, r)
		}
	}
	switch c.AuthStyle {
	case oauth2.AuthStyleAutoDetect, oauth2.AuthStyleInHeader, oauth2.AuthStyleInParams:
	default:
		return nil, fmt.Errorf("%w: unknown AuthStyle %d", ErrConfig, c.AuthStyle)
	}
	if c.ExpiryMargin < 0 {
		return nil, fmt.Errorf("%w: negative ExpiryMargin", ErrConfig)
	}
	tu, err := parseEndpoint("TokenURL", c.TokenURL)
	if err != nil {
		return nil, err
	}
	cl := &client{
		tokenURL:      tu,
		clientID:      c.ClientID,
		clientSecret:  secret.New(c.ClientSecret),
		audience:      append([]string(nil), c.Audience...),
		resource:      append([]string(nil), c.Resource...),
		scope:         strings.Join(c.Scopes, " "),
		requestedType: c.RequestedTokenType,
		subjectType:   c.SubjectTokenType,
		inParams:      c.AuthStyle == oauth2.AuthStyleInParams || c.ClientSecret == "",
		hc:            httpx.NoRedirectClient(c.HTTPClient),
		log:           c.Logger,
		margin:        c.ExpiryMargin,
		tel:           newTelemetry(c.TracerProvider, c.MeterProvider),
	}
	if c.ClientSecret != "" {
		cl.credentials = []string{
			c.ClientSecret,
			secret.Basic(c.ClientID, c.ClientSecret),
			secret.Basic(url.QueryEscape(c.ClientID), url.QueryEscape(c.ClientSecret)),
		}
	}
	if c.RevocationURL != "" {
		if cl.revocationURL, err = parseEndpoint("RevocationURL", c.RevocationURL); err != nil {
			return nil, err
		}
	}
	if c.HTTPClient == nil {
		cl.hc.Timeout = defaultTimeout
	}
	if cl.requestedType == "" {
		cl.requestedType = TokenTypeAccessToken
	}
	if cl.subjectType == "" {
		cl.subjectType = TokenTypeAccessToken
	}
	if cl.margin == 0 {
		cl.margin = DefaultExpiryMargin
	}
	return cl, nil
}

// parseEndpoint accepts an absolute https URL, or http on loopback.
func parseEndpoint(name, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("%w: %s is not an absolute URL", ErrConfig, name)
	}
	switch u.Scheme {
	case "https":
	case "http":
		if !httpx.IsLoopback(u.Host) {
			return nil, fmt.Errorf("%w: %s must be https (plain http only on loopback)", ErrConfig, name)
		}
	default:
		return nil, fmt.Errorf("%w: %s scheme %q", ErrConfig, name, u.Scheme)
	}
	if u.User != nil {
		return nil, fmt.Errorf("%w: %s carries user information", ErrConfig, name)
	}
	return u, nil
}

// Exchange trades subjectToken for a token of RequestedTokenType (RFC 8693
// §2.1) in exactly one POST carrying grant_type, subject_token,
// subject_token_type, requested_token_type and, when set, audience and scope,
// plus client_id and client_secret with AuthStyleInParams.
//
// An OAuth error answer is a *StatusError; a success answer without
// access_token, issued_token_type or token_type, or whose issued_token_type
// differs from the requested one, is a *ResponseError (ErrInvalidResponse).
// A nil error always comes with a Token holding a non-empty access token.
func (c *Config) Exchange(ctx context.Context, subjectToken string) (*Token, error) {
	cl, err := c.prepare()
	if err != nil {
		return nil, err
	}
	return cl.exchange(ctx, subjectToken)
}

func (cl *client) exchange(ctx context.Context, subjectToken string) (tok *Token, err error) {
	ctx, o := cl.begin(ctx, "exchange", GrantTypeTokenExchange, cl.tokenURL)
	defer func() { o.end(err) }()
	if subjectToken == "" {
		return nil, ErrNoSubjectToken
	}
	form := url.Values{
		"grant_type":           {GrantTypeTokenExchange},
		"subject_token":        {subjectToken},
		"subject_token_type":   {cl.subjectType},
		"requested_token_type": {cl.requestedType},
	}
	for _, a := range cl.audience {
		form.Add("audience", a)
	}
	for _, r := range cl.resource {
		form.Add("resource", r)
	}
	if cl.scope != "" {
		form.Set("scope", cl.scope)
	}
	secrets := cl.secrets(subjectToken)
	status, body, err := cl.post(ctx, o, cl.tokenURL, "exchange", form, secrets)
	if err != nil {
		cl.logFailure(ctx, err)
		return nil, err
	}
	p, err := parseTokenResponse("exchange", status, body, cl.requestedType, secrets)
	if err != nil {
		cl.logFailure(ctx, err)
		return nil, err
	}
	tok = p.token()
	if cl.log != nil {
		cl.log.LogAttrs(ctx, slog.LevelDebug, "token exchanged",
			slog.String("client_id", cl.clientID),
			slog.Any("audience", tok.Audience),
			slog.String("sub", tok.Subject),
			slog.String("azp", tok.AuthorizedParty),
			slog.Time("expiry", tok.Expiry))
	}
	return tok, nil
}

// RefreshOptions are the per-call parameters of Refresh. The zero value
// keeps nothing on the caller's side.
type RefreshOptions struct {
	// Rotated, when set, is called with the refresh token of a 2xx answer
	// that carries one other than the token presented, before the rest of
	// the answer is judged: a provider that rotates has made the presented
	// token stale already, so the new one must be kept even when the
	// answer turns out unusable. When Rotated returns an error, Refresh
	// returns no token and an error matching ErrRotationNotPersisted that
	// wraps it.
	Rotated func(ctx context.Context, refreshToken string) error
}

// Refresh redeems refreshToken with the refresh_token grant (RFC 6749 §6)
// in exactly one POST to TokenURL, authenticated like Exchange. The Token
// returned carries the new refresh token, if the provider sent one.
// Failures are typed as for Exchange; invalid_grant (Classify:
// KindInvalidGrant) means the provider refuses this refresh token.
func (c *Config) Refresh(ctx context.Context, refreshToken string, opts RefreshOptions) (*Token, error) {
	cl, err := c.prepare()
	if err != nil {
		return nil, err
	}
	ctx, o := cl.begin(ctx, "refresh", "refresh_token", cl.tokenURL)
	tok, err := cl.refresh(ctx, o, refreshToken, opts)
	o.end(err)
	return tok, err
}

func (cl *client) refresh(ctx context.Context, o *op, refreshToken string, opts RefreshOptions) (*Token, error) {
	if refreshToken == "" {
		return nil, fmt.Errorf("%w: empty refresh token", ErrNoSubjectToken)
	}
	form := url.Values{
		"grant_type":    {"refresh_token"},
		"refresh_token": {refreshToken},
	}
	secrets := cl.secrets(refreshToken)
	status, body, err := cl.post(ctx, o, cl.tokenURL, "refresh", form, secrets)
	if err != nil {
		cl.logFailure(ctx, err)
		return nil, err
	}
	if opts.Rotated != nil {
		if next := rotatedToken(body); next != "" && next != refreshToken {
			if err := opts.Rotated(ctx, next); err != nil {
				return nil, fmt.Errorf("%w: %w", ErrRotationNotPersisted, err)
			}
		}
	}
	p, err := parseTokenResponse("refresh", status, body, "", secrets)
	if err != nil {
		cl.logFailure(ctx, err)
		return nil, err
	}
	return p.token(), nil
}

// RevokeOptions are the per-call parameters of Revoke.
type RevokeOptions struct {
	// TokenTypeHint is sent as token_type_hint when set ("refresh_token"
	// or "access_token").
	TokenTypeHint string
}

// Revoke asks the provider to revoke token (RFC 7009 §2.1) in exactly one
// POST to RevocationURL, authenticated like Exchange. Only a 2xx answer
// that carries no OAuth error counts as done (RFC 7009 answers 200 for a
// token that was already invalid too); anything else is a *StatusError or
// a transport error.
func (c *Config) Revoke(ctx context.Context, token string, opts RevokeOptions) error {
	cl, err := c.prepare()
	if err != nil {
		return err
	}
	if cl.revocationURL == nil {
		return fmt.Errorf("%w: no RevocationURL", ErrConfig)
	}
	ctx, o := cl.begin(ctx, "revoke", "", cl.revocationURL)
	err = cl.revoke(ctx, o, token, opts)
	o.end(err)
	return err
}

func (cl *client) revoke(ctx context.Context, o *op, token string, opts RevokeOptions) error {
	if token == "" {
		return fmt.Errorf("%w: empty token to revoke", ErrNoSubjectToken)
	}
	form := url.Values{"token": {token}}
	if opts.TokenTypeHint != "" {
		form.Set("token_type_hint", opts.TokenTypeHint)
	}
	secrets := cl.secrets(token)
	status, body, err := cl.post(ctx, o, cl.revocationURL, "revoke", form, secrets)
	if err != nil {
		cl.logFailure(ctx, err)
		return err
	}
	if code, _, _, ok := parseOAuthError(body); ok && code != "" {
		err := newStatusError("revoke", status, nil, body, secrets)
		cl.logFailure(ctx, err)
		return err
	}
	return nil
}

// secrets lists what must never appear in an error: the token sent and the
// client's credentials in the forms they were sent in.
func (cl *client) secrets(token string) []string {
	return append([]string{token}, cl.credentials...)
}

func (cl *client) logFailure(ctx context.Context, err error) {
	if cl.log == nil {
		return
	}
	var se *StatusError
	var re *ResponseError
	switch {
	case errors.As(err, &se):
		cl.log.LogAttrs(ctx, slog.LevelWarn, "token endpoint refused", slog.String("client_id", cl.clientID), slog.Any("error", se))
	case errors.As(err, &re):
		cl.log.LogAttrs(ctx, slog.LevelWarn, "token endpoint answer unusable", slog.String("client_id", cl.clientID), slog.Any("error", re))
	default:
		cl.log.LogAttrs(ctx, slog.LevelWarn, "token endpoint not reached", slog.String("client_id", cl.clientID), slog.Any("error", err))
	}
}

// post sends one form POST to endpoint and returns the status and the body
// of a 2xx answer (at most MaxResponseBytes). Transport errors come back
// without URL or secret; a non-2xx answer is a *StatusError. The trace
// context of ctx goes in the traceparent header; o (nil: none) notes the
// status.
func (cl *client) post(ctx context.Context, o *op, endpoint *url.URL, op string, form url.Values, secrets []string) (int, []byte, error) {
	if cl.inParams {
		form.Set("client_id", cl.clientID)
		if !cl.clientSecret.IsZero() {
			form.Set("client_secret", cl.clientSecret.Reveal())
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "", strings.NewReader(form.Encode()))
	if err != nil {
		return 0, nil, fmt.Errorf("%w: %s: %s", ErrConfig, op, secret.Redact(err.Error(), secrets...))
	}
	u := *endpoint
	req.URL, req.Host = &u, u.Host
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	inject(ctx, req.Header)
	if !cl.inParams {
		// RFC 6749 §2.3.1: form-encode before Basic encoding.
		req.SetBasicAuth(url.QueryEscape(cl.clientID), url.QueryEscape(cl.clientSecret.Reveal()))
	}
	resp, err := cl.hc.Do(req)
	if err != nil {
		err = httpx.StripURL(err)
		return 0, nil, &transportError{op: op, msg: secret.Redact(err.Error(), secrets...), err: err}
	}
	defer resp.Body.Close()
	o.answered(resp.StatusCode)
	body, err := httpx.ReadAll(resp.Body, MaxResponseBytes)
	ok := resp.StatusCode >= 200 && resp.StatusCode <= 299
	switch {
	case errors.Is(err, httpx.ErrTooLarge) && ok:
		return 0, nil, &ResponseError{Op: op, StatusCode: resp.StatusCode,
			Reason: fmt.Sprintf("answer larger than %d bytes", MaxResponseBytes), err: err}
	case errors.Is(err, httpx.ErrTooLarge):
		// An error answer keeps its first MaxResponseBytes as evidence.
	case err != nil:
		return 0, nil, &transportError{op: op, msg: "reading the answer: " + secret.Redact(err.Error(), secrets...), err: err}
	}
	if !ok {
		return resp.StatusCode, nil, newStatusError(op, resp.StatusCode, resp, body, secrets)
	}
	return resp.StatusCode, body, nil
}

// newStatusError builds the *StatusError of an answer: its OAuth error
// fields, if any, its header and its body, all with every secret and token
// value blanked out. The raw error code is kept for Classify.
func newStatusError(op string, status int, resp *http.Response, body []byte, secrets []string) *StatusError {
	secrets = append(bodyTokens(body), secrets...)
	e := &StatusError{Op: op, StatusCode: status, Body: redactBody(body, secrets)}
	if code, desc, uri, ok := parseOAuthError(body); ok {
		e.rawCode = code
		e.ErrorCode = secret.Redact(code, secrets...)
		e.ErrorDescription = secret.Redact(desc, secrets...)
		e.ErrorURI = secret.Redact(uri, secrets...)
	}
	re := &oauth2.RetrieveError{
		Body:             e.Body,
		ErrorCode:        e.ErrorCode,
		ErrorDescription: e.ErrorDescription,
		ErrorURI:         e.ErrorURI,
	}
	if resp != nil {
		e.Header = redactHeader(resp.Header, secrets)
		re.Response = &http.Response{
			Status:     resp.Status,
			StatusCode: resp.StatusCode,
			Proto:      resp.Proto,
			ProtoMajor: resp.ProtoMajor,
			ProtoMinor: resp.ProtoMinor,
			Header:     e.Header,
			Body:       http.NoBody,
			// No Request: it would hold the Authorization header.
		}
	}
	e.retrieve = re
	return e
}

func redactHeader(h http.Header, secrets []string) http.Header {
	out := make(http.Header, len(h))
	for k, vs := range h {
		rv := make([]string, len(vs))
		for i, v := range vs {
			rv[i] = secret.Redact(v, secrets...)
		}
		out[k] = rv
	}
	return out
}
