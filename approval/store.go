package approval

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/candorkit/candor/internal/sqlitex"
)

// Store is an approval store in one SQLite database or one PostgreSQL
// schema. It is safe for concurrent use by many goroutines, and several
// processes may open the same file: every write transaction takes SQLite's
// write lock with its first statement, so writers queue on the lock (for
// up to the busy timeout) instead of failing with SQLITE_BUSY. On
// PostgreSQL, processes on any number of nodes may open the same schema;
// writers wait for each other's row locks only when they touch the same
// operation.
type Store struct {
	db *sql.DB
	// pg: the database is PostgreSQL (OpenDB over a pgx pool); the store's
	// tables live in schema, its statements are q, and registrations and
	// listings coordinate through the advisory lock listLock (see List).
	pg       bool
	schema   string
	listLock int64
	q        *queryset
	ownsDB   bool   // Open's own pool, closed by Close; OpenDB's is the caller's
	path     string // the database file, for errors
	log      *slog.Logger
	maxDraft int
	readOnly bool
	// checkConns: the pool is the caller's (OpenDB), so each connection a
	// write runs on is checked for the settings the store relies on: a
	// pragma set with Exec reaches one connection of a pool, not all.
	checkConns bool
	// writer serialises this process's write transactions, so that they
	// queue here (honouring ctx) rather than polling SQLite's lock.
	writer chan struct{}
	closed chan struct{}
	// closeOnce makes Close safe to call from several goroutines.
	closeOnce sync.Once
	// stmts holds the store's prepared statements by query text (see
	// statements); database/sql prepares each once per connection.
	stmtMu sync.Mutex
	stmts  map[string]*sql.Stmt
	// tel is the store's telemetry; unobserve ends the approval.operations
	// gauge's callback (nil when none was registered).
	tel       *telemetry
	unobserve func() error
	// namespace tells this store's approval.operations from another's in
	// one process: the file's path, or "database|schema" on PostgreSQL.
	namespace string
}

// Option configures Open and OpenDB. An option that does not apply to a
// constructor makes it return an error.
type Option func(*options)

type options struct {
	busyTimeout time.Duration
	busySet     bool
	log         *slog.Logger
	maxDraft    int
	readOnly    bool
	create      bool
	schema      string
	schemaSet   bool
	// noQuickCheck skips PRAGMA quick_check at Open; only the benchmark
	// that measures the check's cost sets it.
	noQuickCheck bool
	tp           trace.TracerProvider
	mp           metric.MeterProvider
}

// DefaultBusyTimeout is how long a write waits for SQLite's write lock,
// held by another connection or process, unless WithBusyTimeout says
// otherwise.
const DefaultBusyTimeout = 10 * time.Second

// WithBusyTimeout sets how long a write waits for another connection or
// process holding SQLite's write lock before it fails (default
// DefaultBusyTimeout). Open only: over a caller's database (OpenDB) the
// busy timeout is part of the caller's DSN.
func WithBusyTimeout(d time.Duration) Option {
	return func(o *options) { o.busyTimeout, o.busySet = d, true }
}

// WithLogger sets where the store logs; nil or absent means nothing is
// logged. The store logs operation ids, statuses, verdicts and item ids;
// never drafts or comments.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.log = l } }

// WithMaxDraftBytes bounds the canonical JSON of a draft (default
// DefaultMaxDraftBytes).
func WithMaxDraftBytes(n int) Option { return func(o *options) { o.maxDraft = n } }

// WithReadOnly opens the store for reading only: nothing is created,
// migrated or written, and Register, Decide, Apply and Receipt return
// ErrReadOnly. With Open it reads a file on a read-only mount or in a
// directory the process may not write (see Open). A store that needs a
// migration is refused with ErrSchemaTooOld.
func WithReadOnly() Option { return func(o *options) { o.readOnly = true } }

