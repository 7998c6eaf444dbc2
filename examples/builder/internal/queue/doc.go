// Package queue is the builder's work queue: the automation_ideas table the
// builder takes ideas from, the agent_test_results table it logs every test
// level to, and the http_captures table its assertion checks read.
//
// The same queries run on SQLite (modernc.org/sqlite, the default) and
// PostgreSQL (github.com/jackc/pgx/v5/stdlib, chosen by a postgres:// or
// postgresql:// DSN); only the placeholders (? → $n) and the DDL column types
// differ.
//
// The life of an idea (builder_status):
//
//	not_started --Claim--> queued --StartBuilding--> building --AwaitApproval--> awaiting_approval --MarkDeployed--> deployed
//	                       queued --Release--> not_started   (before generation only)
//	queued | building | awaiting_approval --Fail--> failed
//
// Every transition is one conditional UPDATE (… WHERE id = ? AND builder_status
// IN (…)), so two builders racing for the same idea cannot both win: exactly one
// Claim changes the row, the other changes nothing and gets ErrClaimed.
//
// Failure taxonomy:
//   - ErrNoIdea: Pick found nothing ready to build.
//   - ErrNotFound: no idea has that id.
//   - ErrClaimed: Claim changed no row because the idea is no longer
//     not_started (another builder has it); the *TransitionError says what it is.
//   - ErrTransition: any other transition whose precondition did not hold; the
//     *TransitionError carries the id, the wanted and the actual status.
//   - ErrNoAssertion: the idea carries no assertion spec (L4 fails "no assertion
//     defined"); *AssertionError: the spec is present but malformed or lacks
//     a SQL check or an HTTP check (docs/builder-playbook.md, rule 10: one
//     of each),
//     with the raw text kept.
//   - Driver errors are returned wrapped, never turned into an empty result.
package queue
