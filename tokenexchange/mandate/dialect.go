package mandate

import (
	"strconv"
	"strings"

	"github.com/candorkit/candor/internal/pgx"
)

// dialect writes the store's statements for one backend. Statements are
// written once with ? placeholders, {t} for the mandate table and {now}
// for the database clock in Unix milliseconds (the lease's clock: every
// process sharing a database reads the same one).
type dialect struct {
	postgres bool
	schema   string
	table    string
	now      string
}

func sqliteDialect() dialect {
	return dialect{
		table: "candor_mandates",
		now:   "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)",
	}
}

func postgresDialect(schema string) dialect {
	return dialect{
		postgres: true,
		schema:   schema,
		table:    pgx.Quote(schema) + ".candor_mandates",
		now:      "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)",
	}
}

// q returns query for this backend.
func (d dialect) q(query string) string {
	query = strings.ReplaceAll(query, "{t}", d.table)
	query = strings.ReplaceAll(query, "{now}", d.now)
	if !d.postgres {
		return query
	}
	var b strings.Builder
	n := 0
	for _, c := range query {
		if c == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}
