package approval

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/candorkit/candor/internal/sqlitex"
)

// Open opens the approval store in the SQLite file at path, creating the
// file if it does not exist, and brings its schema to the current
// version.
//
// A new store is built in a temporary file next to path and then linked
// into place, so the file at path is never a store half made: when several
// processes Open a missing file at once, one creates it and the others
// open it. An existing file must be a store: a file with no store in it
// (an empty one, which is also what a store truncated to 0 bytes looks
// like, or another application's database) is refused with ErrNoStore and
// left untouched, unless WithCreate says to create the store's tables in
// it. A damaged file is refused with a *CorruptError (PRAGMA quick_check
// runs at every Open), a schema from a newer version of this package with
// ErrSchemaTooNew. Every refusal is an *OpenError naming the path and the
// remedy.
//
// Every connection runs in WAL mode with synchronous=FULL (a decision
// acknowledged is on disk), foreign keys on, the busy timeout and BEGIN
// IMMEDIATE; Open reads the settings back rather than trust the DSN. The
// file is created with mode 0600 and carries its own PRAGMA
// application_id.
//
// With WithReadOnly, Open never writes: it opens the file read-only, and
// where the directory cannot be written (a read-only mount) and no
// write-ahead log is pending it reads the file as immutable. Do not use it
// on such a directory while another process may write the store.
//
// path must be a plain file name (any characters, '?' and '#' included):
// ":memory:" and "file:" URIs are refused, because the store needs one
// shared file that several connections and processes can open.
func Open(ctx context.Context, path string, opts ...Option) (*Store, error) {
	s, err := openFile(ctx, path, opts)
	if err != nil {
		return nil, err
	}
	s.observe()
	return s, nil
}

func openFile(ctx context.Context, path string, opts []Option) (*Store, error) {
	o, err := collect(opts)
	if err != nil {
		return nil, err
	}
	if err := checkPath(path); err != nil {
		return nil, err
	}
	if o.schemaSet {
		return nil, errors.New("approval: Open: WithSchema applies to OpenDB over PostgreSQL only")
	}
	if o.readOnly {
		return openReadOnly(ctx, path, o)
	}
	exists, err := sqlitex.Exists(path)
	if err != nil {
		return nil, &OpenError{Path: path, Err: err, Remedy: "check the path and the permissions of its directories"}
	}
	if !exists {
		if err := create(ctx, path, o); err != nil {
			return nil, err
		}
	} else if err := probe(ctx, path, o); err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", sqlitex.DSN(path, rwDSN(o)))
	if err != nil {
		return nil, &OpenError{Path: path, Err: err}
	}
	s := newStoreFor(db, true, path, o)
	if err := s.init(ctx, o); err != nil {
		return nil, errors.Join(err, s.Close())
	}
	return s, nil
}

// OpenDB opens the approval store in a database the caller owns, so that
// the caller's own tables live in the same file and an Effect's rows commit
// in the store's transaction.
//
// db may be SQLite or PostgreSQL. A pool of the pgx v5 driver
// (github.com/jackc/pgx/v5/stdlib), or of a driver that wraps it and talks
// to a PostgreSQL server, is PostgreSQL: the store lives in the schema
// WithSchema names (DefaultSchema by default), created with WithCreate;
// synchronous_commit must not be off; see the package documentation for
// what holds there. Everything below is about SQLite.
// It migrates the store's tables (all named
// candor_approval_…, see TableOperations) and never touches others; Close
// leaves db open.
//
// db must come from the modernc.org/sqlite driver (driver name "sqlite")
// on a file, and every one of its connections must run in WAL mode with
// synchronous FULL or EXTRA, foreign keys on and a busy timeout, which a
// DSN sets for each connection:
//
//	file:app.db?_pragma=journal_mode(wal)&_pragma=synchronous(full)&_pragma=foreign_keys(1)&_pragma=busy_timeout(10000)&_txlock=immediate
//
// (_txlock=immediate is advised for the caller's own transactions; the
// store's take the write lock with their first statement either way.)
// OpenDB refuses a database whose settings break these guarantees with
// ErrSettings, and checks the connection again before each write, since a
// pragma run with Exec reaches one connection of a pool only.
//
// A database without the store's tables is refused with ErrNoStore unless
// WithCreate is given: only the caller knows that its database is new
// rather than one that lost its contents. WithBusyTimeout does not apply
// (the timeout is the DSN's). OpenDB leaves PRAGMA application_id alone:
// the file is the caller's.
func OpenDB(ctx context.Context, db *sql.DB, opts ...Option) (*Store, error) {
	s, err := openDB(ctx, db, opts)
	if err != nil {
		return nil, err
	}
	s.observe()
	return s, nil
}

