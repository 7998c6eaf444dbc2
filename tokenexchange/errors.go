package tokenexchange

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"golang.org/x/oauth2"

	"github.com/candorkit/candor/internal/httpx"
)

// Sentinel errors. Match them with errors.Is.
var (
	// ErrConfig reports a Config that cannot be used (missing TokenURL or
	// client credentials, an unknown AuthStyle, a plain-http endpoint that
	// is not loopback). Nothing was sent.
	ErrConfig = errors.New("tokenexchange: invalid config")
	// ErrNoSubjectToken reports an empty subject token (or an empty refresh
	// token or token to revoke). Nothing was sent.
	ErrNoSubjectToken = errors.New("tokenexchange: no subject token")
	// ErrInvalidResponse reports a success status whose body is not a usable
	// token response: not JSON, too large, or missing access_token,
	// issued_token_type or token_type. See *ResponseError.
	ErrInvalidResponse = errors.New("tokenexchange: invalid token response")
	// ErrRotationNotPersisted reports a Refresh whose answer carried a new
	// refresh token that RefreshOptions.Rotated could not keep. No token is
	// returned; the error wraps the one Rotated returned.
	ErrRotationNotPersisted = errors.New("tokenexchange: rotated refresh token not persisted")
)

// StatusError is an OAuth error answer from the token or revocation
// endpoint (RFC 6749 §5.2), or any non-2xx answer. It keeps the evidence:
// the status, the response header and the body (at most MaxResponseBytes),
// with every secret that was sent (subject token, refresh token, client
// secret, in every encoding) and every token value in the body replaced by
// [REDACTED].
//
// It wraps an *oauth2.RetrieveError holding the same (redacted) fields, so
// code written for golang.org/x/oauth2 keeps working with errors.As.
// Classify reads the OAuth error code as it was received, before any
// redaction.
type StatusError struct {
	// Op is "exchange", "refresh" or "revoke".
	Op string
	// StatusCode is the HTTP status of the answer (200 for an OAuth error
	// in a success answer).
	StatusCode int
	// Header is the response header, with secrets redacted.
	Header http.Header
	// Body is the response body, capped and redacted.
	Body []byte
	// ErrorCode, ErrorDescription and ErrorURI are the OAuth error, error_description
	// and error_uri members, when the body has them (redacted).
	ErrorCode        string
	ErrorDescription string
	ErrorURI         string

	rawCode  string // the error member as received, for Classify
	retrieve *oauth2.RetrieveError
}

func (e *StatusError) Error() string {
	detail := e.Body
	if e.ErrorCode != "" {
		d := e.ErrorCode
		if e.ErrorDescription != "" {
			d += " (" + e.ErrorDescription + ")"
		}
		detail = []byte(d)
	}
	return httpx.StatusText("tokenexchange: "+e.Op, e.StatusCode, detail)
}

// Unwrap returns the *oauth2.RetrieveError. Its Response has no Request,
// so it holds no credential.
func (e *StatusError) Unwrap() error {
	if e.retrieve == nil {
		return nil
	}
	return e.retrieve
}

// Format prints Error() for every verb, so %+v and %#v cannot reach the
// header or the body.
func (e *StatusError) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(e.Error())) }

// LogValue logs the operation, the status and the OAuth error fields only.
func (e *StatusError) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("op", e.Op),
		slog.Int("status", e.StatusCode),
		slog.String("error_code", e.ErrorCode),
		slog.String("error_description", e.ErrorDescription),
	)
}

// ResponseError reports a success status whose body is not a usable token
// response. errors.Is(err, ErrInvalidResponse) is true. Body is the answer
// as received (at most MaxResponseBytes) with the values of access_token,
// refresh_token and id_token and every secret that was sent replaced; it
// is evidence and is never printed by Error, Format or LogValue.
type ResponseError struct {
	Op         string
	StatusCode int
	Reason     string
	Body       []byte

	err error // the cause, if any (a *httpx.TooLargeError)
}

func (e *ResponseError) Error() string {
	return fmt.Sprintf("tokenexchange: %s: invalid token response (HTTP %d): %s", e.Op, e.StatusCode, e.Reason)
}

// Is matches ErrInvalidResponse.
func (e *ResponseError) Is(target error) bool { return target == ErrInvalidResponse }

// Unwrap returns the cause (an exceeded cap), or nil.
func (e *ResponseError) Unwrap() error { return e.err }

// Format prints Error() for every verb.
func (e *ResponseError) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(e.Error())) }

// LogValue logs the reason and status, never the body.
func (e *ResponseError) LogValue() slog.Value {
	return slog.GroupValue(slog.String("op", e.Op), slog.Int("status", e.StatusCode), slog.String("reason", e.Reason))
}

// transportError is a failure to get an answer at all. Its message has no
// URL and no secret; Unwrap still reaches the cause (for example a
// context.DeadlineExceeded or a net.Error).
type transportError struct {
	op  string
	msg string
	err error
}

func (e *transportError) Error() string              { return "tokenexchange: " + e.op + ": " + e.msg }
func (e *transportError) Unwrap() error              { return e.err }
func (e *transportError) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(e.Error())) }

// Timeout reports whether the cause is a timeout.
func (e *transportError) Timeout() bool {
	var t interface{ Timeout() bool }
	return errors.As(e.err, &t) && t.Timeout()
}
