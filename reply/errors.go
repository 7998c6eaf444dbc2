package reply

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/candorkit/candor/internal/httpx"
	"github.com/candorkit/candor/internal/secret"
)

// ErrEmpty reports a body that holds nothing but white space. n8n answers 200
// with an empty body when a node fails before its Respond node.
var ErrEmpty = errors.New("reply: the workflow returned no reply")

// ErrNoToken is returned by Call, before any request, when the subject token
// is empty: no identity, no call.
var ErrNoToken = errors.New("reply: no subject token: the webhook was not called")

// ErrTooLarge matches every *TooLargeError.
var ErrTooLarge = errors.New("reply: the reply exceeds the size cap")

// ContractError reports a non-empty body that is not exactly the contract,
// or a 2xx answer other than 200.
type ContractError struct {
	// StatusCode and Header are the answer's; zero when the error comes from
	// Decode.
	StatusCode int
	Header     http.Header
	// Reason says which rule the body broke.
	Reason string
	// Raw is the body exactly as received.
	Raw []byte

	secrets []string
}

// Redacted is Raw with the webhook URL, its path, its path's suffixes and
// its query values redacted (Raw itself when the error comes from Decode):
// what to show a caller who must see the drift but not the secret URL.
func (e *ContractError) Redacted() []byte {
	if len(e.secrets) == 0 {
		return e.Raw
	}
	return secret.RedactBytes(e.Raw, e.secrets...)
}

func (e *ContractError) Error() string {
	return "reply: off-contract body: " + e.Reason
}

// StatusError reports an answer whose status is not 2xx: 1xx, a 3xx (no
// redirect is followed), 4xx or 5xx. Body is the body as received, up to the
// cap. It may name the webhook's secret path (n8n's 404 does) or carry a
// stack trace: show a caller Excerpt or Error, which quote a short excerpt
// with the webhook's path and query redacted, never Body.
type StatusError struct {
	StatusCode int
	Header     http.Header
	Body       []byte

	secrets []string
}

func (e *StatusError) Error() string {
	return httpx.StatusText("reply", e.StatusCode, []byte(e.Excerpt()))
}

// Excerpt is a short excerpt of Body (at most about 200 bytes, cut on a rune
// boundary) with the webhook URL, its path, its path's suffixes and its query
// values redacted.
func (e *StatusError) Excerpt() string {
	return httpx.Excerpt([]byte(redact(httpx.Excerpt(e.Body, 4*httpx.ExcerptBytes), e.secrets)), httpx.ExcerptBytes)
}

// TooLargeError reports a 2xx body longer than Limit bytes; nothing of it is
// decoded. errors.Is(err, ErrTooLarge) matches it.
type TooLargeError struct {
	StatusCode int
	Header     http.Header
	Limit      int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("reply: HTTP %d: the reply exceeds %d bytes", e.StatusCode, e.Limit)
}

// Is matches ErrTooLarge.
func (e *TooLargeError) Is(target error) bool { return target == ErrTooLarge }

// TransportError reports a call that got no complete answer: a connection,
// TLS verification or read failure, or the deadline. URL is the webhook's
// scheme and host only; Err is the cause without any URL
// (errors.Is(err, context.DeadlineExceeded) for a timeout).
type TransportError struct {
	URL string
	Err error
}

func (e *TransportError) Error() string {
	return "reply: calling the webhook at " + e.URL + ": " + e.Err.Error()
}

func (e *TransportError) Unwrap() error { return e.Err }

// Kind names a class of failure; its values are stable snake_case strings,
// also used as telemetry labels.
type Kind string

// The kinds Classify returns.
const (
	// KindNone: no error.
	KindNone Kind = ""
	// KindNoIdentity: ErrNoToken; nothing was sent.
	KindNoIdentity Kind = "no_identity"
	// KindNoReply: ErrEmpty.
	KindNoReply Kind = "no_reply"
	// KindOffContract: *ContractError.
	KindOffContract Kind = "off_contract"
	// KindHTTPStatus: *StatusError.
	KindHTTPStatus Kind = "http_status"
	// KindTooLarge: *TooLargeError.
	KindTooLarge Kind = "too_large"
	// KindTimeout: no answer before the deadline (WithTimeout or the
	// caller's context).
	KindTimeout Kind = "timeout"
	// KindCanceled: the caller's context was canceled.
	KindCanceled Kind = "canceled"
	// KindUnreachable: any other *TransportError.
	KindUnreachable Kind = "unreachable"
	// KindOther: any other error (for example a body that could not be
	// encoded).
	KindOther Kind = "other"
)

// Classify returns the kind of an error returned by Call or Decode.
func Classify(err error) Kind {
	var (
		ce *ContractError
		se *StatusError
		te *TransportError
	)
	switch {
	case err == nil:
		return KindNone
	case errors.Is(err, ErrNoToken):
		return KindNoIdentity
	case errors.Is(err, ErrEmpty):
		return KindNoReply
	case errors.As(err, &ce):
		return KindOffContract
	case errors.As(err, &se):
		return KindHTTPStatus
	case errors.Is(err, ErrTooLarge):
		return KindTooLarge
	case errors.Is(err, context.DeadlineExceeded):
		return KindTimeout
	case errors.Is(err, context.Canceled):
		return KindCanceled
	case errors.As(err, &te):
		return KindUnreachable
	}
	return KindOther
}

// redact replaces every secret in text and its encoded forms.
func redact(text string, secrets []string) string {
	return secret.Redact(text, secrets...)
}
