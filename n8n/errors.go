package n8n

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/candorkit/candor/reply"
)

// MaxErrorBody bounds the part of an error response kept in an APIError.
const MaxErrorBody = 64 << 10

// APIError is a response from n8n with a status other than the one the call
// expects. It keeps the evidence: method, path, status, n8n's message and the
// body (at most MaxErrorBody bytes). It never holds the API key or the
// session cookie: n8n does not echo them and the request is not kept.
type APIError struct {
	Method string
	// Path is the request path and query, without scheme and host.
	Path   string
	Status int
	// Message is n8n's "message" field when the body is JSON and has one.
	Message string
	// Body is the response body, cut at MaxErrorBody bytes.
	Body []byte
	// Truncated is true when Body was cut.
	Truncated bool
}

func (e *APIError) Error() string {
	var b strings.Builder
	b.WriteString("n8n: ")
	b.WriteString(e.Method)
	b.WriteString(" ")
	b.WriteString(e.Path)
	b.WriteString(": status ")
	b.WriteString(strconv.Itoa(e.Status))
	switch {
	case e.Message != "":
		b.WriteString(": ")
		b.WriteString(e.Message)
	case len(e.Body) > 0:
		b.WriteString(": ")
		b.WriteString(clip(string(e.Body), 200))
	}
	return b.String()
}

// NotFound reports whether n8n answered 404.
func (e *APIError) NotFound() bool { return e.Status == 404 }

// IsStatus reports whether err is an *APIError with the given status.
func IsStatus(err error, status int) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Status == status
}

// ErrResponseTooLarge is returned when a response body exceeds the client's
// bound (Options.MaxResponseBytes); the partial body is discarded.
var ErrResponseTooLarge = errors.New("n8n: response body exceeds the configured bound")

// ErrCursorLoop is returned when n8n hands back a paging cursor it already
// returned (n8n does this for limit=0: the cursor points to its own page).
// The items read so far are not returned: a partial list is not a list.
var ErrCursorLoop = errors.New("n8n: paging cursor repeats")

// ErrEmptyReply is returned by CallWebhook when a webhook answers 200 with an
// empty body, which n8n does when a node fails before the Respond to Webhook
// node. It is the same value as reply.ErrEmpty, so errors.Is works with both.
var ErrEmptyReply = reply.ErrEmpty

// ContractError is returned by CallWebhook for any answer that is not a 200
// carrying exactly the {"answer","escalate"} contract. It keeps the status and
// the raw body. It unwraps to a *reply.ContractError, so errors.As works with
// either type.
type ContractError struct {
	// Status is the HTTP status of the webhook's answer.
	Status int
	// Reason says why the answer is off contract.
	Reason string
	// Raw is the body as received (at most reply.MaxBytes).
	Raw []byte

	inner *reply.ContractError
}

func (e *ContractError) Error() string {
	return fmt.Sprintf("n8n: webhook answered status %d off contract: %s", e.Status, e.Reason)
}

// Unwrap returns the equivalent *reply.ContractError.
func (e *ContractError) Unwrap() error { return e.inner }

func newContractError(status int, reason string, raw []byte) *ContractError {
	return &ContractError{
		Status: status,
		Reason: reason,
		Raw:    raw,
		inner:  &reply.ContractError{Reason: reason, Raw: raw},
	}
}

// ValidationError is returned by Deploy, ApplyDir and CreateWorkflow (when
// asked to validate) for a workflow with problems; nothing was sent.
type ValidationError struct {
	// Source names the workflow (its id, name or file).
	Source   string
	Problems []Problem
}

func (e *ValidationError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "n8n: %s has %d problem(s)", e.Source, len(e.Problems))
	for i, p := range e.Problems {
		if i == 3 {
			fmt.Fprintf(&b, "; …")
			break
		}
		b.WriteString("; ")
		b.WriteString(p.String())
	}
	return b.String()
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