func openDB(ctx context.Context, db *sql.DB, opts []Option) (*Store, error) {
	if db == nil {
		return nil, errors.New("approval: OpenDB: db is nil")
	}
	o, err := collect(opts)
	if err != nil {
		return nil, err
	}
	if o.busySet {
		return nil, errors.New("approval: OpenDB: WithBusyTimeout does not apply; set busy_timeout in the DSN of db (SQLite) or lock_timeout on the server (PostgreSQL)")
	}
	if isPostgres(ctx, db) {
		return openPostgres(ctx, db, o)
	}
	if o.schemaSet {
		return nil, errors.New("approval: OpenDB: WithSchema applies to PostgreSQL only, and db is not PostgreSQL")
	}
	var seq int
	var name, file string
	if err := db.QueryRowContext(ctx, qMainFile).Scan(&seq, &name, &file); err != nil {
		return nil, &OpenError{Path: "(caller's database)", Err: err, Remedy: "pass a *sql.DB of the modernc.org/sqlite driver"}
	}
	if file == "" {
		return nil, &OpenError{Path: "(in-memory database)", Err: fmt.Errorf("%w: the store needs a database file", ErrSettings),
			Remedy: settingsRemedy}
	}
	s := newStoreFor(db, false, file, o)
	s.checkConns = !o.readOnly
	if err := s.init(ctx, o); err != nil {
		return nil, errors.Join(err, s.Close())
	}
	return s, nil
}

func checkPath(path string) error {
	switch {
	case path == "":
		return errors.New("approval: empty database path")
	case path == ":memory:" || strings.HasPrefix(path, "file:"):
		return fmt.Errorf("approval: database path %q must be a plain file name", path)
	case strings.HasPrefix(path, "postgres://") || strings.HasPrefix(path, "postgresql://"):
		return errors.New("approval: Open takes a SQLite file; for PostgreSQL open a pool with the pgx driver (sql.Open(\"pgx\", dsn)) and pass it to OpenDB")
	case strings.ContainsRune(path, 0):
		return fmt.Errorf("approval: database path %q holds NUL", path)
	}
	return nil
}

// rwDSN is the DSN of a read-write Open.
func rwDSN(o options) sqlitex.DSNOptions {
	return sqlitex.DSNOptions{MustExist: true, BusyTimeout: o.busyTimeout,
		WAL: true, SyncFull: true, ForeignKeys: true, Immediate: true}
}

// create makes a new store at path: built in a temporary file in the same
// directory (schema, application_id, WAL mode), closed, then hard-linked
// to path, which fails if path appeared meanwhile. A crash leaves at most
// a temporary file, never a half-made store at path. When another opener
// linked its store first, create returns nil and Open opens that one.
func create(ctx context.Context, path string, o options) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".creating-*")
	if err != nil {
		return &OpenError{Path: path, Err: fsErr(err), Remedy: "the directory must exist and be writable (or open an existing store WithReadOnly)"}
	}
	tmp := f.Name()
	defer func() {
		for _, p := range []string{tmp, tmp + "-wal", tmp + "-shm", tmp + "-journal"} {
			if rerr := os.Remove(p); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
				err = errors.Join(err, rerr)
			}
		}
	}()
	if err := f.Close(); err != nil {
		return &OpenError{Path: path, Err: err}
	}
	db, err := sql.Open("sqlite", sqlitex.DSN(tmp, rwDSN(o)))
	if err != nil {
		return &OpenError{Path: path, Err: err}
	}
	err = migrate(ctx, db)
	if err == nil {
		err = sqlitex.StampApplicationID(ctx, db, applicationID, true)
	}
	// Closing the last connection checkpoints the write-ahead log into the
	// file and removes it.
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		if fi, serr := os.Stat(tmp + "-wal"); serr == nil && fi.Size() > 0 {
			err = errors.New("the new store's write-ahead log was not checkpointed")
		}
	}
	if err != nil {
		return &OpenError{Path: path, Err: fmt.Errorf("create: %w", err)}
	}
	switch err := os.Link(tmp, path); {
	case errors.Is(err, fs.ErrExist):
		return nil // another opener created it first
	case err != nil:
		return &OpenError{Path: path, Err: fsErr(err), Remedy: "the directory's file system must support hard links"}
	}
	d, err := os.Open(dir)
	if err != nil {
		return &OpenError{Path: path, Err: err}
	}
	if err := errors.Join(d.Sync(), d.Close()); err != nil {
		return &OpenError{Path: path, Err: fmt.Errorf("sync directory: %w", err)}
	}
	return nil
}

