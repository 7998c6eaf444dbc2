// Package oidctest runs a real OpenID provider in process, on 127.0.0.1, for
// tests and for the examples' embedded demo. It is zitadel/oidc's op package
// (v3) with its own in-memory storage, made as strict as Keycloak's standard
// token exchange (v2) where Keycloak is stricter than zitadel:
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
// There is no browser login: UserAccessToken and OfflineToken issue a user's
// tokens directly, and Provider counts and records (without values) every
// request that reaches the token endpoint so tests can prove how many POSTs
// a client sent, or that none was sent at all. The RFC 7009 revocation
// endpoint (RevocationURL) revokes a client's refresh tokens; its requests
// are recorded apart (RevocationRequests) and ActiveRefreshTokens shows the
// result from the provider's side.
//
// All state belongs to one Provider; parallel tests each start their own.
package oidctest
