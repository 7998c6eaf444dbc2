// Package mcptest starts real MCP servers on 127.0.0.1 for tests, in the
// style of net/http/httptest: a github.com/mark3labs/mcp-go v1.2.1
// streamable HTTP server with server.InsecureStatefulSessionIdManager (so
// ended sessions get real 404s), and a
// github.com/modelcontextprotocol/go-sdk v1.8.0 streamable HTTP server
// (stateful, answering with server-sent events). Run a suite against both
// with Kinds: a client that passes against both meets the two shapes real
// servers answer with.
//
// # Tools
//
// Both servers offer the same built-in tools (see the Tool constants): a
// success that echoes its arguments, an isError failure, a handler
// returning a Go error, text that is not JSON, a list paged by the candor
// convention (cursor or offset, with faults on request), a large body and
// a tool that blocks until cancelled (Entered says when it started) and a
// tool that asks the client for an elicitation (ToolElicit). The caller
// adds its own tools with WithTools, with the InputSchema and OutputSchema
// the server lists (and does not enforce), or to a running server with
// AddTools (the tool list changes, and notifications/tools/list_changed
// goes out; WithEventStore makes the mcp-go server write it on the stream
// of a call whose Handle changed the list, before the result, where
// without one it may drop it); a Tool's Handle gets the arguments exactly
// as received and answers a Result, or a Go error.
// WithToolsPageSize pages tools/list.
//
// # Faults and checks
//
// WithBearer makes the server require a bearer token on every request (401
// with WWW-Authenticate otherwise), WithBearerCheck any token a function
// accepts (tests with many users); Terminate ends a session on the server
// side, as an expiry or a restart would; WithUnknownSession400 answers
// ended sessions the way TypeScript SDK servers do (400 "No valid session
// ID provided"); ToolBig answers an oversized result, ToolBlock a slow
// one, ToolFail an isError one. Every HTTP request is recorded (method,
// JSON-RPC method, Authorization, session and protocol headers, every
// header, the POST body, status, and the trace context that arrived: the
// traceparent and tracestate headers and the params._meta of the message,
// with its traceparent): Requests and Calls return the log, and TraceID
// reads the trace id of a traceparent value.
//
// Use New in tests (it takes a testing.TB and stops the server at the end
// of the test) and Start elsewhere, for instance in runnable examples.
//
// # Failure taxonomy
//
// Start returns an error when the kind is unknown, an option is invalid
// (a negative WithItems or WithToolsPageSize, a nil WithBearerCheck, a Tool
// without a name or Handle, an InputSchema that is not an object schema of
// type "object", an OutputSchema that is not JSON) or no loopback port can
// be opened; New fails the test instead. AddTools refuses the same Tools.
// Terminate returns an error when the server does not know the session.
package mcptest
