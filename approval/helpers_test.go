package approval

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/candorkit/candor/internal/sqlitex"
)

type testDraft struct {
	Title    string   `json:"title"`
	Quantity int      `json:"quantity"`
	Lines    []string `json:"lines,omitempty"`
}

func (d testDraft) Validate() []error {
	var errs []error
	if d.Title == "" {
		errs = append(errs, errors.New("title is empty"))
	}
	if d.Quantity <= 0 {
		errs = append(errs, errors.New("quantity must be positive"))
	}
	return errs
}

func openTest(t testing.TB, path string, opts ...Option) *Store {
	t.Helper()
	s, err := Open(context.Background(), path, opts...)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	return s
}

func newStore(t testing.TB, opts ...Option) *Store {
	t.Helper()
	s := openTest(t, filepath.Join(t.TempDir(), "approval.db"), opts...)
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func writeFile(path, body string) error { return os.WriteFile(path, []byte(body), 0o600) }

// storeDSN is the DSN a caller would give OpenDB: the settings the store
// requires, in the DSN so that every connection has them.
func storeDSN(path string) string {
	return sqlitex.DSN(path, sqlitex.DSNOptions{BusyTimeout: DefaultBusyTimeout, WAL: true, SyncFull: true,
		ForeignKeys: true, Immediate: true})
}

// rawDB opens path with the store's settings, without the store.
func rawDB(t testing.TB, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", storeDSN(path))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

// execAll runs each statement on db.
func execAll(t testing.TB, db *sql.DB, stmts ...string) {
	t.Helper()
	for _, q := range stmts {
		_, err := db.ExecContext(context.Background(), q)
		require.NoError(t, err, q)
	}
}
