package mcpauth

import (
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	require.NoError(t, err)
	return u
}

func TestMatchResource(t *testing.T) {
	ep := mustURL(t, "https://Mcp.Example.com/api/mcp")
	for _, ok := range []string{
		"https://mcp.example.com/api/mcp", "https://mcp.example.com/api/mcp/", "https://mcp.example.com/api",
		"https://mcp.example.com", "https://mcp.example.com/", "HTTPS://MCP.EXAMPLE.COM:443/api/mcp",
	} {
		assert.NoError(t, matchResource(ok, ep), ok)
	}
	for _, bad := range []string{
		"https://mcp.example.com/api/mcp2", "https://mcp.example.com/ap", "https://mcp.example.com/other",
		"https://mcp.example.com/api/mcp/deeper", "http://mcp.example.com/api/mcp", "https://mcp.example.com:8443/api/mcp",
		"https://evil.example.com/api/mcp", "https://mcp.example.com/api/mcp#frag", "/api/mcp", "::not a url",
	} {
		assert.Error(t, matchResource(bad, ep), bad)
	}
	assert.NoError(t, matchResource("http://127.0.0.1:80/mcp", mustURL(t, "http://127.0.0.1/mcp")), "default port")
}

func TestWellKnown(t *testing.T) {
	assert.Equal(t, []string{
		"https://h.example/.well-known/oauth-protected-resource/api/mcp",
		"https://h.example/.well-known/oauth-protected-resource",
	}, wellKnown(mustURL(t, "https://h.example/api/mcp/?q=1"), "oauth-protected-resource"))
	assert.Equal(t, []string{"https://h.example:8443/.well-known/oauth-protected-resource"},
		wellKnown(mustURL(t, "https://h.example:8443/"), "oauth-protected-resource"))
	assert.Equal(t, []string{"https://h.example/.well-known/x/a%2Fb", "https://h.example/.well-known/x"},
		wellKnown(mustURL(t, "https://h.example/a%2Fb"), "x"), "escaped path kept")
}

func TestCanonical(t *testing.T) {
	assert.Equal(t, "https://mcp.example.com/MCP", canonical(mustURL(t, "HTTPS://MCP.Example.COM/MCP?x=1#f")))
	assert.Equal(t, "http://127.0.0.1:9/a%2Fb", canonical(mustURL(t, "http://127.0.0.1:9/a%2Fb")))
	assert.Equal(t, "https://h", canonical(mustURL(t, "https://h")))
}

func TestCallbackChecks(t *testing.T) {
	a := &Authorizer{options: options{redirectURL: "http://127.0.0.1:8976/callback"}}
	as := &ServerMetadata{Issuer: "https://as.example/tenant"}
	cases := []struct {
		name, cb string
		check    func(t *testing.T, d *DeniedError)
	}{
		{"state mismatch", "http://127.0.0.1:8976/callback?code=c&state=other", func(t *testing.T, d *DeniedError) {
			assert.Contains(t, d.Reason, "state")
		}},
		{"no state", "http://127.0.0.1:8976/callback?code=c", func(t *testing.T, d *DeniedError) { assert.Contains(t, d.Reason, "state") }},
		{"error param", "http://127.0.0.1:8976/callback?error=access_denied&error_description=no+thanks&state=s1", func(t *testing.T, d *DeniedError) {
			assert.Equal(t, "access_denied", d.ErrorCode)
			assert.Equal(t, "no thanks", d.ErrorDescription)
		}},
		{"iss mismatch", "http://127.0.0.1:8976/callback?code=c&state=s1&iss=https%3A%2F%2Fevil.example", func(t *testing.T, d *DeniedError) {
			assert.Contains(t, d.Reason, "RFC 9207")
		}},
		{"iss mismatch beats error", "http://127.0.0.1:8976/callback?error=x&state=s1&iss=https%3A%2F%2Fevil.example", func(t *testing.T, d *DeniedError) {
			assert.Empty(t, d.ErrorCode, "an error from another server is not believed")
		}},
		{"wrong port", "http://127.0.0.1:8977/callback?code=c&state=s1", func(t *testing.T, d *DeniedError) { assert.Contains(t, d.Reason, "redirect URL") }},
		{"wrong path", "http://127.0.0.1:8976/other?code=c&state=s1", func(t *testing.T, d *DeniedError) { assert.Contains(t, d.Reason, "redirect URL") }},
		{"wrong scheme", "https://127.0.0.1:8976/callback?code=c&state=s1", func(t *testing.T, d *DeniedError) { assert.Contains(t, d.Reason, "redirect URL") }},
		{"no code", "http://127.0.0.1:8976/callback?state=s1", func(t *testing.T, d *DeniedError) { assert.Contains(t, d.Reason, "no code") }},
		{"not a URL", "http://[::1", func(t *testing.T, d *DeniedError) { assert.Contains(t, d.Reason, "not a URL") }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := a.callback(tc.cb, "s1", as)
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrDenied)
			assert.Equal(t, KindDenied, Classify(err))
			d, ok := errors.AsType[*DeniedError](err)
			require.True(t, ok)
			tc.check(t, d)
		})
	}
	code, err := a.callback("http://127.0.0.1:8976/callback?code=the-code&state=s1&iss=https%3A%2F%2Fas.example%2Ftenant%2F", "s1", as)
	require.NoError(t, err)
	assert.Equal(t, "the-code", code, "a matching iss (trailing slash aside) is accepted")
	code, err = a.callback("http://127.0.0.1:8976/callback?code=c2&state=s1", "s1", as)
	require.NoError(t, err)
	assert.Equal(t, "c2", code, "iss is optional")
}

