package mcpauth

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"golang.org/x/oauth2"

	"github.com/candorkit/candor/internal/httpx"
	"github.com/candorkit/candor/internal/secret"
)

// Token endpoint authentication methods (RFC 7591 §2, RFC 7523 §2.2).
const (
	AuthMethodBasic         = "client_secret_basic"
	AuthMethodPost          = "client_secret_post"
	AuthMethodNone          = "none"
	AuthMethodPrivateKeyJWT = "private_key_jwt"
)

// Grant types this package sends.
const (
	GrantAuthorizationCode = "authorization_code"
	GrantRefreshToken      = "refresh_token"
	GrantClientCredentials = "client_credentials"
	GrantJWTBearer         = "urn:ietf:params:oauth:grant-type:jwt-bearer"
)

const clientAssertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

// client is this program's identity at one authorization server.
type client struct {
	id     string
	secret secret.Secret
	method string // token endpoint authentication
}

// secrets returns the values no error may show.
func (c *client) secrets() []string {
	if c == nil || c.secret.IsZero() {
		return nil
	}
	s := c.secret.Reveal()
	return []string{s, secret.Basic(c.id, s), secret.Basic(url.QueryEscape(c.id), url.QueryEscape(s))}
}

// tokenRequest posts form to the token endpoint of as with the client's
// authentication and returns the bearer token it answers. scopes is what
// was asked, the token's scope when the answer names none.
func (a *Authorizer) tokenRequest(ctx context.Context, as *ServerMetadata, cl *client, form url.Values, scopes []string, hide ...string) (*oauth2.Token, error) {
	if err := checkURL("token_endpoint", as.TokenEndpoint); err != nil {
		return nil, err
	}
	hide = append(hide, cl.secrets()...)
	switch cl.method {
	case AuthMethodPost:
		form.Set("client_id", cl.id)
		form.Set("client_secret", cl.secret.Reveal())
	case AuthMethodNone:
		form.Set("client_id", cl.id)
	case AuthMethodPrivateKeyJWT:
		assertion, err := a.clientAssertion(cl.id, audienceOf(as))
		if err != nil {
			return nil, err
		}
		hide = append(hide, assertion)
		form.Set("client_id", cl.id)
		form.Set("client_assertion_type", clientAssertionType)
		form.Set("client_assertion", assertion)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, as.TokenEndpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, fmt.Errorf("%w: token endpoint: %v", ErrMetadata, httpx.StripURL(err))
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if cl.method == AuthMethodBasic {
		// RFC 6749 §2.3.1: form-encoded, then Basic.
		req.SetBasicAuth(url.QueryEscape(cl.id), url.QueryEscape(cl.secret.Reveal()))
	}
	resp, err := a.do(req, "token")
	if err != nil {
		return nil, &TransportError{Op: "token", Err: errors.New(secret.Redact(httpx.StripURL(err).Error(), hide...))}
	}
	defer resp.Body.Close()
	body, rerr := httpx.ReadAll(resp.Body, a.maxBody)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, newStatusError("token", resp, body, append(bodyTokens(body), hide...))
	}
	if rerr != nil {
		return nil, &TokenResponseError{Reason: rerr.Error()}
	}
	return parseToken(body, scopes, a.now())
}

// bodyTokens returns the token values a JSON answer carries, to blank.
func bodyTokens(body []byte) []string {
	var m map[string]any
	// The first JSON value, whatever follows it: an answer refused for
	// trailing data still has its tokens blanked.
	if json.NewDecoder(bytes.NewReader(body)).Decode(&m) != nil {
		return nil
	}
	var out []string
	for _, k := range []string{"access_token", "refresh_token", "id_token"} {
		if s, ok := m[k].(string); ok && s != "" {
			out = append(out, s)
		}
	}
	return out
}

// tokenResponse is RFC 6749 §5.1.
type tokenResponse struct {
	AccessToken  string          `json:"access_token"`
	TokenType    string          `json:"token_type"`
	ExpiresIn    json.RawMessage `json:"expires_in"`
	RefreshToken string          `json:"refresh_token"`
	Scope        *string         `json:"scope"`
}

