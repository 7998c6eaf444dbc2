// Package a2atest is a test kit for package a2a's webhook facade, in the
// style of net/http/httptest: a Webhook that speaks package reply's
// contract with scripted replies, and helpers that serve an a2a.Server and
// ask it a question through an a2a-go v2 client.
//
// # Webhook
//
// NewWebhook (NewTLSWebhook for https) starts a loopback server at a
// random path, as n8n gives a webhook one. Each POST to Webhook.URL takes
// the next Reply of its script:
//
//   - on the contract: Answer (200 {"answer", "escalate": false}),
//     Escalate (200 {"answer", "escalate": true});
//   - off it: Empty (200, no body, as n8n 1.x answers when a node fails),
//     WrongTypes ({"answer": 42, "escalate": "no"}), Body (any status and
//     body verbatim: another 2xx, not JSON, an extra key, trailing data),
//     Status (a status outside 2xx with n8n's {"message"} body),
//     Oversized (a contract body of exactly n bytes, for the size cap);
//   - slow: Hang (never answers; the caller's bound must end the call),
//     After (answers once a channel the test closes is closed);
//   - Func computes the reply from the request (echo the question, say).
//
// Webhook.Always sets the reply once the script is used up. A request
// beyond the script without Always answers 500 and fails the test when it
// ends, so a caller that asked more often than the test expected is seen.
//
// Every request is recorded in arrival order (Webhook.Requests): its
// headers, its body (capped at MaxRequestBytes; a longer one answers 413),
// the fields a2a.WebhookBackend posts (text, taskId, contextId) and the
// X-Subject-Token header (reply.SubjectTokenHeader; Webhook.SubjectTokens
// lists them), so a test can check that the caller's token reached the
// workflow, and only there. A request to another path or with another
// method answers 404 as n8n does, quoting them, and takes no reply.
//
// # Facade
//
// Serve starts an a2a.Server on loopback with its endpoint URL known
// before the server is built (the card needs it). Ask resolves the agent
// card (with a2a.ParseCard), sends a question with an a2a-go v2 JSON-RPC
// client carrying a bearer token, and returns the final task; State, Text
// and Failure read it.
//
// # Failures
//
//   - NewWebhook, NewTLSWebhook and Serve fail the test when they cannot
//     start (no loopback listener, build returned an error).
//   - A webhook request beyond the script (without Always) fails the test
//     at its end.
//   - Ask fails the test when no task comes back (the card cannot be
//     resolved, the token is refused, the call fails or the task is not
//     final within AskTimeout); Send returns that error instead.
//
// The recorded requests hold the subject tokens callers sent: they are
// the test's own tokens, but do not log them from a test that uses real
// ones.
package a2atest
