package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/candorkit/candor/approval"

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

// ensure creates the table and its triggers if they are missing.
func (b *backlog) ensure(ctx context.Context) error {
	if _, err := b.db.ExecContext(ctx, backlogSchema); err != nil {
		return fmt.Errorf("create ApprovedBacklogItems: %w", err)
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
	var n int
	if err := b.db.QueryRowContext(ctx,
		`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'ApprovedBacklogItems'`).Scan(&n); err != nil {
		return nil, fmt.Errorf("look for ApprovedBacklogItems: %w", err)
	}
	if n == 0 {
		return nil, nil
	}
	rs, err := b.db.QueryContext(ctx,
		`SELECT id, operation_id, approval_item_id, draft FROM ApprovedBacklogItems ORDER BY id`)
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
func writeBacklogItem(now func() time.Time) approval.Effect {
	return func(ctx context.Context, tx *sql.Tx, item approval.Item) error {
		d, err := decodeDraft(item.Draft)
		if err != nil {
			return err
		}
		links, err := json.Marshal(d.Links)
		if err != nil {
			return fmt.Errorf("encode links: %w", err)
		}
		var n int
		if err := tx.QueryRowContext(ctx,
			`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'ApprovedBacklogItems'`).Scan(&n); err != nil {
			return fmt.Errorf("look for ApprovedBacklogItems: %w", err)
		}
		if n == 0 {
			return errNoBacklogTable
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO ApprovedBacklogItems
			(operation_id, approval_item_id, title, type, priority, area, summary, links, draft, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			item.OperationID, item.ID, d.Title, d.Type, d.Priority, d.Area, d.Summary, string(links),
			[]byte(item.Draft), now().UTC().Format(time.RFC3339Nano))
		if err != nil {
			return fmt.Errorf("insert ApprovedBacklogItems row: %w", err)
		}
		return nil
	}
}
