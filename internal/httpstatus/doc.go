// Package httpstatus records the status code an http.Handler answered with,
// for the project's in-process test servers (mcpclient/mcptest and
// tokenexchange/oidctest) that log or count what they served.
//
// Recorder wraps an http.ResponseWriter. Status is 0 until the handler writes
// a header or a body; a body written without an explicit header counts as 200,
// as net/http sends it. Flush and Unwrap pass through, so streaming responses
// (server-sent events) and http.ResponseController keep working.
package httpstatus
