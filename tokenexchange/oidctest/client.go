package oidctest

import (
	"crypto/subtle"
	"net/url"
	"slices"
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// Client registers one client of the provider, modelled on a Keycloak client.
type Client struct {
	// ID is the client_id. For a resource server it is also the audience
	// value other clients' tokens carry.
	ID string
	// Secret makes the client confidential (client_secret_basic or
	// client_secret_post). Empty means the client cannot authenticate at the
	// token endpoint (a bearer-only audience).
	Secret string
	// Audiences are the aud values this client's access tokens carry: what
	// Keycloak's audience mappers on the client's scopes produce. A client is
	// never its own audience.
	Audiences []string
	// DefaultScopes are always granted; OptionalScopes only when requested.
	DefaultScopes  []string
	OptionalScopes []string
	// TokenExchange enables standard token exchange for this client.
	TokenExchange bool
	// AccessTokenLifetime overrides the provider's access token lifetime for
	// tokens issued to this client.
	AccessTokenLifetime time.Duration
	// OpaqueAccessTokens makes the access tokens issued to this client
	// opaque strings (encrypted by the provider, not JWTs): a resource
	// server learns about them only through the introspection endpoint, or
	// VerifyAccessToken in a test.
	OpaqueAccessTokens bool
	// ClientCredentials enables the client_credentials grant for this
	// confidential client (Keycloak's "service accounts"): the access token
	// has sub "service-account-" + ID, azp ID, aud the Audiences, and the
	// default scopes plus the optional ones asked for (another scope is
	// refused with invalid_scope).
	ClientCredentials bool
	// RedirectURIs enable the authorization code grant: a user logs in at
	// the provider's login page (ApproveAuthorization plays the browser)
	// and the provider redirects to one of these URIs (a loopback http URI
	// matches on any port). A client without Secret is public: it
	// authenticates with its client_id alone and must send a PKCE S256
	// code challenge.
	RedirectURIs []string
}

// User is a user of the provider.
type User struct {
	ID       string // the sub claim
	Username string
	Name     string
	Email    string
}

type client struct{ Client }

func (c *client) GetID() string                    { return c.ID }
func (c *client) RedirectURIs() []string           { return slices.Clone(c.Client.RedirectURIs) }
func (c *client) PostLogoutRedirectURIs() []string { return nil }

// ApplicationType is native for a client with redirect URIs, so that a
// loopback redirect URI is accepted on any port (RFC 8252 §7.3).
func (c *client) ApplicationType() op.ApplicationType {
	if len(c.Client.RedirectURIs) > 0 {
		return op.ApplicationTypeNative
	}
	return op.ApplicationTypeWeb
}

func (c *client) AuthMethod() oidc.AuthMethod {
	if c.public() {
		return oidc.AuthMethodNone
	}
	return oidc.AuthMethodBasic
}

// public reports whether the client is a public authorization code client.
func (c *client) public() bool { return c.Secret == "" && len(c.Client.RedirectURIs) > 0 }

func (c *client) ResponseTypes() []oidc.ResponseType {
	return []oidc.ResponseType{oidc.ResponseTypeCode}
}

// LoginURL is the provider's login page for an authorization request.
func (c *client) LoginURL(id string) string {
	return loginPath + "?authRequestID=" + url.QueryEscape(id)
}
func (c *client) AccessTokenType() op.AccessTokenType {
	if c.OpaqueAccessTokens {
		return op.AccessTokenTypeBearer
	}
	return op.AccessTokenTypeJWT
}
func (c *client) IDTokenLifetime() time.Duration       { return 5 * time.Minute }
func (c *client) DevMode() bool                        { return false }
func (c *client) IDTokenUserinfoClaimsAssertion() bool { return false }
func (c *client) ClockSkew() time.Duration             { return 0 }
func (c *client) IsScopeAllowed(scope string) bool     { return c.allows(scope) }
func (c *client) RestrictAdditionalIdTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
func (c *client) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}

func (c *client) GrantTypes() []oidc.GrantType {
	var g []oidc.GrantType
	if len(c.Client.RedirectURIs) > 0 {
		g = append(g, oidc.GrantTypeCode, oidc.GrantTypeRefreshToken)
	}
	if c.Secret == "" {
		return g
	}
	if !slices.Contains(g, oidc.GrantTypeRefreshToken) {
		g = append(g, oidc.GrantTypeRefreshToken)
	}
	if c.TokenExchange {
		g = append(g, oidc.GrantTypeTokenExchange)
	}
	if c.ClientCredentials {
		g = append(g, oidc.GrantTypeClientCredentials)
	}
	return g
}

func (c *client) allows(scope string) bool {
	return scope == oidc.ScopeOpenID || scope == oidc.ScopeOfflineAccess ||
		slices.Contains(c.DefaultScopes, scope) || slices.Contains(c.OptionalScopes, scope)
}

func constantTimeEqual(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}