// WithCreate lets Open create the store's tables in an existing database
// that holds none (an empty file, or a SQLite file of the caller's own with
// application_id 0), and OpenDB create them at all. Without it, such a
// database is refused with ErrNoStore, because it is also what a store
// that lost its contents looks like; recreating it would let an operation
// id already bound be bound again to another draft. Pass it only on the
// path that sets a new database up.
func WithCreate() Option { return func(o *options) { o.create = true } }

// WithTracerProvider sets the OpenTelemetry tracer provider of the spans
// approval.register, approval.decide and approval.apply; nil or absent means
// the global provider. See the package documentation for the attributes.
func WithTracerProvider(tp trace.TracerProvider) Option { return func(o *options) { o.tp = tp } }

// WithMeterProvider sets the OpenTelemetry meter provider of the metrics
// approval.transitions, approval.decision.duration and approval.operations;
// nil or absent means the global provider.
func WithMeterProvider(mp metric.MeterProvider) Option { return func(o *options) { o.mp = mp } }

func collect(opts []Option) (options, error) {
	o := options{busyTimeout: DefaultBusyTimeout, maxDraft: DefaultMaxDraftBytes}
	for _, opt := range opts {
		if opt == nil {
			return options{}, errors.New("approval: nil Option")
		}
		opt(&o)
	}
	switch {
	case o.busyTimeout <= 0:
		return options{}, fmt.Errorf("approval: WithBusyTimeout: must be positive, got %v", o.busyTimeout)
	case o.maxDraft <= 0:
		return options{}, fmt.Errorf("approval: WithMaxDraftBytes: must be positive, got %d", o.maxDraft)
	case o.readOnly && o.create:
		return options{}, errors.New("approval: WithReadOnly and WithCreate exclude each other")
	case o.schemaSet:
		if err := checkSchema(o.schema); err != nil {
			return options{}, err
		}
	}
	return o, nil
}

func newStoreFor(db *sql.DB, owns bool, path string, o options) *Store {
	s := &Store{
		q:        &sqliteQueries,
		db:       db,
		ownsDB:   owns,
		path:     path,
		log:      o.log,
		maxDraft: o.maxDraft,
		readOnly: o.readOnly,
		writer:   make(chan struct{}, 1),
		closed:   make(chan struct{}),
		stmts:    map[string]*sql.Stmt{},
		tel:      newTelemetry(o),
	}
	s.tel.setBackend(false)
	return s
}

// Close closes the store's statements and, for a store from Open, its
// connections; a store from OpenDB leaves the caller's *sql.DB open. Calls
// after Close return ErrClosed; Close itself may be called again, from any
// goroutine, and then returns nil.
func (s *Store) Close() error {
	var err error
	s.closeOnce.Do(func() {
		close(s.closed)
		if s.unobserve != nil {
			_ = s.unobserve()
		}
		s.stmtMu.Lock()
		errs := make([]error, 0, len(s.stmts)+1)
		for _, st := range s.stmts {
			errs = append(errs, st.Close())
		}
		s.stmts = nil
		s.stmtMu.Unlock()
		if s.ownsDB {
			errs = append(errs, s.db.Close())
		}
		err = errors.Join(errs...)
	})
	return err
}

// info logs at Info level when the store has a logger.
func (s *Store) info(ctx context.Context, msg string, attrs ...slog.Attr) {
	if s.log != nil {
		s.log.LogAttrs(ctx, slog.LevelInfo, msg, attrs...)
	}
}

// prepare prepares every statement of the store, once, at Open, never
// inside a transaction (which would need a second connection while the
// first is held).
func (s *Store) prepare(ctx context.Context) error {
	if s.pg {
		return nil // pgx prepares and caches each statement per connection
	}
	for _, q := range s.q.all() {
		st, err := s.db.PrepareContext(ctx, q)
		if err != nil {
			return fmt.Errorf("approval: prepare: %w", s.dbErr(err))
		}
		s.stmts[q] = st
	}
	return nil
}

