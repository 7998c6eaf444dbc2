package mcpclient

import (
	"context"
	"fmt"
	"net/http"

	"golang.org/x/oauth2"

	"github.com/candorkit/candor/internal/httpx"
)

// MaxAuthorizeRetries is how many times one request is sent again after
// its Authorizer answered a 401 or 403: a server that keeps refusing a
// request whose token was just renewed is not asked forever.
const MaxAuthorizeRetries = 2

// An Authorizer supplies the bearer token of a Client's requests and
// answers the server's authorization challenges (WithAuthorizer). It must
// be safe for concurrent use. mcpauth.Authorizer implements the MCP
// authorization flows.
type Authorizer interface {
	// Token returns the token for a request to the MCP server at endpoint,
	// or nil (and no error) to send the request without one, for example
	// before the first challenge told where tokens come from. An error
	// stops the request before it is sent (ErrNoToken).
	Token(ctx context.Context, endpoint string) (*oauth2.Token, error)
	// Authorize answers a 401 or 403. It returns nil once a token that may
	// satisfy the server is ready (the request is then sent again, with
	// what Token returns next), or an error saying why none can be had.
	Authorize(ctx context.Context, ch Challenge) error
}

// Challenge is a server's refusal of a request for want of authorization.
type Challenge struct {
	// Endpoint is the MCP endpoint the Client was dialled with.
	Endpoint string
	// StatusCode is 401 (no token, or one the server rejects) or 403 (a
	// token without the scope the request needs).
	StatusCode int
	// Header is the answer's header; WWW-Authenticate carries the challenge
	// (RFC 6750: error, scope, resource_metadata).
	Header http.Header
	// Token is the token the refused request carried, nil if none.
	Token *oauth2.Token
}

// AuthorizationError is a request refused with 401 or 403 whose Authorizer
// could not obtain a token that might satisfy the server; the request was
// not sent again. StatusCode, Header and Body are the refusal as received
// (Body at most 64 KiB); Err is the Authorizer's error.
type AuthorizationError struct {
	StatusCode int
	Header     http.Header
	Body       []byte
	Err        error
}

func (e *AuthorizationError) Error() string {
	return fmt.Sprintf("%s; authorization failed: %v", httpx.StatusText("mcpclient", e.StatusCode, e.Body), e.Err)
}

// Is matches ErrUnauthorized for a 401.
func (e *AuthorizationError) Is(target error) bool {
	return target == ErrUnauthorized && e.StatusCode == http.StatusUnauthorized
}

// Unwrap returns the Authorizer's error.
func (e *AuthorizationError) Unwrap() error { return e.Err }

// challenged reports whether status is one an Authorizer answers.
func challenged(status int) bool {
	return status == http.StatusUnauthorized || status == http.StatusForbidden
}
