package sqlitex

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// Migration is one forward-only schema step. Once released, its SQL never
// changes: Migrate records its checksum and refuses a database whose record
// differs. New behaviour is a new Migration.
type Migration struct {
	// Version is the migration's place in the list: 1, 2, 3, … without gaps.
	Version int
	// Name describes the step; it is recorded, not checked.
	Name string
	// SQL is one or more statements run in one transaction.
	SQL string
}

// Checksum is the hex SHA-256 of the migration's SQL, as recorded.
func (m Migration) Checksum() string {
	sum := sha256.Sum256([]byte(m.SQL))
	return hex.EncodeToString(sum[:])
}

// Migrate brings db to the last of ms, recording each applied migration in
// table (created when missing, columns version, name, checksum,
// applied_at). Each pending migration runs in its own BEGIN IMMEDIATE
// transaction on one connection, with the applied state re-read inside it,
// so concurrent openers apply each step once. Migrate refuses, with a
// *MigrationError, a file migrated further than ms (ErrSchemaTooNew), a
// recorded checksum that differs from the program's, and a missing version
// below the highest recorded one (ErrSchemaAltered). table must be a plain
// SQL identifier ([A-Za-z_][A-Za-z0-9_]*).
func Migrate(ctx context.Context, db *sql.DB, table string, ms []Migration) error {
	if !isIdent(table) {
		return fmt.Errorf("sqlitex: migrations table name %q is not a plain identifier", table)
	}
	for i, m := range ms {
		if m.Version != i+1 {
			return fmt.Errorf("sqlitex: migration %d of the list has version %d, want %d", i+1, m.Version, i+1)
		}
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("sqlitex: connect: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS "`+table+`" (
	version    INTEGER PRIMARY KEY,
	name       TEXT    NOT NULL,
	checksum   TEXT    NOT NULL,
	applied_at INTEGER NOT NULL
)`); err != nil {
		return &MigrationError{Table: table, Reason: "create the migrations table", Err: err}
	}
	for {
		done, err := step(ctx, conn, table, ms)
		if err != nil || done {
			return err
		}
	}
}

// step applies the first pending migration in one transaction, after
// checking the whole record inside it. It reports done when none is
// pending.
func step(ctx context.Context, conn *sql.Conn, table string, ms []Migration) (done bool, err error) {
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return false, &MigrationError{Table: table, Reason: "begin", Err: err}
	}
	committed := false
	defer func() {
		if committed {
			return
		}
		// The rollback must run even when ctx has ended.
		if _, rerr := conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK"); rerr != nil {
			err = errors.Join(err, fmt.Errorf("sqlitex: rollback: %w", rerr))
		}
	}()
	applied, highest, err := readApplied(ctx, conn, table)
	if err != nil {
		return false, err
	}
	if highest > len(ms) {
		return false, &MigrationError{Table: table, Version: highest, Err: ErrSchemaTooNew,
			Reason: fmt.Sprintf("the database is at version %d, this program knows %d", highest, len(ms))}
	}
	var next *Migration
	for i := range ms {
		m := &ms[i]
		sum, ok := applied[m.Version]
		switch {
		case ok && sum != m.Checksum():
			return false, &MigrationError{Table: table, Version: m.Version, Name: m.Name, Err: ErrSchemaAltered,
				Reason: fmt.Sprintf("recorded with checksum %s, the program has %s", sum, m.Checksum())}
		case ok:
		case m.Version <= highest:
			return false, &MigrationError{Table: table, Version: m.Version, Name: m.Name, Err: ErrSchemaAltered,
				Reason: fmt.Sprintf("missing below the recorded version %d", highest)}
		case next == nil:
			next = m
		}
	}
	if next == nil {
		if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
			return false, &MigrationError{Table: table, Version: highest, Reason: "commit", Err: err}
		}
		committed = true
		return true, nil
	}
	if _, err := conn.ExecContext(ctx, next.SQL); err != nil {
		return false, &MigrationError{Table: table, Version: next.Version, Name: next.Name, Err: err}
	}
	if _, err := conn.ExecContext(ctx,
		`INSERT INTO "`+table+`" (version, name, checksum, applied_at) VALUES (?, ?, ?, ?)`,
		next.Version, next.Name, next.Checksum(), time.Now().UTC().UnixNano()); err != nil {
		return false, &MigrationError{Table: table, Version: next.Version, Name: next.Name, Reason: "record", Err: err}
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		return false, &MigrationError{Table: table, Version: next.Version, Name: next.Name, Reason: "commit", Err: err}
	}
	committed = true
	return false, nil
}

func readApplied(ctx context.Context, conn *sql.Conn, table string) (map[int]string, int, error) {
	rows, err := conn.QueryContext(ctx, `SELECT version, checksum FROM "`+table+`" ORDER BY version`)
	if err != nil {
		return nil, 0, &MigrationError{Table: table, Reason: "read the record", Err: err}
	}
	defer rows.Close()
	applied := map[int]string{}
	highest := 0
	for rows.Next() {
		var v int
		var sum string
		if err := rows.Scan(&v, &sum); err != nil {
			return nil, 0, &MigrationError{Table: table, Reason: "read the record", Err: err}
		}
		applied[v] = sum
		highest = max(highest, v)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, &MigrationError{Table: table, Reason: "read the record", Err: err}
	}
	return applied, highest, nil
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		switch {
		case c == '_', 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && '0' <= c && c <= '9':
		default:
			return false
		}
	}
	return true
}
