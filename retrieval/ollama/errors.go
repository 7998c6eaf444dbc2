package ollama

import (
	"errors"
	"net/http"

	"github.com/candorkit/candor/internal/httpx"
)

// ErrEmbed matches every error Embed returns: a failed call never yields
// vectors, and there is no fallback to other vectors.
var ErrEmbed = errors.New("ollama: embedding failed")

// MaxErrorBody bounds the bytes of a response body an error keeps.
const MaxErrorBody = 4 << 10

// StatusError is a response with a status other than 200. Body holds at
// most MaxErrorBody bytes of it; Message is the "error" field Ollama puts in
// its JSON error bodies, when there is one. It matches ErrEmbed.
type StatusError struct {
	StatusCode int
	Header     http.Header
	Body       []byte
	Message    string
}

func (e *StatusError) Error() string { return httpx.StatusText("ollama", e.StatusCode, e.Body) }

// Unwrap returns ErrEmbed.
func (e *StatusError) Unwrap() error { return ErrEmbed }

// ResponseError is a 200 response that cannot be used: a body over the
// bound (the cause then matches httpx's too-large error), JSON that does not
// decode, an "error" field, a count or length of vectors that does not
// match, or a component that is not a finite float32. Body holds at most
// MaxErrorBody bytes of the response. It matches ErrEmbed.
type ResponseError struct {
	Reason string
	Body   []byte
	Err    error // the cause, if any
}

func (e *ResponseError) Error() string {
	s := "ollama: unusable response: " + e.Reason
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns ErrEmbed and the cause.
func (e *ResponseError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrEmbed, e.Err}
	}
	return []error{ErrEmbed}
}

// RequestError is a call that got no response: the request could not be
// sent, the context ended or the timeout passed (errors.Is reaches
// context.DeadlineExceeded). Its text never carries the server's URL. It
// matches ErrEmbed.
type RequestError struct{ Err error }

func (e *RequestError) Error() string { return "ollama: request failed: " + e.Err.Error() }

// Unwrap returns ErrEmbed and the cause.
func (e *RequestError) Unwrap() []error { return []error{ErrEmbed, e.Err} }
