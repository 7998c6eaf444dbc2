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
//     tokenexchange.MandateStore: the refresh token is redeemed at the
//     agent's client and the access token exchanged (RFC 8693) for the
//     catalog's audience. Without a mandate the run logs "no mandate:
//     halting before any exchange or read" and exits 0: no request reaches
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
//     completion or not at all, and approving again writes nothing. reject
//     after approve (or approve after reject) is refused and changes nothing.
//
// By default everything runs on 127.0.0.1, in the demo world of
// examples/internal/demo shared with the availability example: the
// embedded MCP catalog of examples/internal/catalog (110 classicmodels
// products) behind a bearer check that verifies every token at an embedded
// OpenID provider (internal/oidctest), where the demo user marie grants the
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
// unset) and demo-consent.
//
// # Exit codes and failures
//
// 0: a complete proposal (with or without a ticket), a decision recorded, or
// no mandate (the person did not authorise the agent: nothing was done).
// 1: an incomplete scan; a mandate the provider rejected or the key cannot
// open; an unreachable or failing catalog or provider; a decision refused
// because another one stands; an unknown operation id; an apply whose
// effect failed (nothing was written, the ticket stays approved and
// approving again retries). 2: bad flags or arguments. Tokens, client
// secrets and the mandate key never appear in the output or the logs.
//
// # Limits
//
// Open reorders are not deducted from the stock on hand: the catalog does
// not know about them, so until the stock changes the next day's run
// proposes the same line again, under a new ticket for that day.
package main
