package n8n

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/candorkit/candor/internal/httpx"
	"github.com/candorkit/candor/internal/secret"
)

// MaxErrorBody bounds the part of an error response kept in a StatusError
// or a DecodeError.
const MaxErrorBody = 64 << 10

// StatusError is a response from n8n with a status other than the one the
// call expects. It keeps the evidence: status, header, the body (at most
// MaxErrorBody bytes), and the request's method and path. It never holds the
// API key or the session cookie: the request is not kept, and a body that
// echoes either has it replaced by [REDACTED].
type StatusError struct {
	StatusCode int
	Header     http.Header
	// Body is the response body, cut at MaxErrorBody bytes.
	Body []byte
	// Method and Path are the request's; Path is the path and query below
	// the base URL, without scheme and host.
	Method, Path string
	// Message is n8n's "message" field when the body is JSON and has one.
	Message string
	// Truncated is true when Body was cut.
	Truncated bool
}

// Error reads "n8n: GET /api/v1/workflows/x: HTTP 404 Not Found: <excerpt>",
// the excerpt being n8n's message, else the body, trimmed of surrounding
// white space and cut on a rune boundary.
func (e *StatusError) Error() string {
	quoted := e.Body
	if e.Message != "" {
		quoted = []byte(e.Message)
	}
	return "n8n: " + e.Method + " " + e.Path + ": " + httpx.StatusText("", e.StatusCode, quoted)
}

// IsStatus reports whether err is a *StatusError with the given status.
func IsStatus(err error, status int) bool {
	var se *StatusError
	return errors.As(err, &se) && se.StatusCode == status
}

func newStatusError(method, path string, status int, header http.Header, data []byte, secrets ...string) *StatusError {
	body := secret.RedactBytes(cut(data), secrets...)
	e := &StatusError{Method: method, Path: path, StatusCode: status, Header: header.Clone(),
		Body: body, Truncated: len(data) > MaxErrorBody}
	if m := messageOf(body); m != "" {
		e.Message = m
	}
	return e
}

// ErrResponseTooLarge is returned when a response body exceeds the client's
// cap (WithMaxResponseBytes); the partial body is discarded.
var ErrResponseTooLarge = errors.New("n8n: response body exceeds the configured cap")

// ErrIncompleteList is returned by a listing that could not read every page:
// a paging cursor repeated (n8n does this for limit=0: the cursor points to
// its own page) or a page was missing its data. The items read so far are
// not returned: a partial list is not a list.
var ErrIncompleteList = errors.New("n8n: the listing could not be completed")

// ErrConflict matches every *ConflictError.
var ErrConflict = errors.New("n8n: the workflow was changed by another writer")

// ConflictError reports a workflow that is not at the version the caller
// expected: before Deploy's first write (nothing was written), or during a
// deploy (Deploy stopped without restoring, since a restore would overwrite
// the other writer's change; the Report says what is there).
type ConflictError struct {
	WorkflowID ID
	// Expected is the versionId the caller (or Deploy's own last write)
	// expected; Found is the one n8n holds.
	Expected, Found string
	// During is true when the change happened after Deploy's first write.
	During bool
}

func (e *ConflictError) Error() string {
	if e.During {
		return fmt.Sprintf("n8n: workflow %s was changed by another writer during the deploy: version %s, expected %s",
			e.WorkflowID, e.Found, e.Expected)
	}
	return fmt.Sprintf("n8n: workflow %s is at version %s, not the expected %s; nothing was written",
		e.WorkflowID, e.Found, e.Expected)
}

// Is matches ErrConflict.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// ValidationError is returned by Deploy and ApplyDir for a workflow with
// problems; nothing was sent.
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

// messageOf returns the "message" field of a JSON error body, "" when there
// is none (a non-string message is quoted as JSON).
func messageOf(body []byte) string {
	var m struct {
		Message json.RawMessage `json:"message"`
	}
	if json.Unmarshal(body, &m) != nil || len(m.Message) == 0 || string(m.Message) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(m.Message, &s) == nil {
		return s
	}
	return string(m.Message)
}

// clip cuts s to at most n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
