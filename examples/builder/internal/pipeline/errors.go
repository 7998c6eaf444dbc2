package pipeline

import (
	"errors"
	"fmt"
	"strings"

	"github.com/candorkit/candor/examples/builder/internal/queue"
)

// The kinds of build failure, matched with errors.Is on a *Failure.
var (
	// ErrOverseerRejected: the overseer said FAIL.
	ErrOverseerRejected = errors.New("the overseer rejected the workflow")
	// ErrImportFailed: n8n refused the sandbox import.
	ErrImportFailed = errors.New("the sandbox import failed")
	// ErrBlocked: a credential reference does not resolve in the sandbox.
	ErrBlocked = errors.New("blocked on credentials")
	// ErrLevelFailed: one of the four test levels failed.
	ErrLevelFailed = errors.New("a test level failed")
	// ErrUnhandled: any other error of a build.
	ErrUnhandled = errors.New("unhandled error")
)

// ErrNoLogin reports an n8n connection without the owner login the builder
// needs: n8n 1.x lists credentials and runs a stored workflow only for a
// logged-in user, never with the API key.
var ErrNoLogin = errors.New("pipeline: an n8n login (email and password) is required")

// Failure is a build that ended without reaching awaiting_approval. Kind is
// one of the sentinels above; Status is the builder_status the idea was left
// in (not_started when the claim was released before generation, failed
// after). Cleanup holds what went wrong while cleaning up (deleting the
// sandbox workflow, writing the queue), nil when all of it was done.
type Failure struct {
	Kind         error
	AutomationID int64
	Name         string
	Level        int // 1..4 for ErrLevelFailed, else 0
	Status       queue.BuilderStatus
	Err          error
	Cleanup      error
}

func (f *Failure) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "automation %d (%s): %v", f.AutomationID, f.Name, f.Kind)
	if f.Level > 0 {
		fmt.Fprintf(&b, " (level %d)", f.Level)
	}
	if f.Err != nil {
		b.WriteString(": " + f.Err.Error())
	}
	fmt.Fprintf(&b, "; left %s", f.Status)
	if f.Cleanup != nil {
		b.WriteString("; cleanup incomplete: " + f.Cleanup.Error())
	}
	return b.String()
}

// Is matches the failure's Kind.
func (f *Failure) Is(target error) bool { return target == f.Kind }

// Unwrap returns the cause and the cleanup error.
func (f *Failure) Unwrap() []error {
	var out []error
	if f.Err != nil {
		out = append(out, f.Err)
	}
	if f.Cleanup != nil {
		out = append(out, f.Cleanup)
	}
	return out
}

// oneLine flattens an error's text for a queue column or a notification.
func oneLine(err error) string {
	if err == nil {
		return "(no error text)"
	}
	return strings.Join(strings.Fields(err.Error()), " ")
}
