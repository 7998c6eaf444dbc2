package pgtest_test

import (
	"database/sql"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/candorkit/candor/pgtest"
)

// TestStartAndNewDatabase: a cluster on loopback, and databases of its own
// per caller.
func TestStartAndNewDatabase(t *testing.T) {
	ordersTest(t)
	var cluster *pgtest.Cluster = pgtest.Start(t)
	require.NotEmpty(t, cluster.DSN)
	assert.NotZero(t, cluster.Port)
	a, b := cluster.NewDatabase(t), cluster.NewDatabase(t)
	assert.NotEqual(t, a, b)
	db, err := sql.Open("pgx", a)
	require.NoError(t, err)
	defer db.Close()
	var addr string
	require.NoError(t, db.QueryRow(`SELECT host(inet_server_addr())`).Scan(&addr))
	assert.Equal(t, "127.0.0.1", addr)
	dir, err := pgtest.BinDir()
	require.NoError(t, err)
	assert.NotEmpty(t, dir)
	assert.Equal(t, "candor-pg", pgtest.DefaultUser)
}

// TestStopAndStart: the server goes away and comes back on the same DSN,
// after a crash-like and after a fast stop.
func TestStopAndStart(t *testing.T) {
	outageTest(t)
	cluster := pgtest.Start(t)
	db, err := sql.Open("pgx", cluster.DSN)
	require.NoError(t, err)
	defer db.Close()
	db.SetMaxIdleConns(0) // every query dials: none reuses a connection the stop broke
	cluster.Stop(t, pgtest.StopOptions{})
	assert.Error(t, db.Ping(), "ping with the server stopped")
	cluster.Start(t)
	assert.NoError(t, db.Ping(), "ping after Start")
}
