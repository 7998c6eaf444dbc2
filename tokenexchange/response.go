package tokenexchange

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/candorkit/candor/internal/secret"
)

// parsedResponse is a validated token endpoint answer.
type parsedResponse struct {
	accessToken     string
	tokenType       string
	issuedTokenType string
	refreshToken    string
	scope           string
	expiresIn       int64
	raw             map[string]any
	received        time.Time
}

// tokenFields are the response members that hold a token.
var tokenFields = []string{"access_token", "refresh_token", "id_token"}

// isTokenField matches member names case-insensitively, so that a body
// spelling "Access_Token" is redacted too.
func isTokenField(k string) bool {
	for _, f := range tokenFields {
		if strings.EqualFold(k, f) {
			return true
		}
	}
	return false
}

// stringMember reads an optional string member by its exact name (RFC 6749
// member names are case-sensitive). present is false when it is absent or
// null.
func stringMember(m map[string]json.RawMessage, name string) (v string, present bool, err error) {
	raw, ok := m[name]
	if !ok || string(raw) == "null" {
		return "", false, nil
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", true, fmt.Errorf("%s is not a string", name)
	}
	return v, true, nil
}

// rotatedToken returns the refresh_token member of a token answer, or ""
// when the body is not a JSON object, carries an OAuth error, or has no
// string refresh_token. Only the first JSON value is read: a rotated token
// must be kept even when the rest of the answer is refused.
func rotatedToken(body []byte) string {
	var m map[string]json.RawMessage
	if json.NewDecoder(bytes.NewReader(body)).Decode(&m) != nil {
		return ""
	}
	if raw, ok := m["error"]; ok && string(raw) != "null" {
		return ""
	}
	rt, _, _ := stringMember(m, "refresh_token")
	return rt
}

// parseOAuthError reads error, error_description and error_uri from a JSON
// body. ok is false when the body is not a JSON object with a string error.
func parseOAuthError(body []byte) (code, desc, uri string, ok bool) {
	var e struct {
		Error       string `json:"error"`
		Description string `json:"error_description"`
		URI         string `json:"error_uri"`
	}
	if json.Unmarshal(body, &e) != nil || e.Error == "" {
		return "", "", "", false
	}
	return e.Error, e.Description, e.URI, true
}

// parseTokenResponse validates a 2xx token endpoint answer. wantIssued is the
// required issued_token_type ("" for a refresh_token grant, which has none).
// It never returns a nil response with a nil error.
func parseTokenResponse(op string, status int, body []byte, wantIssued string, secrets []string) (*parsedResponse, error) {
	secrets = append(bodyTokens(body), secrets...)
	bad := func(format string, args ...any) error {
		return &ResponseError{Op: op, StatusCode: status, Reason: secret.Redact(fmt.Sprintf(format, args...), secrets...), Body: redactBody(body, secrets)}
	}
	if len(body) > MaxResponseBytes {
		return nil, bad("answer larger than %d bytes", MaxResponseBytes)
	}
	var m map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&m); err != nil || m == nil {
		reason := "not a JSON object"
		if err != nil {
			reason += ": " + secret.Redact(err.Error(), secrets...)
		}
		return nil, bad("%s", reason)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, bad("trailing data after the JSON object")
	}
	if code, _, _ := stringMember(m, "error"); code != "" {
		return nil, newStatusError(op, status, nil, body, secrets)
	}
	p := &parsedResponse{received: time.Now()}
	var err error
	fields := []struct {
		name     string
		dst      *string
		required bool
	}{
		{"access_token", &p.accessToken, true},
		{"token_type", &p.tokenType, true},
		{"issued_token_type", &p.issuedTokenType, false},
		{"refresh_token", &p.refreshToken, false},
		{"scope", &p.scope, false},
	}
	for _, fd := range fields {
		*fd.dst, _, err = stringMember(m, fd.name)
		if err != nil {
			return nil, bad("%v", err)
		}
		if fd.required && *fd.dst == "" {
			return nil, bad("missing %s", fd.name)
		}
	}
	if wantIssued != "" {
		switch {
		case p.issuedTokenType == "":
			return nil, bad("missing issued_token_type")
		case p.issuedTokenType != wantIssued:
			return nil, bad("issued_token_type %q, requested %q", p.issuedTokenType, wantIssued)
		}
	}
	if p.issuedTokenType == "" || p.issuedTokenType == TokenTypeAccessToken {
		if !strings.EqualFold(p.tokenType, "bearer") {
			return nil, bad("token_type %q is not Bearer", p.tokenType)
		}
	}
	if raw, ok := m["expires_in"]; ok && string(raw) != "null" {
		n, err := parseExpiresIn(raw)
		if err != nil {
			return nil, bad("expires_in: %v", err)
		}
		p.expiresIn = n
	}
	var raw map[string]any
	if json.Unmarshal(body, &raw) == nil {
		for k := range raw {
			if isTokenField(k) {
				delete(raw, k)
			}
		}
		p.raw = raw
	}
	return p, nil
}