// stmt is one of the store's statements, bound to a transaction or to
// the pool: a statement prepared at Open (SQLite), or the query text, which
// pgx prepares and caches per connection (PostgreSQL).
type stmt struct {
	st    *sql.Stmt
	on    queryer
	query string
}

// queryer is a *sql.DB or a *sql.Tx.
type queryer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (x stmt) ExecContext(ctx context.Context, args ...any) (sql.Result, error) {
	if x.st != nil {
		return x.st.ExecContext(ctx, args...)
	}
	return x.on.ExecContext(ctx, x.query, args...)
}

func (x stmt) QueryContext(ctx context.Context, args ...any) (*sql.Rows, error) {
	if x.st != nil {
		return x.st.QueryContext(ctx, args...)
	}
	return x.on.QueryContext(ctx, x.query, args...)
}

func (x stmt) QueryRowContext(ctx context.Context, args ...any) *sql.Row {
	if x.st != nil {
		return x.st.QueryRowContext(ctx, args...)
	}
	return x.on.QueryRowContext(ctx, x.query, args...)
}

// prepared returns the store's statement for query, in tx when tx is not
// nil.
func (s *Store) prepared(ctx context.Context, tx *sql.Tx, query string) (stmt, error) {
	s.stmtMu.Lock()
	st, ok := s.stmts[query]
	closed := s.stmts == nil
	s.stmtMu.Unlock()
	switch {
	case closed:
		return stmt{}, ErrClosed
	case s.pg && tx != nil:
		return stmt{on: tx, query: query}, nil
	case s.pg:
		return stmt{on: s.db, query: query}, nil
	case !ok:
		return stmt{}, fmt.Errorf("approval: statement not prepared at Open: %.40q", query)
	}
	if tx != nil {
		return stmt{st: tx.StmtContext(ctx, st)}, nil
	}
	return stmt{st: st}, nil
}

func (s *Store) exec(ctx context.Context, tx *sql.Tx, query string, args ...any) (sql.Result, error) {
	st, err := s.prepared(ctx, tx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

// dbErr marks a SQLite error that says the file is damaged as a
// *CorruptError and one that says it may not be written as ErrReadOnly;
// others are returned as they are.
func (s *Store) dbErr(err error) error {
	var ce *CorruptError
	switch {
	case err == nil || errors.As(err, &ce):
		return err
	case s.pg:
		return pgErr(err)
	case sqlitex.IsCorrupt(err):
		return &CorruptError{Problems: []string{err.Error()}, Err: err}
	case sqlitex.IsReadOnly(err) && !errors.Is(err, ErrReadOnly):
		return fmt.Errorf("%w: %w", ErrReadOnly, err)
	}
	return err
}

// isBusy reports whether err is SQLite's SQLITE_BUSY or SQLITE_LOCKED, or
// PostgreSQL's serialization failure, deadlock or lock_not_available.
func isBusy(err error) bool { return sqlitex.IsBusy(err) || pgBusy(err) }

// writable reports why the store cannot write now, or nil.
func (s *Store) writable() error {
	select {
	case <-s.closed:
		return ErrClosed
	default:
	}
	if s.readOnly {
		return fmt.Errorf("%w: opened WithReadOnly", ErrReadOnly)
	}
	return nil
}

// writeOne runs fn, whose first statement writes, as one write. On SQLite
// it is write. On PostgreSQL fn gets a nil tx and each of its statements
// runs on the pool and commits on its own: fn must write with its first
// statement only, and read afterwards only what no transaction changes
// once committed (a draft, a decision), so that the result is the same as
// in one transaction, one round trip cheaper.
func (s *Store) writeOne(ctx context.Context, fn func(tx *sql.Tx) error) error {
	if !s.pg {
		return s.write(ctx, fn)
	}
	if err := s.writable(); err != nil {
		return err
	}
	return s.dbErr(fn(nil))
}

// write runs fn in one write transaction and commits it if fn returns nil.
//
// On SQLite fn's first statement must write: SQLite then takes the write
// lock at once, waiting up to the busy timeout for it, whatever the
// database's BEGIN mode, and the transaction never has to upgrade a read
// snapshot that another writer made stale (which fails at once with
// SQLITE_BUSY). This process's writers queue on s.writer first.
//
// On PostgreSQL the transaction is READ COMMITTED: a statement that waits
// for a row another transaction holds re-reads the row once that one ends,
// so an UPDATE … WHERE status = 'approved' that waited for a concurrent
// Apply finds the operation completed and changes nothing.
func (s *Store) write(ctx context.Context, fn func(tx *sql.Tx) error) (err error) {
	if err := s.writable(); err != nil {
		return err
	}
	if !s.pg {
		select {
		case s.writer <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		defer func() { <-s.writer }()
	}
	defer func() { err = s.dbErr(err) }()
	var tx *sql.Tx
	switch {
	case s.pg:
		if tx, err = s.db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted}); err != nil {
			return fmt.Errorf("approval: begin: %w", err)
		}
	case s.checkConns:
		c, err := s.db.Conn(ctx)
		if err != nil {
			return fmt.Errorf("approval: connect: %w", err)
		}
		defer c.Close()
		if err := checkConn(ctx, c, s.path); err != nil {
			return err
		}
		if tx, err = c.BeginTx(ctx, nil); err != nil {
			return fmt.Errorf("approval: begin: %w", err)
		}
	default:
		if tx, err = s.db.BeginTx(ctx, nil); err != nil {
			return fmt.Errorf("approval: begin: %w", err)
		}
	}
	done := false
	defer func() {
		if done {
			return
		}
		if rerr := tx.Rollback(); rerr != nil && !errors.Is(rerr, sql.ErrTxDone) && !s.pg {
			err = errors.Join(err, fmt.Errorf("approval: rollback: %w", rerr))
		}
	}()
	if err := fn(tx); err != nil {
		return err
	}
	done = true
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("approval: commit: %w", err)
	}
	return nil
}

