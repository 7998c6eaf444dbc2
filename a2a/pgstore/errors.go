package pgstore

import (
	"errors"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/candorkit/candor/internal/pgx"
)

// ErrUnavailable reports that PostgreSQL could not be reached or went away
// during the call (connection refused or lost, the server shutting down).
// The call's outcome is unknown: a write may or may not have been
// committed, so the Server reports the call as failed, never as done. Retry
// once the database is back; the store needs no reopening.
var ErrUnavailable = errors.New("PostgreSQL is unavailable")

// ErrSchema reports a schema OpenDB refuses to use: a recorded migration
// differs from this program's (the schema was altered by hand), or the
// schema was migrated by a newer program. Nothing was written.
var ErrSchema = errors.New("the task schema is not this program's")

// Error is a store operation that failed in the database. Its text names
// the operation and the kind of failure only, never the server's address,
// user or database, nor the statement: a2a-go passes a store's error text
// to the A2A caller. The driver's error is Err (errors.As reaches
// *pgconn.PgError and *pgconn.ConnectError); errors.Is matches
// ErrUnavailable or ErrSchema where they apply.
type Error struct {
	// Op is what the store was doing ("create task", "migrate"...).
	Op string
	// Kind is ErrUnavailable, ErrSchema or nil.
	Kind error
	// Err is the driver's error.
	Err error
}

func (e *Error) Error() string {
	msg := "pgstore: " + e.Op + ": "
	var pe *pgconn.PgError
	switch {
	case e.Kind != nil:
		return msg + e.Kind.Error()
	case errors.As(e.Err, &pe):
		return msg + "database error SQLSTATE " + pe.Code
	}
	return msg + "database error"
}

// Unwrap returns Kind (when set) and Err.
func (e *Error) Unwrap() []error {
	if e.Kind != nil {
		return []error{e.Kind, e.Err}
	}
	return []error{e.Err}
}

// wrap names the operation and classifies the driver's error.
func wrap(op string, err error) error {
	e := &Error{Op: op, Err: err}
	switch {
	case errors.Is(err, pgx.ErrSchemaAltered) || errors.Is(err, pgx.ErrSchemaTooNew):
		e.Kind = ErrSchema
	case pgx.IsUnavailable(err):
		e.Kind = ErrUnavailable
	}
	return e
}
