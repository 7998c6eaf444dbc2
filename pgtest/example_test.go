package pgtest_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/candorkit/candor/pgtest"
)

// ordersTest is a test body: a database of its own in a throwaway cluster,
// gone when the test ends. Call it from a test function,
// func TestOrders(t *testing.T) { ordersTest(t) }.
func ordersTest(t testing.TB) {
	cluster := pgtest.Start(t)
	db, err := sql.Open("pgx", cluster.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(context.Background(), `CREATE TABLE orders (id int PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
}

// A test starts a cluster with Start and takes a database of its own with
// NewDatabase.
func ExampleStart() {
	_ = ordersTest
}

// outageTest is an outage test body: PostgreSQL goes away mid-run and
// comes back on the same DSN, with what was committed before. Call it from
// a test function, func TestOutage(t *testing.T) { outageTest(t) }.
func outageTest(t testing.TB) {
	cluster := pgtest.Start(t)
	db, err := sql.Open("pgx", cluster.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, `CREATE TABLE orders (id int PRIMARY KEY); INSERT INTO orders VALUES (1)`); err != nil {
		t.Fatal(err)
	}

	cluster.Stop(t, pgtest.StopOptions{Immediate: true}) // as a crash would
	if err := db.PingContext(ctx); err == nil {
		t.Fatal("the database answered with the server stopped")
	}
	cluster.Start(t) // same port: db connects again
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM orders`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("after the restart: %d orders, %v", n, err)
	}
}

// An outage test stops the server with Stop and brings it back with Start,
// on the same DSN.
func ExampleCluster_Stop() {
	_ = outageTest
}

// On a machine without PostgreSQL, the error names the script that installs
// it; Start turns it into a test failure, never a skip.
func ExampleBinDir() {
	empty, _ := os.MkdirTemp("", "no-postgres-")
	defer os.RemoveAll(empty)
	if old, ok := os.LookupEnv("CANDOR_PG_BIN"); ok {
		defer os.Setenv("CANDOR_PG_BIN", old)
	} else {
		defer os.Unsetenv("CANDOR_PG_BIN")
	}
	os.Setenv("CANDOR_PG_BIN", empty)

	_, err := pgtest.BinDir()
	fmt.Println(errors.Is(err, pgtest.ErrNotInstalled))
	fmt.Println(pgtest.InstallHint)
	// Output:
	// true
	// scripts/postgres-local install
}
