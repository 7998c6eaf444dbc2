// Package pgx is the PostgreSQL plumbing candor stores share, for the
// jackc/pgx v5 database/sql driver (driver name "pgx"): a checksummed
// forward-only migrator that keeps a store's tables under a schema of the
// caller's choosing, identifier checks and quoting, detection of a
// PostgreSQL *sql.DB, and the classification of driver errors.
//
// # Migrations
//
// Migrate creates the schema when missing and applies a list of
// Migrations, versions 1, 2, 3, … without gaps, each in its own
// transaction together with its row in the migrations table. Every
// transaction first takes a transaction-scoped advisory lock derived from
// the schema and table names, so openers on several nodes apply each step
// once and wait for one another. The migration SQL runs with search_path
// set (for that transaction) to the schema alone, so it names its tables
// unqualified. The table records each applied version's SHA-256 of its SQL
// (the same checksum as internal/sqlitex); a released migration's SQL never
// changes, and a database whose record disagrees with the program is
// refused rather than guessed at.
//
// # Failure taxonomy
//
//   - ErrSchemaAltered (*MigrationError): a recorded migration's checksum
//     differs from the program's, or a version below the highest recorded
//     one is missing. Something else changed the schema: stop.
//   - ErrSchemaTooNew (*MigrationError): the schema was migrated by a newer
//     program. Nothing is written.
//   - *MigrationError wrapping a driver error: a migration's SQL failed; its
//     transaction was rolled back.
//   - An argument error (an identifier that is not plain, a list with a gap)
//     before any statement runs.
//
// IsUnavailable reports a driver error that means the server could not be
// reached or went away (connection refused or lost, the server shutting
// down, SQLSTATE classes 08 and 57P): the statement's outcome is unknown
// unless it was never sent.
package pgx
