// Package a2a is a contract-strict A2A facade: it serves the Agent2Agent
// protocol for one question-answering backend, authenticates every call
// before anything is done for it, and never reports a task as completed
// unless the backend really answered.
//
// # Serving
//
// NewServer wraps a Backend (Ask(ctx, Question) Outcome) in an http.Handler
// built on github.com/a2aproject/a2a-go/v2: one JSON-RPC endpoint (the path of
// Agent.URL) serves spec 1.0 when the request has "A2A-Version: 1.0" and spec
// 0.3 (through a2a-go's a2acompat/a2av0) when the header is missing, empty or
// "0.3"; any other version gets -32009 VersionNotSupported. Every answer,
// errors included, is application/json.
//
// The Agent Card at /.well-known/agent-card.json (also under the endpoint's
// path) declares both interfaces, exactly one skill, the bearer scheme and no
// optional capability. Without an A2A-Version header, or with "1.0", it is the
// 1.0 card in ProtoJSON form, valid against the 1.0 schema (nothing of 0.3 in
// it; securityRequirements as {"schemes": {"bearer": {"list": []}}}); with
// "A2A-Version: 0.3" it is the 0.3 card (url, protocolVersion,
// preferredTransport, security). Each is sent with Cache-Control (max-age
// 300 s), its own ETag and Vary: A2A-Version, and If-None-Match gets 304.
// a2a-go v2.3.1's card parser reads only its own encoding of
// securityRequirements: a2a-go clients resolve with
// agentcard.Resolver{CardParser: ParseCard} (1.0), or with a2av0's parser
// and the header "A2A-Version: 0.3" (0.3).
//
// Streaming methods get -32004 UnsupportedOperation, push-notification
// methods -32003, the extended card -32004, as the card declares none of
// them. No task is cancelable (a question handed to a workflow cannot be
// withdrawn): CancelTask answers -32002 TaskNotCancelable; a message to a
// finished task answers -32004 UnsupportedOperation (spec 1.0, section 3.1.1).
// A SendMessage whose message lacks a required field (messageId, role,
// parts, a part's kind in 0.3, a part's content in 1.0) or has no parts is
// -32602 Invalid params; a well-formed message without a text part is -32005
// ContentTypeNotSupported; blank text is -32602.
//
// # Authentication
//
// Every JSON-RPC call carries "Authorization: Bearer <token>". Before any
// task exists and before the backend is asked, the Server has the token
// checked by the Verifier given with WithVerifier (package a2a/jwtauth
// verifies JWTs against an OpenID provider's published keys):
//
//   - no bearer token: HTTP 401, WWW-Authenticate: Bearer, JSON-RPC -31401;
//   - a malformed Authorization header: 401, Bearer error="invalid_request";
//   - ErrInvalidToken: 401, Bearer error="invalid_token", -31401;
//   - ErrInsufficientScope: 403, Bearer error="insufficient_scope", -31403;
//   - any other verifier error (the issuer's keys cannot be fetched): 503
//     with Retry-After, -32603; the error goes to the log only.
//
// The verified Caller (issuer and subject) owns the tasks it creates, so one
// caller never reads another's tasks, and reaches the backend in
// Question.Caller; the token itself reaches the backend in Question.Token
// and nowhere else (the webhook backend forwards it in X-Subject-Token).
//
// There is no silent default: NewServer and NewAdapter refuse to build
// without WithVerifier unless given the explicit opt-out
// WithUnverifiedTokens, for a backend that proves the token itself before any
// effect (a token exchange at the identity provider); then the token's
// SHA-256 fingerprint owns its tasks. Tokenless tasks are a second explicit
// opt-in: with WithNoIdentityTasks, a message without a token becomes a task
// that fails "no identity" without asking the backend, which only a
// tokenless GetTask naming its id reads afterwards; a token that is present
// is still verified.
//
// # Tasks
//
// The Server keeps its tasks in a TaskStore (a2a-go's taskstore.Store with
// candor's contract: owner isolation by Owner(ctx), versioned writes that
// refuse a stale version with taskstore.ErrConcurrentModification, TTL and
// size bounds, keyset paging), so GetTask and ListTasks work after
// SendMessage. The default is a bounded MemoryStore (idle TTL plus a
// least-recently-used bound on finished tasks) in this process; with
// WithTaskStore the Server takes any other, such as package a2a/pgstore's
// PostgreSQL store, which several replicas behind one load balancer share
// (docs/scaling.md). A task is stored once, in its final state, when
// the SendMessage that made it is answered; with returnImmediately (0.3:
// blocking false) it is stored first in working state, which is what the
// caller gets back, then in its final state. A store write that fails is
// an error to the caller (JSON-RPC -32603), never a task reported
// completed. To stop, shut the http.Server down, then call Server.Drain,
// which waits for the answers of returnImmediately tasks still in flight.
//
// # The webhook facade
//
// NewAdapter builds the facade over a workflow webhook from a Config:
// WebhookBackend posts {"text","taskId","contextId"} through a reply.Client
// (package reply owns the webhook contract: the X-Subject-Token header, only
// HTTP 200 carries a reply, redirects refused, a 1 MiB cap, a 30 s default
// timeout) and maps the result with MapReply. Reading a Config from the
// environment or flags is the program's job (examples/a2a-n8n-adapter reads
// ADAPTER_*). The webhook URL's path and query, secret in n8n, never appear
// in anything returned to a caller or logged.
//
// # Failure taxonomy
//
// A backend answer becomes exactly one of two task states. Completed needs a
// reply that is exactly {"answer": non-blank string, "escalate": false} (or,
// for another Backend, Answer with a non-blank text and no error).
// Everything else is Failed, with a one-line reason in the task's status
// message, evidence as a second part where there is some, the status message
// metadata "failure" naming the Kind (Classify), and a typed cause in
// Outcome.Err:
//
//   - "escalated": escalate true; the workflow's answer is the status message
//     (errors.Is(err, ErrEscalated)).
//   - "no_reply": a 2xx body of only white space (errors.Is(err, reply.ErrEmpty)).
//   - "http_status": a status outside 2xx (errors.As(err, **reply.StatusError));
//     the caller reads only a short excerpt of the body with the webhook's
//     path and query redacted (the body can name the secret path or hold a
//     stack trace); the server log gets the whole body, redacted.
//   - "off_contract": a 2xx answer that is not exactly the contract, or a
//     2xx other than 200 (errors.As(err, **reply.ContractError)); the body
//     stays visible to the caller, redacted, so drift is seen.
//   - "too_large": a body over the cap (errors.Is(err, reply.ErrTooLarge)).
//   - "timeout", "canceled", "unreachable": no reply at all: the deadline,
//     the caller went away, or connection or TLS verification failed
//     (errors.As(err, **reply.TransportError)).
//   - "no_identity": the request carried no bearer token, so the backend was
//     not asked (errors.Is(err, ErrNoToken)); the status message is "no
//     identity: the request carried no bearer token". Only with
//     WithNoIdentityTasks.
//   - "invalid_outcome": a Backend returned something that is neither a
//     proper Answer nor a proper Fail, or panicked (errors.Is(err, ErrInvalidOutcome)).
//   - "backend": any other cause given to Fail by a custom Backend.
//
// Requests refused before a task exists get the HTTP statuses above, HTTP
// 415 with -32005 for a Content-Type other than application/json, or
// JSON-RPC errors at HTTP 200: -32602 for a malformed message, blank text or
// a negative historyLength, -32001 TaskNotFound for a task of another
// caller, expired or evicted, -32603 when the task store fails (with
// a2a/pgstore: the database is unreachable, pgstore.ErrUnavailable),
// -32005 for a message without text, -32009 for an unsupported version,
// -32004 for a message to a finished task; a request body over the cap
// (WithMaxRequestBytes) is HTTP 413 with -32600. Constructors return an
// error naming the bad argument or option.
//
// # Telemetry
//
// WithTracerProvider and WithMeterProvider set the OpenTelemetry providers
// (the global ones when absent, no-ops unless the program installed an
// SDK); NewAdapter passes them to the webhook's reply.Client too, and
// WithWebhookOptions passes it any other reply.Option (an instrumented
// transport with reply.WithTransportWrapper, which combines with
// Config.RootCAs). The instrumentation scope is this package's import path.
// With no provider given and none installed globally, no span is started
// and no attribute built, so a request costs what it did without
// telemetry.
//
// One span per JSON-RPC request, kind server, named by the JSON-RPC method
// ("SendMessage", "message/send", "GetTask"...; "a2a" when the body names
// none). It continues the caller's trace when the request carries a W3C
// traceparent:
//
//	rpc.system                 "jsonrpc"
//	rpc.method                 the JSON-RPC method
//	jsonrpc.request.id         the request id, as sent
//	a2a.protocol.version       "1.0" or "0.3" (the A2A-Version served)
//	http.response.status_code  the HTTP status answered
//	rpc.jsonrpc.error_code     the JSON-RPC code of a refusal the Server writes itself
//	error.type                 on such a refusal: "unauthenticated", "unauthorized",
//	                           "internal", "version_not_supported", "invalid_params",
//	                           "invalid_request", "content_type_not_supported",
//	                           "unsupported_operation"; or the status text of another
//	                           4xx/5xx answer
//
// A task that fails is an answered request: the request span carries no
// error.type for it, the task span does.
//
// One span per task execution, SpanTask ("a2a.task"), kind internal, a
// child of the request span (the webhook call's span, "POST" from package
// reply, is its child):
//
//	a2a.task.id, a2a.context.id  the task's ids
//	a2a.protocol.version         as above
//	a2a.task.state               "completed" or "failed"
//	error.type                   the failure Kind (Classify), when failed
//
// Metric MetricTasks ("candor.a2a.tasks", a counter of {task}): one per
// task that reached its final state, with a2a.task.state,
// a2a.protocol.version and error.type (the Kind, when failed). The webhook
// call's duration is package reply's "candor.webhook.duration" histogram
// (seconds). No token, caller identity, message text or webhook path
// appears in any span or metric.
package a2a
