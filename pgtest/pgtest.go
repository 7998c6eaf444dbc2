package pgtest

import (
	"testing"

	"github.com/candorkit/candor/internal/pgtest"
)

// InstallHint is the command that installs what Start needs. Every "not
// installed" failure names it.
const InstallHint = pgtest.InstallHint

// DefaultUser owns throwaway clusters when the test runs as root.
const DefaultUser = pgtest.DefaultUser

// ErrNotInstalled reports that the PostgreSQL server binaries or the
// cluster owner are missing on this machine.
var ErrNotInstalled = pgtest.ErrNotInstalled

// Cluster is a throwaway PostgreSQL cluster, running unless a test stopped
// it. Its fields:
//
//   - DSN connects as the superuser "postgres" to the database "postgres"
//     over TCP on 127.0.0.1 (sslmode=disable: loopback only);
//   - Port is the TCP port on 127.0.0.1;
//   - Dir holds the cluster (Dir/data) and its server log (Dir/server.log).
//
// Its methods:
//
//   - NewDatabase(tb) creates a fresh, empty database in the cluster and
//     returns its DSN;
//   - Stop(tb, StopOptions) stops the server and waits until it has
//     exited, leaving the cluster's files in place: connections break and
//     new ones are refused. It fails tb when the server is already stopped
//     or pg_ctl fails. A cluster left stopped is still removed when the
//     test ends;
//   - Start(tb) starts a stopped server again on the same port with the
//     same settings and password, so that DSN and the DSNs NewDatabase
//     returned connect again, and waits until it accepts connections. It
//     fails tb when the server is running or does not start (with the last
//     lines of the server log).
type Cluster = pgtest.Cluster

// StopOptions says how Cluster.Stop ends the server. The zero value is a
// fast shutdown: the server ends every session, rolling back their open
// transactions, and checkpoints (pg_ctl -m fast). Its field:
//
//   - Immediate ends the server as a crash would (pg_ctl -m immediate):
//     sessions are cut without a checkpoint, and the next Start replays
//     the write-ahead log.
type StopOptions = pgtest.StopOptions

// Start creates and starts a cluster, fails tb when it cannot, and stops and
// removes the cluster in tb.Cleanup. It never skips.
func Start(tb testing.TB) *Cluster {
	tb.Helper()
	return pgtest.Start(tb)
}

// BinDir returns the directory holding initdb and pg_ctl: CANDOR_PG_BIN when
// set, else the newest /usr/lib/postgresql/*/bin, else the directory of
// pg_ctl on PATH. The error wraps ErrNotInstalled.
func BinDir() (string, error) { return pgtest.BinDir() }