func TestParseToken(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	asked := []string{"a", "b"}
	tok, err := parseToken([]byte(`{"access_token":"AT","token_type":"bearer","expires_in":60,"refresh_token":"RT"}`), asked, now)
	require.NoError(t, err)
	assert.Equal(t, "AT", tok.AccessToken)
	assert.Equal(t, "Bearer", tok.TokenType)
	assert.Equal(t, "RT", tok.RefreshToken)
	assert.Equal(t, now.Add(time.Minute), tok.Expiry)
	assert.Equal(t, asked, grantedScopes(tok), "scope omitted: the asked scopes")

	tok, err = parseToken([]byte(`{"access_token":"AT","token_type":"Bearer","expires_in":"90","scope":"a"}`), asked, now)
	require.NoError(t, err)
	assert.Equal(t, now.Add(90*time.Second), tok.Expiry, "a quoted number is tolerated")
	assert.Equal(t, []string{"a"}, grantedScopes(tok))

	tok, err = parseToken([]byte(`{"access_token":"AT","token_type":"Bearer","scope":""}`), asked, now)
	require.NoError(t, err)
	assert.Empty(t, grantedScopes(tok), "an empty scope is an empty grant")
	assert.True(t, tok.Expiry.IsZero())

	for name, body := range map[string]string{
		"missing access_token": `{"token_type":"Bearer"}`,
		"empty access_token":   `{"access_token":"","token_type":"Bearer"}`,
		"non-Bearer":           `{"access_token":"SECRET-AT","token_type":"DPoP"}`,
		"no token_type":        `{"access_token":"SECRET-AT"}`,
		"bad expires_in":       `{"access_token":"SECRET-AT","token_type":"Bearer","expires_in":"soon"}`,
		"zero expires_in":      `{"access_token":"SECRET-AT","token_type":"Bearer","expires_in":0}`,
		"negative expires_in":  `{"access_token":"SECRET-AT","token_type":"Bearer","expires_in":-5}`,
		"object expires_in":    `{"access_token":"SECRET-AT","token_type":"Bearer","expires_in":{}}`,
		"not an object":        `["SECRET-AT"]`,
		"trailing data":        `{"access_token":"SECRET-AT","token_type":"Bearer"} {"x":1}`,
		"html":                 `<html>SECRET-AT</html>`,
	} {
		t.Run(name, func(t *testing.T) {
			tok, err := parseToken([]byte(body), asked, now)
			assert.Nil(t, tok)
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrToken)
			assert.Equal(t, KindToken, Classify(err))
			te, ok := errors.AsType[*TokenResponseError](err)
			require.True(t, ok)
			if name != "html" && name != "not an object" {
				assert.NotContains(t, string(te.Body), "SECRET-AT", "the access token is blanked")
			}
			assert.NotContains(t, err.Error(), "SECRET-AT")
		})
	}
}

func TestAuthMethod(t *testing.T) {
	cases := []struct {
		name              string
		supported         []string
		secret, key       bool
		want              string
		wantUnsupportedOK bool
	}{
		{"absent means basic", nil, true, false, AuthMethodBasic, false},
		{"basic preferred", []string{AuthMethodPost, AuthMethodBasic}, true, false, AuthMethodBasic, false},
		{"post when only post", []string{AuthMethodPost, AuthMethodNone}, true, false, AuthMethodPost, false},
		{"secret without a method", []string{AuthMethodNone, AuthMethodPrivateKeyJWT}, true, false, "", true},
		{"key", []string{AuthMethodBasic, AuthMethodPrivateKeyJWT}, true, true, AuthMethodPrivateKeyJWT, false},
		{"key refused", []string{AuthMethodBasic}, false, true, "", true},
		{"key with absent list", nil, false, true, "", true},
		{"public", []string{AuthMethodBasic}, false, false, AuthMethodNone, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := authMethod(tc.supported, tc.secret, tc.key)
			if tc.wantUnsupportedOK {
				assert.ErrorIs(t, err, ErrUnsupported)
				assert.Equal(t, KindUnsupported, Classify(err))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestScopeHelpers(t *testing.T) {
	assert.Equal(t, []string{"a", "b", "c"}, union([]string{"a"}, []string{"b", "a"}, nil, []string{"c", "b"}))
	assert.True(t, containsAll([]string{"a", "b"}, []string{"b"}))
	assert.True(t, containsAll(nil, nil))
	assert.False(t, containsAll([]string{"a"}, []string{"a", "b"}))
}
