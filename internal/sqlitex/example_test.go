package sqlitex_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/candorkit/candor/internal/sqlitex"
)

func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "sqlitex")
	defer os.RemoveAll(dir)
	o := sqlitex.DSNOptions{BusyTimeout: 5 * time.Second, WAL: true, SyncFull: true, Immediate: true}

	db, err := sql.Open("sqlite", sqlitex.DSN(filepath.Join(dir, "store#1.db"), o))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close()
	if err := sqlitex.Verify(ctx, db, o); err != nil {
		fmt.Println(err)
		return
	}
	err = sqlitex.Migrate(ctx, db, "example_migrations", []sqlitex.Migration{
		{Version: 1, Name: "notes", SQL: `CREATE TABLE example_notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL)`},
	})
	fmt.Println(err)
	fmt.Println(sqlitex.QuickCheck(ctx, db))
	// Output:
	// <nil>
	// <nil>
}

func ExampleDSN() {
	fmt.Println(sqlitex.DSN("data/a#b.db", sqlitex.DSNOptions{ReadOnly: true, BusyTimeout: time.Second}))
	// Output: file:data/a%23b.db?_pragma=busy_timeout%281000%29&mode=ro
}
