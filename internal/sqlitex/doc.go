// Package sqlitex is the SQLite plumbing every candor store shares, for the
// modernc.org/sqlite driver (driver name "sqlite"): one DSN builder, a check
// that the settings took effect, a checksummed forward-only migrator, the
// application_id stamp that tells a store's own file from a foreign one, an
// integrity check, and the classification of driver errors.
//
// # DSNs
//
// DSN turns a file path into a "file:" URI with net/url, so every byte of the
// path names the file: a path such as "a#b.db", "a%41b.db" or "a?x.db" opens
// exactly that file, and never moves the settings into the file name. The
// settings go in as _pragma parameters (busy_timeout, journal_mode,
// synchronous, foreign_keys), mode=ro (ReadOnly) or mode=rw (MustExist), and
// _txlock=immediate (Immediate). Verify reads the pragmas back on a live
// connection, so a driver that ignored one is caught at open.
//
// # Migrations
//
// Migrate applies a list of Migrations, versions 1, 2, 3, … without gaps,
// each in its own BEGIN IMMEDIATE transaction together with its row in the
// migrations table (whose name the caller gives, so that several stores can
// share one file). The table records each applied version's SHA-256 of its
// SQL; a released migration's SQL never changes, and a database whose record
// disagrees with the program is refused rather than guessed at.
//
// # Failure taxonomy
//
//   - ErrSchemaAltered (*MigrationError): a recorded migration's checksum
//     differs from the program's, or a version below the highest recorded
//     one is missing. The file was changed by something else: stop.
//   - ErrSchemaTooNew (*MigrationError): the file was migrated by a newer
//     program than this one. Upgrade the program; never write to it.
//   - *MigrationError wrapping a driver error: a migration's SQL failed; its
//     transaction was rolled back.
//   - ErrForeign: the file's application_id is not the expected one (or is
//     unset on a file the caller did not create): it is not this store's
//     file, or it lost its header.
//   - ErrCorrupt (*CorruptError): PRAGMA quick_check found damage, or the
//     driver reported SQLITE_CORRUPT or SQLITE_NOTADB.
//   - *PragmaError: a setting read back by Verify is not the one asked for.
//   - IsCorrupt, IsBusy and IsReadOnly classify driver errors by their
//     primary result code (CORRUPT and NOTADB; BUSY and LOCKED; READONLY).
package sqlitex
