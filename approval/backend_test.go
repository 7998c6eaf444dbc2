package approval

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // driver "pgx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/candorkit/candor/internal/pgtest"
)

// The suites that matter most across processes (the decision race, the
// crash loop, concurrent appliers, resume) run once per backend: the same
// test body, given a backend.
const (
	backendSQLite   = "sqlite"
	backendPostgres = "postgres"
	// childBackend tells a child which backend childDB names.
	childBackend = "CANDOR_APPROVAL_BACKEND"
	// testSchema is the schema the PostgreSQL tests keep the store in, so
	// that WithSchema is exercised everywhere.
	testSchema = "approvals"
)

// backend is one database the store runs on.
type backend struct {
	name    string
	cluster *pgtest.Cluster // PostgreSQL only
}

// forBackends runs fn against SQLite and against a throwaway PostgreSQL
// cluster of its own.
func forBackends(t *testing.T, fn func(t *testing.T, b *backend)) {
	t.Run(backendSQLite, func(t *testing.T) { fn(t, &backend{name: backendSQLite}) })
	t.Run(backendPostgres, func(t *testing.T) { fn(t, &backend{name: backendPostgres, cluster: pgtest.Start(t)}) })
}

// location returns where a new store lives: a file path, or the DSN of a
// new, empty database.
func (b *backend) location(t testing.TB, name string) string {
	t.Helper()
	if b.cluster == nil {
		return filepath.Join(t.TempDir(), name+".db")
	}
	return b.cluster.NewDatabase(t)
}

// childApp is the application_name of the children's PostgreSQL sessions.
const childApp = "candor_approval_child"

// env is what a child needs to open the store at loc. On PostgreSQL its
// sessions carry childApp, so that the parent can tell when they ended.
func (b *backend) env(loc string) []string {
	if b.cluster != nil {
		loc += "&application_name=" + childApp
	}
	return []string{childBackend + "=" + b.name, childDB + "=" + loc}
}

// awaitChildSessions waits until the server has ended every session of the
// children, killed ones included. A process killed after it sent COMMIT
// may still commit: the server reads the COMMIT before it sees the closed
// socket. Only once the session has ended is the state the parent reads
// final. It polls the server's activity view, not the clock; on SQLite it
// returns at once (a killed process's commit is in the file or not).
func (b *backend) awaitChildSessions(t testing.TB, s *Store) {
	t.Helper()
	if b.cluster == nil {
		return
	}
	for {
		var n int
		require.NoError(t, s.db.QueryRowContext(context.Background(),
			`SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`, childApp).Scan(&n))
		if n == 0 {
			return
		}
		runtime.Gosched()
	}
}

// open opens the store at loc and closes it when the test ends.
func (b *backend) open(t testing.TB, loc string, opts ...Option) *Store {
	t.Helper()
	s, closeAll, err := openAt(context.Background(), b.name, loc, opts...)
	require.NoError(t, err, "open %s store", b.name)
	t.Cleanup(func() {
		if err := closeAll(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return s
}

// openAt opens the store of backend at loc: Open on a file, or OpenDB over
// a pgx pool of the DSN, in testSchema, creating it if need be. The closer
// closes the store and, for PostgreSQL, the pool.
func openAt(ctx context.Context, name, loc string, opts ...Option) (*Store, func() error, error) {
	switch name {
	case backendSQLite, "":
		s, err := Open(ctx, loc, opts...)
		if err != nil {
			return nil, nil, err
		}
		return s, s.Close, nil
	case backendPostgres:
		db, err := sql.Open("pgx", loc)
		if err != nil {
			return nil, nil, err
		}
		s, err := OpenDB(ctx, db, append([]Option{WithSchema(testSchema), WithCreate()}, opts...)...)
		if err != nil {
			return nil, nil, errors.Join(err, db.Close())
		}
		return s, func() error { return errors.Join(s.Close(), db.Close()) }, nil
	}
	return nil, nil, fmt.Errorf("unknown backend %q", name)
}

// openChild opens the store a child was given.
func openChild(ctx context.Context) (*Store, error) {
	s, _, err := openAt(ctx, os.Getenv(childBackend), os.Getenv(childDB))
	return s, err
}

// table is the name a test's own SQL gives one of the store's tables.
func (s *Store) table(name string) string {
	if s.pg {
		return s.inSchema("{schema}." + name)
	}
	return name
}

// ensureLedger creates the table the test effect writes (ledgerEffect), so
// that effects run no DDL: on PostgreSQL, concurrent CREATE INDEX IF NOT
// EXISTS in two effects' transactions can deadlock.
func ensureLedger(t testing.TB, s *Store) {
	t.Helper()
	for _, q := range []string{
		`CREATE TABLE IF NOT EXISTS ledger (operation_id TEXT NOT NULL, item_id BIGINT NOT NULL, line INTEGER NOT NULL)`,
		`CREATE INDEX IF NOT EXISTS ledger_by_operation ON ledger (operation_id)`,
	} {
		_, err := s.db.ExecContext(context.Background(), q)
		require.NoError(t, err, q)
	}
}

// TestNULRefused: NUL in a decider, a comment or a receipt field is refused
// on SQLite as on PostgreSQL (whose text cannot hold it), before anything
// is stored.
func TestNULRefused(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	_, err := s.Register(ctx, Ticket{OperationID: "op", Draft: testDraft{Title: "t", Quantity: 1}})
	require.NoError(t, err)
	for _, d := range []Decision{
		{OperationID: "op", Verdict: Approve, DecidedBy: "al\x00ice"},
		{OperationID: "op", Verdict: Approve, DecidedBy: "alice", Comment: "ok\x00"},
	} {
		_, err := s.Decide(ctx, d)
		assert.ErrorIs(t, err, ErrInvalidDecision)
	}
	_, err = s.Receipt(ctx, WaitingReceipt{GraphVersion: "g", SessionID: "s\x00", CheckpointID: "c", OperationID: "op", RequestID: "r"})
	assert.ErrorIs(t, err, ErrInvalidReceipt)
	st, err := s.Read(ctx, "op")
	require.NoError(t, err)
	assert.Equal(t, StatusWaiting, st.Status)
}
