package pgtest_test

import (
	"errors"
	"fmt"
	"os"

	"github.com/candorkit/candor/internal/pgtest"
)

// On a machine without PostgreSQL, the error names the script that installs
// it; Start turns it into a test failure, never a skip.
func ExampleBinDir() {
	empty, _ := os.MkdirTemp("", "no-postgres-")
	defer os.RemoveAll(empty)
	os.Setenv("CANDOR_PG_BIN", empty)
	defer os.Unsetenv("CANDOR_PG_BIN")

	_, err := pgtest.BinDir()
	fmt.Println(errors.Is(err, pgtest.ErrNotInstalled))
	fmt.Println(pgtest.InstallHint)
	// Output:
	// true
	// scripts/postgres-local install
}
