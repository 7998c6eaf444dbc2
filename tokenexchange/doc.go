// Package tokenexchange lets an agent act for a person, and only then.
//
// (*Config).Exchange trades the person's access token for one scoped to a
// tool server with the OAuth 2.0 token exchange grant (RFC 8693), in exactly
// one POST carrying exactly the RFC 8693 parameters, the client
// authenticated with client_secret_basic (or, explicitly,
// client_secret_post; there is no auto-detection and no retry). The issued
// token keeps the person as sub and names the agent as azp. Cache and
// (*Config).TokenSource keep the result until shortly before it expires and
// let concurrent callers for the same subject token share one in-flight
// exchange; a TokenSource hit costs what oauth2.ReuseTokenSource's does and
// allocates nothing (the Config is validated once, when the source is
// made).
//
// (*Config).Refresh redeems a refresh token (RFC 6749 §6) and hands a
// rotated refresh token to RefreshOptions.Rotated before it judges the rest
// of the answer, since the provider no longer accepts the old one;
// (*Config).Revoke revokes a token at the provider (RFC 7009). The
// unattended flow built on them, a store of sealed offline refresh tokens,
// is the sub-package tokenexchange/mandate, so that importing this package
// compiles nothing beyond the standard library, golang.org/x/oauth2 and the
// OpenTelemetry API (never its SDK).
//
// Config is a plain struct a program fills from its own configuration, as
// in golang.org/x/oauth2. The package logs only through Config.Logger; nil
// logs nothing.
//
// The package speaks to Keycloak's standard token exchange (v2) and to any
// RFC 8693 server. Keycloak accepts only access tokens as subject tokens, so
// a refresh token is redeemed in two steps (refresh, then exchange); its
// audience parameter filters the audiences the client's scopes produce and
// never adds one.
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
// A nil error always comes with a Token holding a non-empty access token.
// Every failure is typed, and Classify(err) names its Kind (a stable
// snake_case string, also a telemetry label):
//
//   - ErrConfig ("config"), ErrNoSubjectToken ("no_subject_token"):
//     refused locally, nothing was sent. Fix the configuration or the
//     caller.
//   - *StatusError{Op, StatusCode, Header, Body, ErrorCode,
//     ErrorDescription, ErrorURI}: the token or revocation endpoint
//     answered with an OAuth error or a non-2xx status. It wraps an
//     *oauth2.RetrieveError with the same fields (errors.As works). Its
//     Kind, one of those listed next, comes from the error code as received,
//     never from redacted text.
//   - "invalid_request": bad parameters or subject token (also
//     invalid_token; Keycloak's "Requested audience not available"). The
//     person's token does not entitle the agent: no identity, no action.
//   - "invalid_grant": the refresh token is refused (expired, revoked,
//     rotated away). The mandate is dead until the person grants it again.
//   - "access_denied": the client may not exchange this token (403;
//     Keycloak: the client is not in the token's aud).
//   - "invalid_target", "invalid_scope": the audience, resource or scope
//     is refused.
//   - "invalid_client" (401, bad client credentials), "unauthorized_client"
//     (the client may not use this grant): the agent's own configuration
//     at the provider is wrong.
//   - "unavailable": server_error, temporarily_unavailable, 5xx or 429;
//     worth a later retry. For Refresh it does not tell whether the
//     provider rotated the token.
//   - "unauthorized": 401 or 403 without an OAuth error code.
//   - "oauth_error": another OAuth error code (ErrorCode says which).
//   - "http_status": any other non-2xx answer, such as a redirect (never
//     followed: it would re-send the subject token) or a 404.
//   - *ResponseError ("invalid_response", errors.Is ErrInvalidResponse): a
//     2xx answer that is not a usable token response: not a single JSON
//     object, larger than MaxResponseBytes (1 MiB, the exact cap on every
//     body read), missing access_token, token_type or issued_token_type,
//     an issued_token_type other than the requested one, a non-Bearer
//     access token.
//   - ErrRotationNotPersisted ("rotation_not_persisted"): Refresh got a new
//     refresh token and RefreshOptions.Rotated failed to keep it; no token
//     is returned, and the error wraps Rotated's.
//   - transport failures: "canceled" (the context was cancelled),
//     "timeout" (a deadline or a client timeout), "transport" (no answer:
//     connection refused, TLS failure, a body cut short). Their text holds
//     no URL and no secret; errors.Is and errors.As reach the cause.
//   - "unknown": an error this package did not produce; "" for nil.
//
// # Telemetry
//
// Config.TracerProvider and Config.MeterProvider (nil: the global
// providers, no-ops unless the program installed an SDK) trace and time
// each request to the provider. With neither given nor installed, nothing
// is built or recorded. A Cache or TokenSource hit sends nothing and
// records nothing; an invalid Config ("config") is refused before any
// span starts.
//
// Spans (kind client; scope github.com/candorkit/candor/tokenexchange),
// one per POST, with its traceparent (and tracestate) header sent to the
// provider:
//
//	tokenexchange exchange   Exchange, a Cache or TokenSource miss
//	tokenexchange refresh    Refresh
//	tokenexchange revoke     Revoke
//
// Attributes: tokenexchange.operation (exchange, refresh, revoke);
// oauth2.grant_type (GrantTypeTokenExchange or refresh_token; none for a
// revocation); oauth2.client_id; for an exchange oauth2.audience (the
// configured values), oauth2.scope and oauth2.requested_token_type;
// server.address and server.port of the endpoint; http.response.status_code
// once answered; tokenexchange.outcome ("success" or "failure"); on
// failure error.type, the Classify kind, and status Error described by
// that kind (never the error text, never an exception event). No
// attribute holds a token, the client secret or a response body.
//
// Metric: tokenexchange.client.operation.duration (histogram, seconds),
// one point per span, with tokenexchange.operation, oauth2.grant_type,
// server.address, server.port, tokenexchange.outcome and error.type.
//
// # Secrets
//
// Nothing in this package logs or formats a token or a secret. Token,
// Config, Cache and the TokenSource print and log without them (Token and
// Config hold x/oauth2-style plain strings, so they keep their own printing
// methods); *StatusError and *ResponseError print only their Error text
// for every verb and log their status and OAuth fields. No error text,
// kept body or header holds a secret that was sent (subject token, refresh
// token, client secret) in any encoding (form-encoded, JSON-escaped,
// base64, the Basic pair), and token values in a body are replaced by
// [REDACTED]. The token and revocation URLs must be https except on
// loopback, and redirects are never followed.
package tokenexchange
