package sqlitex_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/candorkit/candor/internal/sqlitex"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const appID int32 = 0x43414e44 // "CAND"

func TestStampApplicationID(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	db := open(t, path, full)
	require.NoError(t, sqlitex.StampApplicationID(ctx, db, appID, true))
	require.NoError(t, sqlitex.StampApplicationID(ctx, db, appID, true), "creating again is harmless")
	require.NoError(t, db.Close())

	db = open(t, path, full)
	assert.NoError(t, sqlitex.StampApplicationID(ctx, db, appID, false))
	err := sqlitex.StampApplicationID(ctx, db, appID+1, false)
	assert.ErrorIs(t, err, sqlitex.ErrForeign)
	err = sqlitex.StampApplicationID(ctx, db, appID+1, true)
	assert.ErrorIs(t, err, sqlitex.ErrForeign, "creating never overwrites another store's id")
	assert.Error(t, sqlitex.StampApplicationID(ctx, db, 0, true))
}

// A file truncated to 0 bytes opens as an empty database; the missing stamp
// tells it from a file being created.
func TestStampRefusesTruncatedFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	db := open(t, path, full)
	require.NoError(t, sqlitex.StampApplicationID(ctx, db, appID, true))
	_, err := db.Exec("CREATE TABLE t (x)")
	require.NoError(t, err)
	require.NoError(t, db.Close())
	for _, side := range []string{"", "-wal", "-shm"} {
		_ = os.Truncate(path+side, 0)
	}

	db = open(t, path, full)
	err = sqlitex.StampApplicationID(ctx, db, appID, false)
	assert.ErrorIs(t, err, sqlitex.ErrForeign)
	assert.Contains(t, err.Error(), "application_id is 0")
}

func TestQuickCheck(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "q.db")
	o := sqlitex.DSNOptions{BusyTimeout: full.BusyTimeout, SyncFull: true}
	db := open(t, path, o)
	_, err := db.Exec(`CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); CREATE INDEX t_v ON t (v)`)
	require.NoError(t, err)
	for i := range 400 {
		_, err := db.Exec(`INSERT INTO t (v) VALUES (?)`, strings.Repeat("x", 200)+string(rune('a'+i%26)))
		require.NoError(t, err)
	}
	require.NoError(t, sqlitex.QuickCheck(ctx, db))
	require.NoError(t, db.Close())

	// Garbage over the last page.
	fi, err := os.Stat(path)
	require.NoError(t, err)
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteAt([]byte(strings.Repeat("\xa5garbage", 512)), fi.Size()-4096)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	db = open(t, path, o)
	err = sqlitex.QuickCheck(ctx, db)
	var ce *sqlitex.CorruptError
	require.ErrorAs(t, err, &ce)
	assert.ErrorIs(t, err, sqlitex.ErrCorrupt)
	assert.True(t, sqlitex.IsCorrupt(err))
	assert.NotEmpty(t, ce.Error())
	assert.LessOrEqual(t, len(ce.Problems), sqlitex.MaxProblems)
	t.Log(err)
}

func TestNotADatabase(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "junk.db")
	require.NoError(t, os.WriteFile(path, []byte(strings.Repeat("this is not sqlite ", 400)), 0o600))
	db := open(t, path, sqlitex.DSNOptions{BusyTimeout: full.BusyTimeout})
	_, err := db.ExecContext(ctx, "SELECT * FROM sqlite_master")
	require.Error(t, err)
	assert.True(t, sqlitex.IsCorrupt(err), "%v", err)
	err = sqlitex.QuickCheck(ctx, db)
	assert.ErrorIs(t, err, sqlitex.ErrCorrupt)
	err = sqlitex.StampApplicationID(ctx, db, appID, false)
	assert.ErrorIs(t, err, sqlitex.ErrCorrupt)
}
