package mcpauth

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"golang.org/x/oauth2"

	"github.com/candorkit/candor/internal/httpx"
	"github.com/candorkit/candor/internal/secret"
)

// Errors an Authorizer returns, matched with errors.Is.
var (
	// ErrConfig: New was given options that cannot work together; nothing
	// was sent.
	ErrConfig = errors.New("mcpauth: configuration")
	// ErrInsecure: a metadata document or the caller named an endpoint
	// that is neither https nor http on a loopback host; it was not used.
	ErrInsecure = errors.New("mcpauth: insecure endpoint")
	// ErrMetadata: a metadata document is missing, malformed or does not
	// describe the server that named it (*MetadataError).
	ErrMetadata = errors.New("mcpauth: metadata")
	// ErrNoMetadata: the authorization server named by the protected
	// resource metadata publishes no metadata at any location.
	ErrNoMetadata = errors.New("mcpauth: no authorization server metadata")
	// ErrResourceMismatch: the protected resource metadata names another
	// resource than the MCP server; no authorization was attempted.
	ErrResourceMismatch = errors.New("mcpauth: protected resource metadata is for another resource")
	// ErrNoClient: there is no way to identify this client to the
	// authorization server (no pre-registered client, no client ID
	// metadata document it accepts, no dynamic registration).
	ErrNoClient = errors.New("mcpauth: no client identity for this authorization server")
	// ErrUnsupported: the authorization server does not offer what the
	// flow needs (PKCE with S256, the grant type, an authentication method
	// for the client's credentials).
	ErrUnsupported = errors.New("mcpauth: not supported by the authorization server")
	// ErrInsufficientScope: the server refused a token for want of scope
	// and stepping up cannot help (the token already holds every scope it
	// asks for, the authorization server granted less than asked, or the
	// refusal names no scope).
	ErrInsufficientScope = errors.New("mcpauth: insufficient scope")
	// ErrDenied: the authorization request came back with an error (the
	// user or the server refused), or its callback is not this request's.
	ErrDenied = errors.New("mcpauth: authorization denied")
	// ErrToken: the token endpoint answered 2xx with something that is not
	// a usable bearer token (*TokenResponseError).
	ErrToken = errors.New("mcpauth: unusable token response")
)

// Kind names the class of a failure (Classify); the values are stable
// snake_case strings.
type Kind string

// The kinds Classify returns.
const (
	KindNone              Kind = ""
	KindConfig            Kind = "config"             // ErrConfig
	KindInsecure          Kind = "insecure"           // ErrInsecure
	KindResourceMismatch  Kind = "resource_mismatch"  // ErrResourceMismatch
	KindMetadata          Kind = "metadata"           // ErrMetadata, ErrNoMetadata
	KindNoClient          Kind = "no_client"          // ErrNoClient
	KindUnsupported       Kind = "unsupported"        // ErrUnsupported
	KindInsufficientScope Kind = "insufficient_scope" // ErrInsufficientScope
	KindDenied            Kind = "denied"             // ErrDenied
	KindRejected          Kind = "rejected"           // *StatusError: the authorization server refused a request
	KindToken             Kind = "token"              // ErrToken
	KindTransport         Kind = "transport"          // anything else
)

// Classify returns the Kind of an error returned by this package.
func Classify(err error) Kind {
	switch {
	case err == nil:
		return KindNone
	case errors.Is(err, ErrConfig):
		return KindConfig
	case errors.Is(err, ErrInsecure):
		return KindInsecure
	case errors.Is(err, ErrResourceMismatch):
		return KindResourceMismatch
	case errors.Is(err, ErrMetadata), errors.Is(err, ErrNoMetadata):
		return KindMetadata
	case errors.Is(err, ErrNoClient):
		return KindNoClient
	case errors.Is(err, ErrUnsupported):
		return KindUnsupported
	case errors.Is(err, ErrInsufficientScope):
		return KindInsufficientScope
	case errors.Is(err, ErrDenied):
		return KindDenied
	case errors.Is(err, ErrToken):
		return KindToken
	}
	if _, ok := errors.AsType[*StatusError](err); ok {
		return KindRejected
	}
	return KindTransport
}

// MetadataError is a metadata document that cannot be used. Body is the
// document as read (at most WithMaxResponseBytes), when there was one.
type MetadataError struct {
	URL    string
	Body   []byte
	Reason string
	err    error // a sentinel it also matches
}

func (e *MetadataError) Error() string {
	return fmt.Sprintf("mcpauth: metadata %s: %s", e.URL, e.Reason)
}

