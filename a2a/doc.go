// Package a2a is a contract-strict A2A facade: it serves the Agent2Agent
// protocol for one question-answering backend and never reports a task as
// completed unless the backend really answered.
//
// # Serving
//
// NewServer wraps a Backend (Ask(ctx, Question) Outcome) in an http.Handler
// built on github.com/a2aproject/a2a-go/v2: one JSON-RPC endpoint (the path of
// Agent.URL) serves spec 1.0 when the request has "A2A-Version: 1.0" and spec
// 0.3 (through a2a-go's a2acompat/a2av0) when the header is missing, empty or
// "0.3"; any other version gets -32009 VersionNotSupported. The Agent Card
// at /.well-known/agent-card.json declares both interfaces, exactly one skill,
// the bearer scheme and no optional capability; it is sent with
// Cache-Control (max-age 300 s) and an ETag, and answers If-None-Match with
// 304. Streaming methods get -32004 UnsupportedOperation, push-notification
// methods -32003, the extended card -32004, as the card declares none of them.
//
// Every call needs "Authorization: Bearer <token>"; the token reaches the
// backend in Question.Token and nowhere else, and its SHA-256 fingerprint
// owns the task, so one caller never reads another's tasks. The one
// exception is opt-in: with WithNoIdentityTasks, a message without a token
// becomes a task that fails "no identity" without asking the backend, which
// only a tokenless GetTask naming its id reads afterwards. Tasks live in a
// bounded Store (idle TTL plus a least-recently-used bound on finished tasks,
// see Store) so GetTask and ListTasks work after SendMessage. A task is
// stored once, in its final state, when the SendMessage that made it is
// answered; with returnImmediately (0.3: blocking false) it is stored first
// in working state, which is what the caller gets back, then in its final
// state. No task is cancelable: a question handed to a workflow cannot be
// withdrawn, so CancelTask answers -32002 TaskNotCancelable. To stop, shut
// the http.Server down, then call Server.Drain, which waits for the answers
// of returnImmediately tasks still in flight.
//
// The facade's default backend is Webhook: it posts {"text","taskId",
// "contextId"} to a workflow webhook with the token in the X-Subject-Token
// header (never in the body), follows no redirect, bounds the reply size and
// the call time, and maps the reply with MapReply, which decodes the
// {"answer","escalate"} contract with package reply. Other executors plug in
// their own Backend; ConfigFromEnv and NewAdapter build the webhook facade
// from the ADAPTER_* environment variables (see EnvVars).
//
// # Failure taxonomy
//
// A backend answer becomes exactly one of two task states. Completed needs a
// 2xx reply that is exactly {"answer": non-blank string, "escalate": false}
// (or, for another Backend, Answer with a non-blank text and no error).
// Everything else is Failed, with a one-line reason in the task's status
// message, the raw body verbatim as a second part when there is one, the
// status message metadata "failure" naming the kind, and a typed cause in
// Outcome.Err:
//
//   - "escalated": escalate true; the workflow's answer is the status message
//     (errors.Is(err, ErrEscalated)).
//   - "no_reply": an empty or blank body, whatever the status
//     (errors.Is(err, reply.ErrEmpty)).
//   - "http_status": a status outside 2xx (errors.Is(err, ErrStatus)).
//   - "off_contract": a 2xx body that is not exactly the contract
//     (errors.As(err, **reply.ContractError)).
//   - "too_large": a body over the bound (errors.Is(err, ErrTooLarge)).
//   - "unreachable": no reply at all: connection, TLS verification or
//     timeout (errors.As(err, **WebhookError)).
//   - "no_identity": the request carried no bearer token, so the backend was
//     not asked (errors.Is(err, ErrNoToken)); the status message is "no
//     identity: the request carried no bearer token". Only with
//     WithNoIdentityTasks; Webhook.Ask also fails so for a Question without
//     a token.
//   - "invalid_outcome": a Backend returned something that is neither a
//     proper Answer nor a proper Fail, or panicked (errors.Is(err, ErrInvalidOutcome)).
//   - "backend": any other cause given to Fail by a custom Backend.
//
// Reply failures carry a *ReplyError holding the status, header and body as
// received. Configuration problems are one *ConfigError naming every bad
// variable. Requests refused before a task exists get JSON-RPC errors:
// -31401 without a bearer token (with WithNoIdentityTasks, only for methods
// other than SendMessage and GetTask), -32005 for a message without text,
// -32602 for blank text, -32009 for an unsupported version.
//
// # Card note
//
// The card is written once for both versions. For the bearer scheme it holds
// one object with both the 1.0 form and the 0.3 form, because a2a-go's own
// compat card writes only the 0.3 form, which a2a-go's 1.0 parser rejects.
// securityRequirements uses a2a-go's encoding ({"schemes": {"bearer": []}}),
// which is what a2a-go v2.3.1 clients parse; the 1.0 protobuf JSON form
// ({"bearer": {"list": []}}) is rejected by that parser.
package a2a
