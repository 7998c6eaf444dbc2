package jwtauth

import (
	"errors"
	"net/http"
	"strings"

	"github.com/candorkit/candor/a2a"
	"github.com/candorkit/candor/internal/httpx"
)

// ErrDiscovery reports an issuer whose discovery document or key set cannot
// be used.
var ErrDiscovery = errors.New("jwtauth: unusable discovery document or key set")

// TokenError reports a token that is not acceptable; errors.Is(err,
// a2a.ErrInvalidToken) is true. Reason says why, without the token.
type TokenError struct {
	Reason string
}

func (e *TokenError) Error() string { return "jwtauth: invalid token: " + e.Reason }

// Is matches a2a.ErrInvalidToken.
func (e *TokenError) Is(target error) bool { return target == a2a.ErrInvalidToken }

// ScopeError reports a valid token that lacks required scopes; errors.Is(err,
// a2a.ErrInsufficientScope) is true.
type ScopeError struct {
	// Missing are the required scopes the token does not grant.
	Missing []string
}

func (e *ScopeError) Error() string {
	return "jwtauth: the token lacks the required scope(s) " + strings.Join(e.Missing, " ")
}

// Is matches a2a.ErrInsufficientScope.
func (e *ScopeError) Is(target error) bool { return target == a2a.ErrInsufficientScope }

// StatusError reports a non-2xx answer from the issuer. Body is capped at
// the response limit and redacted of the token and client secret.
type StatusError struct {
	// Op is "discovery", "jwks" or "introspection".
	Op         string
	StatusCode int
	Header     http.Header
	Body       []byte
}

func (e *StatusError) Error() string {
	return httpx.StatusText("jwtauth: "+e.Op, e.StatusCode, e.Body)
}

func invalid(reason string) error { return &TokenError{Reason: reason} }
