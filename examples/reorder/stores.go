package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/candorkit/candor/approval"
	"github.com/candorkit/candor/examples/internal/pgdsn"
	"github.com/candorkit/candor/tokenexchange/mandate"
)

// Where the stores live: a SQLite file in -state by default, or a
// PostgreSQL database when -approvals or -mandates is a postgres:// (or
// postgresql://) DSN, so that several replicas or job pods share them.
const (
	envApprovals = "CANDOR_REORDER_APPROVALS"
	envMandates  = "CANDOR_REORDER_MANDATES"
)

// storeFlag adds -NAME, the place of one store: empty means FILE in
// -state; the default comes from env.
func (a *app) storeFlag(fs *flag.FlagSet, name, env, file, what string) *string {
	return fs.String(name, a.env(env), what+": a SQLite file path, or a postgres:// (postgresql://) DSN (env "+env+"; default "+file+" in -state)")
}

// checkStore validates a store flag's value before anything is opened: a
// malformed DSN given on the command line is a usage error (exit 2), one
// from the environment a configuration error (exit 3). Neither prints the
// DSN. ok is false when the caller must return code.
func (a *app) checkStore(fs *flag.FlagSet, name, env, value string) (code int, ok bool) {
	if !pgdsn.IsDSN(value) {
		return 0, true
	}
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	label := "-" + name
	if !set {
		label = env
	}
	if err := pgdsn.Check(label, value); err != nil {
		if set {
			return a.usageError(fs, "%v", err), false
		}
		fmt.Fprintf(a.stderr, "%s: %v\n", fs.Name(), err)
		return exitConfig, false
	}
	return 0, true
}

// storeArg is the -NAME argument a printed command needs: none when the
// value is the default (the environment's, or the file in -state); a DSN
// is printed without its password (PGPASSWORD or ~/.pgpass supply it).
func (a *app) storeArg(name, env, value string) string {
	if value == a.env(env) {
		return ""
	}
	if pgdsn.IsDSN(value) {
		return " -" + name + " " + shellQuote(pgdsn.Server(value))
	}
	return " -" + name + " " + shellQuote(value)
}

// approvalsDB is the approval store and, for PostgreSQL, its pool; the
// reorders table lives beside the store so that Apply writes it in the
// store's transaction.
type approvalsDB struct {
	*approval.Store
	db    *sql.DB // nil for SQLite
	path  string  // the SQLite file
	place string  // for messages, without a password
}

func (s *approvalsDB) postgres() bool { return s.db != nil }

// Close closes the store and its pool.
func (s *approvalsDB) Close() error {
	err := s.Store.Close()
	if s.db != nil {
		_ = s.db.Close()
	}
	return err
}

// openApprovals opens the approval store where (empty: approvals.db in
// state).
func openApprovals(ctx context.Context, state, where string, log *slog.Logger) (*approvalsDB, error) {
	if !pgdsn.IsDSN(where) {
		path := where
		if path == "" {
			path = filepath.Join(state, approvalsFile)
		}
		st, err := approval.Open(ctx, path, approval.WithLogger(log))
		if err != nil {
			return nil, err
		}
		return &approvalsDB{Store: st, path: path, place: path}, nil
	}
	db, err := pgdsn.Open(ctx, "-approvals", where)
	if err != nil {
		return nil, err
	}
	st, err := approval.OpenDB(ctx, db, approval.WithLogger(log), approval.WithCreate())
	if err != nil {
		_ = db.Close()
		return nil, pgdsn.Redact(err, where)
	}
	return &approvalsDB{Store: st, db: db, place: pgdsn.Server(where)}, nil
}

// readReorders returns the reorders rows of one operation (all of them when
// operationID is empty).
func (s *approvalsDB) readReorders(ctx context.Context, operationID string) ([]reorderRow, error) {
	if !s.postgres() {
		return readReorders(ctx, s.path, operationID)
	}
	return readReordersPG(ctx, s.db, operationID)
}

// mandatesDB is the mandate store and, for PostgreSQL, its pool.
type mandatesDB struct {
	*mandate.Store
	db *sql.DB
}

// Close closes the store and its pool.
func (s *mandatesDB) Close() error {
	err := s.Store.Close()
	if s.db != nil {
		_ = s.db.Close()
	}
	return err
}

// openMandates opens the mandate store where (empty: mandates.db in state).
func openMandates(ctx context.Context, state, where string, opts ...mandate.Option) (*mandatesDB, error) {
	if !pgdsn.IsDSN(where) {
		path := where
		if path == "" {
			path = filepath.Join(state, mandatesFile)
		}
		st, err := mandate.Open(ctx, path, opts...)
		if err != nil {
			return nil, err
		}
		return &mandatesDB{Store: st}, nil
	}
	db, err := pgdsn.Open(ctx, "-mandates", where)
	if err != nil {
		return nil, err
	}
	st, err := mandate.OpenDB(ctx, db, opts...)
	if err != nil {
		_ = db.Close()
		return nil, pgdsn.Redact(err, where)
	}
	return &mandatesDB{Store: st, db: db}, nil
}
