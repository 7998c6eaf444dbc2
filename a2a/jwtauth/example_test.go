package jwtauth_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/candorkit/candor/a2a"
	"github.com/candorkit/candor/a2a/jwtauth"
	"github.com/candorkit/candor/tokenexchange/oidctest"
)

// Example verifies a user's access token from an OpenID provider, the way
// an A2A agent checks the bearer of each request.
func Example() {
	ctx := context.Background()
	op, err := oidctest.Start(oidctest.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer op.Close()
	err = errors.Join(
		op.AddUser(oidctest.User{ID: "alice"}),
		op.AddClient(oidctest.Client{ID: "webapp", Secret: "webapp-secret", Audiences: []string{"agent"}, DefaultScopes: []string{"profile"}}),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	token, err := op.UserAccessToken(ctx, "alice", "webapp")
	if err != nil {
		fmt.Println(err)
		return
	}

	v, err := jwtauth.New(op.Issuer(), "agent", jwtauth.WithRequiredScopes("profile"))
	if err != nil {
		fmt.Println(err)
		return
	}
	var _ a2a.Verifier = v // what a2a.NewServer takes
	caller, err := v.Verify(ctx, token)
	fmt.Println(caller.Subject, caller.Scopes, err)

	_, err = v.Verify(ctx, token[:len(token)-4]+"AAAA")
	fmt.Println(errors.Is(err, a2a.ErrInvalidToken))
	// Output:
	// alice [profile] <nil>
	// true
}
