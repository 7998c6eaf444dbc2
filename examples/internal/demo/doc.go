// Package demo starts the embedded demo world the candor examples run when
// no real service is named: on 127.0.0.1, an OpenID provider
// (tokenexchange/oidctest, zitadel/oidc's OP) and the MCP catalog server of
// examples/internal/catalog behind a bearer check.
//
// The provider knows the demo user (User, "marie"), the agent's confidential
// client (named by the caller of Start, with a generated secret, allowed to
// exchange tokens and to redeem refresh tokens, whose tokens carry the
// catalog's audience), the catalog's bearer-only client (Audience,
// "catalog-mcp") and, with WithFrontEnd, the front end the user logged in
// at, whose tokens carry the agent as their audience.
//
// The catalog's bearer check verifies every HTTP request's token at the
// provider for Audience (signature, issuer, expiry, not revoked, aud): a
// token issued for anything but the catalog, the user's own front-end token
// included, is answered 401. Verified counts what the check accepted and
// refused; WithCallLog also keeps each request's token and claims (Calls),
// so a test can prove which token reached the catalog.
//
// What the examples do with the world differs and stays theirs: the
// availability agent exchanges UserToken's token per question; the reorder
// agent stores OfflineToken's refresh token as the user's mandate and
// redeems it with AgentConfig. Neither the agent secret nor a token ever
// appears in a World's or a Call's String, GoString or slog forms.
//
// Main is the examples' process plumbing: a context ended by SIGINT or
// SIGTERM, and a default slog logger (the one zitadel's OP logs through)
// that keeps warnings and errors only.
//
// # Failure taxonomy
//
//   - Start fails when a port cannot be opened on loopback or the provider
//     refuses the registration ("starting the embedded OpenID provider",
//     "configuring the embedded OpenID provider"), or when the catalog
//     cannot be built; nothing started is left running.
//   - UserToken returns ErrNoFrontEnd without WithFrontEnd; UserToken and
//     OfflineToken otherwise wrap the provider's error.
//   - A refused bearer check is the catalog's 401; its cause is kept in
//     Call.Err (an oidctest.ErrTokenRejected) when WithCallLog is on.
package demo
