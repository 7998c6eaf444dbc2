package pgx_test

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/candorkit/candor/internal/pgtest"
	"github.com/candorkit/candor/internal/pgx"
)

var steps = []pgx.Migration{
	{Version: 1, Name: "items", SQL: `CREATE TABLE items (id BIGINT PRIMARY KEY, name TEXT NOT NULL)`},
	{Version: 2, Name: "items.note", SQL: `ALTER TABLE items ADD COLUMN note TEXT; INSERT INTO items (id, name) VALUES (1, 'first')`},
}

func TestMigrate(t *testing.T) {
	c := pgtest.Start(t)
	ctx := context.Background()

	t.Run("ConcurrentOpeners", func(t *testing.T) {
		db, err := sql.Open("pgx", c.NewDatabase(t))
		require.NoError(t, err)
		defer db.Close()
		require.True(t, pgx.IsPostgres(db))
		var wg sync.WaitGroup
		errs := make([]error, 6)
		for i := range errs {
			wg.Go(func() { errs[i] = pgx.Migrate(ctx, db, "app", "app_migrations", steps) })
		}
		wg.Wait()
		for _, err := range errs {
			assert.NoError(t, err)
		}
		var n int
		require.NoError(t, db.QueryRow(`SELECT count(*) FROM app.items`).Scan(&n))
		assert.Equal(t, 1, n, "a migration ran twice")
		require.NoError(t, db.QueryRow(`SELECT count(*) FROM app.app_migrations`).Scan(&n))
		assert.Equal(t, 2, n)
		// Nothing landed in public.
		require.NoError(t, db.QueryRow(`SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'`).Scan(&n))
		assert.Zero(t, n)
		// A second run is a no-op; a prefix of the list is a newer database.
		require.NoError(t, pgx.Migrate(ctx, db, "app", "app_migrations", steps))
		err = pgx.Migrate(ctx, db, "app", "app_migrations", steps[:1])
		assert.ErrorIs(t, err, pgx.ErrSchemaTooNew)
		var me *pgx.MigrationError
		require.ErrorAs(t, err, &me)
		assert.Equal(t, 2, me.Version)
		assert.Equal(t, "app", me.Schema)
		assert.Equal(t, "app_migrations", me.Table)
		assert.NotEmpty(t, me.Reason)
	})

	t.Run("Altered", func(t *testing.T) {
		db, err := sql.Open("pgx", c.NewDatabase(t))
		require.NoError(t, err)
		defer db.Close()
		require.NoError(t, pgx.Migrate(ctx, db, "app", "app_migrations", steps))
		edited := append([]pgx.Migration(nil), steps...)
		edited[1].SQL += ";"
		assert.ErrorIs(t, pgx.Migrate(ctx, db, "app", "app_migrations", edited), pgx.ErrSchemaAltered)
		_, err = db.Exec(`DELETE FROM app.app_migrations WHERE version = 1`)
		require.NoError(t, err)
		assert.ErrorIs(t, pgx.Migrate(ctx, db, "app", "app_migrations", steps), pgx.ErrSchemaAltered)
	})

	t.Run("FailedStepRolledBack", func(t *testing.T) {
		db, err := sql.Open("pgx", c.NewDatabase(t))
		require.NoError(t, err)
		defer db.Close()
		bad := []pgx.Migration{steps[0], {Version: 2, Name: "bad", SQL: `ALTER TABLE items ADD COLUMN x INT; SELECT no_such_function()`}}
		err = pgx.Migrate(ctx, db, "app", "app_migrations", bad)
		var me *pgx.MigrationError
		require.ErrorAs(t, err, &me)
		assert.Equal(t, 2, me.Version)
		assert.Error(t, me.Err, "the failed statement's error is kept")
		assert.False(t, errors.Is(err, pgx.ErrSchemaAltered))
		var n int
		require.NoError(t, db.QueryRow(`SELECT count(*) FROM information_schema.columns WHERE table_schema = 'app' AND table_name = 'items' AND column_name = 'x'`).Scan(&n))
		assert.Zero(t, n, "the failed step was not rolled back")
		require.NoError(t, pgx.Migrate(ctx, db, "app", "app_migrations", steps), "the good list goes on from version 1")
	})

	t.Run("Arguments", func(t *testing.T) {
		db, err := sql.Open("pgx", c.NewDatabase(t))
		require.NoError(t, err)
		defer db.Close()
		for _, bad := range []string{"", "App", "a-b", `a"b`, "1a"} {
			assert.Error(t, pgx.Migrate(ctx, db, bad, "m", steps), "schema %q", bad)
			assert.Error(t, pgx.Migrate(ctx, db, "app", bad, steps), "table %q", bad)
		}
		assert.Error(t, pgx.Migrate(ctx, db, "app", "m", steps[1:]), "a list with a gap")
	})

	t.Run("Unavailable", func(t *testing.T) {
		closed, err := sql.Open("pgx", "postgres://postgres:x@127.0.0.1:1/postgres?sslmode=disable&connect_timeout=5")
		require.NoError(t, err)
		defer closed.Close()
		err = closed.PingContext(ctx)
		require.Error(t, err)
		assert.True(t, pgx.IsUnavailable(err), "%v", err)
		assert.False(t, pgx.IsUnavailable(nil))
		assert.False(t, pgx.IsUnavailable(errors.New("other")))
	})
}

func TestIdent(t *testing.T) {
	assert.True(t, pgx.IsIdent("candor_mandates"))
	assert.False(t, pgx.IsIdent("Candor"))
	assert.Equal(t, `"a""b"`, pgx.Quote(`a"b`))
}
