package mcpauth_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"

	"github.com/candorkit/candor/mcpclient"
	"github.com/candorkit/candor/mcpclient/mcpauth"
)

// A Delegated flow's TokenFunc returns tokens without a scope member: they
// count as granted what was asked, so a step-up succeeds; and a token
// refused later with a 401 naming fewer scopes is replaced by one with every
// scope it held, so the step-up is not undone.
func TestScopesAcrossStepUpAndRenewal(t *testing.T) {
	ctx := context.Background()
	s := newAuthServer(t)
	s.json("/.well-known/oauth-protected-resource/mcp", map[string]any{"resource": s.URL + "/mcp", "authorization_servers": []string{s.URL}}, 0)
	s.json("/.well-known/oauth-authorization-server", asMetadata(s.URL), 0)
	var asked [][]string
	fetch := func(_ context.Context, tg mcpauth.Target) (*oauth2.Token, error) {
		asked = append(asked, tg.Scopes)
		return &oauth2.Token{AccessToken: fmt.Sprintf("tok-%d", len(asked)), TokenType: "Bearer"}, nil
	}
	a, err := mcpauth.New(mcpauth.Delegated(fetch))
	require.NoError(t, err)
	endpoint := s.URL + "/mcp"
	token := func() *oauth2.Token {
		tok, err := a.Token(ctx, endpoint)
		require.NoError(t, err)
		require.NotNil(t, tok)
		return tok
	}

	ch := unauthorized(`Bearer scope="read"`)
	ch.Endpoint = endpoint
	require.NoError(t, a.Authorize(ctx, ch))
	first := token()

	up := mcpclient.Challenge{Endpoint: endpoint, StatusCode: http.StatusForbidden, Token: first,
		Header: http.Header{"Www-Authenticate": {`Bearer error="insufficient_scope", scope="admin"`}}}
	require.NoError(t, a.Authorize(ctx, up), "a TokenFunc's token is granted what was asked")
	second := token()
	assert.NotEqual(t, first.AccessToken, second.AccessToken)

	// The same refusal for the stepped-up token: it already holds "admin".
	up.Token = second
	var se *mcpauth.ScopeError
	require.ErrorAs(t, a.Authorize(ctx, up), &se)
	assert.ElementsMatch(t, []string{"read", "admin"}, se.Granted)

	revoked := unauthorized(`Bearer error="invalid_token", scope="read"`)
	revoked.Endpoint, revoked.Token = endpoint, second
	require.NoError(t, a.Authorize(ctx, revoked))
	third := token()
	assert.NotEqual(t, second.AccessToken, third.AccessToken)

	require.Len(t, asked, 3)
	assert.Equal(t, []string{"read"}, asked[0])
	assert.ElementsMatch(t, []string{"read", "admin"}, asked[1], "step-up: the union")
	assert.ElementsMatch(t, []string{"read", "admin"}, asked[2], "renewal keeps the stepped-up scopes: %s", strings.Join(asked[2], " "))
}
