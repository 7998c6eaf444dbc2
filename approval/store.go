package approval

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"modernc.org/sqlite" // also registers the "sqlite" database/sql driver
	sqlite3 "modernc.org/sqlite/lib"
)

// Store is an approval store on one SQLite file. It is safe for concurrent
// use by many goroutines, and several processes may open the same file: every
// write is one BEGIN IMMEDIATE transaction, so writers queue on SQLite's lock
// (for up to the busy timeout) instead of failing with SQLITE_BUSY.
type Store struct {
	db       *sql.DB
	log      *slog.Logger
	now      func() time.Time
	maxDraft int
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
}

// Option configures Open.
type Option func(*config)

type config struct {
	busyTimeout time.Duration
	log         *slog.Logger
	now         func() time.Time
	maxDraft    int
}

// WithBusyTimeout sets how long a write waits for another connection or
// process holding SQLite's write lock before it fails (default 10s).
func WithBusyTimeout(d time.Duration) Option { return func(c *config) { c.busyTimeout = d } }

// WithLogger sets the logger (default: slog.Default()). The store logs
// operation ids, statuses and verdicts; never drafts or comments.
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.log = l } }

// WithClock sets the clock used for CreatedAt, DecidedAt and CompletedAt
// (default time.Now). Times are stored in UTC with nanosecond precision.
func WithClock(now func() time.Time) Option { return func(c *config) { c.now = now } }

// WithMaxDraftBytes bounds the canonical JSON of a draft (default
// DefaultMaxDraftBytes).
func WithMaxDraftBytes(n int) Option { return func(c *config) { c.maxDraft = n } }

// Open opens (creating it if needed) the approval store at path, a file
// name, and brings its schema to the current version. The file is switched
// to WAL mode; every connection runs with synchronous=FULL (a decision
// acknowledged is on disk), foreign keys on and the busy timeout set, and
// every transaction begins IMMEDIATE. Several processes may Open the same
// new file at once.
//
// path must be a plain file name: ":memory:", "file:" URIs and names holding
// '?' are refused, because the store needs one shared file that several
// connections and processes can open.
func Open(ctx context.Context, path string, opts ...Option) (*Store, error) {
	cfg := config{busyTimeout: 10 * time.Second, now: time.Now, maxDraft: DefaultMaxDraftBytes}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.log == nil {
		cfg.log = slog.Default()
	}
	if cfg.busyTimeout <= 0 {
		return nil, fmt.Errorf("approval: busy timeout must be positive, got %v", cfg.busyTimeout)
	}
	if cfg.maxDraft <= 0 {
		return nil, fmt.Errorf("approval: max draft bytes must be positive, got %d", cfg.maxDraft)
	}
	if cfg.now == nil {
		return nil, errors.New("approval: clock is nil")
	}
	dsn, err := dataSourceName(path, cfg.busyTimeout)
	if err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("approval: open %q: %w", path, err)
	}
	s := &Store{
		db:       db,
		log:      cfg.log,
		now:      cfg.now,
		maxDraft: cfg.maxDraft,
		writer:   make(chan struct{}, 1),
		closed:   make(chan struct{}),
		stmts:    map[string]*sql.Stmt{},
	}
	if err := s.enableWAL(ctx, cfg.busyTimeout); err != nil {
		return nil, errors.Join(err, db.Close())
	}
	if err := s.checkSettings(ctx, cfg.busyTimeout); err != nil {
		return nil, errors.Join(err, db.Close())
	}
	if err := s.write(ctx, func(tx *sql.Tx) error {
		return migrate(ctx, tx, schemaMigrations(), s.now())
	}); err != nil {
		return nil, errors.Join(fmt.Errorf("approval: migrate %q: %w", path, err), db.Close())
	}
	// Statements are prepared once, here, and never inside a transaction,
	// which would need a second connection while the first is held.
	for _, q := range statements() {
		st, err := db.PrepareContext(ctx, q)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("approval: prepare: %w", err), s.Close())
		}
		s.stmts[q] = st
	}
	return s, nil
}

// Close closes the store's connections. Calls after Close return ErrClosed;
// Close itself may be called again, from any goroutine, and then returns
// nil.
func (s *Store) Close() error {
	var err error
	s.closeOnce.Do(func() {
		close(s.closed)
		s.stmtMu.Lock()
		errs := make([]error, 0, len(s.stmts)+1)
		for _, st := range s.stmts {
			errs = append(errs, st.Close())
		}
		s.stmts = nil
		s.stmtMu.Unlock()
		err = errors.Join(append(errs, s.db.Close())...)
	})
	return err
}

