package n8n

import (
	"context"

	"github.com/candorkit/candor/reply"
)

// CallWebhook POSTs body as JSON to a workflow's production webhook with
// subjectToken in reply.SubjectTokenHeader and decodes the answer strictly.
// It is reply.NewClient(webhookURL, opts...).Call: package reply owns the
// whole webhook contract (the header, the status rule, the timeout default,
// the body cap, the strict decoding and its errors), so package a2a and
// this one read a webhook the same way. To call one webhook many times,
// build a reply.Client once.
//
// n8n's answers map as follows: a 200 whose body is exactly
// {"answer","escalate"} is a reply.Reply; a 200 with an empty body (n8n 1.x
// when a node throws before Respond to Webhook, and both editions when a
// node returns no items) is reply.ErrEmpty; an inactive or unknown webhook
// (404) and a workflow error in lastNode mode or on n8n 2.x (500
// {"message":"Error in workflow"}) are a *reply.StatusError whose text
// never shows the webhook's path.
func CallWebhook(ctx context.Context, webhookURL, subjectToken string, body any, opts ...reply.Option) (reply.Reply, error) {
	c, err := reply.NewClient(webhookURL, opts...)
	if err != nil {
		return reply.Reply{}, err
	}
	return c.Call(ctx, subjectToken, body)
}
