package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	pgxdriver "github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/candorkit/candor/a2a/pgstore"
)

// openTimeout bounds connecting to the task store's database and
// migrating its schema at start.
const openTimeout = 30 * time.Second

// taskStoreConfigError is a task store refused for its configuration (a
// schema this program does not own), as opposed to a database that cannot
// be reached.
type taskStoreConfigError struct{ err error }

func (e *taskStoreConfigError) Error() string { return "ADAPTER_TASKS_DSN: " + e.err.Error() }
func (e *taskStoreConfigError) Unwrap() error { return e.err }

// openTaskStore opens the PostgreSQL task store of cfg.TasksDSN with the
// configured bounds; close closes its pool, and ping checks that the
// database answers (for /readyz).
func openTaskStore(ctx context.Context, cfg config) (*pgstore.Store, func(), func(context.Context) error, error) {
	pc, err := pgxdriver.ParseConfig(cfg.TasksDSN) // checked by loadConfig
	if err != nil {
		return nil, nil, nil, &taskStoreConfigError{errors.New("is not a PostgreSQL connection string")}
	}
	db := stdlib.OpenDB(*pc)
	ctx, cancel := context.WithTimeout(ctx, openTimeout)
	defer cancel()
	store, err := pgstore.OpenDB(ctx, db, pgstore.WithMaxTasks(cfg.MaxTasks), pgstore.WithTaskTTL(cfg.TaskTTL))
	if err != nil {
		_ = db.Close()
		if errors.Is(err, pgstore.ErrSchema) {
			return nil, nil, nil, &taskStoreConfigError{err}
		}
		return nil, nil, nil, fmt.Errorf("PostgreSQL task store: %w", err)
	}
	return store, func() { _ = db.Close() }, db.PingContext, nil
}

func taskStoreKind(cfg config) string {
	if cfg.TasksDSN != "" {
		return "postgres"
	}
	return "memory"
}
