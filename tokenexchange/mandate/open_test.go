package mandate_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/candorkit/candor/tokenexchange/mandate"
)

// Every byte of the path names the file: '#', '%' and '?' are not URI
// syntax, and the WAL, synchronous and busy-timeout settings stay in force
// whatever the name.
func TestOpenPathExactly(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"a#b.db", "a%41b.db", "a?x.db", "a b&_pragma=x.db"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			s, err := mandate.Open(ctx, filepath.Join(dir, name), mandate.WithKey(newKey(t)))
			require.NoError(t, err)
			require.NoError(t, s.Grant(ctx, alice, agentClient, "refresh-token-value"))
			var mode string
			var syncMode, busy int
			require.NoError(t, s.DB().QueryRow(`PRAGMA journal_mode`).Scan(&mode))
			require.NoError(t, s.DB().QueryRow(`PRAGMA synchronous`).Scan(&syncMode))
			require.NoError(t, s.DB().QueryRow(`PRAGMA busy_timeout`).Scan(&busy))
			assert.Equal(t, "wal", mode)
			assert.Equal(t, 2, syncMode, "synchronous FULL")
			assert.Equal(t, 5000, busy)
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			assert.Contains(t, names, name)
			assert.Contains(t, names, name+"-wal")
			for _, n := range names {
				assert.True(t, strings.HasPrefix(n, name), "a file named %q was created", n)
			}
			require.NoError(t, s.Close())
		})
	}
}

// OpenDB shares the caller's database: it migrates its own table beside
// the caller's, adopts a mandate table created before migrations were
// recorded, refuses a schema newer than it knows, and Close leaves the
// database open.
func TestOpenDBShared(t *testing.T) {
	ctx := context.Background()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "app.db"))
	require.NoError(t, err)
	defer db.Close()
	_, err = db.Exec(`CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT)`)
	require.NoError(t, err)
	key := newKey(t)

	s, err := mandate.OpenDB(ctx, db, mandate.WithKey(key))
	require.NoError(t, err)
	require.NoError(t, s.Grant(ctx, alice, agentClient, "refresh-token-value"))
	require.NoError(t, s.Close())
	require.NoError(t, db.Ping(), "Close closed the caller's database")

	// A store from before migrations were recorded: the first table's
	// shape, no record.
	_, err = db.Exec(`DROP TABLE candor_mandates_migrations;
		ALTER TABLE candor_mandates DROP COLUMN lease_holder;
		ALTER TABLE candor_mandates DROP COLUMN lease_until;
		ALTER TABLE candor_mandates DROP COLUMN fence`)
	require.NoError(t, err)
	s, err = mandate.OpenDB(ctx, db, mandate.WithKey(key))
	require.NoError(t, err, "adopting a store without a migration record")
	require.NoError(t, s.Revoke(ctx, alice, agentClient), "the mandate granted before is still there")
	require.NoError(t, s.Close())

	var tables []string
	rows, err := db.Query(`SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name`)
	require.NoError(t, err)
	for rows.Next() {
		var n string
		require.NoError(t, rows.Scan(&n))
		tables = append(tables, n)
	}
	require.NoError(t, rows.Err())
	assert.True(t, slices.Equal([]string{"candor_mandates", "candor_mandates_migrations", "items"}, tables), "tables %q", tables)

	// A newer program migrated this file: refuse, write nothing.
	_, err = db.Exec(`INSERT INTO candor_mandates_migrations (version, name, checksum, applied_at) VALUES (3, 'future', 'x', 0)`)
	require.NoError(t, err)
	_, err = mandate.OpenDB(ctx, db, mandate.WithKey(key))
	assert.ErrorIs(t, err, mandate.ErrSchema)
	assert.Equal(t, mandate.KindSchema, mandate.Classify(err))

	_, err = mandate.OpenDB(ctx, db, mandate.WithKey([]byte("short")))
	assert.Equal(t, mandate.KindConfig, mandate.Classify(err))
}

// The options of the shared-database store are checked at open: a lease
// too short to renew, and a schema on SQLite, which has none.
func TestOpenLeaseAndSchemaOptions(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	_, err := mandate.Open(ctx, path, mandate.WithKey(newKey(t)), mandate.WithLease(50*time.Millisecond))
	assert.Equal(t, mandate.KindConfig, mandate.Classify(err), "%v", err)
	_, err = mandate.Open(ctx, path, mandate.WithKey(newKey(t)), mandate.WithSchema("candor"))
	assert.Equal(t, mandate.KindConfig, mandate.Classify(err), "%v", err)
	db, err := sql.Open("sqlite", "file:"+path)
	require.NoError(t, err)
	defer db.Close()
	_, err = mandate.OpenDB(ctx, db, mandate.WithKey(newKey(t)), mandate.WithSchema("candor"))
	assert.Equal(t, mandate.KindConfig, mandate.Classify(err), "%v", err)
	s, err := mandate.OpenDB(ctx, db, mandate.WithKey(newKey(t)), mandate.WithLease(time.Minute))
	require.NoError(t, err)
	require.NoError(t, s.Close())
}