// fsErr marks a permission failure as ErrReadOnly.
func fsErr(err error) error {
	if errors.Is(err, fs.ErrPermission) {
		return fmt.Errorf("%w: %w", ErrReadOnly, err)
	}
	return err
}

// openReadOnly is Open WithReadOnly.
func openReadOnly(ctx context.Context, path string, o options) (*Store, error) {
	exists, err := sqlitex.Exists(path)
	switch {
	case err != nil:
		return nil, &OpenError{Path: path, Err: err, Remedy: "check the path and the permissions of its directories"}
	case !exists:
		return nil, &OpenError{Path: path, Err: fmt.Errorf("%w: no such file", ErrNoStore),
			Remedy: "a read-only open never creates a store; check the path"}
	}
	dsn := sqlitex.DSNOptions{ReadOnly: true, MustExist: true, BusyTimeout: o.busyTimeout}
	db, err := sql.Open("sqlite", sqlitex.DSN(path, dsn))
	if err != nil {
		return nil, &OpenError{Path: path, Err: err}
	}
	// Reading a database in WAL mode needs its shared-memory index (the
	// -shm file), which SQLite cannot create in a directory it may not
	// write. Without a pending write-ahead log the main file is the whole
	// store, and can be read as immutable.
	var n int
	if err := db.QueryRowContext(ctx, qProbe).Scan(&n); err != nil {
		if cerr := db.Close(); cerr != nil {
			err = errors.Join(err, cerr)
		}
		if !sqlitex.IsReadOnly(err) {
			return nil, newStoreFor(nil, false, path, o).refuse(err, "")
		}
		if fi, serr := os.Stat(path + "-wal"); serr == nil && fi.Size() > 0 {
			return nil, &OpenError{Path: path, Err: fmt.Errorf("%w: its write-ahead log %s-wal holds changes this process cannot read without writing the directory: %w", ErrReadOnly, path, err),
				Remedy: "open the store read-write once (a clean Close merges the log), or let this process write the directory"}
		}
		// A read-only DSN always has a query (mode=ro), so the parameter
		// appends to it.
		if db, err = sql.Open("sqlite", sqlitex.DSN(path, dsn)+"&immutable=1"); err != nil {
			return nil, &OpenError{Path: path, Err: err}
		}
	}
	s := newStoreFor(db, true, path, o)
	if err := s.init(ctx, o); err != nil {
		return nil, errors.Join(err, s.Close())
	}
	return s, nil
}

// layout is what identify finds in a database.
type layout struct {
	appID      int32
	migrations bool // TableMigrations exists
	staged     bool // the staging tables of version 1 exist
	legacy     bool // a store from before the prefix: schema_migrations with a checksum column, and operations
}

func (l layout) store() bool { return l.migrations || l.staged || l.legacy }

func (s *Store) identify(ctx context.Context) (layout, error) {
	var l layout
	err := s.db.QueryRowContext(ctx, qIdentify).Scan(&l.appID, &l.migrations, &l.staged, &l.legacy)
	return l, err
}

// refuse makes err an *OpenError naming the store's file. Damage and a
// file the process may not write get their own remedy when none is given.
func (s *Store) refuse(err error, remedy string) error {
	var oe *OpenError
	if errors.As(err, &oe) {
		return err
	}
	err = corrupt(s.dbErr(err))
	if remedy == "" {
		switch {
		case errors.Is(err, ErrCorrupt):
			remedy = "restore the file from a backup; the store does not repair it"
		case errors.Is(err, ErrReadOnly):
			remedy = "this process may not write the file or its directory: open it WithReadOnly to read it, or grant write access"
		}
	}
	return &OpenError{Path: s.path, Err: err, Remedy: remedy}
}

