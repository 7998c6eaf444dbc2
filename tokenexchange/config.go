package tokenexchange

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"golang.org/x/oauth2"
)

// RFC 8693 identifiers.
const (
	GrantTypeTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
	TokenTypeAccessToken   = "urn:ietf:params:oauth:token-type:access_token"
	TokenTypeRefreshToken  = "urn:ietf:params:oauth:token-type:refresh_token"
	TokenTypeIDToken       = "urn:ietf:params:oauth:token-type:id_token"
	TokenTypeJWT           = "urn:ietf:params:oauth:token-type:jwt"
)

// MaxResponseBytes bounds every token endpoint answer this package reads
// (1 MiB). A larger answer is an ErrInvalidResponse.
const MaxResponseBytes = 1 << 20

// DefaultExpiryMargin is how long before its expiry a cached token is
// replaced when Config.ExpiryMargin is zero.
const DefaultExpiryMargin = 30 * time.Second

// defaultTimeout bounds one token request when the caller brings neither an
// HTTPClient nor a context deadline.
const defaultTimeout = 30 * time.Second

// Config describes one client's token exchange at one token endpoint. It is
// a plain value: copy it freely, but do not change it while it is in use.
type Config struct {
	// TokenURL is the token endpoint. It must be https, except on a
	// loopback host (127.0.0.1, ::1, localhost).
	TokenURL string
	// RevocationURL is the provider's token revocation endpoint (RFC 7009;
	// Keycloak: .../protocol/openid-connect/revoke), under the same https
	// rule. Optional: when set, MandateStore.Revoke also revokes the stored
	// refresh token there, authenticated like the token requests.
	RevocationURL string
	// ClientID and ClientSecret authenticate the requesting (confidential)
	// client, for example the agent.
	ClientID     string
	ClientSecret string
	// Audience values are sent as repeated audience parameters.
	Audience []string
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
	// HTTPClient sends the requests. Default: a client with a 30 s timeout.
	// Redirects are never followed, whatever the client's policy.
	HTTPClient *http.Client
	// Logger receives the package's logs; nil discards them. No token or
	// secret is ever logged.
	Logger *slog.Logger
	// ExpiryMargin is how long before expiry Cache and TokenSource replace
	// a token. Default DefaultExpiryMargin.
	ExpiryMargin time.Duration
}

func (c *Config) logger() *slog.Logger {
	if c.Logger != nil {
		return c.Logger
	}
	return slog.New(slog.DiscardHandler)
}

func (c *Config) margin() time.Duration {
	if c.ExpiryMargin > 0 {
		return c.ExpiryMargin
	}
	return DefaultExpiryMargin
}

func (c *Config) requestedType() string {
	if c.RequestedTokenType != "" {
		return c.RequestedTokenType
	}
	return TokenTypeAccessToken
}

func (c *Config) subjectType() string {
	if c.SubjectTokenType != "" {
		return c.SubjectTokenType
	}
	return TokenTypeAccessToken
}

func (c *Config) clone() *Config {
	if c == nil {
		return nil // refused by validate at first use
	}
	cp := *c
	cp.Audience = slices.Clone(c.Audience)
	cp.Scopes = slices.Clone(c.Scopes)
	return &cp
}

// validate checks everything that can be checked without the network.
func (c *Config) validate() error {
	if c == nil {
		return fmt.Errorf("%w: nil Config", ErrConfig)
	}
	if c.ClientID == "" || c.ClientSecret == "" {
		return fmt.Errorf("%w: ClientID and ClientSecret are required", ErrConfig)
	}
	switch c.AuthStyle {
	case oauth2.AuthStyleAutoDetect, oauth2.AuthStyleInHeader, oauth2.AuthStyleInParams:
	default:
		return fmt.Errorf("%w: unknown AuthStyle %d", ErrConfig, c.AuthStyle)
	}
	if err := checkEndpoint("TokenURL", c.TokenURL); err != nil {
		return err
	}
	if c.RevocationURL != "" {
		return checkEndpoint("RevocationURL", c.RevocationURL)
	}
	return nil
}

