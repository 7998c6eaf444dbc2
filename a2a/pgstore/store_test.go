package pgstore_test

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	a2apb "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/candorkit/candor/a2a/pgstore"
	"github.com/candorkit/candor/internal/pgtest"
)

func asCaller(name string) context.Context {
	ctx, cc := a2asrv.NewCallContext(context.Background(), nil)
	cc.User = a2asrv.NewAuthenticatedUser(name, nil)
	return ctx
}

func openDB(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// The schema's migrations are checksummed: replicas opening at once apply
// them once, and a schema altered by hand or migrated further is refused.
func TestSchemaMigrations(t *testing.T) {
	cluster := pgtest.Start(t)
	db := openDB(t, cluster.NewDatabase(t))
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { _, errs[i] = pgstore.OpenDB(ctx, db, pgstore.WithSchema("shared")) })
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	var n int
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM shared.a2a_task_migrations`).Scan(&n))
	assert.Equal(t, 1, n, "each migration applied once")

	_, err := db.Exec(`UPDATE shared.a2a_task_migrations SET checksum = 'edited' WHERE version = 1`)
	require.NoError(t, err)
	_, err = pgstore.OpenDB(ctx, db, pgstore.WithSchema("shared"))
	assert.ErrorIs(t, err, pgstore.ErrSchema, "an altered migration")

	_, err = pgstore.OpenDB(ctx, db, pgstore.WithSchema("newer"))
	require.NoError(t, err)
	_, err = db.Exec(`INSERT INTO newer.a2a_task_migrations (version, name, checksum, applied_at) VALUES (2, 'future', 'x', 0)`)
	require.NoError(t, err)
	_, err = pgstore.OpenDB(ctx, db, pgstore.WithSchema("newer"))
	assert.ErrorIs(t, err, pgstore.ErrSchema, "a schema from a newer program")
}

// Two Stores on one schema enforce one bound: each write's sweep counts the
// tasks both wrote.
func TestBoundAcrossReplicas(t *testing.T) {
	cluster := pgtest.Start(t)
	dsn := cluster.NewDatabase(t)
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	a, err := pgstore.OpenDB(ctx, openDB(t, dsn), pgstore.WithMaxTasks(3), pgstore.WithClock(clock))
	require.NoError(t, err)
	b, err := pgstore.OpenDB(ctx, openDB(t, dsn), pgstore.WithMaxTasks(3), pgstore.WithClock(clock))
	require.NoError(t, err)
	alice := asCaller("alice")
	for i := range 10 {
		now = now.Add(time.Second)
		s := a
		if i%2 == 1 {
			s = b
		}
		_, err := s.Create(alice, &a2apb.Task{ID: a2apb.TaskID(rune('a' + i)), Status: a2apb.TaskStatus{State: a2apb.TaskStateCompleted}})
		require.NoError(t, err)
		page, err := b.List(alice, &a2apb.ListTasksRequest{})
		require.NoError(t, err)
		assert.LessOrEqual(t, page.TotalSize, 3, "after write %d", i)
	}
	page, err := a.List(alice, &a2apb.ListTasksRequest{})
	require.NoError(t, err)
	var ids string
	for _, tk := range page.Tasks {
		ids += string(tk.ID)
	}
	assert.Equal(t, "jih", ids, "the most recently used are kept")
}

// A database that cannot be reached is ErrUnavailable, and the error's text
// names neither the server's address nor the user nor the database.
func TestUnavailableErrorText(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	db := openDB(t, "postgres://agentuser:pw-5be1@"+addr+"/agentsdb?sslmode=disable&connect_timeout=5")
	_, err = pgstore.OpenDB(context.Background(), db)
	require.ErrorIs(t, err, pgstore.ErrUnavailable)
	var pe *pgstore.Error
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "migrate", pe.Op)
	var ce *pgconn.ConnectError
	assert.True(t, errors.As(err, &ce), "the driver's error stays reachable")
	for _, private := range []string{addr, "agentuser", "agentsdb", "pw-5be1"} {
		assert.NotContains(t, err.Error(), private)
	}
	assert.Equal(t, "pgstore: migrate: PostgreSQL is unavailable", err.Error())
}