// parseToken reads a token response. A missing access token or a token
// type other than Bearer is an error, never a token.
func parseToken(body []byte, asked []string, now time.Time) (*oauth2.Token, error) {
	var r tokenResponse
	hide := bodyTokens(body)
	bad := func(reason string) error {
		return &TokenResponseError{Body: secret.RedactBytes(body, hide...), Reason: reason}
	}
	if err := strictJSON(body, &r); err != nil {
		return nil, bad("not a JSON object: " + secret.Redact(err.Error(), hide...))
	}
	if r.AccessToken == "" {
		return nil, bad("no access_token")
	}
	if !strings.EqualFold(r.TokenType, "bearer") {
		return nil, bad(fmt.Sprintf("token_type %q is not Bearer", httpx.Excerpt([]byte(r.TokenType), 32)))
	}
	tok := &oauth2.Token{AccessToken: r.AccessToken, TokenType: "Bearer", RefreshToken: r.RefreshToken}
	if len(r.ExpiresIn) > 0 && string(r.ExpiresIn) != "null" {
		var secs float64
		if err := json.Unmarshal(r.ExpiresIn, &secs); err != nil {
			var s string
			if json.Unmarshal(r.ExpiresIn, &s) != nil {
				return nil, bad("expires_in is not a number")
			}
			if _, err := fmt.Sscan(s, &secs); err != nil {
				return nil, bad("expires_in is not a number")
			}
		}
		if secs <= 0 {
			return nil, bad("expires_in is not positive")
		}
		tok.ExpiresIn = int64(secs)
		tok.Expiry = now.Add(time.Duration(secs * float64(time.Second)))
	}
	granted := asked
	if r.Scope != nil {
		granted = scopeList(*r.Scope)
	}
	return tok.WithExtra(map[string]any{"scope": strings.Join(granted, " ")}), nil
}

// grantedScopes returns the scopes a token was granted.
func grantedScopes(t *oauth2.Token) []string {
	if t == nil {
		return nil
	}
	s, _ := t.Extra("scope").(string)
	return scopeList(s)
}

// audienceOf is the audience of a client assertion: the authorization
// server's issuer identifier, or its token endpoint when it has none.
func audienceOf(as *ServerMetadata) string {
	if as.Issuer != "" {
		return as.Issuer
	}
	return as.TokenEndpoint
}

// clientAssertion signs the private_key_jwt of RFC 7523 §2.2: iss and sub
// the client ID, aud the authorization server, a short life and a random
// jti.
func (a *Authorizer) clientAssertion(clientID, aud string) (string, error) {
	alg, err := signingAlg(a.key)
	if err != nil {
		return "", err
	}
	opts := (&jose.SignerOptions{}).WithType("JWT")
	if a.keyID != "" {
		opts = opts.WithHeader("kid", a.keyID)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: a.key}, opts)
	if err != nil {
		return "", fmt.Errorf("%w: private key: %v", ErrConfig, err)
	}
	var jti [16]byte
	_, _ = rand.Read(jti[:])
	now := a.now()
	claims := jwt.Claims{
		Issuer:   clientID,
		Subject:  clientID,
		Audience: jwt.Audience{aud},
		IssuedAt: jwt.NewNumericDate(now),
		Expiry:   jwt.NewNumericDate(now.Add(5 * time.Minute)),
		ID:       base64.RawURLEncoding.EncodeToString(jti[:]),
	}
	s, err := jwt.Signed(signer).Claims(claims).Serialize()
	if err != nil {
		return "", fmt.Errorf("%w: signing the client assertion: %v", ErrConfig, err)
	}
	return s, nil
}

// signingAlg is the JWS algorithm of a key: ES256/384/512 by curve, RS256,
// EdDSA.
func signingAlg(k crypto.Signer) (jose.SignatureAlgorithm, error) {
	switch pk := k.Public().(type) {
	case *ecdsa.PublicKey:
		switch pk.Curve {
		case elliptic.P256():
			return jose.ES256, nil
		case elliptic.P384():
			return jose.ES384, nil
		case elliptic.P521():
			return jose.ES512, nil
		}
	case *rsa.PublicKey:
		return jose.RS256, nil
	case ed25519.PublicKey:
		return jose.EdDSA, nil
	}
	return "", fmt.Errorf("%w: private key of type %T is not ECDSA, RSA or Ed25519", ErrConfig, k.Public())
}

// authMethod chooses how a client with the given credentials
// authenticates at a server that supports methods (RFC 8414: absent means
// client_secret_basic only).
func authMethod(supported []string, hasSecret, hasKey bool) (string, error) {
	if len(supported) == 0 {
		supported = []string{AuthMethodBasic}
	}
	switch {
	case hasKey:
		if slices.Contains(supported, AuthMethodPrivateKeyJWT) {
			return AuthMethodPrivateKeyJWT, nil
		}
		return "", fmt.Errorf("%w: the token endpoint does not accept private_key_jwt (it accepts %s)", ErrUnsupported, strings.Join(supported, ", "))
	case hasSecret:
		for _, m := range []string{AuthMethodBasic, AuthMethodPost} {
			if slices.Contains(supported, m) {
				return m, nil
			}
		}
		return "", fmt.Errorf("%w: the token endpoint accepts neither client_secret_basic nor client_secret_post (it accepts %s)", ErrUnsupported, strings.Join(supported, ", "))
	}
	return AuthMethodNone, nil
}
