package mcpclient

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/candorkit/candor/internal/httpx"
)

// Sentinel errors, matched with errors.Is.
var (
	// ErrUnauthorized: the server answered 401. The client never retries it.
	ErrUnauthorized = errors.New("mcpclient: unauthorized (401)")
	// ErrNoToken: the token source failed or gave an empty access token, so
	// nothing was sent.
	ErrNoToken = errors.New("mcpclient: no access token")
	// ErrBudgetExceeded: the call or byte budget set with WithBudget is
	// spent. A response cut off by it is never returned as data.
	ErrBudgetExceeded = errors.New("mcpclient: budget exceeded")
	// ErrResponseTooLarge: one response body went over WithMaxResponseBytes.
	ErrResponseTooLarge = errors.New("mcpclient: response body too large")
	// ErrSessionExpired: the server no longer knows the session (404, or a
	// 400 saying so, in answer to the POST of the request) even after the
	// one re-initialization the client makes. It is matched by a
	// *StatusError, or by a plain error when the transport already knew the
	// session had ended and sent nothing.
	ErrSessionExpired = errors.New("mcpclient: session expired")
	// ErrOutcomeUnknown: the server accepted the request (its POST was
	// answered 2xx) but no response was read, so the tool may or may not
	// have run. The client never sends such a call again; matched by an
	// *OutcomeUnknownError.
	ErrOutcomeUnknown = errors.New("mcpclient: outcome unknown")
	// ErrIDMismatch: the JSON-RPC response carried another id than the
	// request.
	ErrIDMismatch = errors.New("mcpclient: JSON-RPC response id does not match the request")
	// ErrToolFailed matches every result in which the tool reported a
	// failure: a *ToolError, and a *MalformedResultError whose raw result
	// had isError set.
	ErrToolFailed = errors.New("mcpclient: tool reported a failure")
	// ErrClosed: the client or pool was closed.
	ErrClosed = errors.New("mcpclient: client closed")
	// ErrUnknownTool: schemas are checked for the session (WithToolSchemas,
	// or after a complete ListTools) and the tool is not in the server's
	// tool list, even after listing it again; nothing was sent.
	ErrUnknownTool = errors.New("mcpclient: tool not in the server's tool list")
	// ErrPoolFull: the pool holds WithMaxSessions sessions, all of them in
	// use, so no session can be opened for a new subject; nothing was sent.
	ErrPoolFull = errors.New("mcpclient: session pool full")
)

// SchemaError says that a value does not match a schema the tool
// declared in tools/list. For arguments (Schema "inputSchema") it is
// returned before anything is sent; for a structuredContent (Schema
// "outputSchema") it is the Err of a *MalformedResultError, never data.
type SchemaError struct {
	Tool string
	// Schema is "inputSchema" or "outputSchema".
	Schema string
	// Violations lists what does not match, each at most 256 bytes: every
	// required top-level property that is missing, every top-level property
	// that does not match its own schema, else the validator's first
	// finding; or why the schema itself cannot be used to validate.
	Violations []string
}

func (e *SchemaError) Error() string {
	what := "arguments do not match"
	if e.Schema == "outputSchema" {
		what = "structuredContent does not match"
	}
	return fmt.Sprintf("mcpclient: tool %q: %s the tool's %s: %s", e.Tool, what, e.Schema, httpx.Excerpt([]byte(strings.Join(e.Violations, "; ")), 1024))
}

// ToolError is a tool result with isError: true. The tool ran and said it
// failed; its content is a message for humans, never data.
type ToolError struct {
	Tool   string
	Text   string  // the text content items, joined with "\n"
	Result *Result // the decoded result, including its exact raw bytes
}

func (e *ToolError) Error() string {
	return fmt.Sprintf("mcpclient: tool %q failed: %s", e.Tool, httpx.Excerpt([]byte(e.Text), 512))
}

// Is reports ErrToolFailed.
func (e *ToolError) Is(target error) bool { return target == ErrToolFailed }

// ProtocolError is a JSON-RPC error response (the tool did not produce a
// result: unknown tool, invalid params, a server-side exception, ...).
type ProtocolError struct {
	Method  string // JSON-RPC method of the request, e.g. "tools/call"
	Tool    string // tool name for tools/call, else ""
	Code    int
	Message string
	Data    json.RawMessage // the error's data member, exact bytes (nil if absent)
}

func (e *ProtocolError) Error() string {
	what := e.Method
	if e.Tool != "" {
		what = fmt.Sprintf("tool %q", e.Tool)
	}
	return fmt.Sprintf("mcpclient: %s: JSON-RPC error %d: %s", what, e.Code, httpx.Excerpt([]byte(e.Message), 512))
}

