// Package mcpclient calls MCP tools over streamable HTTP, on top of
// github.com/mark3labs/mcp-go v1.2.1, so that a failed tool call can never be
// read as data and an accepted call is never sent twice.
//
// An agent that looks only at the JSON-RPC error of an MCP reply takes a
// result with isError: true for an answer: the text "HTTP call failed with
// status 404" becomes a product. Every function of this package returns
// either a decoded success or a typed error that keeps the evidence.
//
// # Connecting
//
// Dial(ctx, endpoint, ...Option) runs the initialize handshake pinned to
// protocol 2025-11-25 (see WithProtocolVersion), keeps the session id from
// the Mcp-Session-Id header of the initialize answer and sends
// notifications/initialized (skip it with WithoutInitializedNotification).
// Options compose in any order, and one with an invalid value (a nil token
// source or HTTP client, a non-positive WithMaxResponseBytes, an unsupported
// protocol version) makes Dial fail, as does an option Dial does not take
// (WithMaxSessions, WithIdleTimeout; NewPool likewise refuses
// WithTokenSource, WithAuthorizer and WithBudget). WithTokenSource puts the caller's
// bearer token on every request, including stream resumptions,
// re-initialization and the DELETE that Close sends to end the session.
//
// # Authorization
//
// WithAuthorizer replaces WithTokenSource with an Authorizer, which
// supplies each request's token and answers the server's challenges:
// package mcpclient/mcpauth implements the MCP authorization flows
// (protected resource metadata discovery, authorization server metadata,
// client registration, PKCE, resource indicators, step-up). A request
// answered 401 or 403 goes to Authorizer.Authorize with the answer's
// WWW-Authenticate header and the token it carried, and is sent again once
// that returns nil, at most MaxAuthorizeRetries times: a refusal means the
// server did not act on the request, so sending it again repeats no
// effect. When the Authorizer cannot help, the request fails with an
// *AuthorizationError that keeps the refusal (StatusCode, Header, Body)
// and the Authorizer's error (Err, for errors.As); when the retries run
// out, the last refusal is a *StatusError as without an Authorizer.
// The client follows no redirect and refuses to send a token over plain
// http except to a loopback address. A Client prints and logs (String,
// Format, LogValue) only its endpoint, protocol version and whether it
// holds a session: never a token or the session id. Nothing is logged
// unless WithLogger is given; errors are logged under the key "error".
//
// Server returns what initialize said: serverInfo (name, version, title),
// the protocol version agreed, the server's capabilities and instructions,
// with the exact bytes.
//
// # Server requests
//
// The client declares a capability only for a handler it was given:
// WithElicitationHandler (MethodElicitation), WithSamplingHandler
// (MethodSampling), WithRootsHandler (MethodRoots); without any, it sends
// capabilities {}. A request the server sends on the event stream of a call
// is answered there: ping with {}, a method with a handler by the handler
// (a RequestHandler gets the params and answers the result object; a
// *ProtocolError it returns gives the error code, any other error an
// internal error that does not quote it), any other method with "method
// not found" (-32601), so a call never waits for an answer that will not
// come; the POST of that answer is never taken for the call's. With a
// handler the client also opens the session's standalone GET stream
// (capped per connection like any response, counted against the client's
// budget, reopened by mcp-go when it breaks), where servers send the
// requests that belong to no call; without one it never opens it. In a
// Pool, SubjectFromContext names the subject a request came for.
//
// # Calling
//
// Client.Call sends nil arguments as {} and returns a *Result only for a
// well-formed result without isError. The response is read from the bytes
// received, strictly: a response with a duplicated result, error or id
// member, with both a result and an error, or a result with a duplicated
// isError, is a *MalformedResultError whatever the order of the members.
// CallJSON decodes the payload (structuredContent, else the single text
// item) into a Go type.
//
// When the server answers the POST of a call with 404, or with a 400
// whose body says the session is unknown, the call was not processed: the
// client initializes a new session once and sends the call once more; a
// second failure is returned. That is the only case in which a call is
// sent again. A re-initialization that fails (network, token source,
// cancelled context) leaves the client usable: the next call tries again.
// The client lock is not held during the re-initialization, so SessionID,
// String and Close never wait for it (Close cancels it).
//
// WithRequestHeader(ctx, h) adds headers to the requests made with ctx (a
// call's POST, its resumptions, the re-initialization it causes), with no
// new Dial; a header the client sets itself (Authorization, Mcp-Session-Id,
// ...) makes the call fail before anything is sent.
//
// # Tools and schemas
//
// ListTools reads tools/list to its end (every page, on the module's
// complete-scan helper) and AllTools is the same scan as an iter.Seq2. A
// listing is complete only when its last page has no nextCursor; a
// repeated cursor, a page cap (ListToolsOptions), a malformed page or a
// tool listed twice leave it incomplete, with an error, never a short list.
// A tools/list answered as for an unknown session is sent again, once, on a
// new session (it has no effect to repeat).
//
// The schemas of a session come from tools/list: with WithToolSchemas the
// client lists the tools before the first call of each session; without
// it, a complete ListTools gives the session its list. From then on, for
// that session, arguments that do not match the tool's inputSchema are
// refused before any request with a *SchemaError that lists the
// violations; a structuredContent that does not match its outputSchema (or
// is missing when the tool declares one) is a *MalformedResultError, never
// data; a tool that is not in the list is ErrUnknownTool. The list is read
// again after a notifications/tools/list_changed arrives on a stream the
// client reads, when a call names a tool the list lacks (once per call),
// on every new session (a re-initialization starts without one) and on each
// ListTools.
//
// What the client guarantees about list_changed: a notice that arrives on a
// call's event stream before the call's result marks the list stale before
// the call returns, so the next checked call of the session lists the tools
// again first; a notice on the standalone stream (opened when the client
// has a request handler, such as WithElicitationHandler) marks it stale
// when it arrives, in no order with calls. The client stops reading a
// call's stream at its result: a notice the server writes after the result,
// on a stream the client does not read, or not at all (mcp-go v1.2.1 drops
// a notice that loses a race with the result of the call that changed the
// list; go-sdk sends it only on the standalone stream) is not seen. Until
// the next listing, calls are checked against the list the session has: a
// new tool is still found (a tool the list lacks makes the client list
// again), but a changed schema of a listed tool is not noticed, so after a
// server changes a schema in place, call ListTools or start a new session.
//
// A schema that cannot be used (a remote $ref, which is never
// fetched, or an unsupported draft) refuses the tool's calls. Validation
// uses github.com/google/jsonschema-go (draft 2020-12 and draft-07);
// numbers are compared as float64.
//
// # Pools of sessions
//
// A service calling tools for many users opens one Pool
// (NewPool(endpoint, ...Option): no I/O) and, per agent run, a Caller for
// the user's Identity (a Subject and a token source) with its own Budget.
// A subject's first call opens its session (concurrent first calls open
// one); its later calls reuse it; a session is used only for its subject,
// and every request carries the token of the caller it is sent for, so a
// refreshed token keeps the session. Sessions unused for WithIdleTimeout
// (default 5 min) are ended with a DELETE. At WithMaxSessions (default
// 1000) the least recently used idle session is ended to make room; when
// every session is in use, a new subject's call fails with ErrPoolFull and
// sends nothing. A session the server ended is initialized again once, as
// with Dial. Budgets belong to the Caller, never to the session. CallJSON,
// Page, Pages and All take a Caller as they take a Client (ToolCaller).
//
// # Event streams and unknown outcomes
//
// A server may answer a call with an event stream and end it before the
// response, after an event with an id, expecting the client to resume it
// with a GET carrying Last-Event-ID. The client resumes such a stream
// itself, at most 3 times per call, after the delay of the stream's retry
// field (1 s when absent) and not at all when that delay is over 30 s.
// Each resumption counts against WithBudget as a call (even when its body
// is empty) and for its bytes. Once the POST of a call was answered 2xx,
// nothing that happens afterwards (a stream that ends without the
// response, a resumption answered 404 or anything else, a body that breaks
// off) says whether the tool ran: the call fails with an
// *OutcomeUnknownError, is never sent again, and a resumption's status is
// never read as session expiry. A read that fails after the response event
// (the transport closes the body once it has the response, under a read
// still waiting for the end of the stream) is no broken stream: the call's
// outcome is its response.
//
// # Failure taxonomy
//
// Each failure has one type or sentinel; match them with errors.As and
// errors.Is, or name their class with Classify:
//
//   - *OutcomeUnknownError (ErrOutcomeUnknown; Kind "outcome_unknown"): the
//     server accepted the call but no response was read; the tool may have
//     run. Resumes counts the resumptions sent; Err is the cause when there
//     is one (the *StatusError of a refused resumption, ErrBudgetExceeded
//     when the budget allowed no further resumption). Check the effect
//     before doing it again.
//   - *ToolError ("tool_error"): the tool ran and reported isError: true.
//     Text holds its text content (a message for humans, never data) and
//     Result the exact result. Matches ErrToolFailed.
//   - *ProtocolError ("protocol"): a JSON-RPC error (unknown tool, invalid
//     arguments, an exception in the server; mcp-go servers report a
//     handler's Go error this way, go-sdk servers as isError). Code,
//     Message, and Data with the exact bytes received.
//   - *MalformedResultError ("malformed_result"): the response is not a
//     valid CallToolResult (isError not a boolean or given twice, content
//     missing, a content item without type, a duplicated result or error
//     member, a structuredContent that does not match the tool's
//     outputSchema, ...). Raw keeps the exact bytes and IsError says
//     whether isError was set in them; when it was, the error also matches
//     ErrToolFailed. Err is a *SchemaError for an outputSchema violation.
//     ErrIDMismatch (the response carried another JSON-RPC id) has the
//     same kind.
//   - *DecodeError ("decode"): the call succeeded but its payload is not
//     the JSON the caller asked for (CallJSON), or a page breaks the paging
//     convention or carries an item that is not a T (Page, Pages, All), or
//     a tools/list page is malformed (no tools array, a tool without name
//     or inputSchema object, a tool listed twice).
//     For a struct T, an object with none of T's fields, such as
//     {"detail":"Not found."}, is not a T. Raw keeps the payload.
//   - *StatusError: an HTTP status other than 2xx on the request's POST (or
//     the DELETE of Close), with StatusCode, Header (a 401's
//     WWW-Authenticate) and at most 64 KiB of Body; Error quotes a short
//     excerpt, trimmed and cut on a rune boundary. A 401 matches
//     ErrUnauthorized ("unauthorized") and is never retried but through an
//     Authorizer; 403 is
//     "forbidden"; a session that stays unknown after the one
//     re-initialization matches ErrSessionExpired ("session_expired");
//     any other status is "status".
//   - ErrBudgetExceeded ("budget_exceeded", WithBudget or
//     CallerOptions.Budget), ErrResponseTooLarge
//     ("too_large", WithMaxResponseBytes): before a call, nothing was sent;
//     when a response body was cut off, the tool ran or may still be
//     running, and its result is never returned. ErrNoToken ("no_token":
//     the token source failed or gave an empty token; nothing was sent),
//     ErrClosed ("closed": the Client or the Pool was closed).
//   - A scan stopped by a rule that spans pages (a repeated cursor, a total
//     that does not match the items read, the page cap): "incomplete".
//   - *AuthorizationError: a 401 ("unauthorized", matching
//     ErrUnauthorized) or 403 ("forbidden") that the Authorizer could not
//     answer (Err says why: for mcpauth, no client identity, a metadata
//     document for another resource, a step-up that cannot help, ...);
//     the request was not sent again.
//   - ErrPoolFull ("pool_full"): every session of the Pool is in use;
//     nothing was sent. Try again later or raise WithMaxSessions.
//   - A request refused before anything was sent (arguments that do not
//     encode to an object, a negative page size, an endpoint that is not
//     an http(s) URL, an option the constructor does not take, a reserved
//     WithRequestHeader): "invalid_argument". So are a *SchemaError for
//     arguments (Tool, Schema "inputSchema", Violations: every missing
//     required property and every top-level property that does not match,
//     else the validator's first finding) and ErrUnknownTool.
//   - The context's error when ctx ends ("canceled", "timeout"); the client
//     then tells the server with notifications/cancelled.
//   - Other transport failures, wrapped with the tool name and without the
//     endpoint URL: "transport".
//
// Classify tries the kinds in the order of the Kind constants, so an
// unknown outcome is reported as such even when a spent budget caused it.
//
// # Bounds
//
// Every response body is read through an exact cap: at most
// DefaultMaxResponseBytes (4 MiB) per response unless WithMaxResponseBytes
// says otherwise (an event stream and its resumptions count as one
// response), and at most 64 KiB of a non-2xx body is read and kept (the
// status, not the size, is then the error). WithBudget caps the calls and
// the total response bytes of a client, which suits an autonomous agent.
// Neither cap reads more than one byte past its limit from the body, so a
// 10 MiB body under a 4 MiB cap costs 4 MiB of reading, not 10; a response
// cut off by a cap is an error, never partial data. Bytes are counted
// below mcp-go, in the client's http.RoundTripper, as net/http delivers
// them (after any transparent gzip decoding), for every request including
// initialize, resumptions and retries. Once the byte budget is spent, no
// request is sent except the DELETE of Close.
//
// # Paging
//
// Page, Pages and All take a PageOptions value (its zero value: cursor
// paging, DefaultPageSize items a page, at most DefaultMaxPages pages and
// no item cap).
// They support cursor paging (arguments "limit" and "cursor", pages
// {"items": [...], "nextCursor": "..."|null, "total": n}) and limit/offset
// paging (PageOptions.Offset: arguments "limit" and "offset", pages with
// "items" and a required "total"; Page's cursor is then the decimal offset
// it returned as NextCursor).
//
// Page holds the rules of one page: a page is Last only when it says so
// (nextCursor null or "", or offset plus items equal to total), and a
// malformed page or an item that is not a T is a *DecodeError, never an
// empty page. A caller that needs one page at a time (for instance to keep
// its own caps between pages) loops over Page and keeps the rules that span
// pages: a repeated cursor, a total that does not match the items read.
//
// Pages is that loop (on the module's complete-scan helper), and All the
// same loop as an iter.Seq2. A scan is complete only when the last page
// says so; a malformed page, a repeated cursor, a total that does not
// match, a failed call, a spent budget, a cap (MaxPages, MaxItems) or a
// cancelled context leave Scan.Complete false with the Reason, and Pages
// returns the error, which says how far the scan got and reaches the cause
// with errors.As; All ends with that error as its last element, never with
// a silent end. For a tool with another scheme, write the loop with
// CallJSON and keep the same rule.
//
// # Telemetry
//
// WithTracerProvider and WithMeterProvider (Dial and NewPool; nil or
// absent: the global providers, no-ops unless the program installed an
// SDK) make the client follow the OpenTelemetry MCP client conventions.
// With no provider given and none installed, no span or attribute is
// built and a call allocates nothing more.
//
// Spans (kind client; scope github.com/candorkit/candor/mcpclient):
//
//	name                 one per
//	initialize           initialize handshake (Dial, a pooled session's
//	                     first call, a re-initialization: then a child of
//	                     the call that needed it)
//	tools/list           tools/list request (one per page)
//	tools/call {tool}    Call (a Pool Caller's Call includes opening the
//	                     subject's session; the one re-sending after session
//	                     expiry is part of the same span)
//
// Attributes: mcp.method.name; gen_ai.tool.name and gen_ai.operation.name
// ("execute_tool") on tools/call; mcp.protocol.version (the version the
// session agreed); jsonrpc.request.id (of the last attempt); server.address,
// server.port, network.transport ("tcp"), network.protocol.name ("http");
// on failure error.type, the Classify kind, with status Error described by
// the same kind (never the error text, never an exception event), and
// rpc.response.status_code, the JSON-RPC error code, for a *ProtocolError.
// mcp.session.id only with WithSessionIDAttribute: the client otherwise
// treats the session id like a token. A scan's own failures (incomplete)
// and CallJSON's decode failures are the caller's, not a request's: the
// request spans report success. No span attribute holds a token, an
// argument, a result or a header value.
//
// Metric: mcp.client.operation.duration (histogram, seconds, buckets
// 0.01 s to 300 s), one point per span above, with mcp.method.name,
// gen_ai.tool.name, mcp.protocol.version, error.type (on failure),
// server.address, server.port, network.transport and
// network.protocol.name.
//
// Propagation: when the context carries a span (the client's own, or the
// caller's when the client records nothing), its W3C trace context goes in
// the traceparent and tracestate headers of every HTTP request made for it
// (stream resumptions and re-initialization included, replacing a
// WithRequestHeader value of the same name) and in params._meta of each
// request message ("traceparent", "tracestate"), since several messages
// can share one HTTP stream. The global propagator is used when the program
// set one, else W3C trace context.
//
// # Testing
//
// The sub-package mcptest starts real mcp-go and go-sdk servers on
// loopback, with the caller's own tools (and their schemas), bearer
// checks, paged tool lists, tool lists that change, session expiry and a
// request log (with the trace context each request carried), for tests of
// code that uses this package.
package mcpclient
