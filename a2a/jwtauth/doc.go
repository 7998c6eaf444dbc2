// Package jwtauth verifies the bearer tokens of requests to an A2A agent
// (package a2a's Verifier): a JWT access token is checked against the keys
// its issuer publishes, and, as an option, an opaque token is checked by
// the issuer's token introspection endpoint (RFC 7662).
//
// New(issuer, audience) does no I/O. On first use the Verifier reads the
// issuer's OpenID discovery document ({issuer}/.well-known/openid-configuration),
// whose "issuer" must equal the configured issuer exactly, and the key set
// at its "jwks_uri". Keys are cached; a token signed with a key id the cache
// does not hold makes the Verifier fetch the key set again, at once the
// first time and then at most once per RefreshInterval, so that a rotated
// key is picked up and a flood of forged key ids costs one fetch per
// interval. The cache is also refetched when older than MaxKeyAge.
//
// A JWT is accepted only when all of these hold:
//
//   - it is signed (compact JWS) with an asymmetric algorithm: RS256,
//     RS384, RS512, PS256, PS384, PS512, ES256, ES384, ES512 or EdDSA;
//     "none" and the HMAC algorithms are refused, so a public key can
//     never be used as an HMAC secret;
//   - the signature verifies with the issuer's published key of that id
//     (an asymmetric public key whose "alg", when set, is the token's);
//   - "iss" equals the issuer, "aud" contains the audience, "sub" is set;
//   - "exp" is set and not past, "nbf" and "iat" are not in the future,
//     each with the leeway (DefaultLeeway unless WithLeeway);
//   - it grants every scope of WithRequiredScopes ("scope", space
//     separated, or "scp").
//
// With WithIntrospection, a token that is not a compact JWS is posted to the
// introspection endpoint, with the client's credentials in HTTP Basic
// authentication; "active" must be true, "sub" set, "aud" must contain the
// audience, "iss" (when present) must be the issuer, and "exp" (when
// present) not past. Without it, such a token is invalid.
//
// Every peer is reached with redirects refused, TLS verified (WithRootCAs
// adds roots), plain http only on a loopback address, and each body read
// capped at WithMaxResponseBytes. Tokens and the client secret never
// appear in an error or a log line, in any encoding.
//
// # Failure taxonomy
//
//   - a2a.ErrInvalidToken (*TokenError with the Reason): the token is
//     malformed, forged, for another issuer or audience, expired, not yet
//     valid, or inactive. The a2a server answers 401.
//   - a2a.ErrInsufficientScope (*ScopeError naming the Missing scopes): the
//     token is valid but lacks a required scope. The a2a server answers 403.
//   - ErrDiscovery: the discovery document or key set could not be used
//     (issuer mismatch, no jwks_uri, not JSON, too large, an insecure URL).
//   - *StatusError: the issuer answered a discovery, key set or
//     introspection request with a non-2xx status (Body capped and
//     redacted).
//   - any other error (transport, context): the token could not be checked;
//     the a2a server answers 503 and the client may retry.
//
// New returns a plain error naming the bad argument or option.
package jwtauth