// parseExpiresIn accepts a non-negative integer, as a JSON number or a
// numeric string (some providers send one).
func parseExpiresIn(v json.RawMessage) (int64, error) {
	s := string(v)
	if len(s) >= 2 && s[0] == '"' {
		if err := json.Unmarshal(v, &s); err != nil {
			return 0, err
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		f, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil || math.IsNaN(f) || f > math.MaxInt32 {
			return 0, fmt.Errorf("%q is not a number of seconds", s)
		}
		n = int64(f)
	}
	if n < 0 || n > math.MaxInt32 {
		return 0, fmt.Errorf("%d out of range", n)
	}
	return n, nil
}

// token builds the exported Token, reading the audit claims.
func (p *parsedResponse) token() *Token {
	ot := &oauth2.Token{
		AccessToken:  p.accessToken,
		TokenType:    p.tokenType,
		RefreshToken: p.refreshToken,
		ExpiresIn:    p.expiresIn,
	}
	c := unverifiedClaims(p.accessToken)
	switch {
	case p.expiresIn > 0:
		ot.Expiry = p.received.Add(time.Duration(p.expiresIn) * time.Second)
	case !c.expiry.IsZero():
		ot.Expiry = c.expiry
	}
	if p.raw != nil {
		ot = ot.WithExtra(p.raw)
	}
	t := &Token{
		Token:           ot,
		IssuedTokenType: p.issuedTokenType,
		Issuer:          c.issuer,
		Subject:         c.subject,
		AuthorizedParty: c.azp,
		Audience:        c.audience,
		Scopes:          c.scopes,
	}
	if t.Scopes == nil && p.scope != "" {
		t.Scopes = strings.Fields(p.scope)
	}
	return t
}

type claims struct {
	issuer   string
	subject  string
	azp      string
	audience []string
	scopes   []string
	expiry   time.Time
}

// unverifiedClaims decodes the payload of a compact JWS without checking its
// signature. Anything that is not a readable JWT gives empty claims.
func unverifiedClaims(token string) claims {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return claims{}
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return claims{}
	}
	var w struct {
		Iss   string          `json:"iss"`
		Sub   string          `json:"sub"`
		Azp   string          `json:"azp"`
		Aud   json.RawMessage `json:"aud"`
		Scope json.RawMessage `json:"scope"`
		Scp   json.RawMessage `json:"scp"`
		Exp   json.Number     `json:"exp"`
	}
	if json.Unmarshal(payload, &w) != nil {
		return claims{}
	}
	c := claims{issuer: w.Iss, subject: w.Sub, azp: w.Azp, audience: stringOrList(w.Aud)}
	c.scopes = stringOrList(w.Scope)
	if c.scopes == nil {
		c.scopes = stringOrList(w.Scp)
	}
	if f, err := w.Exp.Float64(); err == nil && f > 0 && f < math.MaxInt32*4 {
		c.expiry = time.Unix(int64(f), 0)
	}
	return c
}

// stringOrList reads a JSON string (split on spaces) or array of strings.
func stringOrList(v json.RawMessage) []string {
	if len(v) == 0 {
		return nil
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		f := strings.Fields(s)
		if len(f) == 0 {
			return nil
		}
		return f
	}
	var l []string
	if json.Unmarshal(v, &l) == nil {
		l = slices.DeleteFunc(l, func(x string) bool { return x == "" })
		if len(l) == 0 {
			return nil
		}
		return l
	}
	return nil
}

// bodyTokens returns the token values a JSON body carries, so that nothing
// derived from the body (error description, reason, evidence) can show them.
func bodyTokens(body []byte) []string {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return nil
	}
	var out []string
	for k, v := range m {
		var s string
		if isTokenField(k) && json.Unmarshal(v, &s) == nil && s != "" {
			out = append(out, s)
		}
	}
	return out
}

// redactBody blanks the token values of a JSON object body and every known
// secret (in every encoding) anywhere in it.
func redactBody(body []byte, secrets []string) []byte {
	if len(body) == 0 {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) == nil && m != nil {
		changed := false
		for k, v := range m {
			if !isTokenField(k) {
				continue
			}
			var s string
			if json.Unmarshal(v, &s) == nil && s != "" {
				secrets = append(secrets, s)
			}
			m[k] = json.RawMessage(`"` + secret.Redacted + `"`)
			changed = true
		}
		if changed {
			if out, err := json.Marshal(m); err == nil {
				return secret.RedactBytes(out, secrets...)
			}
		}
	}
	return secret.RedactBytes(body, secrets...)
}