// checkEndpoint accepts an absolute https URL, or http on loopback.
func checkEndpoint(name, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return fmt.Errorf("%w: %s %q is not an absolute URL", ErrConfig, name, raw)
	}
	switch u.Scheme {
	case "https":
	case "http":
		if !isLoopback(u.Hostname()) {
			return fmt.Errorf("%w: %s must be https (plain http only on loopback)", ErrConfig, name)
		}
	default:
		return fmt.Errorf("%w: %s scheme %q", ErrConfig, name, u.Scheme)
	}
	return nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Exchange trades subjectToken for a token of RequestedTokenType (RFC 8693
// §2.1) in exactly one POST carrying grant_type, subject_token,
// subject_token_type, requested_token_type and, when set, audience and scope,
// plus client_id and client_secret with AuthStyleInParams.
//
// An OAuth error answer is an *Error wrapping *oauth2.RetrieveError; a
// success answer without access_token, issued_token_type or token_type, or
// whose issued_token_type differs from the requested one, is a
// *ResponseError (ErrInvalidResponse). A nil error always comes with a
// Token holding a non-empty access token.
func (c *Config) Exchange(ctx context.Context, subjectToken string) (*Token, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	if subjectToken == "" {
		return nil, ErrNoSubjectToken
	}
	form := url.Values{
		"grant_type":           {GrantTypeTokenExchange},
		"subject_token":        {subjectToken},
		"subject_token_type":   {c.subjectType()},
		"requested_token_type": {c.requestedType()},
	}
	for _, a := range c.Audience {
		form.Add("audience", a)
	}
	if len(c.Scopes) > 0 {
		form.Set("scope", strings.Join(c.Scopes, " "))
	}
	secrets := []string{subjectToken, c.ClientSecret}
	status, body, err := c.post(ctx, c.TokenURL, "exchange", form, secrets)
	if err != nil {
		return nil, err
	}
	p, err := parseTokenResponse("exchange", status, body, c.requestedType(), secrets)
	if err != nil {
		c.logFailure(ctx, err)
		return nil, err
	}
	tok := p.token()
	c.logger().LogAttrs(ctx, slog.LevelDebug, "token exchanged",
		slog.String("client_id", c.ClientID),
		slog.Any("audience", tok.Audience),
		slog.String("sub", tok.Subject),
		slog.String("azp", tok.AuthorizedParty),
		slog.Time("expiry", tok.Expiry))
	return tok, nil
}

// refresh redeems a refresh token (RFC 6749 §6) in exactly one POST.
func (c *Config) refresh(ctx context.Context, refreshToken string) (*parsedResponse, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	form := url.Values{
		"grant_type":    {"refresh_token"},
		"refresh_token": {refreshToken},
	}
	secrets := []string{refreshToken, c.ClientSecret}
	status, body, err := c.post(ctx, c.TokenURL, "refresh", form, secrets)
	if err != nil {
		return nil, err
	}
	p, err := parseTokenResponse("refresh", status, body, "", secrets)
	if err != nil {
		c.logFailure(ctx, err)
		return nil, err
	}
	return p, nil
}

// revokeRefreshToken asks the provider to revoke refreshToken (RFC 7009
// §2.1) in exactly one POST to RevocationURL. Only a 2xx answer that carries
// no OAuth error counts as done; RFC 7009 answers 200 for a token that was
// already invalid too.
func (c *Config) revokeRefreshToken(ctx context.Context, refreshToken string) error {
	if err := c.validate(); err != nil {
		return err
	}
	if c.RevocationURL == "" {
		return fmt.Errorf("%w: no RevocationURL", ErrConfig)
	}
	form := url.Values{
		"token":           {refreshToken},
		"token_type_hint": {"refresh_token"},
	}
	secrets := []string{refreshToken, c.ClientSecret}
	status, body, err := c.post(ctx, c.RevocationURL, "revoke", form, secrets)
	if err != nil {
		return err
	}
	if _, _, _, ok := parseOAuthError(body); ok {
		return newError("revoke", status, body, secrets)
	}
	return nil
}

func (c *Config) logFailure(ctx context.Context, err error) {
	var oe *Error
	var re *ResponseError
	switch {
	case errors.As(err, &oe):
		c.logger().LogAttrs(ctx, slog.LevelWarn, "token endpoint refused", slog.Any("error", oe))
	case errors.As(err, &re):
		c.logger().LogAttrs(ctx, slog.LevelWarn, "token endpoint answer unusable", slog.Any("error", re))
	}
}

func (c *Config) httpClient() *http.Client {
	var hc http.Client
	if c.HTTPClient != nil {
		hc = *c.HTTPClient
	} else {
		hc.Timeout = defaultTimeout
	}
	// Following a redirect would POST the subject token a second time,
	// possibly to another host.
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &hc
}

// post sends one form POST to endpoint and returns the status and the body
// (at most MaxResponseBytes). Transport errors are returned scrubbed of
// secrets; a non-2xx answer is an *Error.
func (c *Config) post(ctx context.Context, endpoint, op string, form url.Values, secrets []string) (int, []byte, error) {
	if c.AuthStyle == oauth2.AuthStyleInParams {
		form.Set("client_id", c.ClientID)
		form.Set("client_secret", c.ClientSecret)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return 0, nil, fmt.Errorf("%w: %s", ErrConfig, scrub(err.Error(), secrets))
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if c.AuthStyle != oauth2.AuthStyleInParams {
		// RFC 6749 §2.3.1: form-encode before Basic encoding.
		req.SetBasicAuth(url.QueryEscape(c.ClientID), url.QueryEscape(c.ClientSecret))
	}
	resp, err := c.httpClient().Do(req)
	if err != nil {
		return 0, nil, &transportError{op: op, msg: scrub(err.Error(), secrets), err: err}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
	if err != nil {
		return 0, nil, &transportError{op: op, msg: "reading answer: " + scrub(err.Error(), secrets), err: err}
	}
	if len(body) > MaxResponseBytes {
		return 0, nil, &ResponseError{Op: op, StatusCode: resp.StatusCode, Reason: fmt.Sprintf("answer larger than %d bytes", MaxResponseBytes)}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.StatusCode, nil, oauthError(op, resp, body, secrets)
	}
	return resp.StatusCode, body, nil
}

// transportError is a failure to get an answer at all. Its message is
// scrubbed; Unwrap still reaches the original (for example a
// context.DeadlineExceeded or *url.Error).
type transportError struct {
	op  string
	msg string
	err error
}

func (e *transportError) Error() string              { return "tokenexchange: " + e.op + ": " + e.msg }
func (e *transportError) Unwrap() error              { return e.err }
func (e *transportError) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(e.Error())) }

// oauthError turns a non-2xx answer into *Error.
func oauthError(op string, resp *http.Response, body []byte, secrets []string) *Error {
	e := newError(op, resp.StatusCode, body, secrets)
	shallow := *resp
	shallow.Request = nil // keeps the Authorization header out of the error
	shallow.Body = http.NoBody
	e.Retrieve.Response = &shallow
	return e
}

// newError builds the *Error of an answer: its OAuth error fields, if any,
// and its body, all with every secret and token value blanked out.
func newError(op string, status int, body []byte, secrets []string) *Error {
	re := &oauth2.RetrieveError{Body: redactBody(body, secrets)}
	if code, desc, uri, ok := parseOAuthError(body); ok {
		re.ErrorCode = scrub(code, secrets)
		re.ErrorDescription = scrub(desc, secrets)
		re.ErrorURI = scrub(uri, secrets)
	}
	return &Error{Op: op, StatusCode: status, Retrieve: re}
}
