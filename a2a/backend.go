package a2a

import (
	"context"
	"fmt"
	"log/slog"
)

// Question is what the Server asks a Backend for one A2A message.
type Question struct {
	// Text is the user's text: the message's text parts joined by newlines.
	Text string
	// Token is the caller's bearer token, without the "Bearer " prefix, for
	// a backend that forwards or exchanges it. It is never empty: the Server
	// refuses a request without one before asking (or, with
	// WithNoIdentityTasks, fails its task without asking). String, GoString
	// and LogValue redact it.
	Token string
	// Caller is who the Verifier found the token to belong to; zero with
	// WithUnverifiedTokens.
	Caller Caller
	// TaskID and ContextID identify the A2A task the answer belongs to.
	TaskID    string
	ContextID string
}

// String implements fmt.Stringer without the token.
func (q Question) String() string {
	return fmt.Sprintf("Question{Text:%q, Token:[redacted], TaskID:%s, ContextID:%s}", q.Text, q.TaskID, q.ContextID)
}

// GoString implements fmt.GoStringer without the token.
func (q Question) GoString() string { return q.String() }

// LogValue implements slog.LogValuer without the token.
func (q Question) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("subject", q.Caller.Subject),
		slog.String("task_id", q.TaskID),
		slog.String("context_id", q.ContextID),
		slog.Int("text_bytes", len(q.Text)),
	)
}

// Backend answers one Question. Ask must respect ctx, must not panic, and
// reports every failure as a Failed Outcome (Fail) with a typed cause: there
// is no error return, so a failure cannot be dropped on the way.
//
// WebhookBackend is the facade's default backend; other executors (an MCP
// tool call after a token exchange, for instance) implement Backend and are
// served by NewServer unchanged.
type Backend interface {
	Ask(ctx context.Context, q Question) Outcome
}

// BackendFunc adapts a function to Backend.
type BackendFunc func(ctx context.Context, q Question) Outcome

// Ask calls f.
func (f BackendFunc) Ask(ctx context.Context, q Question) Outcome { return f(ctx, q) }
