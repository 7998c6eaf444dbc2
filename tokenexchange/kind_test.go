package tokenexchange_test

import (
	"context"
	"os"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/candorkit/candor/tokenexchange"
	"github.com/candorkit/candor/tokenexchange/oidctest"
)

// Every Kind is a distinct snake_case string documented in doc.go: the
// values are telemetry labels and must not drift.
func TestKindsDocumented(t *testing.T) {
	kinds := []tokenexchange.Kind{
		tokenexchange.KindConfig, tokenexchange.KindNoSubjectToken, tokenexchange.KindInvalidRequest,
		tokenexchange.KindInvalidGrant, tokenexchange.KindAccessDenied, tokenexchange.KindInvalidTarget,
		tokenexchange.KindInvalidScope, tokenexchange.KindInvalidClient, tokenexchange.KindUnauthorizedClient,
		tokenexchange.KindUnauthorized, tokenexchange.KindUnavailable, tokenexchange.KindOAuthError,
		tokenexchange.KindHTTPStatus, tokenexchange.KindInvalidResponse, tokenexchange.KindRotationNotPersisted,
		tokenexchange.KindCanceled, tokenexchange.KindTimeout, tokenexchange.KindTransport, tokenexchange.KindUnknown,
	}
	doc, err := os.ReadFile("doc.go")
	require.NoError(t, err)
	snake := regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)
	seen := map[tokenexchange.Kind]bool{tokenexchange.KindNone: true}
	for _, k := range kinds {
		assert.Regexp(t, snake, string(k))
		assert.False(t, seen[k], "kind %q twice", k)
		seen[k] = true
		assert.Contains(t, string(doc), strconv.Quote(string(k)), "kind %q is not documented in doc.go", k)
	}
	assert.Equal(t, tokenexchange.KindNone, tokenexchange.Classify(nil))
}

// RequestedTokenType asks for another token type; the answer's
// issued_token_type must match it. The provider issues ID tokens (not
// usable as access tokens: token_type N_A) and refuses a JWT.
func TestRequestedTokenTypes(t *testing.T) {
	f := newFixture(t, oidctest.Options{}, 0)
	cfg := f.config()
	require.NoError(t, cfg.Validate())
	cfg.RequestedTokenType = tokenexchange.TokenTypeIDToken
	tok, err := cfg.Exchange(context.Background(), f.userToken())
	require.NoError(t, f.record(err))
	f.trackToken(tok)
	assert.Equal(t, tokenexchange.TokenTypeIDToken, tok.IssuedTokenType)

	cfg.RequestedTokenType = tokenexchange.TokenTypeJWT
	_, err = cfg.Exchange(context.Background(), f.userToken())
	f.record(err)
	assert.Equal(t, tokenexchange.KindInvalidRequest, tokenexchange.Classify(err))

	cfg.ExpiryMargin = -1
	assert.ErrorIs(t, cfg.Validate(), tokenexchange.ErrConfig)
}

// Revoke sends one RFC 7009 POST; without a RevocationURL it sends nothing.
func TestRevoke(t *testing.T) {
	f := newFixture(t, oidctest.Options{}, 0)
	ctx := context.Background()
	rt := f.offlineToken()
	cfg := f.config()
	assert.ErrorIs(t, cfg.Revoke(ctx, rt, tokenexchange.RevokeOptions{}), tokenexchange.ErrConfig)
	cfg.RevocationURL = f.op.RevocationURL()
	require.NoError(t, f.record(cfg.Revoke(ctx, rt, tokenexchange.RevokeOptions{TokenTypeHint: "refresh_token"})))
	assert.Zero(t, f.op.ActiveRefreshTokens(alice, agentClient))
	_, err := cfg.Refresh(ctx, rt, tokenexchange.RefreshOptions{})
	assert.Equal(t, tokenexchange.KindInvalidGrant, tokenexchange.Classify(f.record(err)))
	revs := f.op.RevocationRequests()
	require.Len(t, revs, 1)
	assert.Equal(t, []string{"token", "token_type_hint"}, revs[0].Params)
}
