package sqlitex_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"sync"
	"testing"

	"github.com/candorkit/candor/internal/sqlitex"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var history = []sqlitex.Migration{
	{Version: 1, Name: "items", SQL: `CREATE TABLE app_items (id INTEGER PRIMARY KEY, v TEXT NOT NULL)`},
	{Version: 2, Name: "index", SQL: `CREATE INDEX app_items_v ON app_items (v)`},
	{Version: 3, Name: "two statements", SQL: `ALTER TABLE app_items ADD COLUMN w TEXT; CREATE TABLE app_more (x)`},
}

func versions(t *testing.T, db *sql.DB, table string) []int {
	t.Helper()
	rows, err := db.Query(`SELECT version FROM "` + table + `" ORDER BY version`)
	require.NoError(t, err)
	defer rows.Close()
	var vs []int
	for rows.Next() {
		var v int
		require.NoError(t, rows.Scan(&v))
		vs = append(vs, v)
	}
	require.NoError(t, rows.Err())
	return vs
}

func TestMigrateAppliesInOrderOnce(t *testing.T) {
	ctx := context.Background()
	db := open(t, filepath.Join(t.TempDir(), "m.db"), full)
	require.NoError(t, sqlitex.Migrate(ctx, db, "app_migrations", history[:1]))
	assert.Equal(t, []int{1}, versions(t, db, "app_migrations"))
	require.NoError(t, sqlitex.Migrate(ctx, db, "app_migrations", history))
	require.NoError(t, sqlitex.Migrate(ctx, db, "app_migrations", history), "second run is a no-op")
	assert.Equal(t, []int{1, 2, 3}, versions(t, db, "app_migrations"))
	_, err := db.Exec(`INSERT INTO app_items (v, w) VALUES ('a', 'b'); INSERT INTO app_more VALUES (1)`)
	assert.NoError(t, err)

	var sum string
	require.NoError(t, db.QueryRow(`SELECT checksum FROM app_migrations WHERE version = 2`).Scan(&sum))
	assert.Equal(t, history[1].Checksum(), sum)
	assert.Len(t, sum, 64)
}

func TestMigrateTablesAreIndependent(t *testing.T) {
	ctx := context.Background()
	db := open(t, filepath.Join(t.TempDir(), "m.db"), full)
	other := []sqlitex.Migration{{Version: 1, Name: "other", SQL: `CREATE TABLE other_rows (x)`}}
	require.NoError(t, sqlitex.Migrate(ctx, db, "app_migrations", history))
	require.NoError(t, sqlitex.Migrate(ctx, db, "other_migrations", other))
	assert.Equal(t, []int{1, 2, 3}, versions(t, db, "app_migrations"))
	assert.Equal(t, []int{1}, versions(t, db, "other_migrations"))
}

func TestMigrateRefusesEditedMigration(t *testing.T) {
	ctx := context.Background()
	db := open(t, filepath.Join(t.TempDir(), "m.db"), full)
	require.NoError(t, sqlitex.Migrate(ctx, db, "app_migrations", history[:2]))
	edited := append([]sqlitex.Migration(nil), history...)
	edited[1].SQL = `CREATE INDEX app_items_v ON app_items (v DESC)`
	err := sqlitex.Migrate(ctx, db, "app_migrations", edited)
	var me *sqlitex.MigrationError
	require.ErrorAs(t, err, &me)
	assert.ErrorIs(t, err, sqlitex.ErrSchemaAltered)
	assert.Equal(t, 2, me.Version)
	assert.Equal(t, "index", me.Name)
	assert.Equal(t, "app_migrations", me.Table)
	assert.Contains(t, me.Reason, "checksum")
	assert.Equal(t, []int{1, 2}, versions(t, db, "app_migrations"), "version 3 was not applied")
}

func TestMigrateRefusesNewerDatabase(t *testing.T) {
	ctx := context.Background()
	db := open(t, filepath.Join(t.TempDir(), "m.db"), full)
	require.NoError(t, sqlitex.Migrate(ctx, db, "app_migrations", history))
	err := sqlitex.Migrate(ctx, db, "app_migrations", history[:2])
	var me *sqlitex.MigrationError
	require.ErrorAs(t, err, &me)
	assert.ErrorIs(t, err, sqlitex.ErrSchemaTooNew)
	assert.Equal(t, 3, me.Version)
}

func TestMigrateRefusesMissingVersion(t *testing.T) {
	ctx := context.Background()
	db := open(t, filepath.Join(t.TempDir(), "m.db"), full)
	require.NoError(t, sqlitex.Migrate(ctx, db, "app_migrations", history[:2]))
	_, err := db.Exec(`DELETE FROM app_migrations WHERE version = 1`)
	require.NoError(t, err)
	err = sqlitex.Migrate(ctx, db, "app_migrations", history)
	var me *sqlitex.MigrationError
	require.ErrorAs(t, err, &me)
	assert.ErrorIs(t, err, sqlitex.ErrSchemaAltered)
	assert.Equal(t, 1, me.Version)
}

func TestMigrateRollsBackAFailedStep(t *testing.T) {
	ctx := context.Background()
	db := open(t, filepath.Join(t.TempDir(), "m.db"), full)
	bad := append(append([]sqlitex.Migration(nil), history[:1]...),
		sqlitex.Migration{Version: 2, Name: "half", SQL: `CREATE TABLE app_half (x); INSERT INTO nowhere VALUES (1)`})
	err := sqlitex.Migrate(ctx, db, "app_migrations", bad)
	var me *sqlitex.MigrationError
	require.ErrorAs(t, err, &me)
	assert.Equal(t, 2, me.Version)
	assert.NotErrorIs(t, err, sqlitex.ErrSchemaAltered)
	assert.Contains(t, err.Error(), "no such table")
	assert.Equal(t, []int{1}, versions(t, db, "app_migrations"))
	var n int
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name = 'app_half'`).Scan(&n))
	assert.Zero(t, n, "the failed step left nothing behind")
}

func TestMigrateValidatesArguments(t *testing.T) {
	ctx := context.Background()
	db := open(t, filepath.Join(t.TempDir(), "m.db"), full)
	for _, table := range []string{"", "a b", `x"; DROP TABLE y; --`, "1abc"} {
		assert.Error(t, sqlitex.Migrate(ctx, db, table, history), table)
	}
	gap := []sqlitex.Migration{history[0], history[2]}
	assert.Error(t, sqlitex.Migrate(ctx, db, "app_migrations", gap))
	var n int
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM sqlite_master`).Scan(&n))
	assert.Zero(t, n, "nothing was written")
}

// Concurrent openers, each with its own pool, apply every step exactly
// once: a step that ran twice would fail on CREATE TABLE.
func TestMigrateConcurrentOpeners(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	seed := open(t, path, full)
	require.NoError(t, sqlitex.Verify(ctx, seed, full))
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for range 6 {
		wg.Go(func() {
			db, err := sql.Open("sqlite", sqlitex.DSN(path, full))
			if err == nil {
				err = sqlitex.Migrate(ctx, db, "app_migrations", history)
				db.Close()
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NoError(t, err)
	}
	assert.Equal(t, []int{1, 2, 3}, versions(t, seed, "app_migrations"))
}
