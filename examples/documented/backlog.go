package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/candorkit/candor/approval"
	"github.com/candorkit/candor/examples/internal/pgdsn"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver
)

// backlogSchema is the table the approval effect writes, in the approval
// store's own file so that the row commits in Apply's transaction. Rows are
// never updated or deleted, and one operation yields at most one row (the
// UNIQUE constraint backs up Apply's at-most-once guarantee).
const backlogSchema = `
CREATE TABLE IF NOT EXISTS ApprovedBacklogItems (
	id               INTEGER PRIMARY KEY AUTOINCREMENT,
	operation_id     TEXT    NOT NULL UNIQUE,
	approval_item_id INTEGER NOT NULL UNIQUE,
	title            TEXT    NOT NULL,
	type             TEXT    NOT NULL,
	priority         TEXT    NOT NULL,
	area             TEXT    NOT NULL,
	summary          TEXT    NOT NULL,
	links            TEXT    NOT NULL,
	draft            BLOB    NOT NULL,
	created_at       TEXT    NOT NULL
);
CREATE TRIGGER IF NOT EXISTS ApprovedBacklogItems_no_update BEFORE UPDATE ON ApprovedBacklogItems
BEGIN SELECT RAISE(ABORT, 'documented: approved backlog items are immutable'); END;
CREATE TRIGGER IF NOT EXISTS ApprovedBacklogItems_no_delete BEFORE DELETE ON ApprovedBacklogItems
BEGIN SELECT RAISE(ABORT, 'documented: approved backlog items are never deleted'); END;
`

// backlog reads and prepares the ApprovedBacklogItems table through its own
// connection to the approval store's file. It never writes while an Apply is
// running: the rows themselves are written by the effect, through Apply's
// transaction.
type backlog struct {
	db *sql.DB
	pg bool // PostgreSQL: the table is candor_documented.approved_backlog_items
}

// openBacklog connects to the store file at path (which approval.Open has
// already created and put in WAL mode).
func openBacklog(path string, busy time.Duration) (*backlog, error) {
	dsn := path + "?_txlock=immediate&_pragma=busy_timeout(" +
		strconv.FormatInt(busy.Milliseconds(), 10) + ")&_pragma=foreign_keys(1)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return &backlog{db: db}, nil
}

func (b *backlog) Close() error { return b.db.Close() }

// backlogSchemaPG is backlogSchema on PostgreSQL, in a schema of its own
// beside the approval store's; one statement per element.
var backlogSchemaPG = []string{
	`SELECT pg_advisory_xact_lock(hashtext('candor_documented'))`,
	`CREATE SCHEMA IF NOT EXISTS candor_documented`,
	`CREATE TABLE IF NOT EXISTS candor_documented.approved_backlog_items (
	id               BIGSERIAL PRIMARY KEY,
	operation_id     TEXT   NOT NULL UNIQUE,
	approval_item_id BIGINT NOT NULL UNIQUE,
	title            TEXT   NOT NULL,
	type             TEXT   NOT NULL,
	priority         TEXT   NOT NULL,
	area             TEXT   NOT NULL,
	summary          TEXT   NOT NULL,
	links            TEXT   NOT NULL,
	draft            BYTEA  NOT NULL,
	created_at       TEXT   NOT NULL
)`,
	`CREATE OR REPLACE FUNCTION candor_documented.refuse_change() RETURNS trigger LANGUAGE plpgsql AS
$$BEGIN RAISE EXCEPTION 'documented: approved backlog items are immutable and never deleted'; END$$`,
	`CREATE OR REPLACE TRIGGER approved_backlog_items_immutable
	BEFORE UPDATE OR DELETE ON candor_documented.approved_backlog_items
	FOR EACH ROW EXECUTE FUNCTION candor_documented.refuse_change()`,
}

const backlogTablePG = "candor_documented.approved_backlog_items"

// ensure creates the table and its triggers if they are missing.
func (b *backlog) ensure(ctx context.Context) error {
	if b.pg {
		return b.ensurePG(ctx)
	}
	if _, err := b.db.ExecContext(ctx, backlogSchema); err != nil {
		return fmt.Errorf("create ApprovedBacklogItems: %w", err)
	}
	return nil
}

// ensurePG creates the PostgreSQL table in one transaction, serialised
// across processes by an advisory lock.
func (b *backlog) ensurePG(ctx context.Context) error {
	tx, err := b.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("create %s: %w", backlogTablePG, err)
	}
	defer func() { _ = tx.Rollback() }()
	for _, q := range backlogSchemaPG {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("create %s: %w", backlogTablePG, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("create %s: %w", backlogTablePG, err)
	}
	return nil
}

