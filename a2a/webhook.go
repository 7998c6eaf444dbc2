package a2a

import (
	"context"

	"github.com/candorkit/candor/reply"
)

// webhookRequest is the JSON body WebhookBackend posts. It never holds the
// token, which goes in reply.SubjectTokenHeader.
type webhookRequest struct {
	Text      string `json:"text"`
	TaskID    string `json:"taskId"`
	ContextID string `json:"contextId"`
}

// WebhookBackend is the facade's default Backend: it posts
// {"text", "taskId", "contextId"} to the workflow webhook c calls, with the
// caller's token in the X-Subject-Token header, and maps the result with
// MapReply. The status rule, the size cap, the time bound and the refusal
// of redirects are c's (package reply owns the webhook contract).
func WebhookBackend(c *reply.Client) Backend {
	return BackendFunc(func(ctx context.Context, q Question) Outcome {
		if c == nil {
			return Fail("the workflow could not be called", ErrInvalidOutcome)
		}
		return MapReply(c.Call(ctx, q.Token, webhookRequest{Text: q.Text, TaskID: q.TaskID, ContextID: q.ContextID}))
	})
}
