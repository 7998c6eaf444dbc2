// Command availability is the check-availability agent: a person asks, in
// any language, whether a product can be promised; the agent answers from
// the catalog, with its basis, or escalates to a person.
//
//	go run ./examples/availability
//
// With no flags it starts, on 127.0.0.1, the demo world of
// examples/internal/demo (shared with the reorder example): the embedded
// MCP catalog (examples/internal/catalog, 110 products), an embedded OpenID
// provider (internal/oidctest, zitadel/oidc's OP: a demo user "marie", the
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
//
// # How an answer is made
//
// The agent is package a2a's Server (A2A 1.0 and 0.3 on one endpoint, the
// Agent Card, a task store) around the backend of package
// examples/availability/internal/check. For each question it takes the
// caller's bearer token, reads the product code with a rule (S, digits,
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
//	-ask "…"        ask this one question instead of the three
//	-serve          only serve: print the card URL and serve until SIGINT/SIGTERM
//	                (with the embedded provider, the demo user's token is written
//	                to a 0600 file whose path is printed; the token is never printed)
//	-listen addr    where the agent listens (default 127.0.0.1, a free port)
//	-v              log the agent's work on stderr (never a token)
//	-mcp URL        the catalog's MCP endpoint          (AVAILABILITY_MCP_URL)
//	-issuer URL     the OpenID issuer, for discovery    (AVAILABILITY_ISSUER)
//	-token-url URL  the token endpoint, without discovery (AVAILABILITY_TOKEN_URL)
//	-client-id ID   the agent's client                  (AVAILABILITY_CLIENT_ID)
//	-client-secret  its secret; prefer AVAILABILITY_CLIENT_SECRET
//	-audience AUD   audience requested for the catalog  (AVAILABILITY_AUDIENCE)
//
// Naming any real service (an -audience or a caller's token in
// AVAILABILITY_USER_TOKEN included) starts nothing embedded: then -mcp,
// -issuer or -token-url, -client-id and the client secret are all
// required, and asking (not -serve) needs the caller's access token in
// AVAILABILITY_USER_TOKEN. The catalog, the issuer, the token endpoint and
// the token endpoint that discovery names must be https (plain http only
// on loopback): a token or the client secret never travels in clear.
//
// # Failures
//
// Only a catalog product above the threshold completes a task. No product
// code, several codes, an unknown product (the catalog's isError 404) and a
// stock at or below the threshold are decided escalations (task failed,
// status metadata failure "escalated"). A question without a bearer token
// is a task that fails with "no identity: the request carried no bearer
// token" (failure "no_identity", in A2A 1.0 and 0.3 alike: the agent serves
// with a2a.WithNoIdentityTasks); it reaches neither the provider nor the
// catalog, and only a call without a token can read that task back by its
// id. A token the provider refuses in the exchange fails the task with "no
// identity: …" and the catalog is never called. Any
// other failure (the exchange, the catalog's transport, status, JSON-RPC
// error, another isError, a payload that is not a usable product) fails the
// task with a one-line reason (failure "backend"), never a guess. See
// package check for the typed causes.
//
// Exit status: 0 when every question got a task (whatever its state), 1
// when a question got no task or a service could not start, 2 for bad
// flags.
package main
