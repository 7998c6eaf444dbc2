package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/candorkit/candor/approval"

	_ "modernc.org/sqlite" // the "sqlite" driver, also used by approval
)

// reordersSchema is the table the approved effect writes: one row per
// proposal line. The key (operation, line) and the unique (operation, code)
// make a second copy of a line impossible even if an effect ran twice,
// which approval.Apply already prevents.
const reordersSchema = `CREATE TABLE IF NOT EXISTS reorders (
	operation_id     TEXT    NOT NULL,
	line_no          INTEGER NOT NULL CHECK (line_no >= 1),
	product_code     TEXT    NOT NULL CHECK (product_code <> ''),
	product_name     TEXT    NOT NULL,
	vendor           TEXT    NOT NULL,
	on_hand          INTEGER NOT NULL,
	quantity         INTEGER NOT NULL CHECK (quantity > 0),
	run_date         TEXT    NOT NULL,
	approval_item_id INTEGER NOT NULL,
	approved_by      TEXT    NOT NULL,
	recorded_at      TEXT    NOT NULL,
	PRIMARY KEY (operation_id, line_no),
	UNIQUE (operation_id, product_code)
) STRICT`

// reordersSchemaPG is reordersSchema on PostgreSQL, in a schema of its
// own beside the approval store's.
const (
	reordersSchemaNamePG = `CREATE SCHEMA IF NOT EXISTS candor_reorder`
	reordersSchemaPG     = `CREATE TABLE IF NOT EXISTS candor_reorder.reorders (
	operation_id     TEXT    NOT NULL,
	line_no          INTEGER NOT NULL CHECK (line_no >= 1),
	product_code     TEXT    NOT NULL CHECK (product_code <> ''),
	product_name     TEXT    NOT NULL,
	vendor           TEXT    NOT NULL,
	on_hand          INTEGER NOT NULL,
	quantity         INTEGER NOT NULL CHECK (quantity > 0),
	run_date         TEXT    NOT NULL,
	approval_item_id BIGINT  NOT NULL,
	approved_by      TEXT    NOT NULL,
	recorded_at      TEXT    NOT NULL,
	PRIMARY KEY (operation_id, line_no),
	UNIQUE (operation_id, product_code)
)`
)

const (
	insertReorder = `INSERT INTO reorders
	(operation_id, line_no, product_code, product_name, vendor, on_hand, quantity,
	 run_date, approval_item_id, approved_by, recorded_at)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	insertReorderPG = `INSERT INTO candor_reorder.reorders
	(operation_id, line_no, product_code, product_name, vendor, on_hand, quantity,
	 run_date, approval_item_id, approved_by, recorded_at)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`
)

// reorderRow is one row of the reorders table.
type reorderRow struct {
	OperationID string `json:"operationId"`
	Line        int    `json:"line"`
	Code        string `json:"code"`
	Name        string `json:"name"`
	Vendor      string `json:"vendor"`
	OnHand      int    `json:"onHand"`
	Quantity    int    `json:"quantity"`
	RunDate     string `json:"runDate"`
	ItemID      int64  `json:"approvalItemId"`
	ApprovedBy  string `json:"approvedBy"`
	RecordedAt  string `json:"recordedAt"`
}

// writeReorders is the Effect of an approved proposal: it decodes the
// persisted draft (never a value held in memory), checks it again, and
// inserts one reorders row per line through Apply's transaction, so the rows
// commit with the operation's completion or not at all.
// On PostgreSQL (postgres true) the table is candor_reorder.reorders.
func writeReorders(now func() time.Time, ran *int, postgres bool) approval.Effect {
	schema, insert := reordersSchema, insertReorder
	if postgres {
		schema, insert = reordersSchemaPG, insertReorderPG
	}
	return func(ctx context.Context, tx *sql.Tx, item approval.Item) error {
		d, err := decodeDraft(item.Draft)
		if err != nil {
			return err
		}
		if problems := d.Validate(); len(problems) > 0 {
			return fmt.Errorf("stored draft no longer valid: %w", errors.Join(problems...))
		}
		if postgres {
			if _, err := tx.ExecContext(ctx, reordersSchemaNamePG); err != nil {
				return fmt.Errorf("creating the reorders schema: %w", err)
			}
		}
		if _, err := tx.ExecContext(ctx, schema); err != nil {
			return fmt.Errorf("creating the reorders table: %w", err)
		}
		at := now().UTC().Format(time.RFC3339Nano)
		for i, l := range d.Lines {
			if _, err := tx.ExecContext(ctx, insert,
				item.OperationID, i+1, l.Code, l.Name, l.Vendor, l.OnHand, l.Quantity,
				d.RunDate, item.ID, item.Decision.DecidedBy, at); err != nil {
				return fmt.Errorf("writing reorder line %d (%s): %w", i+1, l.Code, err)
			}
		}
		*ran = len(d.Lines)
		return nil
	}
}

// readReorders returns the reorders rows of one operation (all of them when
// operationID is empty), through a read-only connection of its own.
func readReorders(ctx context.Context, path, operationID string) ([]reorderRow, error) {
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() + "?_pragma=query_only(1)&_pragma=busy_timeout(10000)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'reorders'`).Scan(&n); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if n == 0 {
		return nil, nil // no proposal was ever applied
	}
	rows, err := db.QueryContext(ctx, `SELECT operation_id, line_no, product_code, product_name, vendor,
		on_hand, quantity, run_date, approval_item_id, approved_by, recorded_at
		FROM reorders WHERE ? = '' OR operation_id = ? ORDER BY operation_id, line_no`, operationID, operationID)
	if err != nil {
		return nil, err
	}
	return scanReorders(rows)
}

// readReordersPG is readReorders on the PostgreSQL pool of the approval
// store.
func readReordersPG(ctx context.Context, db *sql.DB, operationID string) ([]reorderRow, error) {
	var exists bool
	if err := db.QueryRowContext(ctx, `SELECT to_regclass('candor_reorder.reorders') IS NOT NULL`).Scan(&exists); err != nil {
		return nil, fmt.Errorf("looking for the reorders table: %w", err)
	}
	if !exists {
		return nil, nil // no proposal was ever applied
	}
	rows, err := db.QueryContext(ctx, `SELECT operation_id, line_no, product_code, product_name, vendor,
		on_hand, quantity, run_date, approval_item_id, approved_by, recorded_at
		FROM candor_reorder.reorders WHERE $1 = '' OR operation_id = $1 ORDER BY operation_id, line_no`, operationID)
	if err != nil {
		return nil, err
	}
	return scanReorders(rows)
}

func scanReorders(rows *sql.Rows) ([]reorderRow, error) {
	defer rows.Close()
	var out []reorderRow
	for rows.Next() {
		var r reorderRow
		if err := rows.Scan(&r.OperationID, &r.Line, &r.Code, &r.Name, &r.Vendor, &r.OnHand, &r.Quantity,
			&r.RunDate, &r.ItemID, &r.ApprovedBy, &r.RecordedAt); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
