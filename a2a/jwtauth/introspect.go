package jwtauth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/candorkit/candor/a2a"
	"github.com/candorkit/candor/internal/secret"
)

// introspection is the RFC 7662 answer, as far as Verify reads it.
type introspection struct {
	Active json.RawMessage  `json:"active"`
	Scope  string           `json:"scope"`
	Sub    string           `json:"sub"`
	Aud    jwt.Audience     `json:"aud"`
	Iss    string           `json:"iss"`
	Exp    *jwt.NumericDate `json:"exp"`
	Nbf    *jwt.NumericDate `json:"nbf"`
}

func (v *Verifier) introspectToken(ctx context.Context, token string) (a2a.Caller, error) {
	endpoint := v.endpoint
	if endpoint == "" {
		d, err := v.discover(ctx)
		if err != nil {
			return a2a.Caller{}, err
		}
		if d.IntrospectionEndpoint == "" {
			return a2a.Caller{}, fmt.Errorf("%w: the discovery document has no usable introspection_endpoint", ErrDiscovery)
		}
		endpoint = d.IntrospectionEndpoint
	}
	form := url.Values{"token": {token}, "token_type_hint": {"access_token"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return a2a.Caller{}, fmt.Errorf("jwtauth: introspection: %w", err)
	}
	id, pw := url.QueryEscape(v.clientID), url.QueryEscape(v.clientSecret.Reveal())
	req.SetBasicAuth(id, pw)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	secrets := []string{token, v.clientSecret.Reveal(), pw, secret.Basic(id, pw)}
	body, err := v.do(req, "introspection", secrets)
	if err != nil {
		return a2a.Caller{}, err
	}
	var r introspection
	if err := json.Unmarshal(body, &r); err != nil {
		return a2a.Caller{}, errors.New("jwtauth: introspection: the answer is not a JSON object with the RFC 7662 fields")
	}
	switch a := bytes.TrimSpace(r.Active); {
	case string(a) == "false":
		return a2a.Caller{}, invalid("the issuer reports the token inactive")
	case string(a) != "true":
		return a2a.Caller{}, errors.New(`jwtauth: introspection: the answer has no boolean "active"`)
	}
	now := time.Now()
	issuer := v.issuer
	switch {
	case r.Iss != "" && r.Iss != v.issuer:
		return a2a.Caller{}, invalid(fmt.Sprintf("issuer %.128q is not %q", r.Iss, v.issuer))
	case r.Sub == "":
		return a2a.Caller{}, invalid("the introspection answer names no subject")
	case !r.Aud.Contains(v.audience):
		return a2a.Caller{}, invalid(fmt.Sprintf("audience %q is not in aud", v.audience))
	case r.Exp != nil && now.After(r.Exp.Time().Add(v.leeway)):
		return a2a.Caller{}, invalid("expired at " + r.Exp.Time().UTC().Format(time.RFC3339))
	case r.Nbf != nil && now.Add(v.leeway).Before(r.Nbf.Time()):
		return a2a.Caller{}, invalid("not valid before " + r.Nbf.Time().UTC().Format(time.RFC3339))
	}
	scopes := strings.Fields(r.Scope)
	caller := a2a.Caller{
		Subject:  r.Sub,
		Issuer:   issuer,
		Audience: slices.Clone([]string(r.Aud)),
		Scopes:   scopes,
	}
	if r.Exp != nil {
		caller.Expiry = r.Exp.Time()
	}
	if err := v.checkScopes(scopes); err != nil {
		return a2a.Caller{}, err
	}
	return caller, nil
}