// probe looks at an existing file through a read-only connection before
// Open writes anything to it (the WAL switch writes a header even to an
// empty file), and refuses a file that holds no store.
func probe(ctx context.Context, path string, o options) error {
	db, err := sql.Open("sqlite", sqlitex.DSN(path, sqlitex.DSNOptions{ReadOnly: true, BusyTimeout: o.busyTimeout}))
	if err != nil {
		return &OpenError{Path: path, Err: err}
	}
	s := newStoreFor(db, true, path, o)
	defer s.Close()
	l, err := s.identify(ctx)
	switch {
	case sqlitex.IsReadOnly(err):
		return nil // the read-write open says so, with its remedy
	case err != nil:
		return s.refuse(err, "")
	}
	return s.judge(l, o)
}

// judge refuses a database that holds no store (unless o.create), or a file
// of another application.
func (s *Store) judge(l layout, o options) error {
	switch {
	case s.ownsDB && l.appID != 0 && l.appID != applicationID:
		return s.refuse(fmt.Errorf("%w: the file belongs to another application (application_id %#x)", ErrNoStore, uint32(l.appID)),
			"check the path; open the file with OpenDB if it is yours and the store should share it")
	case l.store() || o.create:
		return nil
	}
	what := "the database holds none of the store's tables"
	if fi, err := os.Stat(s.path); err == nil && fi.Size() == 0 {
		what = "the file is empty (0 bytes)"
	}
	remedy := "restore the store from a backup if it lost its contents (a new, empty store would let operation ids already bound be bound again); pass WithCreate only to add a store to a new database"
	if l.appID == applicationID {
		what = "the file is marked as an approval store but has lost its tables"
		remedy = "restore the store from a backup"
	}
	return s.refuse(fmt.Errorf("%w: %s", ErrNoStore, what), remedy)
}

// init checks, identifies, migrates and prepares a freshly opened
// database. A store from Open owns its file and sets its application_id.
func (s *Store) init(ctx context.Context, o options) error {
	switch {
	case o.readOnly:
	case s.ownsDB:
		if err := sqlitex.Verify(ctx, s.db, rwDSN(o)); err != nil {
			return s.refuse(err, "")
		}
	default:
		var journal string
		var sync, fk, busy int64
		if err := s.db.QueryRowContext(ctx, qDBSettings).Scan(&journal, &sync, &fk, &busy); err != nil {
			return s.refuse(err, "")
		}
		if err := settingsProblem(journal, sync, fk, busy); err != nil {
			return s.refuse(err, settingsRemedy)
		}
	}
	if !o.noQuickCheck {
		if err := sqlitex.QuickCheck(ctx, s.db); err != nil {
			return s.refuse(err, "")
		}
	}
	l, err := s.identify(ctx)
	if err != nil {
		return s.refuse(err, "")
	}
	if err := s.judge(l, o); err != nil {
		return err
	}
	if o.readOnly {
		if l.legacy || l.staged || !l.migrations {
			return s.refuse(fmt.Errorf("%w: the store predates this version's schema", ErrSchemaTooOld),
				"open it read-write once to migrate it")
		}
		if err := s.checkCurrent(ctx); err != nil {
			return s.refuse(err, "open it read-write once to migrate it")
		}
		if err := s.prepare(ctx); err != nil {
			return s.refuse(err, "")
		}
		return nil
	}
	if l.legacy {
		if err := s.adoptLegacy(ctx); err != nil {
			return s.refuse(err, "")
		}
	}
	if err := migrate(ctx, s.db); err != nil {
		return s.refuse(err, "")
	}
	if s.ownsDB && l.appID == 0 {
		if err := sqlitex.StampApplicationID(ctx, s.db, applicationID, true); err != nil {
			return s.refuse(err, "")
		}
	}
	if l.legacy || !l.migrations {
		s.info(ctx, "approval: schema created or migrated", slog.String("path", s.path), slog.Bool("legacy", l.legacy))
	}
	if err := s.prepare(ctx); err != nil {
		return s.refuse(err, "")
	}
	return nil
}
