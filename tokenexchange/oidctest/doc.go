// Package oidctest runs a real OpenID provider in process, on 127.0.0.1, in
// the style of net/http/httptest: for the tests of code that uses
// tokenexchange (New(t, opts) starts one and closes it when the test
// ends), and for programs that embed a demo provider (Start). It is
// zitadel/oidc's op package (v3) with its own in-memory storage, made as
// strict as Keycloak's standard token exchange (v2) where Keycloak is
// stricter than zitadel:
//
//   - the client calling the token-exchange grant must hold the subject token
//     (azp) or be in its aud, else 403 access_denied "Client is not within
//     the token audience";
//   - only access tokens are accepted as subject_token_type; resource and
//     actor_token are refused with invalid_request;
//   - the audience parameter filters the audiences the requesting client's
//     own mappers produce and never adds one: "Requested audience not
//     available: X" (400 invalid_request);
//   - scope may only add the client's optional scopes ("Invalid scopes: X",
//     invalid_scope);
//   - requested_token_type defaults to an access token; a refresh token is
//     not issued by an exchange;
//   - issued access tokens carry azp (the client they were issued to) and
//     scope, next to zitadel's client_id;
//   - a failed client authentication answers 401 invalid_client;
//   - the refresh_token grant rotates the refresh token and refuses the old
//     one afterwards (invalid_grant "Stale token"), refuses a refresh token
//     presented by another client, and keeps Keycloak's error descriptions.
//
// Differences that remain (a test passing here may still fail on Keycloak or
// the other way round): tokens always carry sub (Keycloak 25+ omits it when
// the client lacks the basic scope); refresh tokens are opaque strings, not
// JWTs; there are no user sessions, session_state or sid; an exchange answer
// carries no refresh_expires_in or not-before-policy; an audience naming an
// unknown client is refused (Keycloak drops it silently); a malformed
// subject token is answered with zitadel's invalid_request "subject_token is
// invalid"; error descriptions other than the ones above are zitadel's.
//
// Beyond Keycloak's exchange, two grants are opt-in per client: the
// client_credentials grant (Client.ClientCredentials: a service account
// token, sub "service-account-" + the client ID), and the authorization
// code grant (Client.RedirectURIs; PKCE S256 required of a public client,
// code_challenge_methods_supported lists S256). The authorization endpoint
// sends the user agent to a minimal login page; ApproveAuthorization plays
// a user's browser there over HTTP (DenyAuthorization a user who refuses)
// and returns the redirect the client receives. For these grants and the
// refresh_token grant, RFC 8707 resource parameters narrow the token's aud
// to exactly those resources, each of which must be one of the client's
// Audiences (else invalid_target); the token exchange still refuses
// resource, as Keycloak does.
//
// Login (or UserAccessToken and OfflineToken) issues a user's tokens
// without any browser step, and Provider counts and records (without
// values) every request that reaches the token endpoint so tests can prove
// how many POSTs a client sent, or that none was sent at all. It also keeps
// a digest of every refresh token presented to the refresh_token grant:
// RefreshTokenReuses counts presentations of a token presented before (0
// proves that clients sharing a rotating mandate never raced on it), and
// RefreshGrants counts them all. HoldRefreshes runs a hook before the
// provider acts on each refresh: it can keep the request in flight (a
// slow provider, a client killed mid-request) and drop it unprocessed.
// RotateKey replaces the signing key, keeping the old public key in the
// JWKS; a Client with OpaqueAccessTokens gets opaque (encrypted, non-JWT)
// access tokens, which the introspection endpoint and VerifyAccessToken
// accept. The RFC 7009 revocation
// endpoint (RevocationURL) revokes a client's refresh tokens; its requests
// are recorded apart (RevocationRequests) and ActiveRefreshTokens shows the
// result from the provider's side. EditRefreshAnswers injects a fault seen
// on real providers: a refresh answer the client must refuse (for example
// without token_type) after the provider rotated the refresh token.
// Each recorded request (Requests, RevocationRequests) keeps the
// traceparent header it carried, so a test can check that a trace reached
// the provider.
//
// All state belongs to one Provider; parallel tests each start their own.
//
// # Failure taxonomy
//
//   - Start returns an error when the provider cannot listen or be built;
//     New fails the test instead.
//   - AddClient and AddUser refuse an empty ID and a client that is its own
//     audience; UserAccessToken, OfflineToken and Login refuse an unknown
//     user or client, a scope the client does not allow, and (offline) a
//     client without a secret.
//   - VerifyAccessToken returns an error matching ErrTokenRejected for a
//     token that is not a currently valid access token of this provider for
//     the audience.
//   - RotateKey returns an error only when a key cannot be generated.
//   - A refresh that HoldRefreshes drops is answered 503
//     temporarily_unavailable.
//   - ApproveAuthorization and DenyAuthorization return an error for a URL
//     that is not this provider's, an unknown user, or a page the provider
//     answers with neither a redirect nor its login form; a request the
//     provider refuses comes back as the client's redirect URI with error.
//   - At the token endpoint the provider answers as Keycloak would (see the
//     rules above); those answers are what the client under test sees.
package oidctest
