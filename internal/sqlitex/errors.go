package sqlitex

import (
	"errors"
	"fmt"
	"strings"

	"modernc.org/sqlite"
)

// Sentinel errors; see the package documentation.
var (
	// ErrSchemaAltered reports recorded migrations that disagree with the
	// program's (an edited checksum or a missing version).
	ErrSchemaAltered = errors.New("sqlitex: schema history altered")
	// ErrSchemaTooNew reports a file migrated by a newer program.
	ErrSchemaTooNew = errors.New("sqlitex: schema newer than this program")
	// ErrForeign reports a file whose application_id is not the store's.
	ErrForeign = errors.New("sqlitex: not this store's database file")
	// ErrCorrupt matches every *CorruptError.
	ErrCorrupt = errors.New("sqlitex: database file is corrupt")
)

// MigrationError reports a migration that was refused or failed. Err is
// ErrSchemaAltered, ErrSchemaTooNew, or the driver's error.
type MigrationError struct {
	// Table is the migrations table.
	Table string
	// Version and Name identify the migration concerned; for
	// ErrSchemaTooNew, Version is the highest recorded one.
	Version int
	Name    string
	// Reason says what is wrong, without the cause.
	Reason string
	// Err is the cause.
	Err error
}

func (e *MigrationError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "sqlitex: migrations in %s: version %d", e.Table, e.Version)
	if e.Name != "" {
		fmt.Fprintf(&b, " (%s)", e.Name)
	}
	if e.Reason != "" {
		b.WriteString(": ")
		b.WriteString(e.Reason)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *MigrationError) Unwrap() error { return e.Err }

// CorruptError reports a damaged database file: the problems quick_check
// listed (at most a few), or the driver error that reported the damage.
type CorruptError struct {
	// Problems are the lines PRAGMA quick_check returned, at most
	// MaxProblems of them.
	Problems []string
	// Err is the driver error, when the check itself failed on the damage.
	Err error
}

// MaxProblems bounds CorruptError.Problems.
const MaxProblems = 10

func (e *CorruptError) Error() string {
	switch {
	case e.Err != nil:
		return "sqlitex: database file is corrupt: " + e.Err.Error()
	case len(e.Problems) == 0:
		return "sqlitex: database file is corrupt"
	case len(e.Problems) == 1:
		return "sqlitex: database file is corrupt: " + e.Problems[0]
	}
	return fmt.Sprintf("sqlitex: database file is corrupt: %s (and %d more problems)", e.Problems[0], len(e.Problems)-1)
}

// Is matches ErrCorrupt.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

func (e *CorruptError) Unwrap() error { return e.Err }

// SQLite primary result codes.
const (
	codeBusy     = 5
	codeLocked   = 6
	codeReadOnly = 8
	codeCorrupt  = 11
	codeNotADB   = 26
)

func primaryCode(err error) (int, bool) {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return 0, false
	}
	return se.Code() & 0xff, true
}

// IsCorrupt reports whether err is a *CorruptError or a driver error with
// code SQLITE_CORRUPT or SQLITE_NOTADB (any extended code).
func IsCorrupt(err error) bool {
	if errors.Is(err, ErrCorrupt) {
		return true
	}
	c, ok := primaryCode(err)
	return ok && (c == codeCorrupt || c == codeNotADB)
}

// IsBusy reports whether err is a driver error with code SQLITE_BUSY or
// SQLITE_LOCKED (any extended code): another connection holds the lock.
func IsBusy(err error) bool {
	c, ok := primaryCode(err)
	return ok && (c == codeBusy || c == codeLocked)
}

// IsReadOnly reports whether err is a driver error with code
// SQLITE_READONLY (any extended code): a write to a read-only file or
// connection.
func IsReadOnly(err error) bool {
	c, ok := primaryCode(err)
	return ok && c == codeReadOnly
}
