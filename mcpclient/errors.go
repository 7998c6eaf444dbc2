package mcpclient

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
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
	// 400 saying so) even after the one re-initialization the client makes.
	// It is matched by a *StatusError, or by a plain error when the
	// transport already knew the session had ended and sent nothing.
	ErrSessionExpired = errors.New("mcpclient: session expired")
	// ErrIDMismatch: the JSON-RPC response carried another id than the
	// request.
	ErrIDMismatch = errors.New("mcpclient: JSON-RPC response id does not match the request")
	// ErrToolFailed matches every result in which the tool reported a
	// failure: a *ToolError, and a *MalformedResultError whose raw result
	// had isError set.
	ErrToolFailed = errors.New("mcpclient: tool reported a failure")
	// ErrClosed: the client was closed.
	ErrClosed = errors.New("mcpclient: client closed")
)

// ToolError is a tool result with isError: true. The tool ran and said it
// failed; its content is a message for humans, never data.
type ToolError struct {
	Tool   string
	Text   string  // the text content items, joined with "\n"
	Result *Result // the decoded result, including its exact raw bytes
}

func (e *ToolError) Error() string {
	return fmt.Sprintf("mcpclient: tool %q failed: %s", e.Tool, truncate(e.Text, 512))
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
	return fmt.Sprintf("mcpclient: %s: JSON-RPC error %d: %s", what, e.Code, truncate(e.Message, 512))
}

// MalformedResultError is a tools/call result the client cannot decode:
// not an object, isError not a boolean, content missing or with a bad item.
// It keeps the exact bytes and whether isError was set in them.
type MalformedResultError struct {
	Tool string
	Raw  json.RawMessage // the result member exactly as received
	// IsError reports that the raw result carries an isError member whose
	// value is anything but false or null (for instance true or "true"):
	// the server most likely reported a failure.
	IsError bool
	Reason  string
}

func (e *MalformedResultError) Error() string {
	return fmt.Sprintf("mcpclient: tool %q: malformed result (%s; isError set: %t; %d bytes)", e.Tool, e.Reason, e.IsError, len(e.Raw))
}

// Is reports ErrToolFailed when the raw result had isError set.
func (e *MalformedResultError) Is(target error) bool { return target == ErrToolFailed && e.IsError }

// DecodeError is a successful tool result whose payload is not the JSON the
// caller asked for (not JSON at all, null, trailing data, wrong shape, or a
// page that breaks the paging convention).
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

// StatusError is an HTTP answer other than 2xx. Body holds at most the
// first 64 KiB of the response body (less with a smaller
// WithMaxResponseBytes); a longer body is cut, never an error of its own.
type StatusError struct {
	Method     string // JSON-RPC method, or "DELETE" for session termination
	StatusCode int
	Body       []byte

	expired bool // the request carried a session id the server no longer knows
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("mcpclient: %s: HTTP %d %s: %s", e.Method, e.StatusCode, http.StatusText(e.StatusCode), truncate(string(e.Body), 256))
}

// Is matches ErrUnauthorized for 401 and ErrSessionExpired when the status
// and body say the session is unknown.
func (e *StatusError) Is(target error) bool {
	switch target {
	case ErrUnauthorized:
		return e.StatusCode == http.StatusUnauthorized
	case ErrSessionExpired:
		return e.expired
	}
	return false
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
