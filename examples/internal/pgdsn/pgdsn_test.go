package pgdsn_test

import (
	"errors"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/candorkit/candor/examples/internal/pgdsn"
	"github.com/candorkit/candor/internal/pgtest"
)

const password = "s3cret-Pa55word"

func TestIsDSN(t *testing.T) {
	for v, want := range map[string]bool{
		"postgres://u@h/db": true, "postgresql://u@h/db": true,
		"approvals.db": false, "/var/lib/x.db": false, "": false, "Postgres://u@h/db": false,
	} {
		assert.Equal(t, want, pgdsn.IsDSN(v), v)
	}
}

func TestCheckNeverQuotesTheDSN(t *testing.T) {
	for _, dsn := range []string{
		"postgres://candor:" + password + "@127.0.0.1:notaport/db",
		"postgres://candor:" + password + "@127.0.0.1:5432/db?sslmode=bogus",
	} {
		err := pgdsn.Check("-approvals", dsn)
		var ce *pgdsn.ConfigError
		require.ErrorAs(t, err, &ce, dsn)
		assert.Equal(t, "-approvals", ce.Flag)
		assert.NotContains(t, err.Error(), password)
		assert.NotContains(t, err.Error(), "127.0.0.1")
	}
	assert.NoError(t, pgdsn.Check("-approvals", "postgres://candor:"+password+"@127.0.0.1:5432/db"))
}

func TestServerHasNoPassword(t *testing.T) {
	assert.Equal(t, "postgres://candor@127.0.0.1:5433/orders", pgdsn.Server("postgres://candor:"+password+"@127.0.0.1:5433/orders?sslmode=disable"))
	assert.Equal(t, "(invalid PostgreSQL DSN)", pgdsn.Server("postgres://candor:"+password+"@h:x/db"))
}

func TestRedact(t *testing.T) {
	dsn := "postgres://candor:" + password + "@127.0.0.1:5432/db"
	cause := errors.New("login with " + password + " refused")
	err := pgdsn.Redact(cause, dsn)
	assert.NotContains(t, err.Error(), password)
	assert.ErrorIs(t, err, cause)
	assert.NoError(t, pgdsn.Redact(nil, dsn))
}

// TestOpen connects to a real server, then to the same server stopped: an
// *UnreachableError naming the server, never the password.
func TestOpen(t *testing.T) {
	cluster := pgtest.Start(t)
	db, err := pgdsn.Open(t.Context(), "-tasks", cluster.DSN)
	require.NoError(t, err)
	var one int
	require.NoError(t, db.QueryRowContext(t.Context(), "SELECT 1").Scan(&one))
	assert.Equal(t, 1, one)
	require.NoError(t, db.Close())

	u, err := url.Parse(cluster.DSN)
	require.NoError(t, err)
	pw, _ := u.User.Password()
	require.NotEmpty(t, pw)
	cluster.Stop(t, pgtest.StopOptions{})
	_, err = pgdsn.Open(t.Context(), "-tasks", cluster.DSN)
	var ue *pgdsn.UnreachableError
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, "-tasks", ue.Flag)
	assert.Equal(t, pgdsn.Server(cluster.DSN), ue.Server)
	assert.Error(t, ue.Unwrap())
	assert.NotContains(t, err.Error(), pw)
	assert.Contains(t, err.Error(), "unreachable")

	_, err = pgdsn.Open(t.Context(), "-tasks", "postgres://u:"+password+"@h:x/db")
	assert.ErrorAs(t, err, new(*pgdsn.ConfigError))
	assert.Equal(t, 30, int(pgdsn.OpenTimeout.Seconds()))
}
