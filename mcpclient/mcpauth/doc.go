// Package mcpauth is the authorization client of the Model Context
// Protocol (specification 2025-11-25, with the 2025-03-26 fallbacks): it
// finds out from an MCP server's challenge which authorization server
// protects it, identifies the program there, obtains a bearer token for
// exactly that server, and steps up when a request needs more scope. An
// *Authorizer plugs into mcpclient with mcpclient.WithAuthorizer; it is
// built on golang.org/x/oauth2 (tokens are *oauth2.Token, the
// authorization URL and PKCE come from it).
//
//	a, err := mcpauth.New(mcpauth.ClientCredentials(), mcpauth.WithClient(id, secret))
//	c, err := mcpclient.Dial(ctx, endpoint, mcpclient.WithAuthorizer(a))
//
// # What happens on a 401
//
//  1. Protected resource metadata (RFC 9728): the URL named by the
//     challenge's resource_metadata, else the path-aware well-known
//     location (/.well-known/oauth-protected-resource/<path>), then the
//     root one. Its resource must be the MCP server (same scheme, host and
//     port; a path that is the endpoint's or a parent of it): otherwise
//     ErrResourceMismatch, and no authorization is attempted.
//  2. Authorization server metadata, for its first authorization_servers
//     entry: RFC 8414's location, then OpenID discovery's two (path-aware
//     for an issuer with a path); the document's issuer must be that
//     server. A server without protected resource metadata is treated as
//     the 2025-03-26 specification says: its origin is the authorization
//     server, with metadata there or the default /authorize, /token and
//     /register.
//  3. The client's identity: the pre-registered client (WithClient), else
//     the client ID metadata document URL (WithClientMetadataURL) when the
//     server sets client_id_metadata_document_supported, else dynamic
//     registration (RFC 7591) when it has a registration endpoint (kept
//     per issuer). Token endpoint authentication: private_key_jwt
//     (WithPrivateKey), client_secret_basic, client_secret_post or none,
//     chosen from token_endpoint_auth_methods_supported or as registered.
//  4. Scopes: the challenge's scope, else the metadata's scopes_supported,
//     else none; offline_access is added only with WithOfflineAccess and
//     only when the authorization server lists it.
//  5. The flow: AuthorizationCode (PKCE S256, refused when the server's
//     metadata does not list S256; a random state, and the RFC 9207 iss
//     when the callback carries one, checked; the caller's LoginFunc is
//     the browser step), ClientCredentials, JWTBearer (an assertion the
//     caller obtains, for example an identity assertion by token
//     exchange), or Delegated (the caller obtains the token itself, for
//     example by exchanging its user's token with package tokenexchange
//     for the Target's resource). Every authorization and token request
//     carries the resource indicator (RFC 8707).
//
// A 401 for a token that was accepted before is answered with the refresh
// token when there is one, else with the flow again, for at least the
// scopes that token was asked with (a step-up is not undone). A token
// answer without scope, and a Delegated token, count as granted what was
// asked. A 403 with
// error="insufficient_scope" asks for the scopes already held plus those
// the challenge names (step-up); mcpclient sends a request again at most
// mcpclient.MaxAuthorizeRetries times.
//
// # Failures
//
// Every error is typed and keeps its evidence; Classify names its Kind.
//
//   - ErrConfig ("config"): New's options cannot work together (no flow,
//     AuthorizationCode without WithRedirectURL, a private key of an
//     unsupported type, a client metadata URL that is not https).
//   - ErrInsecure ("insecure"): a metadata document named an endpoint
//     that is neither https nor http on a loopback host; it was not used.
//   - ErrResourceMismatch ("resource_mismatch"): the protected resource
//     metadata is for another resource (a *MetadataError). Nothing was
//     sent to any authorization server.
//   - *MetadataError, ErrMetadata, ErrNoMetadata ("metadata"): a document
//     is missing (the challenge's resource_metadata not found, no
//     authorization server metadata anywhere), malformed (not one JSON
//     object, over WithMaxResponseBytes), or for another issuer; URL, Body
//     and Reason say which. A 4xx at a well-known location means "not
//     here" and the next one is tried; a 5xx is an error, never a skip.
//   - ErrNoClient ("no_client"): no pre-registered client, no client ID
//     metadata document the server accepts, no registration endpoint.
//   - ErrUnsupported ("unsupported"): the server lacks what the flow needs
//     (PKCE S256, the grant type, an authentication method for the
//     client's credentials, an authorization endpoint).
//   - *ScopeError, ErrInsufficientScope ("insufficient_scope"): stepping
//     up cannot help: the refused token already holds every scope the
//     server asks for, the authorization server granted less than asked,
//     or the 403 names no scope or is not insufficient_scope.
//   - *DeniedError, ErrDenied ("denied"): the authorization request came
//     back with an error (ErrorCode, ErrorDescription), or the callback is
//     not this request's (another redirect URL, state or issuer, no code).
//   - *StatusError ("rejected"): the token or registration endpoint, or a
//     metadata host with a 5xx, answered non-2xx: StatusCode, Header, Body
//     (at most WithMaxResponseBytes) and the OAuth error members; the
//     client secret, assertions, codes, verifiers and tokens are blanked
//     out of all of it. RetrieveError gives it as golang.org/x/oauth2's
//     *oauth2.RetrieveError.
//   - *TokenResponseError, ErrToken ("token"): a 2xx token answer that is
//     not a usable bearer token (no access_token, a token_type other than
//     Bearer, a bad expires_in, not one JSON object); never a token.
//   - *TransportError ("transport"): no answer (without URL query or
//     secret); and the errors of the caller's LoginFunc, AssertionFunc or
//     TokenFunc, wrapped.
//
// Through mcpclient, an Authorize error arrives inside an
// *mcpclient.AuthorizationError (errors.As reaches the types above).
//
// # Secrets and bounds
//
// No client secret, assertion, authorization code, code verifier or token
// reaches an error, a log or a request other than the one it is for:
// tokens go only to the MCP endpoint's origin (mcpclient enforces it),
// client credentials only to the token endpoint. Every answer is read
// through an exact cap (DefaultMaxResponseBytes unless
// WithMaxResponseBytes); redirects are never followed; TLS is verified
// (WithRootCAs adds roots, never disables checks). Nothing is logged
// unless WithLogger is given.
//
// # Telemetry
//
// With WithTracerProvider (or a global provider), each Authorize, and each
// token Token obtains again, is a SpanAuthorize span (server.address of
// the MCP endpoint, mcpauth.flow, mcpauth.challenge.status_code, error.type
// the Classify kind on failure), parent of one client span per request to
// a metadata host or authorization server (named by the HTTP method, with
// mcpauth.operation, server.address, server.port, url.scheme,
// http.response.status_code); the trace context goes in their traceparent
// header. MetricRequestDuration records each such request. No span or
// metric carries a token, code, secret, path or query.
//
// # Not done
//
// The Authorizer keeps tokens and registrations in memory only; a program
// that must survive restarts without a new login keeps its refresh token
// itself (for example in a tokenexchange/mandate store) and uses Delegated.
// DPoP-bound tokens are refused (token_type must be Bearer).
// docs/mcpauth.md summarises the specifications and the conformance run.
package mcpauth
