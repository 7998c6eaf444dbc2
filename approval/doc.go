// Package approval is an immutable approval store on SQLite: an agent
// proposes a draft under an operation id, a person approves or rejects it,
// and the approved effect happens once, even across crashes, retries and
// several processes sharing the file.
//
// # Lifecycle
//
//	Register(ticket)          → Waiting    the draft is bound to the id, once
//	Decide(approve | reject)  → Approved | Rejected   the first decision wins
//	Apply(id, effect)         → Completed  item + effect + status, one transaction
//
// Register stores the draft as canonical JSON (object keys sorted, no
// insignificant white space, numbers as written, HTML characters not
// escaped), so the draft a person sees in State.Draft is byte for byte the
// one Apply later copies into the approved item, never a value the caller
// re-marshals from memory. Registering the same id with the same canonical
// bytes is a no-op; with anything else it is ErrOperationRebound.
//
// Decide accepts only Approve or Reject, with a decider and a comment of at
// most MaxCommentRunes runes after trimming. The first decision persisted is
// the decision: repeating it returns the state, anything else is
// ErrAlreadyDecided with the standing decision. A rejection is final; a new
// proposal needs a new operation id.
//
// Apply marks the operation Completed, which inserts the approved item
// (UNIQUE per operation id) in the same statement, runs the caller's Effect
// with the same *sql.Tx, then commits. The caller's own rows therefore
// commit with the completion or not at all. Once committed, Apply returns
// the same item id without running the effect again; if the effect fails,
// nothing commits and the operation stays Approved for a retry. Effects
// outside the database (an HTTP call) are not covered by the transaction
// and must be idempotent on the operation id themselves.
//
// A host that waits for a person can record a WaitingReceipt (Receipt),
// write it to disk (WriteReceiptFile), and resume in another process
// (ReadReceiptFile, Resume), which refuses a receipt from another graph
// version or one the store never issued.
//
// # Storage
//
// Open creates or migrates the schema: a schema_migrations table records
// each forward-only migration with a checksum; a database from a newer
// package (ErrSchemaTooNew) or with an edited history (ErrSchemaAltered) is
// refused untouched. Every connection runs in WAL mode with
// synchronous=FULL, foreign keys on and a busy timeout (10s by default), and
// every transaction is BEGIN IMMEDIATE (the modernc.org/sqlite _txlock
// parameter), so concurrent writers, in this process or in others, queue for
// the write lock instead of failing with SQLITE_BUSY, and no read-then-write
// transaction can lose a race it already looked at.
//
// # Append-only, and the trust boundary
//
// Nothing is deleted or updated in place except the transitions
// Waiting→Approved, Waiting→Rejected and Approved→Completed. The schema
// enforces this with CHECK constraints and triggers, so it holds for any SQL
// run through an ordinary connection, including an Effect's: an operation's
// id, draft and creation time never change; its decision is written once,
// with the move out of Waiting, and never changes after; items and receipts
// are never updated or deleted, and nothing is deleted from operations; an
// item is inserted only by its operation's move from Approved to Completed,
// from the persisted draft, so an operation is Completed exactly when it has
// its item. Reads check the shape of what they find and report
// ErrInconsistent rather than return a state the store never writes.
//
// The boundary is the file: anyone who can write the database file (an
// administrator, a process with the path) can drop the triggers and change
// anything, and SQLite cannot prevent it. Protect the file with operating
// system permissions and backups; the store detects the inconsistencies it
// can, it does not authenticate history.
//
// # Failures
//
// No failure is returned as a state. Errors match a sentinel with errors.Is;
// typed errors carry the evidence and are reached with errors.As:
//
//	ErrInvalidOperationID    empty, over MaxOperationIDBytes, not UTF-8, padded, control characters
//	ErrInvalidDraft          *InvalidDraftError: every problem (nil, not JSON, null, invalid UTF-8, too large, Validate)
//	ErrOperationRebound      *ReboundError: the stored and the offered canonical drafts
//	ErrUnknownOperation      no operation with that id
//	ErrInvalidDecision       bad verdict, missing decider, comment too long or not UTF-8
//	ErrAlreadyDecided        *AlreadyDecidedError: the standing decision and the refused one
//	ErrNotApproved           *NotApprovedError: Apply on a Waiting or Rejected operation
//	ErrEffectFailed          *EffectError: wraps the effect's error; nothing committed
//	ErrInvalidFilter         List with an unknown status, a bad limit or a foreign cursor
//	ErrInvalidReceipt        missing field, oversized or malformed receipt file (raw bytes kept)
//	ErrUnknownReceipt        a receipt this store never issued
//	ErrGraphVersionMismatch  *GraphVersionError: the receipt's version and the running one
//	ErrSchemaTooNew, ErrSchemaAltered   Open refuses the database untouched
//	ErrInconsistent          the file holds a shape the store never writes
//	ErrClosed                the store was closed
//
// SQLite errors (I/O, a busy timeout exceeded by a writer holding the lock
// longer) are returned wrapped, with the operation id.
package approval
