package oidctest

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/zitadel/oidc/v3/pkg/oidc"
)

// New starts a provider for a test, like httptest.NewServer: it fails tb
// at once if the provider cannot start, and closes it when the test ends.
func New(tb testing.TB, opts Options) *Provider {
	tb.Helper()
	p, err := Start(opts)
	if err != nil {
		tb.Fatalf("oidctest: %v", err)
	}
	tb.Cleanup(p.Close)
	return p
}

// Tokens are what a user gets by logging in at a client.
type Tokens struct {
	// AccessToken is a signed JWT: sub the user, azp the client, aud the
	// client's Audiences.
	AccessToken string
	// RefreshToken is the offline refresh token, when offline_access was
	// among the scopes and the client is confidential; "" otherwise.
	RefreshToken string
}

// Login logs userID in at clientID without a browser, as if the user had
// just authenticated there, and returns the tokens the client would hold.
// With "offline_access" among scopes the client also gets an offline
// refresh token (the mandate an unattended agent redeems later). Nothing
// reaches the token endpoint and nothing is counted.
func (p *Provider) Login(ctx context.Context, userID, clientID string, scopes ...string) (Tokens, error) {
	at, err := p.UserAccessToken(ctx, userID, clientID, scopes...)
	if err != nil {
		return Tokens{}, err
	}
	t := Tokens{AccessToken: at}
	if slices.Contains(scopes, oidc.ScopeOfflineAccess) {
		if t.RefreshToken, err = p.OfflineToken(ctx, userID, clientID, scopes...); err != nil {
			return Tokens{}, fmt.Errorf("oidctest: login of %q at %q: %w", userID, clientID, err)
		}
	}
	return t, nil
}
