package pgx

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"database/sql/driver"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// Sentinel errors, wrapped in a *MigrationError.
var (
	// ErrSchemaAltered reports recorded migrations that disagree with the
	// program's.
	ErrSchemaAltered = errors.New("pgx: schema history altered")
	// ErrSchemaTooNew reports a schema migrated by a newer program.
	ErrSchemaTooNew = errors.New("pgx: schema newer than this program")
)

// Migration is one forward-only schema step. Once released, its SQL never
// changes: Migrate records its checksum and refuses a database whose record
// differs. New behaviour is a new Migration.
type Migration struct {
	// Version is the migration's place in the list: 1, 2, 3, … without gaps.
	Version int
	// Name describes the step; it is recorded, not checked.
	Name string
	// SQL is one or more statements run in one transaction, with
	// search_path set to the schema.
	SQL string
}

// Checksum is the hex SHA-256 of the migration's SQL, as recorded.
func (m Migration) Checksum() string {
	sum := sha256.Sum256([]byte(m.SQL))
	return hex.EncodeToString(sum[:])
}

// MigrationError reports a migration that was refused or failed. Err is
// ErrSchemaAltered, ErrSchemaTooNew, or the driver's error.
type MigrationError struct {
	// Schema and Table name the migrations table.
	Schema, Table string
	// Version and Name identify the migration concerned; for
	// ErrSchemaTooNew, Version is the highest recorded one.
	Version int
	Name    string
	// Reason says what is wrong, without the cause.
	Reason string
	// Err is the cause.
	Err error
}

func (e *MigrationError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "pgx: migrations in %s.%s: version %d", e.Schema, e.Table, e.Version)
	if e.Name != "" {
		fmt.Fprintf(&b, " (%s)", e.Name)
	}
	if e.Reason != "" {
		b.WriteString(": ")
		b.WriteString(e.Reason)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *MigrationError) Unwrap() error { return e.Err }

// IsIdent reports whether s is a plain lower-case SQL identifier
// ([a-z_][a-z0-9_]*, at most 63 bytes), which PostgreSQL keeps as written.
func IsIdent(s string) bool {
	if s == "" || len(s) > 63 {
		return false
	}
	for i, c := range s {
		switch {
		case c == '_', 'a' <= c && c <= 'z':
		case i > 0 && '0' <= c && c <= '9':
		default:
			return false
		}
	}
	return true
}

// Quote returns the identifier s double-quoted for SQL.
func Quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// IsPostgres reports whether db was opened with the pgx database/sql driver.
func IsPostgres(db *sql.DB) bool {
	_, ok := db.Driver().(*stdlib.Driver)
	return ok
}

// lockKey derives the advisory lock key of one migrations table.
func lockKey(schema, table string) int64 {
	sum := sha256.Sum256([]byte("candor/internal/pgx/migrate\x00" + schema + "\x00" + table))
	return int64(binary.BigEndian.Uint64(sum[:8]))
}

// Migrate creates schema when missing and brings it to the last of ms,
// recording each applied migration in schema.table (created when missing,
// columns version, name, checksum, applied_at). Each pending migration runs
// in its own transaction under an advisory lock, with the applied state
// re-read inside it, so concurrent openers apply each step once. Migrate
// refuses, with a *MigrationError, a schema migrated further than ms
// (ErrSchemaTooNew), a recorded checksum that differs from the program's,
// and a missing version below the highest recorded one (ErrSchemaAltered).
// schema and table must satisfy IsIdent.
func Migrate(ctx context.Context, db *sql.DB, schema, table string, ms []Migration) error {
	if !IsIdent(schema) {
		return fmt.Errorf("pgx: schema name %q is not a plain lower-case identifier", schema)
	}
	if !IsIdent(table) {
		return fmt.Errorf("pgx: migrations table name %q is not a plain lower-case identifier", table)
	}
	for i, m := range ms {
		if m.Version != i+1 {
			return fmt.Errorf("pgx: migration %d of the list has version %d, want %d", i+1, m.Version, i+1)
		}
	}
	for {
		done, err := step(ctx, db, schema, table, ms)
		if err != nil || done {
			return err
		}
	}
}

