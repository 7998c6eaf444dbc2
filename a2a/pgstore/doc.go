// Package pgstore is an a2a.TaskStore on PostgreSQL, for several replicas
// of an A2A server sharing one set of tasks: a task created through one
// replica is read, listed and seen finished through every other.
//
//	db, err := sql.Open("pgx", dsn) // github.com/jackc/pgx/v5/stdlib
//	store, err := pgstore.OpenDB(ctx, db, pgstore.WithSchema("agents"))
//	srv, err := a2a.NewServer(agent, backend, a2a.WithVerifier(v), a2a.WithTaskStore(store))
//
// It is a sub-package so that importing a2a does not compile the
// PostgreSQL driver. OpenDB works over a *sql.DB the caller owns (the
// pool's size and lifetime are the program's to set) and never closes it.
//
// # Guarantees
//
//   - Shared state: a task, its history and its artifacts are one row,
//     written in one statement; a write a call reported done is committed
//     and visible to every replica.
//   - Owners: each task belongs to a2a.Owner of the call that created it
//     (the verified issuer and subject); Get and List, on any replica,
//     never show it to another owner, which sees a2a.ErrTaskNotFound.
//   - Versions: every write increments the task's version in the same
//     statement that checks it. An Update based on a version that is no
//     longer the stored one (another replica wrote in between) changes
//     nothing and fails with taskstore.ErrConcurrentModification (a2a-go
//     then re-reads the task); a newer state is never overwritten.
//   - Bounds: a task unused (neither written nor read; a read within a
//     hundredth of the TTL of the last stamp is not stamped again, so that
//     polling writes little) for the TTL is
//     never returned, and is deleted by the next sweep; a sweep also
//     deletes, while more than WithMaxTasks tasks are held, the least
//     recently used finished ones (as a2a.MemoryStore does). Running tasks
//     are deleted only by expiry. Counting the tasks held costs a scan of
//     up to WithMaxTasks index entries, so a Store sweeps after each write
//     only for a bound below 200, else after every (bound/100)-th write
//     (about a hundred index entries per write, whatever the bound): the
//     bound can be exceeded by one percent per replica between sweeps.
//     One replica sweeps at a time (an advisory lock; the others skip
//     theirs), and a sweep skips the rows a writer holds.
//   - Listing: the page token is a keyset cursor on the order of writes (a
//     sequence), not an offset, so any replica serves the next page from
//     the same point. The total and the page are read in one snapshot.
//
// The schema (tables tasks and a2a_task_migrations and the sequence
// task_seq, under WithSchema's name) is created and migrated by OpenDB;
// migrations are checksummed, applied once when several replicas open the
// store at once, and a schema altered by hand or migrated by a newer
// program is refused.
//
// # Failure taxonomy
//
// A failure in the database is an *Error: its text names the operation and
// the kind only (a2a-go passes a store's error text to the A2A caller, who
// must not learn the database's address, user or name); the driver's error
// is in Err, for the server's own log.
//
//   - ErrUnavailable: PostgreSQL could not be reached or went away during
//     the call. The outcome of a write is unknown; the Server answers the
//     call with an error, so no task is reported completed unless its final
//     state was committed. The store recovers by itself when the database
//     is back (database/sql reconnects).
//   - taskstore.ErrConcurrentModification: a stale-version Update, refused.
//   - taskstore.ErrTaskAlreadyExists: Create of an id that is held.
//   - a2a.ErrTaskNotFound (a2a-go's): no such task for this owner, or it
//     expired or was evicted.
//   - a2a.ErrInvalidParams (a2a-go's): a task without an id, a page size
//     outside 1 to 100, a malformed page token.
//   - ErrSchema (from OpenDB): the schema was altered by hand, or migrated
//     by a newer program; nothing was written.
//   - From OpenDB otherwise: an argument or option error naming it, a db
//     of another driver, ErrUnavailable, or a migration's SQL failing.
//   - Any other *Error: the database refused a statement (its SQLSTATE is
//     in the text; errors.As reaches *pgconn.PgError).
package pgstore
