// Command reorder is candor's periodic purchase-proposal agent: every day at
// 06:00 Europe/Paris it reads the product catalog over MCP, proposes to
// order up to 150 every reference with fewer than 50 on hand, and turns the
// proposal into an approval ticket that a person approves or rejects.
//
//	go run ./examples/reorder -once           # run now, print the proposal
//	go run ./examples/reorder -once -json     # the same as JSON
//	go run ./examples/reorder approve ID      # approve: write the reorders rows
//	go run ./examples/reorder reject ID
//	go run ./examples/reorder show ID
//	go run ./examples/reorder revoke          # the demo user withdraws her mandate
//	go run ./examples/reorder grant           # ... and gives it again
//	go run ./examples/reorder                 # run daily until SIGINT/SIGTERM
//
// It puts candor together:
//
//   - No identity, no action. At 06:00 no one is logged in, so the agent
//     acts on the person's offline mandate, kept sealed by
//     mandate.Store (tokenexchange/mandate): the refresh token is redeemed at the
//     agent's client and the access token exchanged (RFC 8693) for the
//     catalog's audience. Without a mandate the run logs "no mandate:
//     halting before any exchange or read" and exits 1: no request reaches
//     the token endpoint or the catalog (reorder.Runner calls the catalog
//     opener only once it holds a mandate).
//   - The catalog is read through mcpclient (bearer token on every request,
//     a call and byte budget, isError never read as data) by an adapter of
//     the paged list-products tool to reorder.Catalog, one mcpclient.Page
//     call per page (the agent adds its product checks on top);
//     reorder.Plan keeps the page and item caps and says whether the scan
//     was complete.
//   - An incomplete scan (page cap, item cap, a failed or malformed page) is
//     printed as INCOMPLETE with its reasons, never becomes a ticket, and
//     exits 1. A complete scan with lines becomes an approval ticket whose
//     draft is the proposal (Draft, with a Validate that refuses an
//     incomplete scan and any line that breaks the rule it states).
//   - The ticket's operation id is "reorder-<run date>-<12 hex digits of the
//     SHA-256 of the draft>", the run date being the day of the run in the
//     schedule's zone. Re-running the same day on the same catalog gives the
//     same id and the same draft, so no second ticket appears; a different
//     proposal is a different thing to approve and gets its own id.
//   - approve records the decision and applies it with approval.Apply: one
//     row per line in the reorders table of the same SQLite file, written by
//     the Effect in the store's transaction, so the rows commit with the
//     completion or not at all, and approving again writes nothing. The same
//     verdict again, by anyone, records nothing new and exits 0; reject
//     after approve (or approve after reject) is refused and changes nothing
//     (the examples' one policy, docs/examples.md). -by defaults to $USER,
//     else the login name, else "operator".
//
// By default everything runs on 127.0.0.1, in the demo world of
// examples/internal/demo shared with the availability example: the
// embedded MCP catalog of examples/internal/catalog (110 classicmodels
// products) behind a bearer check that verifies every token at an embedded
// OpenID provider (tokenexchange/oidctest), where the demo user marie grants the
// agent a mandate on the first run. The provider lives as long as the process, so while her
// consent stands the demo has her grant a fresh offline token at every
// start; revoke erases the mandate and records her choice, grant restores
// it. With -catalog URL nothing is embedded: -token-url, -client-id, -user
// and CANDOR_REORDER_CLIENT_SECRET name the real provider, and the mandate
// key comes from CANDOR_MANDATE_KEY only.
//
// # State
//
// The state directory (-state, env CANDOR_REORDER_STATE, default
// <user config dir>/candor/reorder, e.g. ~/.config/candor/reorder on Linux;
// created with mode 0700) holds approvals.db (tickets, decisions, approved
// items and the reorders table), mandates.db (sealed mandates) and, for the
// demo only, demo-mandate.key (the demo's key when CANDOR_MANDATE_KEY is
// unset) and demo-consent. -approvals (env CANDOR_REORDER_APPROVALS) and
// -mandates (env CANDOR_REORDER_MANDATES) move the approval store (with the
// reorders table) and the mandate store elsewhere: a SQLite file path, or a
// PostgreSQL database when the value starts with postgres:// or
// postgresql:// (schemas candor and candor_reorder, created when missing),
// so that replicas and job pods share one truth. A malformed DSN is a usage
// error (exit 2; 3 when it comes from the environment) that never prints
// the DSN; an unreachable database exits 1. To start over, delete the directory (the demo
// grants marie's mandate again on the next run). The first go run compiles
// for about a minute and a half (docs/examples.md).
//
// # Exit codes and failures
//
// 0: a complete proposal (with or without a ticket), or a decision recorded
// or already standing. 1: no mandate (the person did not authorise the
// agent: nothing was done, and nothing done is not a success); an
// incomplete scan; a mandate the provider rejected or the key cannot open;
// an unreachable or failing catalog or provider; a decision refused because
// another one stands; an unknown operation id; an apply whose effect failed
// (nothing was written, the ticket stays approved and approving again
// retries). 2: bad flags or arguments, printed as one line and the usage on
// stderr (-h prints the usage on stdout and exits 0). 3: configuration:
// CANDOR_MANDATE_KEY missing or invalid with real services, or
// CANDOR_OFFLINE_TOKEN missing for grant. In the daily loop a failed run is
// logged and the loop goes on; a first SIGINT or SIGTERM ends the loop
// (exit 0; a run in flight is cancelled), a second exits at once (exit 1). Tokens, client
// secrets and the mandate key never appear in the output or the logs.
//
// # Telemetry
//
// With OTEL_EXPORTER_OTLP_ENDPOINT (or the per-signal
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_METRICS_ENDPOINT)
// set, the program installs the OpenTelemetry SDK and every candor package
// it uses exports its spans and metrics over OTLP/HTTP, as service
// OTEL_SERVICE_NAME (default: the program's name); with none set nothing
// is exported. A value that is not an http(s) URL is a configuration
// error (exit 3), reported after the flags are checked; -h lists the
// variables.
//
// # Limits
//
// Open reorders are not deducted from the stock on hand: the catalog does
// not know about them, so until the stock changes the next day's run
// proposes the same line again, under a new ticket for that day.
package main
