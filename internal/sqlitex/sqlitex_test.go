package sqlitex_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/candorkit/candor/internal/sqlitex"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite"
)

var full = sqlitex.DSNOptions{BusyTimeout: 5 * time.Second, WAL: true, SyncFull: true, ForeignKeys: true, Immediate: true}

func open(t *testing.T, path string, o sqlitex.DSNOptions) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", sqlitex.DSN(path, o))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

// dbFiles lists the names in dir, leaving out SQLite's side files.
func dbFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		n := e.Name()
		if strings.HasSuffix(n, "-wal") || strings.HasSuffix(n, "-shm") || strings.HasSuffix(n, "-journal") {
			continue
		}
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

var awkwardNames = []string{"a#b.db", "a%41b.db", "a?x.db", "a b.db", "a&b=c.db", "a+b.db", ":memory:", ":x.db", "é€.db", "a;b'c\".db", "%", "?"}

func TestDSNOpensExactlyThatFile(t *testing.T) {
	ctx := context.Background()
	for _, name := range awkwardNames {
		for _, rel := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s relative=%v", name, rel), func(t *testing.T) {
				dir := t.TempDir()
				path := filepath.Join(dir, name)
				if rel {
					t.Chdir(dir)
					path = name
				}
				db := open(t, path, full)
				_, err := db.ExecContext(ctx, "CREATE TABLE t (x)")
				require.NoError(t, err)
				// The settings were not swallowed into the file name.
				require.NoError(t, sqlitex.Verify(ctx, db, full))
				require.NoError(t, db.Close())
				assert.Equal(t, []string{name}, dbFiles(t, dir))
				fi, err := os.Stat(filepath.Join(dir, name))
				require.NoError(t, err)
				assert.Positive(t, fi.Size())
			})
		}
	}
}

func TestDSNDoubleSlash(t *testing.T) {
	dir := t.TempDir()
	db := open(t, "/"+filepath.Join(dir, "x.db"), full)
	_, err := db.Exec("CREATE TABLE t (x)")
	require.NoError(t, err)
	require.NoError(t, db.Close())
	assert.Equal(t, []string{"x.db"}, dbFiles(t, dir))
}

func TestDSNMustExist(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "missing.db")
	db := open(t, path, sqlitex.DSNOptions{MustExist: true, BusyTimeout: time.Second})
	assert.Error(t, db.PingContext(ctx))
	assert.Empty(t, dbFiles(t, dir), "nothing was created")

	seed := open(t, path, full)
	_, err := seed.Exec("CREATE TABLE t (x)")
	require.NoError(t, err)
	require.NoError(t, seed.Close())
	db = open(t, path, sqlitex.DSNOptions{MustExist: true, WAL: true, BusyTimeout: time.Second})
	_, err = db.ExecContext(ctx, "INSERT INTO t VALUES (1)")
	assert.NoError(t, err)
}

func TestDSNReadOnly(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ro.db")
	_, err := sql.Open("sqlite", sqlitex.DSN(path, sqlitex.DSNOptions{ReadOnly: true}))
	require.NoError(t, err)

	w := open(t, path, full)
	_, err = w.Exec("CREATE TABLE t (x); INSERT INTO t VALUES (7)")
	require.NoError(t, err)

	ro := sqlitex.DSNOptions{ReadOnly: true, WAL: true, BusyTimeout: time.Second, ForeignKeys: true}
	assert.NotContains(t, sqlitex.DSN(path, ro), "journal_mode", "a read-only connection does not switch the journal")
	r := open(t, path, ro)
	require.NoError(t, sqlitex.Verify(ctx, r, ro))
	var x int
	require.NoError(t, r.QueryRowContext(ctx, "SELECT x FROM t").Scan(&x))
	assert.Equal(t, 7, x)
	_, err = r.ExecContext(ctx, "INSERT INTO t VALUES (8)")
	require.Error(t, err)
	assert.True(t, sqlitex.IsReadOnly(err), "%v", err)
	assert.False(t, sqlitex.IsBusy(err))
}

func TestVerifyCatchesMissingSettings(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v.db")
	db := open(t, path, sqlitex.DSNOptions{})
	err := sqlitex.Verify(ctx, db, full)
	var pe *sqlitex.PragmaError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "journal_mode", pe.Pragma)
	assert.Equal(t, "wal", pe.Want)
	assert.Equal(t, "delete", pe.Got)

	db2 := open(t, filepath.Join(t.TempDir(), "v2.db"), sqlitex.DSNOptions{WAL: true})
	err = sqlitex.Verify(ctx, db2, sqlitex.DSNOptions{WAL: true, ForeignKeys: true})
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "foreign_keys", pe.Pragma)
	assert.Contains(t, err.Error(), "PRAGMA foreign_keys")
}

// With Immediate, a transaction takes the write lock when it begins, so a
// second writer is refused at BEGIN rather than midway.
func TestDSNImmediate(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "i.db")
	o := sqlitex.DSNOptions{WAL: true, Immediate: true, BusyTimeout: time.Millisecond}
	a := open(t, path, o)
	b := open(t, path, o)
	_, err := a.Exec("CREATE TABLE t (x)")
	require.NoError(t, err)
	tx, err := a.BeginTx(ctx, nil)
	require.NoError(t, err)
	defer tx.Rollback()
	_, err = b.BeginTx(ctx, nil)
	require.Error(t, err)
	assert.True(t, sqlitex.IsBusy(err), "%v", err)
}

func TestVerifyRetriesWhileBusy(t *testing.T) {
	// Several openers of one new file switch it to WAL at once; every one
	// of them must end up verified.
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "race.db")
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			db, err := sql.Open("sqlite", sqlitex.DSN(path, full))
			if err != nil {
				errs <- err
				return
			}
			defer db.Close()
			errs <- sqlitex.Verify(ctx, db, full)
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NoError(t, err)
	}
}

func TestExists(t *testing.T) {
	dir := t.TempDir()
	ok, err := sqlitex.Exists(filepath.Join(dir, "none.db"))
	require.NoError(t, err)
	assert.False(t, ok)

	empty := filepath.Join(dir, "empty.db")
	require.NoError(t, os.WriteFile(empty, nil, 0o600))
	ok, err = sqlitex.Exists(empty)
	require.NoError(t, err)
	assert.True(t, ok, "a file truncated to 0 bytes exists")

	_, err = sqlitex.Exists(dir)
	assert.Error(t, err)
}

func TestClassifiers(t *testing.T) {
	for _, f := range []func(error) bool{sqlitex.IsBusy, sqlitex.IsCorrupt, sqlitex.IsReadOnly} {
		assert.False(t, f(nil))
		assert.False(t, f(errors.New("database is locked")))
	}
	assert.True(t, sqlitex.IsCorrupt(&sqlitex.CorruptError{}))
	assert.True(t, sqlitex.IsCorrupt(fmt.Errorf("wrapped: %w", &sqlitex.CorruptError{Problems: []string{"x"}})))
}
