package approval

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"net"
	"reflect"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/candorkit/candor/internal/sqlitex"
)

// DefaultSchema is the PostgreSQL schema the store's tables live in unless
// WithSchema names another.
const DefaultSchema = "public"

// WithSchema names the PostgreSQL schema that holds the store's tables
// (default DefaultSchema). With WithCreate, OpenDB creates the schema when
// it does not exist. Several stores may share a database, one per schema.
// It applies to OpenDB over PostgreSQL only; the name must be a lower-case
// SQL identifier: a letter or '_', then letters, digits or '_', at most 63
// bytes, not starting with pg_.
func WithSchema(name string) Option {
	return func(o *options) { o.schema, o.schemaSet = name, true }
}

var schemaName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

func checkSchema(name string) error {
	if !schemaName.MatchString(name) || strings.HasPrefix(name, "pg_") {
		return fmt.Errorf("approval: WithSchema: %q is not a lower-case SQL identifier of at most 63 bytes (and not pg_…)", name)
	}
	return nil
}

// pgMinVersion is the oldest PostgreSQL server the schema runs on
// (EXECUTE FUNCTION in triggers, identity columns).
const pgMinVersion = 120000

// pgDriverPkg is the package of the pgx v5 database/sql driver.
const pgDriverPkg = "github.com/jackc/pgx/v5/stdlib"

// isPostgres tells a pool of the pgx driver. A pool of another driver is
// PostgreSQL when it is not SQLite and the server answers as PostgreSQL
// does (a wrapped pgx driver, for instance).
func isPostgres(ctx context.Context, db *sql.DB) bool {
	t := reflect.TypeOf(db.Driver())
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t != nil && t.PkgPath() == pgDriverPkg {
		return true
	}
	if t != nil && strings.HasPrefix(t.PkgPath(), "modernc.org/sqlite") {
		return false
	}
	var n int
	return db.QueryRowContext(ctx, `SELECT current_setting('server_version_num')::integer`).Scan(&n) == nil && n > 0
}

// openPostgres is OpenDB over PostgreSQL.
func openPostgres(ctx context.Context, db *sql.DB, o options) (*Store, error) {
	if o.schema == "" {
		o.schema = DefaultSchema
	}
	if err := checkSchema(o.schema); err != nil {
		return nil, err
	}
	s := newStoreFor(db, false, fmt.Sprintf("(PostgreSQL schema %q)", o.schema), o)
	s.pg = true
	s.tel.setBackend(true)
	s.schema = o.schema
	s.listLock = lockKey("list", o.schema)
	q := pgQueryTemplates
	for _, p := range []*string{&q.readState, &q.list, &q.register, &q.decide, &q.complete, &q.checkApplied,
		&q.insertReceipt, &q.findReceipt} {
		*p = s.inSchema(*p)
	}
	s.q = &q

	var dbname, syncCommit string
	var version int
	if err := db.QueryRowContext(ctx, pgSettings).Scan(&dbname, &syncCommit, &version); err != nil {
		return nil, s.refuse(pgErr(err), remedyPG(pgErr(err), "pass a *sql.DB of the pgx driver (github.com/jackc/pgx/v5/stdlib) connected to PostgreSQL"))
	}
	s.path = fmt.Sprintf("PostgreSQL database %q schema %q", dbname, o.schema)
	s.namespace = dbname + "|" + o.schema
	switch {
	case version < pgMinVersion:
		return nil, s.refuse(fmt.Errorf("%w: server_version_num is %d, want %d or later", ErrSettings, version, pgMinVersion), "upgrade the server")
	case syncCommit == "off" && !o.readOnly:
		return nil, s.refuse(fmt.Errorf("%w: synchronous_commit is off, want on (or local, remote_write, remote_apply)", ErrSettings),
			"a decision acknowledged must be durable: remove synchronous_commit=off from the DSN, the role or the database")
	}
	if o.readOnly {
		if err := s.checkCurrentPG(ctx, db); err != nil {
			return nil, s.refuse(err, remedyPG(err, "open it read-write once to migrate it"))
		}
		return s, nil
	}
	if err := s.migratePG(ctx, o.create); err != nil {
		return nil, s.refuse(err, remedyPG(err, ""))
	}
	return s, nil
}