func step(ctx context.Context, db *sql.DB, schema, table string, ms []Migration) (done bool, err error) {
	merr := func(v int, name, reason string, err error) *MigrationError {
		return &MigrationError{Schema: schema, Table: table, Version: v, Name: name, Reason: reason, Err: err}
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return false, merr(0, "", "begin", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, lockKey(schema, table)); err != nil {
		return false, merr(0, "", "lock", err)
	}
	qt := Quote(schema) + "." + Quote(table)
	if _, err := tx.ExecContext(ctx, `CREATE SCHEMA IF NOT EXISTS `+Quote(schema)); err != nil {
		return false, merr(0, "", "create the schema", err)
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+qt+` (
	version    INTEGER PRIMARY KEY,
	name       TEXT    NOT NULL,
	checksum   TEXT    NOT NULL,
	applied_at BIGINT  NOT NULL
)`); err != nil {
		return false, merr(0, "", "create the migrations table", err)
	}
	applied, highest, err := readApplied(ctx, tx, qt)
	if err != nil {
		return false, merr(0, "", "read the record", err)
	}
	if highest > len(ms) {
		return false, merr(highest, "", fmt.Sprintf("the database is at version %d, this program knows %d", highest, len(ms)), ErrSchemaTooNew)
	}
	var next *Migration
	for i := range ms {
		m := &ms[i]
		sum, ok := applied[m.Version]
		switch {
		case ok && sum != m.Checksum():
			return false, merr(m.Version, m.Name, fmt.Sprintf("recorded with checksum %s, the program has %s", sum, m.Checksum()), ErrSchemaAltered)
		case ok:
		case m.Version <= highest:
			return false, merr(m.Version, m.Name, fmt.Sprintf("missing below the recorded version %d", highest), ErrSchemaAltered)
		case next == nil:
			next = m
		}
	}
	if next == nil {
		if err := tx.Commit(); err != nil {
			return false, merr(highest, "", "commit", err)
		}
		return true, nil
	}
	if _, err := tx.ExecContext(ctx, `SELECT set_config('search_path', $1, true)`, Quote(schema)); err != nil {
		return false, merr(next.Version, next.Name, "set search_path", err)
	}
	if _, err := tx.ExecContext(ctx, next.SQL); err != nil {
		return false, merr(next.Version, next.Name, "", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO `+qt+` (version, name, checksum, applied_at) VALUES ($1, $2, $3, $4)`,
		next.Version, next.Name, next.Checksum(), time.Now().UTC().UnixNano()); err != nil {
		return false, merr(next.Version, next.Name, "record", err)
	}
	if err := tx.Commit(); err != nil {
		return false, merr(next.Version, next.Name, "commit", err)
	}
	return false, nil
}

func readApplied(ctx context.Context, tx *sql.Tx, qt string) (map[int]string, int, error) {
	rows, err := tx.QueryContext(ctx, `SELECT version, checksum FROM `+qt+` ORDER BY version`)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	applied := map[int]string{}
	highest := 0
	for rows.Next() {
		var v int
		var sum string
		if err := rows.Scan(&v, &sum); err != nil {
			return nil, 0, err
		}
		applied[v] = sum
		highest = max(highest, v)
	}
	return applied, highest, rows.Err()
}

// IsUnavailable reports whether err means the server could not be reached
// or went away: a failed connection attempt, a network error, a connection
// the driver found closed, or a server error of SQLSTATE class 08
// (connection exception) or 57P (operator intervention: shutdown, crash,
// cannot connect now).
func IsUnavailable(err error) bool {
	if err == nil {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return strings.HasPrefix(pe.Code, "08") || strings.HasPrefix(pe.Code, "57P")
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || errors.As(err, &ne) || errors.Is(err, sql.ErrConnDone) ||
		errors.Is(err, driver.ErrBadConn) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, net.ErrClosed) || pgconn.SafeToRetry(err) || strings.Contains(err.Error(), "conn closed")
}