// backlogRow is one approved backlog item.
type backlogRow struct {
	ID             int64
	OperationID    string
	ApprovalItemID int64
	Draft          json.RawMessage
}

// rows returns every row, oldest first. A store without the table holds
// none.
func (b *backlog) rows(ctx context.Context) ([]backlogRow, error) {
	exists, err := hasBacklogTable(ctx, b.db, b.pg)
	if err != nil {
		return nil, err
	}
	if !exists {
		return nil, nil
	}
	table := "ApprovedBacklogItems"
	if b.pg {
		table = backlogTablePG
	}
	rs, err := b.db.QueryContext(ctx,
		`SELECT id, operation_id, approval_item_id, draft FROM `+table+` ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("read ApprovedBacklogItems: %w", err)
	}
	defer rs.Close()
	var out []backlogRow
	for rs.Next() {
		var r backlogRow
		var draft []byte
		if err := rs.Scan(&r.ID, &r.OperationID, &r.ApprovalItemID, &draft); err != nil {
			return nil, fmt.Errorf("read ApprovedBacklogItems: %w", err)
		}
		r.Draft = draft
		out = append(out, r)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("read ApprovedBacklogItems: %w", err)
	}
	return out, nil
}

// errNoBacklogTable: Apply was asked to write a row before run prepared the
// table (the store file was not made by this agent).
var errNoBacklogTable = errors.New("the store has no ApprovedBacklogItems table")

// writeBacklogItem is the approval Effect: it writes the approved item's
// row from the draft the store persisted (item.Draft), never from a value in
// this process's memory or from evidence.json, through Apply's transaction.
// pg says the store is PostgreSQL.
func writeBacklogItem(now func() time.Time, pg bool) approval.Effect {
	return func(ctx context.Context, tx *sql.Tx, item approval.Item) error {
		d, err := decodeDraft(item.Draft)
		if err != nil {
			return err
		}
		links, err := json.Marshal(d.Links)
		if err != nil {
			return fmt.Errorf("encode links: %w", err)
		}
		exists, err := hasBacklogTable(ctx, tx, pg)
		if err != nil {
			return err
		}
		if !exists {
			return errNoBacklogTable
		}
		insert := `INSERT INTO ApprovedBacklogItems
			(operation_id, approval_item_id, title, type, priority, area, summary, links, draft, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
		if pg {
			insert = `INSERT INTO ` + backlogTablePG + `
			(operation_id, approval_item_id, title, type, priority, area, summary, links, draft, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`
		}
		_, err = tx.ExecContext(ctx, insert,
			item.OperationID, item.ID, d.Title, d.Type, d.Priority, d.Area, d.Summary, string(links),
			[]byte(item.Draft), now().UTC().Format(time.RFC3339Nano))
		if err != nil {
			return fmt.Errorf("insert ApprovedBacklogItems row: %w", err)
		}
		return nil
	}
}

// querier is a *sql.DB or a *sql.Tx.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// hasBacklogTable reports whether the backlog table exists.
func hasBacklogTable(ctx context.Context, q querier, pg bool) (bool, error) {
	if pg {
		var exists bool
		if err := q.QueryRowContext(ctx, `SELECT to_regclass('`+backlogTablePG+`') IS NOT NULL`).Scan(&exists); err != nil {
			return false, fmt.Errorf("look for %s: %w", backlogTablePG, err)
		}
		return exists, nil
	}
	var n int
	if err := q.QueryRowContext(ctx,
		`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'ApprovedBacklogItems'`).Scan(&n); err != nil {
		return false, fmt.Errorf("look for ApprovedBacklogItems: %w", err)
	}
	return n > 0, nil
}

// openStoresPG opens the approval store and the backlog table on the
// PostgreSQL database dsn names, through one pool.
func openStoresPG(ctx context.Context, dsn string, log *slog.Logger) (*stores, error) {
	db, err := pgdsn.Open(ctx, "-approvals", dsn)
	if err != nil {
		return nil, err
	}
	st, err := approval.OpenDB(ctx, db, approval.WithLogger(log), approval.WithCreate())
	if err != nil {
		_ = db.Close()
		return nil, pgdsn.Redact(err, dsn)
	}
	// The backlog's Close closes the pool, after the store's Close.
	return &stores{approval: st, backlog: &backlog{db: db, pg: true}}, nil
}
