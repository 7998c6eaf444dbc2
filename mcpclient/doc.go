// Package mcpclient calls MCP tools over streamable HTTP, on top of
// github.com/mark3labs/mcp-go v1.2.1, so that a failed tool call can never be
// read as data.
//
// An agent that looks only at the JSON-RPC error of an MCP reply takes a
// result with isError: true for an answer: the text "HTTP call failed with
// status 404" becomes a product. Every function of this package returns
// either a decoded success or a typed error that keeps the evidence.
//
// # Connecting
//
// Dial runs the initialize handshake pinned to protocol 2025-11-25 (see
// WithProtocolVersion), keeps the session id from the Mcp-Session-Id header
// of the initialize answer and sends notifications/initialized (skip it with
// WithoutInitializedNotification). WithTokenSource puts the caller's bearer
// token on every request, including re-initialization and the DELETE that
// Close sends to end the session. The client follows no redirect and refuses
// to send a token over plain http except to a loopback address. A Client
// prints and logs (String, Format, LogValue) only its endpoint, protocol
// version and whether it holds a session: never a token or the session id.
//
// # Calling
//
// Client.Call sends nil arguments as {} and returns a *Result only for a
// well-formed result without isError. CallJSON decodes the payload
// (structuredContent, else the single text item) into a Go type. Page reads
// one page of a paging tool (its items, the next cursor, whether it was the
// last page, the total when reported); Pages reads a paging tool to the end
// with Page and reports in Scan.Complete whether the server said the list
// was whole.
//
// When the server answers a call with 404, or with a 400 whose body says the
// session is unknown, the client initializes a new session once and sends
// the call once more; a second failure is returned. A re-initialization
// that fails (network, token source, cancelled context) leaves the client
// usable: the next call tries again.
//
// # Failure taxonomy
//
// Each failure has one type or sentinel; match them with errors.As and
// errors.Is:
//
//   - *ToolError: the tool ran and reported isError: true. Text holds its
//     text content (a message for humans, never data) and Result the exact
//     result. Matches ErrToolFailed.
//   - *ProtocolError: a JSON-RPC error (unknown tool, invalid arguments, an
//     exception in the server; mcp-go servers report a handler's Go error
//     this way, go-sdk servers as isError). Code, Message and raw Data.
//   - *MalformedResultError: the result is not a valid CallToolResult
//     (isError not a boolean, content missing, a content item without type,
//     ...). Raw keeps the exact bytes and IsError says whether isError was
//     set in them; when it was, the error also matches ErrToolFailed.
//   - *DecodeError: the call succeeded but its payload is not the JSON the
//     caller asked for (CallJSON), or a page breaks the paging convention
//     or carries an item that is not a T (Page, Pages). For a struct T, an
//     object with none of T's fields, such as {"detail":"Not found."}, is
//     not a T. Raw keeps the payload.
//   - *StatusError: an HTTP status other than 2xx, with at most 64 KiB of
//     the body. A 401 matches ErrUnauthorized and is never retried; a
//     session that stays unknown after the one re-initialization matches
//     ErrSessionExpired.
//   - ErrBudgetExceeded (WithBudget), ErrResponseTooLarge
//     (WithMaxResponseBytes), ErrNoToken (the token source failed or gave
//     an empty token; nothing was sent), ErrIDMismatch (the response carried
//     another JSON-RPC id), ErrClosed.
//   - The context's error when ctx ends; the client then tells the server
//     with notifications/cancelled.
//   - Other transport failures, wrapped with the tool name.
//
// # Bounds
//
// Every response body is read through a counting reader: at most
// DefaultMaxResponseBytes (4 MiB) per response unless WithMaxResponseBytes
// says otherwise, and at most 64 KiB of a non-2xx body is read and kept
// (the status, not the size, is then the error). WithBudget
// caps the number of calls and the total response bytes of a client, which
// suits an autonomous agent; a response cut off by a cap is an error, never
// partial data. Bytes are counted below mcp-go, in the client's
// http.RoundTripper, as net/http delivers them (after any transparent gzip
// decoding), for every request including initialize and retries. Once the
// byte budget is spent, no request is sent except the DELETE of Close.
//
// # Paging
//
// Page and Pages support cursor paging (the default: arguments "limit" and
// "cursor", pages {"items": [...], "nextCursor": "..."|null, "total": n})
// and limit/offset paging (WithOffsetPaging: arguments "limit" and
// "offset", pages with "items" and a required "total"; Page's cursor is then
// the decimal offset it returned as NextCursor).
//
// Page holds the rules of one page: a page is Last only when it says so
// (nextCursor null or "", or offset plus items equal to total), and a
// malformed page or an item that is not a T is a *DecodeError, never an
// empty page. A caller that needs one page at a time (for instance to keep
// its own caps between pages) loops over Page and keeps the rules that span
// pages: a repeated cursor, a total that does not match the items read.
//
// Pages is that loop. A scan is Complete only when the last page says so;
// a malformed page, a repeated cursor, a total that does not match, a
// failed call, a spent budget, the page cap or a cancelled context leave
// Complete false with the Reason, and Pages returns the cause as its error.
// For a tool with another scheme, write the loop with CallJSON and keep the
// same rule.
package mcpclient