// MalformedResultError is a tools/call response the client cannot decode:
// a result that is not an object, isError not a boolean or given twice,
// content missing or with a bad item, or a response envelope with a
// duplicated result or error member. It keeps the exact bytes and whether
// isError was set in them.
type MalformedResultError struct {
	Tool string
	// Raw is the result member exactly as received, or the whole response
	// message when the envelope itself is malformed.
	Raw json.RawMessage
	// IsError reports that the raw result carries an isError member whose
	// value is anything but false or null (for instance true or "true"):
	// the server most likely reported a failure.
	IsError bool
	Reason  string
	// Err is the cause when there is one: a *SchemaError for a
	// structuredContent that does not match the tool's outputSchema.
	Err error
}

func (e *MalformedResultError) Error() string {
	return fmt.Sprintf("mcpclient: tool %q: malformed result (%s; isError set: %t; %d bytes)", e.Tool, e.Reason, e.IsError, len(e.Raw))
}

// Is reports ErrToolFailed when the raw result had isError set.
func (e *MalformedResultError) Is(target error) bool { return target == ErrToolFailed && e.IsError }

// Unwrap returns the cause.
func (e *MalformedResultError) Unwrap() error { return e.Err }

// DecodeError is a successful tool result whose payload is not the JSON the
// caller asked for (not JSON at all, null, trailing data, wrong shape, or a
// page that breaks the paging convention), or an initialize answer the
// client cannot use.
type DecodeError struct {
	Tool string
	Raw  []byte // the payload that failed: structuredContent or the text content
	Err  error  // the underlying reason
}

func (e *DecodeError) Error() string {
	if e.Tool == "" { // the initialize result
		return fmt.Sprintf("mcpclient: cannot decode response (%d bytes): %v", len(e.Raw), e.Err)
	}
	return fmt.Sprintf("mcpclient: tool %q: cannot decode payload (%d bytes): %v", e.Tool, len(e.Raw), e.Err)
}

func (e *DecodeError) Unwrap() error { return e.Err }

// StatusError is an HTTP answer other than 2xx to a request of the client.
// Header is the response header as received (a 401's WWW-Authenticate is
// there); Body holds at most the first 64 KiB of the response body (less
// with a smaller WithMaxResponseBytes), a longer body being cut, never an
// error of its own.
type StatusError struct {
	StatusCode int
	Header     http.Header
	Body       []byte

	method  string // JSON-RPC method, "DELETE" for session termination, "GET" for a resumption
	tool    string // the tool of a tools/call
	expired bool   // the request carried a session id the server no longer knows
}

// Error names the request and the status and quotes a short excerpt of the
// body, trimmed and cut on a rune boundary.
func (e *StatusError) Error() string {
	prefix := "mcpclient"
	switch {
	case e.tool != "":
		prefix += fmt.Sprintf(": tool %q", e.tool)
	case e.method != "":
		prefix += ": " + e.method
	}
	return httpx.StatusText(prefix, e.StatusCode, e.Body)
}

// Is matches ErrUnauthorized for 401 and ErrSessionExpired when the status
// and body of the answer to the request's POST say the session is unknown.
func (e *StatusError) Is(target error) bool {
	switch target {
	case ErrUnauthorized:
		return e.StatusCode == http.StatusUnauthorized
	case ErrSessionExpired:
		return e.expired
	}
	return false
}

// OutcomeUnknownError is a request the server accepted (its POST was
// answered 2xx, for an event stream with an event id) whose response was
// never read: the stream ended without it and could not be resumed within
// the client's bounds, a resumption was refused, or the body broke off. The
// tool may have run; the client does not send the call again, and the
// caller must not assume either outcome.
type OutcomeUnknownError struct {
	Tool string // the tool of a tools/call ("" for initialize)
	// Resumes is the number of resumption requests (GET with
	// Last-Event-ID) the client sent for this request.
	Resumes int
	Reason  string
	// Err is the cause when there is one: the *StatusError of a refused
	// resumption, ErrBudgetExceeded (no resumption allowed), a transport
	// error.
	Err error
}

func (e *OutcomeUnknownError) Error() string {
	var b strings.Builder
	b.WriteString("mcpclient: ")
	if e.Tool != "" {
		fmt.Fprintf(&b, "tool %q: ", e.Tool)
	}
	b.WriteString("outcome unknown: ")
	b.WriteString(e.Reason)
	if e.Resumes > 0 {
		fmt.Fprintf(&b, " (after %d resumptions)", e.Resumes)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Is reports ErrOutcomeUnknown.
func (e *OutcomeUnknownError) Is(target error) bool { return target == ErrOutcomeUnknown }

// Unwrap returns the cause.
func (e *OutcomeUnknownError) Unwrap() error { return e.Err }

// usageError is a request the caller made that the client refuses before
// sending anything (bad arguments, a bad page size or cursor).
type usageError struct {
	msg string
	err error // a sentinel it matches, if any
}

func (e *usageError) Error() string { return e.msg }

func (e *usageError) Unwrap() error { return e.err }

func usagef(format string, a ...any) error { return &usageError{msg: fmt.Sprintf(format, a...)} }
