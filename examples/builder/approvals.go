package main

import (
	"context"
	"log/slog"

	"github.com/candorkit/candor/approval"
	"github.com/candorkit/candor/examples/builder/internal/generate"
	"github.com/candorkit/candor/examples/internal/pgdsn"
)

// approvalsFlag names -approvals in errors about its value.
const approvalsFlag = "-approvals"

// openApprovals opens the approval store -approvals names: a PostgreSQL
// database (a postgres:// or postgresql:// DSN; the store's schema is
// created when missing) or a SQLite file. The returned func closes the
// store and, for PostgreSQL, its pool.
func openApprovals(ctx context.Context, where string, logger *slog.Logger) (*approval.Store, func(), error) {
	opts := []approval.Option{approval.WithLogger(logger), approval.WithMaxDraftBytes(generate.MaxBody)}
	if !pgdsn.IsDSN(where) {
		st, err := approval.Open(ctx, where, opts...)
		if err != nil {
			return nil, nil, err
		}
		return st, func() { _ = st.Close() }, nil
	}
	db, err := pgdsn.Open(ctx, approvalsFlag, where)
	if err != nil {
		return nil, nil, err
	}
	st, err := approval.OpenDB(ctx, db, append(opts, approval.WithCreate())...)
	if err != nil {
		_ = db.Close()
		return nil, nil, pgdsn.Redact(err, where)
	}
	return st, func() { _ = st.Close(); _ = db.Close() }, nil
}

// approvalsPlace describes -approvals for progress lines, without a
// password.
func approvalsPlace(where string) string {
	if pgdsn.IsDSN(where) {
		return pgdsn.Server(where)
	}
	return where
}