// Is matches ErrMetadata, and ErrResourceMismatch or ErrNoMetadata when
// that is the reason.
func (e *MetadataError) Is(target error) bool {
	return target == ErrMetadata || (e.err != nil && target == e.err)
}

// StatusError is a non-2xx answer of an authorization server (token,
// registration) or a metadata host's 5xx. Header and Body are as received
// (Body at most WithMaxResponseBytes), with every secret and token of the
// request blanked out; ErrorCode and ErrorDescription are the OAuth error
// members of a JSON body, if any.
type StatusError struct {
	Op               string // "token", "registration", "metadata"
	StatusCode       int
	Header           http.Header
	Body             []byte
	ErrorCode        string
	ErrorDescription string
}

func (e *StatusError) Error() string {
	if e.ErrorCode != "" {
		msg := fmt.Sprintf("mcpauth: %s: HTTP %d: %s", e.Op, e.StatusCode, e.ErrorCode)
		if e.ErrorDescription != "" {
			msg += ": " + httpx.Excerpt([]byte(e.ErrorDescription), 200)
		}
		return msg
	}
	return httpx.StatusText("mcpauth: "+e.Op, e.StatusCode, e.Body)
}

// RetrieveError returns the answer as golang.org/x/oauth2 reports a failed
// token request, for code written against that type.
func (e *StatusError) RetrieveError() *oauth2.RetrieveError {
	return &oauth2.RetrieveError{
		Response:         &http.Response{StatusCode: e.StatusCode, Status: http.StatusText(e.StatusCode), Header: e.Header, Body: http.NoBody},
		Body:             e.Body,
		ErrorCode:        e.ErrorCode,
		ErrorDescription: e.ErrorDescription,
	}
}

func newStatusError(op string, resp *http.Response, body []byte, secrets []string) *StatusError {
	e := &StatusError{Op: op, StatusCode: resp.StatusCode, Body: secret.RedactBytes(body, secrets...)}
	e.Header = make(http.Header, len(resp.Header))
	for k, vs := range resp.Header {
		for _, v := range vs {
			e.Header.Add(k, secret.Redact(v, secrets...))
		}
	}
	var oe struct {
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	if strictJSON(e.Body, &oe) == nil {
		e.ErrorCode, e.ErrorDescription = oe.Error, oe.Description
	}
	return e
}

// TokenResponseError is a 2xx answer of the token endpoint that is not a
// usable bearer token. Body is the answer with the tokens in it blanked.
type TokenResponseError struct {
	Body   []byte
	Reason string
}

func (e *TokenResponseError) Error() string { return "mcpauth: token response: " + e.Reason }

// Is matches ErrToken.
func (e *TokenResponseError) Is(target error) bool { return target == ErrToken }

// TransportError is a request that got no HTTP answer; it never carries a
// URL's query or a secret.
type TransportError struct {
	Op  string
	Err error
}

func (e *TransportError) Error() string { return "mcpauth: " + e.Op + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *TransportError) Unwrap() error { return e.Err }

// DeniedError is an authorization request that came back with an error
// (RFC 6749 §4.1.2.1), or a callback that is not the request's.
type DeniedError struct {
	ErrorCode        string
	ErrorDescription string
	Reason           string
}

func (e *DeniedError) Error() string {
	var b strings.Builder
	b.WriteString("mcpauth: authorization denied")
	if e.ErrorCode != "" {
		b.WriteString(": " + httpx.Excerpt([]byte(e.ErrorCode), 64))
	}
	if e.ErrorDescription != "" {
		b.WriteString(": " + httpx.Excerpt([]byte(e.ErrorDescription), 200))
	}
	if e.Reason != "" {
		b.WriteString(": " + e.Reason)
	}
	return b.String()
}

// Is matches ErrDenied.
func (e *DeniedError) Is(target error) bool { return target == ErrDenied }

// ScopeError is a refusal for want of scope that stepping up cannot
// answer. Required is what the server asked for, Granted what the token
// holds.
type ScopeError struct {
	Required, Granted []string
	Reason            string
}

func (e *ScopeError) Error() string {
	return fmt.Sprintf("mcpauth: insufficient scope: %s (required %q, granted %q)", e.Reason, strings.Join(e.Required, " "), strings.Join(e.Granted, " "))
}

// Is matches ErrInsufficientScope.
func (e *ScopeError) Is(target error) bool { return target == ErrInsufficientScope }