// inSchema puts a statement template in the store's schema.
func (s *Store) inSchema(q string) string {
	return strings.ReplaceAll(q, "{schema}", `"`+s.schema+`"`)
}

// lockKey is the advisory lock of one purpose in one schema.
func lockKey(purpose, schema string) int64 {
	h := fnv.New64a()
	h.Write([]byte("candor_approval\x00" + purpose + "\x00" + schema))
	return int64(h.Sum64())
}

// identifyPG reports whether the schema holds the migrations table, and
// refuses one that holds the store's tables without it.
func (s *Store) identifyPG(ctx context.Context, q queryer) (bool, error) {
	var migrations, operations bool
	if err := q.QueryRowContext(ctx, pgIdentify, s.inSchema("{schema}."+TableMigrations), s.inSchema("{schema}."+TableOperations)).
		Scan(&migrations, &operations); err != nil {
		return false, err
	}
	if operations && !migrations {
		return false, fmt.Errorf("%w: the schema holds %s but not %s", ErrSchemaAltered, TableOperations, TableMigrations)
	}
	return migrations, nil
}

func noStorePG() error {
	return fmt.Errorf("%w: the schema holds none of the store's tables", ErrNoStore)
}

// noStoreRemedy is the remedy of ErrNoStore on PostgreSQL.
const noStoreRemedy = "restore the store from a backup if it lost its contents (a new, empty store would let operation ids already bound be bound again); pass WithCreate only to add a store to a new database or schema"

// remedyPG is the remedy of a refusal by openPostgres.
func remedyPG(err error, otherwise string) string {
	switch {
	case errors.Is(err, ErrNoStore):
		return noStoreRemedy
	case errors.Is(err, ErrUnavailable):
		return "check that the server is running and reachable, then open the store again"
	}
	return otherwise
}