// checkConn reads the settings of the connection a write is about to use:
// synchronous FULL or EXTRA (a decision acknowledged is on disk), foreign
// keys on, and a busy timeout (writers queue for the lock).
func checkConn(ctx context.Context, c *sql.Conn, path string) error {
	var sync, fk, busy int64
	if err := c.QueryRowContext(ctx, qConnSettings).Scan(&sync, &fk, &busy); err != nil {
		return fmt.Errorf("approval: read connection settings: %w", err)
	}
	if err := settingsProblem("", sync, fk, busy); err != nil {
		return fmt.Errorf("approval: a connection of the pool over %s: %w (%s)", path, err, settingsRemedy)
	}
	return nil
}

// settingsProblem returns an ErrSettings error naming every setting that
// breaks a guarantee, or nil. journal is "" when not checked.
func settingsProblem(journal string, sync, fk, busy int64) error {
	var bad []string
	if journal != "" && !strings.EqualFold(journal, "wal") {
		bad = append(bad, fmt.Sprintf("journal_mode is %s, want wal", journal))
	}
	if sync < 2 {
		bad = append(bad, fmt.Sprintf("synchronous is %d, want 2 (FULL) or 3 (EXTRA)", sync))
	}
	if fk != 1 {
		bad = append(bad, fmt.Sprintf("foreign_keys is %d, want 1", fk))
	}
	if busy <= 0 {
		bad = append(bad, fmt.Sprintf("busy_timeout is %d ms, want more than 0", busy))
	}
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrSettings, strings.Join(bad, ", "))
}

// settingsRemedy is the remedy of a settings error.
const settingsRemedy = "set them in the DSN of every connection, e.g. " + exampleDSN

// exampleDSN is the DSN the settings errors quote.
const exampleDSN = "file:app.db?_pragma=journal_mode(wal)&_pragma=synchronous(full)&_pragma=foreign_keys(1)&_pragma=busy_timeout(10000)&_txlock=immediate"
