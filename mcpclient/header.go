package mcpclient

import (
	"context"
	"maps"
	"net/http"
	"slices"
)

// reservedHeaders are the headers the client sets itself; a caller's
// header of one of these names is refused before anything is sent.
var reservedHeaders = []string{
	"Authorization", "Mcp-Session-Id", "Mcp-Protocol-Version", "Last-Event-Id",
	"Content-Type", "Content-Length", "Accept", "Host", "Connection", "Transfer-Encoding",
	"Upgrade", "Te", "Trailer", "Keep-Alive", "Proxy-Authorization", "Proxy-Connection",
}

// WithRequestHeader returns a context whose calls carry h, on top of any
// header an outer WithRequestHeader gave (the inner value of a name wins),
// without a new Dial: the POST of each request made with the context, the
// resumptions of its event stream, the re-initialization it may cause and
// its notifications/cancelled. The DELETE that ends a session is sent
// without them. h is copied.
//
// A header the client sets itself (Authorization, Mcp-Session-Id,
// Mcp-Protocol-Version, Last-Event-ID, Content-Type, Content-Length,
// Accept, Host, and the hop-by-hop headers) makes each call with the
// context fail before anything is sent (Kind invalid_argument). Header
// values are never logged, and the client does not print them in errors.
func WithRequestHeader(ctx context.Context, h http.Header) context.Context {
	e := envOf(ctx)
	merged := make(http.Header, len(e.header)+len(h))
	maps.Copy(merged, e.header)
	for k, vs := range h {
		merged[http.CanonicalHeaderKey(k)] = slices.Clone(vs)
	}
	e.header = merged
	return withEnv(ctx, e)
}

// checkHeader refuses a context whose headers name a reserved header.
func checkHeader(ctx context.Context) error {
	for k := range envOf(ctx).header {
		if slices.Contains(reservedHeaders, http.CanonicalHeaderKey(k)) {
			return usagef("mcpclient: WithRequestHeader: the client sets %s itself", http.CanonicalHeaderKey(k))
		}
	}
	return nil
}
