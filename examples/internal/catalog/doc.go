// Package catalog is the embedded MCP catalog server the candor examples run
// when no -catalog URL is given: the 110-product classicmodels catalog
// (embedded from products.csv) behind two read-only tools, served by
// mark3labs/mcp-go over streamable HTTP with a stateful session manager.
//
// Tools:
//
//   - list-products {limit?, cursor?}: one page of products as
//     {"items":[...], "nextCursor": "<opaque>"|null, "total": 110}, in
//     structuredContent and as the same JSON text. The first page has no
//     cursor; nextCursor is null on the last page. limit defaults to 50 and
//     is served up to WithMaxPageSize (default 200).
//   - get-product {productCode}: the product object, or, for an unknown code,
//     isError with the text of NotFoundText, exactly as the real catalog
//     reports it.
//
// Products carry the CSV's field names: productCode, productName,
// productLine, productScale, productVendor, quantityInStock (integer) and
// buyPrice (number).
//
// A Server is an http.Handler; Start serves it on 127.0.0.1 at a free port.
// WithBearerCheck requires and hands over the Authorization bearer token;
// Calls, ToolCalls and Requests count what reached the server, so a test can
// assert that an agent made no MCP call at all.
//
// # Failure taxonomy
//
//   - New fails on a malformed embedded or given catalog (ParseCSV names the
//     line; empty and repeated codes are refused).
//   - HTTP: 401 with a WWW-Authenticate challenge when the bearer check is
//     on and the token is missing or refused; 404 from mcp-go for an unknown
//     or terminated session; a request body over MaxRequestBytes is answered
//     400 with a JSON-RPC parse error (-32700) and reaches no tool.
//   - Tool errors are isError results, never JSON-RPC errors: unknown code
//     (NotFoundText), a limit that is not an integer ≥ 1, a malformed or
//     out-of-range cursor, a missing productCode.
package catalog
