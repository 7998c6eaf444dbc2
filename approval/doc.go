// Package approval is an immutable approval store on SQLite or PostgreSQL:
// an agent proposes a draft under an operation id, a person approves or
// rejects it, and the approved effect happens once, even across crashes,
// retries and several processes sharing the file, or several nodes sharing
// the PostgreSQL database.
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
// re-marshals from memory. The draft's JSON is read strictly: a duplicated
// key, a lone UTF-16 surrogate escape (\ud800) or a Go string that is not
// UTF-8 is refused, since each would let two different drafts store the
// same bytes; a valid escape such as \ufffd is accepted in either hex case.
// Registering the same id with the same canonical bytes is a no-op; with
// anything else it is ErrOperationRebound.
//
// Decide accepts only Approve or Reject, with a decider and a comment of at
// most MaxCommentRunes runes after trimming (neither may hold NUL, which
// PostgreSQL's text cannot store; both backends refuse it). The first decision persisted is
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
// List pages through the operations oldest first; All is the same listing
// as an iterator (iter.Seq2) that ends with an error, never silently, when
// it cannot finish.
//
// A host that waits for a person can record a WaitingReceipt (Receipt),
// write it to disk (WriteReceiptFile), and resume in another process
// (ReadReceiptFile, Resume), which refuses a receipt from another graph
// version or one the store never issued.
//
// # SQLite: Open and OpenDB
//
// Open(ctx, path) owns a file: it creates it when it does not exist (built
// in a temporary file and linked into place, so no process ever sees a
// store half made), marks it with its own PRAGMA application_id, and
// opens it through the modernc.org/sqlite driver (driver name "sqlite").
// OpenDB(ctx, db) uses a *sql.DB the caller opened with that driver, so the
// caller's tables and the store's live in one file and an Effect's rows
// commit in the store's transaction; Close leaves db open. Every
// connection must run with
//
//	journal_mode=WAL        readers never block the writer; required
//	synchronous=FULL        (or EXTRA) a decision acknowledged is on disk
//	foreign_keys=1          the schema's references hold
//	busy_timeout > 0        writers queue for the lock instead of failing
//
// which a DSN sets for every connection of a pool:
//
//	file:app.db?_pragma=journal_mode(wal)&_pragma=synchronous(full)&_pragma=foreign_keys(1)&_pragma=busy_timeout(10000)&_txlock=immediate
//
// Open writes that DSN itself (with WithBusyTimeout's value, 10s by
// default) and reads the settings back. OpenDB reads them back too,
// refuses a database that breaks them with ErrSettings naming each one,
// and checks the connection again before every write, because a pragma
// run with Exec reaches one connection of a pool only. The store's write
// transactions take the write lock with their first statement, so they
// queue rather than fail whatever the DSN's BEGIN mode; _txlock=immediate
// is advised for the caller's own read-then-write transactions.
//
// An existing file must hold a store. A file that does not (an empty
// file, which is also what a store truncated to 0 bytes looks like, a
// database without the store's tables, another application's file) is
// refused untouched with ErrNoStore: opening it as a new, empty store would
// let an operation id already bound be bound to another draft. WithCreate
// creates the store's tables in such a database on purpose (OpenDB needs
// it for a database that holds none yet, since only the caller knows that
// its database is new). Every Open runs PRAGMA quick_check and refuses a
// damaged file with a *CorruptError. The check reads every page, so its
// cost grows with the file: about 10 ms on a store of 10,000 operations
// (2.4 MB), where the rest of Open takes 1.5 to 4 ms.
//
// WithReadOnly opens a store for reading: nothing is created, migrated or
// written, and writes return ErrReadOnly. It reads a store on a read-only
// mount or in a directory the process may not write; there, if no
// write-ahead log is pending, the file is read as immutable, so do not use
// it on such a directory while another process may write the store.
//
// # PostgreSQL: OpenDB over a pgx pool
//
// OpenDB(ctx, db) over a *sql.DB of the pgx v5 driver
// (github.com/jackc/pgx/v5/stdlib, driver name "pgx") keeps the store in
// PostgreSQL 12 or later. OpenDB recognises the database by its driver (a
// driver that wraps pgx is recognised by asking the server); there is no
// option to choose the backend, and no constructor that opens a pool: the
// caller opens it (sql.Open("pgx", dsn)), sizes it (SetMaxIdleConns at
// least the number of concurrent callers) and closes it after the store.
// The package itself does not import pgx.
//
// The tables are those below, with the same names, in the schema that
// WithSchema names (DefaultSchema, "public", by default), so several stores
// can share a database, one per schema. WithCreate creates the schema when
// it does not exist and the tables in it; without it a schema without the
// tables is ErrNoStore, as on SQLite. The migrations are recorded in
// TableMigrations in that schema with the SHA-256 of their text and run in
// one transaction under an advisory lock, so processes that open a new
// store at once migrate it once; an edited or newer history is refused
// (ErrSchemaAltered, ErrSchemaTooNew). OpenDB refuses a session with
// synchronous_commit=off (ErrSettings): a decision acknowledged must be
// durable. The server's fsync and replication settings are the operator's.
//
// The guarantees are the SQLite ones, held by the server's row locks
// instead of SQLite's file lock:
//
//	draft bound once    operation_id is UNIQUE; INSERT … ON CONFLICT DO NOTHING, then the
//	                    stored draft is compared: a second node's different draft is ErrOperationRebound
//	first decision wins UPDATE … WHERE status = 'waiting': a concurrent Decide waits for the row,
//	                    re-reads it once the first commits, changes nothing and gets ErrAlreadyDecided
//	exact repeat        Register and Decide return the stored state
//	at most once        Apply's UPDATE … WHERE status = 'approved' locks the row for the whole
//	                    transaction (READ COMMITTED), the effect included; a concurrent Apply on
//	                    any node waits, then finds it completed and does not run its effect. A
//	                    process that dies mid-Apply loses its connection and the server rolls
//	                    its transaction back: nothing of it commits, and a retry applies it
//	append-only         the same CHECK constraints, and triggers that refuse other changes,
//	                    deletes and TRUNCATE
//
// Register, Decide, Receipt and an Apply without an effect are one
// statement each, which commits on its own; an Apply with an effect is a
// transaction of its own. Effects receive that *sql.Tx as on SQLite, so an
// effect is written once for both backends: write its SQL with $1, $2
// placeholders, which both drivers bind by position. A listing holds the
// store's advisory lock exclusively while it reads, and registrations hold
// it shared while they draw their sequence number and commit, so a page
// never shows an operation registered after one it leaves out (a cursor
// never skips an operation that commits late); a listing therefore waits
// for registrations in flight, and holds new ones back for as long as it
// reads.
//
// When the server cannot be reached or a connection breaks, calls fail with
// ErrUnavailable (KindUnavailable), and an effect whose statement lost the
// connection fails with an *EffectError wrapping the driver's error. A read
// that fails returned nothing; a write that fails may or may not have
// committed (the answer was lost), so read the operation or repeat the
// call: Register and Decide are idempotent and Apply applies at most once.
// Nothing is ever reported registered, decided or applied that did not
// commit. The pool reconnects when the server is back; the store needs no
// reopening.
//
// The trust boundary is the database role: a role that owns the schema can
// drop the triggers. Give the application a role that may write the
// tables, not own them, where that matters.
//
// # The tables, and the stability of the schema
//
// Every object the store creates is named candor_approval_…, so it shares
// a file with the caller's tables and with other migrators (a
// golang-migrate schema_migrations table, a caller's own items table):
//
//	candor_approval_operations  TableOperations  seq INTEGER PRIMARY KEY, operation_id TEXT UNIQUE,
//	                                             draft BLOB, status TEXT, created_at INTEGER,
//	                                             verdict, comment, decided_by, decided_at, completed_at
//	candor_approval_items       TableItems       operation_id TEXT PRIMARY KEY, id INTEGER (the
//	                                             operation's seq), draft BLOB, created_at INTEGER
//	candor_approval_receipts    TableReceipts    operation_id, graph_version, session_id,
//	                                             checkpoint_id, request_id, issued_at
//	candor_approval_migrations  TableMigrations  version, name, checksum, applied_at
//
// Times are Unix nanoseconds in UTC. A caller's table may reference
// candor_approval_items(operation_id) or candor_approval_operations
// (operation_id) with a foreign key, and may read the tables; it must not
// write them (the triggers below refuse most writes anyway). Within a
// major version columns may be added, never renamed, retyped or removed.
//
// On SQLite, Open and OpenDB migrate the schema forward: TableMigrations records each
// migration with a SHA-256 of its SQL, and a database from a newer package
// (ErrSchemaTooNew) or with an edited history (ErrSchemaAltered) is
// refused untouched. A store written before the prefix (tables operations,
// items, receipts and schema_migrations with a checksum column) is
// recognised by its recorded checksums and moved to the prefixed tables,
// its data kept, in the same migration path; a read-only open refuses a
// store that needs a migration with ErrSchemaTooOld.
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
// system permissions (Open creates it with mode 0600) and backups; the
// store detects the inconsistencies it can, it does not authenticate
// history.
//
// # Logging
//
// The store logs only through WithLogger's logger (nothing without one),
// with the context: operation ids, statuses, verdicts and item ids under
// snake_case keys, never drafts or comments.
//
// # Telemetry
//
// WithTracerProvider and WithMeterProvider (on Open and OpenDB; nil or
// absent means the global providers, no-ops unless the program installed
// an SDK) give the store's OpenTelemetry spans and metrics, under the
// instrumentation scope github.com/candorkit/candor/approval. Both
// backends go through the same code, so they record the same telemetry;
// db.system.name says which ("sqlite" or "postgresql").
//
// One span per call, kind internal: approval.register, approval.decide and
// approval.apply. An Effect runs inside approval.apply, so its own spans
// are children of it.
//
//	approval.operation.id  the operation id (absent when the id is refused as invalid)
//	db.system.name         sqlite | postgresql
//	approval.outcome       on success: registered, approved, rejected, applied (this call
//	                       made the transition) or repeated (an exact repeat; nothing changed)
//	approval.verdict       approval.decide on success: approve | reject
//	error.type             on failure: the Kind (span status Error, described by the Kind)
//
// No span or metric holds a draft, a comment, a decider or an error's text.
//
// Metrics:
//
//	approval.transitions        counter, {transition}  approval.status (the status entered:
//	                                                   waiting, approved, rejected, completed), db.system.name
//	approval.decision.duration  histogram, s           approval.verdict, db.system.name: from the
//	                                                   operation's registration to its decision
//	approval.operations         gauge, {operation}     approval.status, db.system.name, db.namespace
//	                                                   (the file's path, or "database|schema" on
//	                                                   PostgreSQL): the operations in the store now,
//	                                                   read from the store
//
// Several processes share one store, so the two kinds of metric answer
// different questions and aggregate differently. A transition is made
// once, by the process whose statement committed it (the first decision
// wins, Apply applies at most once, a repeat changes nothing), and only
// that process counts it, in approval.transitions and
// approval.decision.duration: summed over the processes, they count each
// transition of the store exactly once (a rate of registrations,
// decisions, completions). A write whose outcome is unknown (ErrUnavailable)
// is not counted, so the sum can fall short, never over. How many
// operations wait now is not a sum of per-process counts (a process's count
// restarts with it, and the process that registers is seldom the one that
// decides), so approval.operations reads it from the store at each
// collection (SELECT status, count(*) … GROUP BY status, a scan of the
// operations table: about 2 ms on a SQLite store of 10,000 operations,
// growing with the table; a reader collecting every minute pays it once a
// minute per process): every process
// reports the same value, so aggregate it across processes with max or
// last, never sum. The gauge stops at Close; a failed read reports nothing
// for that collection.
//
// # Failures
//
// No failure is returned as a state. Errors match a sentinel with errors.Is;
// typed errors carry the evidence and are reached with errors.As; Classify
// gives the Kind (stable snake_case strings, also telemetry labels):
//
//	Kind                    errors                                  meaning for the caller
//	invalid_input           ErrInvalidOperationID, ErrInvalidDraft  fix the request; nothing was stored
//	                        (*InvalidDraftError: every problem),
//	                        ErrInvalidDecision, ErrInvalidFilter,
//	                        ErrInvalidReceipt
//	rebound                 ErrOperationRebound (*ReboundError)     the id is bound to another draft; use a new id
//	unknown_operation       ErrUnknownOperation                     no operation with that id
//	already_decided         ErrAlreadyDecided (*AlreadyDecidedError) another decision stands; it is in the error
//	not_approved            ErrNotApproved (*NotApprovedError)      Apply on a Waiting or Rejected operation
//	effect_failed           ErrEffectFailed (*EffectError)          the effect failed; nothing committed, retry
//	unknown_receipt         ErrUnknownReceipt                       a receipt this store never issued
//	graph_version_mismatch  ErrGraphVersionMismatch (*GraphVersionError) the receipt's version and the running one
//	no_store                ErrNoStore                              not a store (empty, foreign, lost): restore it
//	corrupt                 ErrCorrupt (*CorruptError)              SQLite finds the file damaged: restore it
//	inconsistent            ErrInconsistent                         the file holds a shape the store never writes
//	schema                  ErrSchemaTooNew, ErrSchemaAltered,      refused untouched: upgrade, investigate,
//	                        ErrSchemaTooOld                         or migrate read-write once
//	settings                ErrSettings                             fix the DSN (OpenDB), or the server's settings
//	read_only               ErrReadOnly                             a write on a read-only store or file
//	closed                  ErrClosed                               the store was closed
//	busy                    SQLite's SQLITE_BUSY; PostgreSQL's      another writer held the lock past the busy timeout
//	                        40001, 40P01, 55P03                     (or lock_timeout); retry
//	unavailable             ErrUnavailable                          PostgreSQL unreachable or the connection broke;
//	                                                                a write's outcome is unknown: read or repeat it
//	canceled                context.Canceled, DeadlineExceeded      the caller's context ended
//	storage                 anything else                           I/O or SQLite failure, wrapped
//
// Open and OpenDB return every refusal as an *OpenError with the path of
// the database file (on PostgreSQL, the database and schema) and a remedy;
// it unwraps to the cause above.
package approval
