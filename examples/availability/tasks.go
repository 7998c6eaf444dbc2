package main

import (
	"context"
	"database/sql"
	"errors"

	"github.com/candorkit/candor/a2a"
	"github.com/candorkit/candor/a2a/pgstore"
	"github.com/candorkit/candor/examples/internal/pgdsn"
)

// tasksFlag names -tasks in errors about its value.
const tasksFlag = "-tasks"

// checkTasks validates -tasks: empty (the in-memory store) or a
// PostgreSQL DSN; the DSN is never quoted.
func checkTasks(v string) error {
	if v == "" {
		return nil
	}
	if !pgdsn.IsDSN(v) {
		return errors.New("-tasks: want a postgres:// or postgresql:// DSN (absent: tasks in memory)")
	}
	return pgdsn.Check(tasksFlag, v)
}

// taskStoreError is a task store refused for its schema (one this program
// does not own): a configuration error, exit 3.
type taskStoreError struct{ err error }

func (e *taskStoreError) Error() string { return "-tasks: " + e.err.Error() }
func (e *taskStoreError) Unwrap() error { return e.err }

// openTasks opens the PostgreSQL task store of -tasks and returns the
// option that gives it to the agent and its pool, which the caller closes
// once the agent stopped. Empty dsn: no option, tasks stay in memory.
func openTasks(ctx context.Context, dsn string) ([]a2a.Option, *sql.DB, error) {
	if dsn == "" {
		return nil, nil, nil
	}
	db, err := pgdsn.Open(ctx, tasksFlag, dsn)
	if err != nil {
		return nil, nil, err
	}
	store, err := pgstore.OpenDB(ctx, db)
	if err != nil {
		_ = db.Close()
		err = pgdsn.Redact(err, dsn)
		if errors.Is(err, pgstore.ErrSchema) {
			return nil, nil, &taskStoreError{err}
		}
		return nil, nil, err
	}
	return []a2a.Option{a2a.WithTaskStore(store)}, db, nil
}