// prepared returns the store's prepared statement for query, in tx when tx
// is not nil.
func (s *Store) prepared(ctx context.Context, tx *sql.Tx, query string) (*sql.Stmt, error) {
	s.stmtMu.Lock()
	st, ok := s.stmts[query]
	closed := s.stmts == nil
	s.stmtMu.Unlock()
	switch {
	case closed:
		return nil, ErrClosed
	case !ok:
		return nil, fmt.Errorf("approval: statement not prepared at Open: %.40q", query)
	}
	if tx != nil {
		return tx.StmtContext(ctx, st), nil
	}
	return st, nil
}

func (s *Store) exec(ctx context.Context, tx *sql.Tx, query string, args ...any) (sql.Result, error) {
	st, err := s.prepared(ctx, tx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

// busyMillis is the busy timeout as SQLite takes it: whole milliseconds,
// at least one.
func busyMillis(d time.Duration) int64 { return max(d.Milliseconds(), 1) }

func dataSourceName(path string, busy time.Duration) (string, error) {
	switch {
	case path == "":
		return "", errors.New("approval: empty database path")
	case path == ":memory:" || strings.HasPrefix(path, "file:"):
		return "", fmt.Errorf("approval: database path %q must be a plain file name", path)
	case strings.ContainsAny(path, "?\x00"):
		return "", fmt.Errorf("approval: database path %q holds '?' or NUL", path)
	}
	return path + "?_txlock=immediate&_busy_timeout=" + strconv.FormatInt(busyMillis(busy), 10) +
		"&_foreign_keys=1&_synchronous=FULL", nil
}

// enableWAL switches the file to WAL mode, which is persistent. SQLite does
// not apply the busy timeout to this switch: when several processes open a
// new file at once, all but one get SQLITE_BUSY at once. So it is retried,
// with a short backoff, until the busy timeout or ctx ends.
func (s *Store) enableWAL(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	delay := time.Millisecond
	for {
		var mode string
		err := s.db.QueryRowContext(ctx, "PRAGMA journal_mode = WAL").Scan(&mode)
		switch {
		case err == nil && strings.EqualFold(mode, "wal"):
			return nil
		case err == nil:
			return fmt.Errorf("approval: journal_mode is %q after setting wal", mode)
		case !isBusy(err) || time.Now().After(deadline):
			return fmt.Errorf("approval: set journal_mode wal: %w", err)
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		delay = min(2*delay, 50*time.Millisecond)
	}
}

// isBusy reports whether err is SQLite's SQLITE_BUSY (any extended code).
func isBusy(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_BUSY
}

// checkSettings confirms that the connection settings took effect rather
// than trusting the DSN: a driver that ignored a parameter would otherwise
// leave the store less durable than it says.
func (s *Store) checkSettings(ctx context.Context, busy time.Duration) error {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("approval: connect: %w", err)
	}
	defer conn.Close()
	want := []struct{ pragma, value string }{
		{"journal_mode", "wal"},
		{"synchronous", "2"}, // FULL
		{"foreign_keys", "1"},
		{"busy_timeout", strconv.FormatInt(busyMillis(busy), 10)},
	}
	for _, w := range want {
		var got string
		if err := conn.QueryRowContext(ctx, "PRAGMA "+w.pragma).Scan(&got); err != nil {
			return fmt.Errorf("approval: read %s: %w", w.pragma, err)
		}
		if !strings.EqualFold(got, w.value) {
			return fmt.Errorf("approval: %s is %q, want %q", w.pragma, got, w.value)
		}
	}
	return nil
}

// write runs fn in one write transaction (BEGIN IMMEDIATE through the DSN's
// _txlock) and commits it if fn returns nil.
func (s *Store) write(ctx context.Context, fn func(tx *sql.Tx) error) (err error) {
	select {
	case <-s.closed:
		return ErrClosed
	default:
	}
	select {
	case s.writer <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-s.writer }()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("approval: begin: %w", err)
	}
	done := false
	defer func() {
		if done {
			return
		}
		if rerr := tx.Rollback(); rerr != nil && !errors.Is(rerr, sql.ErrTxDone) {
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
