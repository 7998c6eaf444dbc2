// Package tokenexchange lets an agent act for a person, and only then.
//
// Interactive flow: (*Config).Exchange trades the person's access token for
// one scoped to a tool server with the OAuth 2.0 token exchange grant
// (RFC 8693), in exactly one POST carrying exactly the RFC 8693 parameters,
// the client authenticated with client_secret_basic (or, explicitly,
// client_secret_post; there is no auto-detection and no retry). The issued
// token keeps the person as sub and names the agent as azp. Cache and
// (*Config).TokenSource keep the result until shortly before it expires and
// let concurrent callers for the same subject token share one in-flight
// exchange.
//
// Unattended flow: a MandateStore holds, per (user, agent), the refresh
// token the person granted beforehand, sealed with AES-256-GCM (random
// nonce, the row key as additional data) under a key the caller supplies and
// the store never writes down. (*MandateStore).Token refreshes it at the
// agent's client, persists a rotated refresh token before going further, and
// exchanges the new access token for the agent's audience (a rotated token
// is written even if the caller's context ends meanwhile, since the
// provider no longer accepts the old one). With no mandate, the agent does
// nothing: that is decided before any network request. (*MandateStore).Revoke
// erases the mandate and, when the agent's Config has a RevocationURL, then
// revokes the refresh token at the provider (RFC 7009).
//
// The package speaks to Keycloak's standard token exchange (v2) and to any
// RFC 8693 server. Keycloak accepts only access tokens as subject tokens, so
// a stored refresh token is redeemed in two steps (refresh, then exchange);
// its audience parameter filters the audiences the client's scopes produce
// and never adds one.
//
// # Audit claims
//
// Token.Subject, AuthorizedParty, Audience, Scopes and Issuer are read from
// the issued JWT without verifying its signature. They are audit
// information (what the provider says it issued), never an authorization
// decision: the resource server verifies the token.
//
// # Failure taxonomy
//
// A nil error always comes with a Token holding a non-empty access token;
// every failure is typed:
//
//   - ErrConfig, ErrNoSubjectToken: refused locally, nothing was sent.
//   - *Error: the token (or revocation) endpoint answered with an OAuth
//     error or a non-2xx status. It wraps *oauth2.RetrieveError (errors.As works) keeping
//     error, error_description, error_uri and the body. Typical codes:
//     invalid_request (bad parameters or subject token; Keycloak's
//     "Requested audience not available"), invalid_client (401, bad client
//     credentials), invalid_scope, access_denied (403, the client is not in
//     the subject token's audience), invalid_grant (refresh token refused).
//   - *ResponseError (errors.Is ErrInvalidResponse): a 2xx answer that is
//     not a usable token response: not a single JSON object, larger than
//     MaxResponseBytes (1 MiB, the bound on every body read), missing
//     access_token, token_type or issued_token_type, an issued_token_type
//     other than the requested one, a non-Bearer access token.
//   - transport errors (network, context) are returned wrapped, scrubbed.
//   - *MandateError from MandateStore, with Kind one of ErrNoMandate,
//     ErrMandateRevoked, ErrMandateUnreadable (wrong key, tampered or moved
//     row), ErrUnknownAgent — all returned before any network request — or
//     ErrMandateRejected (the provider answered invalid_grant) or
//     ErrRotationNotPersisted (a rotated refresh token could not be stored;
//     no token is returned). errors.Is(err, ErrNoMandate) is true for every
//     kind that means "no authority": no mandate, revoked, unreadable,
//     rejected. Revoke returns ErrProviderNotRevoked when the mandate is
//     revoked in the store but the provider did not confirm revoking the
//     refresh token.
//
// # Secrets
//
// Nothing in this package logs or formats a token or a secret. Token,
// Config, Cache, MandateOptions, MandateStore and the TokenSource implement
// String, GoString, Format and LogValue without them; *Error and
// *ResponseError print only their Error text for every verb and log their
// status and OAuth fields; no error text holds a token: error descriptions
// and kept bodies have every secret that was sent (subject token, refresh
// token, client secret) and every token value in the body replaced by
// [REDACTED]. The token and revocation URLs must be https except on
// loopback, and redirects are never followed (they would re-send the
// subject token).
package tokenexchange
