package main

import (
	"database/sql"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/candorkit/candor/internal/pgtest"
)

// TestPostgresStore runs the flow with -approvals DSN: run registers the
// proposal in PostgreSQL, resume approve (another process) writes the
// backlog row there once, show reads it back; no SQLite store is made and
// the password is never printed.
func TestPostgresStore(t *testing.T) {
	a := buildAgent(t)
	cluster := pgtest.Start(t)
	dsn := cluster.NewDatabase(t)
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	password, _ := u.User.Password()
	require.NotEmpty(t, password)
	dir := t.TempDir()

	r := a.mustRun(t, "run", "-dir", dir, "-approvals", dsn)
	opID := r.field("Operation")
	assert.Equal(t, "waiting", r.field("Status"), "%s", r)
	assert.Equal(t, wantDraft, r.field("Draft"))
	assert.Contains(t, r.stdout, "resume -dir "+dir+" -approvals postgres://"+u.User.Username()+"@"+u.Host+u.Path+" approve")
	assert.NotContains(t, r.stdout+r.stderr, password)

	first := a.mustRun(t, "resume", "-dir", dir, "-approvals", dsn, "approve")
	assert.Equal(t, opID, first.field("Operation"))
	assert.Equal(t, "completed", first.field("Status"), "%s", first)
	assert.Equal(t, "1", first.field("ApprovedBacklogItems"))
	again := a.mustRun(t, "resume", "approve", "-dir", dir, "-approvals", dsn)
	assert.Equal(t, first.field("ItemID"), again.field("ItemID"))
	assert.Equal(t, "1", again.field("ApprovedBacklogItems"))
	show := a.mustRun(t, "show", "-dir", dir, "-approvals", dsn)
	assert.Equal(t, "1", show.field("Operations"), "%s", show)
	assert.Equal(t, "1", show.field("ApprovedBacklogItems"))
	assert.Equal(t, "postgres://"+u.User.Username()+"@"+u.Host+u.Path, show.field("Store"))
	for _, out := range []result{first, again, show} {
		assert.NotContains(t, out.stdout+out.stderr, password)
	}

	db, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	defer db.Close()
	var n int
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM `+backlogTablePG+` WHERE operation_id = $1`, opID).Scan(&n))
	assert.Equal(t, 1, n, "backlog rows")
	_, err = db.Exec(`UPDATE ` + backlogTablePG + ` SET title = 'changed'`)
	assert.ErrorContains(t, err, "immutable", "the rows are immutable")
	_, err = os.Stat(filepath.Join(dir, "approvals.db"))
	assert.True(t, os.IsNotExist(err), "approvals.db: %v", err)
}

// TestApprovalsDSNErrors pins that a malformed -approvals DSN is a usage
// error (exit 2) and an unreachable database a failure (exit 1), neither
// printing the password.
func TestApprovalsDSNErrors(t *testing.T) {
	a := buildAgent(t)
	const password = "s3cret-Pa55word"
	bad := "postgres://candor:" + password + "@127.0.0.1:notaport/db"
	for _, args := range [][]string{
		{"run", "-dir", t.TempDir(), "-approvals", bad},
		{"resume", "-dir", t.TempDir(), "-approvals", bad, "approve"},
		{"show", "-dir", t.TempDir(), "-approvals", bad},
	} {
		r := a.exec(t, args...)
		assert.Equal(t, exitUsage, r.code, "%v: %s", args, r)
		assert.Contains(t, r.stderr, "-approvals: not a valid PostgreSQL connection string")
		assert.NotContains(t, r.stdout+r.stderr, password)
	}

	cluster := pgtest.Start(t)
	u, err := url.Parse(cluster.DSN)
	require.NoError(t, err)
	pw, _ := u.User.Password()
	require.NotEmpty(t, pw)
	cluster.Stop(t, pgtest.StopOptions{})
	r := a.exec(t, "show", "-dir", t.TempDir(), "-approvals", cluster.DSN)
	assert.Equal(t, exitFailure, r.code, "%s", r)
	assert.Contains(t, r.stderr, "-approvals: PostgreSQL postgres://postgres@")
	assert.Contains(t, r.stderr, "unreachable")
	assert.NotContains(t, r.stdout+r.stderr, pw)
}
