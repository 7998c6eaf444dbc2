// Package pgtest starts a throwaway PostgreSQL cluster for a test and returns
// its DSN.
//
// Start runs initdb and pg_ctl from the machine's PostgreSQL installation
// (scripts/postgres-local install puts it there) in a fresh directory, listening
// on 127.0.0.1 only, on a free port, with a random superuser password
// (scram-sha-256), and stops and removes the cluster in t.Cleanup.
//
// PostgreSQL refuses to run as root. When the test runs as root, the cluster is
// owned by the system user candor-pg (CANDOR_PG_USER overrides the name), which
// the install script creates; the server programs run under that user's uid and
// gid, and the cluster directory is created under os.TempDir() and chowned to it.
// As any other user, the programs run as that user.
//
// Cluster.Stop and Cluster.Start stop the server mid-test and start it again
// on the same port, with the same settings and password, for outage tests:
// pg_ctl runs as the cluster owner, as for the first start. Stop's
// StopOptions.Immediate ends the server as a crash would.
//
// Failure taxonomy: Start never skips. It fails the test (t.Fatal) with a message
// naming `scripts/postgres-local install` when the server binaries or the
// cluster user are missing, and with initdb's or the server log's last lines
// when initdb or pg_ctl fail. A port taken between the probe and the start is
// retried on another port a bounded number of times. Cluster.Stop and
// Cluster.Start fail the test when pg_ctl fails, when Stop finds the server
// already stopped, or Start finds it running; Start does not move to another
// port (the DSNs name it). A cluster a test left stopped is removed at cleanup
// without an error.
//
// Environment: CANDOR_PG_BIN names the directory holding initdb and pg_ctl
// (default: the newest /usr/lib/postgresql/*/bin, else pg_ctl on PATH);
// CANDOR_PG_USER names the cluster owner used when running as root.
package pgtest
