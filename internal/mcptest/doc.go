// Package mcptest starts real MCP servers on 127.0.0.1 for tests: a
// github.com/mark3labs/mcp-go v1.2.1 streamable HTTP server with
// server.InsecureStatefulSessionIdManager (so ended sessions get real 404s)
// and a github.com/modelcontextprotocol/go-sdk v1.8.0 streamable HTTP server
// (stateful, answering with server-sent events).
//
// Both offer the same tools (see the Tool constants): a success that echoes
// its arguments, an isError failure, a handler returning a Go error, text
// that is not JSON, a list paged by the candor convention (cursor or
// offset, with faults on request), a large body and a tool that blocks until
// cancelled. Every HTTP request is recorded (method, JSON-RPC method,
// Authorization, session and protocol headers, status); WithBearer makes the
// server require a bearer token, Terminate ends a session on the server side
// and WithUnknownSession400 answers ended sessions the way TypeScript SDK
// servers do (400 "No valid session ID provided").
//
// Use New in tests (it stops the server at the end of the test) and Start
// elsewhere, for instance in runnable examples.
//
// Failures: Start returns an error when the kind is unknown or no loopback
// port can be opened; New fails the test instead. Terminate returns an
// error when the server does not know the session.
package mcptest
