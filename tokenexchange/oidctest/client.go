package oidctest

import (
	"crypto/subtle"
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
}

// User is a user of the provider.
type User struct {
	ID       string // the sub claim
	Username string
	Name     string
	Email    string
}

type client struct{ Client }

func (c *client) GetID() string                       { return c.ID }
func (c *client) RedirectURIs() []string              { return nil }
func (c *client) PostLogoutRedirectURIs() []string    { return nil }
func (c *client) ApplicationType() op.ApplicationType { return op.ApplicationTypeWeb }
func (c *client) AuthMethod() oidc.AuthMethod         { return oidc.AuthMethodBasic }
func (c *client) ResponseTypes() []oidc.ResponseType {
	return []oidc.ResponseType{oidc.ResponseTypeCode}
}
func (c *client) LoginURL(string) string { return "" }
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
	if c.Secret == "" {
		return nil
	}
	g := []oidc.GrantType{oidc.GrantTypeRefreshToken}
	if c.TokenExchange {
		g = append(g, oidc.GrantTypeTokenExchange)
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
