package a2a

import (
	"context"
	"errors"
	"time"
)

// Caller is the identity a Verifier established for one request.
type Caller struct {
	// Subject is the token's subject ("sub"); never empty for a verified
	// caller. With Issuer it owns the tasks the caller creates.
	Subject string
	// Issuer is the token's issuer ("iss").
	Issuer string
	// Audience is the token's audience ("aud").
	Audience []string
	// Scopes are the token's scopes ("scope", split on spaces).
	Scopes []string
	// Expiry is when the token expires ("exp"); zero when it has none.
	Expiry time.Time
}

// Verifier checks a bearer token before the Server does anything for the
// request. Verify returns the token's Caller, or an error matching
// ErrInvalidToken (the token is malformed, forged, expired, for another
// audience...) or ErrInsufficientScope (the token is valid but lacks a
// scope the agent requires). Any other error means the token could not be
// checked (the issuer's keys could not be fetched, say): the request is
// refused with HTTP 503 and may be retried.
//
// Verify must be safe for concurrent use and respect ctx. Package
// github.com/candorkit/candor/a2a/jwtauth verifies JWTs against an OpenID
// provider's published keys.
type Verifier interface {
	Verify(ctx context.Context, token string) (Caller, error)
}

// Sentinels a Verifier wraps.
var (
	// ErrInvalidToken: the bearer token is not acceptable. The Server answers
	// HTTP 401 with WWW-Authenticate: Bearer error="invalid_token".
	ErrInvalidToken = errors.New("a2a: invalid bearer token")
	// ErrInsufficientScope: the token is valid but does not grant what the
	// agent requires. The Server answers HTTP 403 with WWW-Authenticate:
	// Bearer error="insufficient_scope".
	ErrInsufficientScope = errors.New("a2a: the bearer token lacks a required scope")
)

// VerifierFunc adapts a function to Verifier.
type VerifierFunc func(ctx context.Context, token string) (Caller, error)

// Verify calls f.
func (f VerifierFunc) Verify(ctx context.Context, token string) (Caller, error) { return f(ctx, token) }
