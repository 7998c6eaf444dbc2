package tokenexchange

import (
	"fmt"
	"log/slog"
	"strings"

	"golang.org/x/oauth2"

	"github.com/candorkit/candor/internal/secret"
)

// Token is an issued token: the *oauth2.Token (use it with oauth2.Transport,
// SetAuthHeader, Valid) plus audit information.
//
// Issuer, Subject, AuthorizedParty, Audience and Scopes are read from the
// access token's JWT claims WITHOUT verifying its signature: they say what
// the provider claims to have issued, for logs and audit trails, and must
// never be used to authorize anything. They are empty when the token is not
// a JWT (Keycloak omits sub when the client lacks the basic scope). Scopes
// falls back to the response's scope field when the token has no scope
// claim.
//
// String, Format and LogValue never print the access or refresh token. (The
// token values live in the embedded *oauth2.Token, whose fields are plain
// strings, so Token keeps its own printing methods.)
type Token struct {
	*oauth2.Token
	// IssuedTokenType is the response's issued_token_type ("" for a token
	// from a refresh_token grant).
	IssuedTokenType string
	Issuer          string
	Subject         string
	AuthorizedParty string
	Audience        []string
	Scopes          []string
}

// clone returns a copy the caller may keep and change.
func (t *Token) clone() *Token {
	cp := *t
	if t.Token != nil {
		ot := *t.Token
		cp.Token = &ot
	}
	cp.Audience = append([]string(nil), t.Audience...)
	cp.Scopes = append([]string(nil), t.Scopes...)
	return &cp
}

func (t Token) String() string {
	var b strings.Builder
	b.WriteString("tokenexchange.Token{")
	fmt.Fprintf(&b, "sub=%q azp=%q aud=%q scopes=%q", t.Subject, t.AuthorizedParty, t.Audience, t.Scopes)
	if t.Token != nil {
		fmt.Fprintf(&b, " type=%q expiry=%s", t.TokenType, t.Expiry.UTC().Format("2006-01-02T15:04:05Z"))
		if t.AccessToken != "" {
			b.WriteString(" access_token=" + secret.Redacted)
		}
		if t.RefreshToken != "" {
			b.WriteString(" refresh_token=" + secret.Redacted)
		}
	}
	b.WriteString("}")
	return b.String()
}

// Format prints String() for every verb.
func (t Token) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(t.String())) }

// LogValue logs the audit fields only.
func (t Token) LogValue() slog.Value {
	attrs := []slog.Attr{
		slog.String("sub", t.Subject),
		slog.String("azp", t.AuthorizedParty),
		slog.Any("aud", t.Audience),
		slog.Any("scopes", t.Scopes),
		slog.String("issued_token_type", t.IssuedTokenType),
	}
	if t.Token != nil {
		attrs = append(attrs, slog.Time("expiry", t.Expiry))
	}
	return slog.GroupValue(attrs...)
}

// String describes the Config without its client secret. (ClientSecret is
// a plain string field, as in golang.org/x/oauth2, so Config keeps its own
// printing methods.)
func (c Config) String() string {
	return fmt.Sprintf("tokenexchange.Config{TokenURL=%q RevocationURL=%q ClientID=%q ClientSecret=%v Audience=%q Resource=%q Scopes=%q RequestedTokenType=%q AuthStyle=%d}",
		c.TokenURL, c.RevocationURL, c.ClientID, secret.New(c.ClientSecret), c.Audience, c.Resource, c.Scopes, c.RequestedTokenType, c.AuthStyle)
}

// Format prints String() for every verb.
func (c Config) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(c.String())) }

// LogValue logs the Config without its client secret.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("token_url", c.TokenURL),
		slog.String("client_id", c.ClientID),
		slog.Any("audience", c.Audience),
		slog.Any("scopes", c.Scopes),
	)
}
