// Package pgtest starts a throwaway PostgreSQL cluster for a test, in the
// style of net/http/httptest: Start(t) returns a running cluster on
// 127.0.0.1 with its DSN, and stops and removes it when the test ends.
//
//	func TestOrders(t *testing.T) {
//		cluster := pgtest.Start(t)
//		db, err := sql.Open("pgx", cluster.NewDatabase(t)) // a database of its own
//		…
//	}
//
// Start runs initdb and pg_ctl from the machine's PostgreSQL installation
// (scripts/postgres-local install puts it there) in a fresh directory,
// listening on 127.0.0.1 only, on a free port, with a random superuser
// password (scram-sha-256), fsync off. One cluster can serve many tests:
// Cluster.NewDatabase creates an empty database per test, so tests sharing
// a cluster do not see each other's tables. The package registers the pgx
// database/sql driver under the name "pgx".
//
// An outage test stops the server mid-run and starts it again:
// Cluster.Stop takes it away (StopOptions.Immediate: as a crash would),
// and Cluster.Start brings it back on the same port, so the code under
// test can show it goes on with the DSN it was given.
//
// PostgreSQL refuses to run as root. When the test runs as root, the
// cluster is owned by the system user candor-pg (DefaultUser;
// CANDOR_PG_USER overrides the name), which the install script creates.
//
// # Failures
//
//   - Start never skips. PostgreSQL's server binaries or the cluster user
//     missing fail the test with a message naming InstallHint; BinDir's
//     error matches ErrNotInstalled.
//   - initdb or pg_ctl failing fails the test with the last lines of their
//     output and of the server log. A port taken between the probe and the
//     start is retried on another port a bounded number of times.
//   - Cluster.Stop and Cluster.Start fail the test when pg_ctl fails,
//     when Stop finds the server already stopped, or Start finds it
//     running. Start does not move to another port (the DSNs name it): a
//     port another process took while the server was stopped fails the
//     test with the server log's last lines.
//   - A cluster that cannot be stopped at the end of the test is left in
//     Cluster.Dir and the test is marked failed. A cluster the test left
//     stopped is removed without an error.
//
// Environment: CANDOR_PG_BIN names the directory holding initdb and pg_ctl
// (default: the newest /usr/lib/postgresql/*/bin, else pg_ctl on PATH);
// CANDOR_PG_USER names the cluster owner used when running as root.
//
// The DSN holds the superuser password: do not log it.
package pgtest