// migratePG brings the schema to the current version in one transaction,
// under an advisory lock, so that several processes opening the store at
// once migrate it once: each one waits, then finds the history complete.
// The recorded history must be a prefix of this package's, checksum by
// checksum.
func (s *Store) migratePG(ctx context.Context, create bool) (err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.dbErr(err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
			err = s.dbErr(err)
		}
	}()
	if _, err := tx.ExecContext(ctx, pgLockExclusive, lockKey("migrate", s.schema)); err != nil {
		return err
	}
	exists, err := s.identifyPG(ctx, tx)
	if err != nil {
		return err
	}
	if !exists {
		if !create {
			return noStorePG()
		}
		var schemaExists bool
		if err := tx.QueryRowContext(ctx, pgSchemaExists, s.schema).Scan(&schemaExists); err != nil {
			return err
		}
		if !schemaExists {
			if _, err := tx.ExecContext(ctx, s.inSchema("CREATE SCHEMA {schema}")); err != nil {
				return fmt.Errorf("approval: create schema: %w", err)
			}
		}
		if _, err := tx.ExecContext(ctx, s.inSchema(pgMigrationsTable)); err != nil {
			return fmt.Errorf("approval: create %s: %w", TableMigrations, err)
		}
	}
	n, err := s.checkHistoryPG(ctx, tx)
	if err != nil {
		return err
	}
	ms := pgMigrations()
	for _, m := range ms[n:] {
		if _, err := tx.ExecContext(ctx, s.inSchema(m.sql)); err != nil {
			return fmt.Errorf("approval: migrate to version %d (%s): %w", m.version, m.name, err)
		}
		if _, err := tx.ExecContext(ctx, s.inSchema(pgRecord), m.version, m.name, pgChecksum(m), time.Now().UTC().UnixNano()); err != nil {
			return fmt.Errorf("approval: record version %d: %w", m.version, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("approval: migrate: commit: %w", err)
	}
	if n < len(ms) {
		s.info(ctx, "approval: schema created or migrated", slog.String("path", s.path), slog.Int("from_version", n),
			slog.Int("to_version", len(ms)))
	}
	return nil
}

func pgChecksum(m migration) string { return sqlitex.Migration{SQL: m.sql}.Checksum() }

// checkHistoryPG reads the recorded migrations and returns how many there
// are, refusing a history that is not a prefix of this package's.
func (s *Store) checkHistoryPG(ctx context.Context, q queryer) (int, error) {
	rows, err := q.QueryContext(ctx, s.inSchema(pgHistory))
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	ms := pgMigrations()
	n := 0
	for rows.Next() {
		var v int
		var sum string
		if err := rows.Scan(&v, &sum); err != nil {
			return 0, err
		}
		n++
		switch {
		case v > len(ms):
			return 0, fmt.Errorf("%w: the schema is at version %d, this package knows %d", ErrSchemaTooNew, v, len(ms))
		case v != n:
			return 0, fmt.Errorf("%w: version %d is missing", ErrSchemaAltered, n)
		case sum != pgChecksum(ms[v-1]):
			return 0, fmt.Errorf("%w: version %d (%s) recorded with checksum %s, the package has %s",
				ErrSchemaAltered, v, ms[v-1].name, sum, pgChecksum(ms[v-1]))
		}
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	return n, rows.Close()
}

// checkCurrentPG confirms, without writing, that the schema holds a store
// at exactly this package's version.
func (s *Store) checkCurrentPG(ctx context.Context, db *sql.DB) error {
	exists, err := s.identifyPG(ctx, db)
	if err != nil {
		return s.dbErr(err)
	}
	if !exists {
		return noStorePG()
	}
	n, err := s.checkHistoryPG(ctx, db)
	if err != nil {
		return s.dbErr(err)
	}
	if n < len(pgMigrations()) {
		return fmt.Errorf("%w: the schema is at version %d, this package is at %d", ErrSchemaTooOld, n, len(pgMigrations()))
	}
	return nil
}

// sqlState returns the SQLSTATE code of a PostgreSQL error, "" for
// another error.
func sqlState(err error) string {
	var e interface{ SQLState() string }
	if errors.As(err, &e) {
		return e.SQLState()
	}
	return ""
}

// pgBusy reports a PostgreSQL serialization failure, deadlock or lock
// that could not be taken.
func pgBusy(err error) bool {
	switch sqlState(err) {
	case "40001", "40P01", "55P03":
		return true
	}
	return false
}

// pgErr marks a failure to reach PostgreSQL, or a broken connection, as
// ErrUnavailable, and a write refused by a read-only server as ErrReadOnly.
func pgErr(err error) error {
	switch {
	case errors.Is(err, ErrUnavailable), errors.Is(err, ErrReadOnly), errors.Is(err, ErrEffectFailed),
		errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case sqlState(err) == "25006":
		return fmt.Errorf("%w: %w", ErrReadOnly, err)
	case pgUnavailable(err):
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return err
}

// pgUnavailable reports an error that says the server could not be reached
// or the connection broke: SQLSTATE class 08, a shutdown (57P01..57P03), too
// many connections (53300), or a network error under the driver's.
func pgUnavailable(err error) bool {
	if st := sqlState(err); st != "" {
		return strings.HasPrefix(st, "08") || st == "57P01" || st == "57P02" || st == "57P03" || st == "53300"
	}
	var ne net.Error
	switch {
	case errors.Is(err, driver.ErrBadConn), errors.Is(err, sql.ErrConnDone),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.As(err, &ne):
		return true
	}
	return saysConnClosed(err)
}

// saysConnClosed finds pgx's "conn closed" (an operation on a connection
// that broke) anywhere in err's chain.
func saysConnClosed(err error) bool {
	if err == nil {
		return false
	}
	if err.Error() == "conn closed" {
		return true
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		return saysConnClosed(u.Unwrap())
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			if saysConnClosed(e) {
				return true
			}
		}
	}
	return false
}
