// Command availability is the check-availability agent: a person asks, in
// any language, whether a product can be promised; the agent answers from
// the catalog, with its basis, or escalates to a person.
//
//	go run ./examples/availability
//
// With no flags it starts, on 127.0.0.1, the demo world of
// examples/internal/demo (shared with the reorder example): the embedded
// MCP catalog (examples/internal/catalog, 110 products), an embedded OpenID
// provider (tokenexchange/oidctest, zitadel/oidc's OP: a demo user "marie", the
// front-end client that issued her token, the agent's confidential client
// allowed to exchange tokens, and the catalog's audience "catalog-mcp") and
// the agent; then it sends three questions through an a2a-go v2 client
// speaking A2A 1.0 and prints each task's state and answer:
//
//	> Peut-on promettre S10_1949 ?
//	  completed: Yes — 1952 Alpine Renault 1300 (S10_1949) can be promised: 7305 in stock, above the reorder threshold of 50.
//
//	> Peut-on promettre la Vespa ?
//	  failed (escalated): No product reference in the question: name the catalog code (for instance S10_1949); the agent does not guess a product from its name.
//
//	> Peut-on promettre S99_NOPE ?
//	  failed (escalated): There is no product S99_NOPE in the catalog.
//	…
//	demo: every question reached the agent's decision: 1 completed, 2 escalated to a person
//
// # How an answer is made
//
// The agent is package a2a's Server (A2A 1.0 and 0.3 on one endpoint, the
// Agent Card, a task store) around the backend of package
// examples/availability/internal/check. Before anything is done for a
// request, the Server verifies its bearer token with package a2a/jwtauth: a
// JWT signed with a key the issuer publishes, issued by that issuer, for the
// agent's audience, not expired (the embedded provider's tokens for the
// agent's client, availability-agent; with real services -issuer's, for
// -agent-audience). A missing, malformed, forged, expired or other-audience
// token is answered HTTP 401 with WWW-Authenticate: no task is made, no
// token is exchanged, the catalog is not called. For each question it then
// takes the caller's bearer token, reads the product code with a rule (S, digits,
// underscore, word characters; never a model), exchanges the token at the
// provider for the catalog's audience (RFC 8693, package tokenexchange,
// cached per caller), calls the catalog's get-product tool through package
// mcpclient with the exchanged token only, and decides on the stock on
// hand: more than the reorder threshold (50) is a promise; at or below it,
// the answer says so and escalates. Quantities committed on open orders are
// not deducted; the card's skill description says so. The catalog's bearer
// check verifies every token at the provider for its own audience, so the
// caller's own token, issued for the agent, is refused there.
//
// # Flags
//
//	-ask "…"          ask this one question instead of the three
//	-serve            only serve: print the card URL and serve until SIGINT/SIGTERM
//	                  (with the embedded provider, a fresh token of the demo user is
//	                  written to a 0600 file whose path is printed, removed on exit;
//	                  the token is never printed)
//	-token-file PATH  with -serve and the embedded provider: write that token to
//	                  PATH (atomically, replacing a file left there), for a script
//	                  or a conformance kit; refused with real services
//	-tokenless-tasks  the explicit opt-in to answer a message sent without any
//	                  token with a task that fails "no identity" instead of 401
//	-tasks DSN        keep the A2A tasks in PostgreSQL (postgres:// or postgresql://;
//	                  schema candor_a2a, created when missing), shared by every
//	                  replica on that database; absent: in this process's memory.
//	                  A malformed DSN is a usage error, never printed; an
//	                  unreachable database exits 1
//	-listen addr      where the agent listens (default 127.0.0.1, a free port)
//	-v                log the agent's work on stderr (never a token)
//	-mcp URL          the catalog's MCP endpoint            (AVAILABILITY_MCP_URL)
//	-issuer URL       the OpenID issuer: discovery, and the keys that verify
//	                  every caller's token                  (AVAILABILITY_ISSUER)
//	-token-url URL    the token endpoint, instead of discovery (AVAILABILITY_TOKEN_URL)
//	-client-id ID     the agent's client                    (AVAILABILITY_CLIENT_ID)
//	-client-secret    its secret; prefer AVAILABILITY_CLIENT_SECRET
//	-audience AUD     audience requested for the catalog    (AVAILABILITY_AUDIENCE)
//	-agent-audience AUD  audience a caller's token must carry (default -client-id;
//	                  AVAILABILITY_AGENT_AUDIENCE)
//
// Naming any real service (an -audience, an -agent-audience or a caller's
// token in AVAILABILITY_USER_TOKEN included) starts nothing embedded: then
// -mcp, -issuer, -client-id and the client secret are all required, and
// asking (not -serve) needs the caller's access token in
// AVAILABILITY_USER_TOKEN. The catalog, the issuer, the token endpoint and
// the token endpoint that discovery names must be https (plain http only
// on loopback): a token or the client secret never travels in clear.
//
// # Failures
//
// Only a catalog product above the threshold completes a task. No product
// code, several codes, an unknown product (the catalog's isError 404) and a
// stock at or below the threshold are decided escalations (task failed,
// status metadata failure "escalated"). A request without a bearer token,
// or with one the verifier refuses, gets HTTP 401 with WWW-Authenticate and
// no task. With -tokenless-tasks, a message without any token is instead a
// task that fails with "no identity: the request carried no bearer token"
// (failure "no_identity", in A2A 1.0 and 0.3 alike: a2a.WithNoIdentityTasks);
// it reaches neither the provider nor the catalog, and only a call without a
// token can read that task back by its id. A verified token the provider
// still refuses in the exchange (revoked since it was issued) fails the task
// with "no identity: …" (failure "backend") and the catalog is never
// called. Any
// other failure (the exchange, the catalog's transport, status, JSON-RPC
// error, another isError, a payload that is not a usable product) fails the
// task with a one-line reason (failure "backend"), never a guess. See
// package check for the typed causes.
//
// Exit status. With -ask (one question a script asked): 0 only when its
// task completed; 1 when it failed, was escalated, or got no task. The demo
// (no -ask): 0 when every showcase question reached the state the agent
// decided, completed or escalated to a person (two of the three escalate by
// design, and the last line of the output says so); 1 when any failed for a
// technical reason (backend, no identity, any failure kind but
// "escalated") or got no task (a token the agent refused included), with a
// line on stderr naming them. -serve: 0 when stopped by SIGINT or SIGTERM.
// Also 1 when a service could not start or stopped; 2 for bad flags or
// arguments, printed with the usage on stderr. A second SIGINT exits at
// once. See docs/examples.md.
package main
