package sqlitex

import (
	"context"
	"database/sql"
	"fmt"
)

// StampApplicationID ties the file to a store through SQLite's
// application_id header field. With creating (the caller has just created
// the file), it sets id unless the file already carries another non-zero
// id. Otherwise the file must already carry id: 0 (a file that lost its
// header, or was never this store's) and any other value are ErrForeign.
func StampApplicationID(ctx context.Context, db *sql.DB, id int32, creating bool) error {
	if id == 0 {
		return fmt.Errorf("sqlitex: application id must not be 0")
	}
	got, err := applicationID(ctx, db)
	if err != nil {
		return err
	}
	switch {
	case got == id:
		return nil
	case creating && got == 0:
		if _, err := db.ExecContext(ctx, fmt.Sprintf("PRAGMA application_id = %d", id)); err != nil {
			return fmt.Errorf("sqlitex: set application_id: %w", err)
		}
		if got, err = applicationID(ctx, db); err != nil {
			return err
		}
		if got != id {
			return &PragmaError{Pragma: "application_id", Got: fmt.Sprint(got), Want: fmt.Sprint(id)}
		}
		return nil
	case got == 0:
		return fmt.Errorf("%w: application_id is 0, want %#x (not created by this store, or its header was lost)", ErrForeign, uint32(id))
	}
	return fmt.Errorf("%w: application_id is %#x, want %#x", ErrForeign, uint32(got), uint32(id))
}

func applicationID(ctx context.Context, db *sql.DB) (int32, error) {
	var got int32
	if err := db.QueryRowContext(ctx, "PRAGMA application_id").Scan(&got); err != nil {
		if IsCorrupt(err) {
			return 0, &CorruptError{Err: err}
		}
		return 0, fmt.Errorf("sqlitex: read application_id: %w", err)
	}
	return got, nil
}

// QuickCheck runs PRAGMA quick_check and returns a *CorruptError when it
// finds damage (or the driver reports SQLITE_CORRUPT or SQLITE_NOTADB while
// it runs). Its cost grows with the file: it reads every page.
func QuickCheck(ctx context.Context, db *sql.DB) error {
	rows, err := db.QueryContext(ctx, "PRAGMA quick_check")
	if err != nil {
		return checkErr(err)
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return checkErr(err)
		}
		if line == "ok" {
			continue
		}
		if len(problems) < MaxProblems {
			problems = append(problems, line)
		}
	}
	if err := rows.Err(); err != nil {
		return checkErr(err)
	}
	if len(problems) > 0 {
		return &CorruptError{Problems: problems}
	}
	return nil
}

func checkErr(err error) error {
	if IsCorrupt(err) {
		return &CorruptError{Err: err}
	}
	return fmt.Errorf("sqlitex: quick_check: %w", err)
}
