package pgx_test

import (
	"fmt"

	"github.com/candorkit/candor/internal/pgx"
)

// A released migration is identified by the checksum of its SQL: editing
// it afterwards makes Migrate refuse the database instead of guessing.
func ExampleMigration_Checksum() {
	m := pgx.Migration{Version: 1, Name: "items", SQL: `CREATE TABLE items (id BIGINT PRIMARY KEY)`}
	edited := m
	edited.SQL += ";"
	fmt.Println(len(m.Checksum()), m.Checksum() == edited.Checksum())
	fmt.Println(pgx.IsIdent("candor"), pgx.IsIdent("Candor"), pgx.Quote("candor"))
	// Output:
	// 64 false
	// true false "candor"
}
