package approval

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors. Every error the store returns for a refused request
// matches one of them with errors.Is; the typed errors below carry the
// evidence and are reached with errors.As.
var (
	// ErrInvalidOperationID: the operation id is empty, too long, not
	// UTF-8 or holds control characters.
	ErrInvalidOperationID = errors.New("approval: invalid operation id")
	// ErrInvalidDraft: the draft is nil, does not marshal, is too large or
	// fails its own Validate. The error is an *InvalidDraftError.
	ErrInvalidDraft = errors.New("approval: invalid draft")
	// ErrOperationRebound: the operation id is already bound to another
	// draft. The error is a *ReboundError.
	ErrOperationRebound = errors.New("approval: operation id already bound to another draft")
	// ErrUnknownOperation: the store holds no operation with that id.
	ErrUnknownOperation = errors.New("approval: unknown operation")
	// ErrInvalidDecision: the verdict is not approve or reject, the comment
	// is too long or not UTF-8, or the decider is missing.
	ErrInvalidDecision = errors.New("approval: invalid decision")
	// ErrAlreadyDecided: another decision was persisted first. The error
	// is an *AlreadyDecidedError holding the standing decision.
	ErrAlreadyDecided = errors.New("approval: operation already decided")
	// ErrNotApproved: Apply was asked to apply an operation that is
	// waiting or rejected. The error is a *NotApprovedError.
	ErrNotApproved = errors.New("approval: operation is not approved")
	// ErrEffectFailed: the caller's Effect returned an error; nothing of
	// the apply committed. The error is an
	// *EffectError wrapping the effect's error.
	ErrEffectFailed = errors.New("approval: effect failed")
	// ErrInvalidFilter: a List filter with an unknown status, a bad limit
	// or a cursor List did not issue.
	ErrInvalidFilter = errors.New("approval: invalid list filter")
	// ErrInvalidReceipt: a receipt with a missing field, or a receipt file
	// that is too large, not JSON, or not exactly a receipt.
	ErrInvalidReceipt = errors.New("approval: invalid receipt")
	// ErrUnknownReceipt: the receipt names an operation the store holds,
	// but the store never issued this receipt (it was edited or belongs
	// to another store).
	ErrUnknownReceipt = errors.New("approval: receipt not issued by this store")
	// ErrGraphVersionMismatch: the receipt was written by another version
	// of the host's graph. The error is a *GraphVersionError.
	ErrGraphVersionMismatch = errors.New("approval: receipt from another graph version")
	// ErrSchemaTooNew: the database was migrated by a newer version of
	// this package; migrations are forward-only, so it is not touched.
	ErrSchemaTooNew = errors.New("approval: database schema is newer than this package")
	// ErrSchemaAltered: a migration recorded in the database differs from
	// the one this package ships (its checksum does not match), or one is
	// missing below a recorded one.
	ErrSchemaAltered = errors.New("approval: recorded migration differs from this package's")
	// ErrSchemaTooOld: a read-only open found a store that needs a
	// migration it cannot run; open it read-write once.
	ErrSchemaTooOld = errors.New("approval: database schema needs a migration")
	// ErrNoStore: the file or database holds no approval store: an empty
	// file (a store truncated to 0 bytes looks like this), a database
	// without the store's tables, another application's file. Open refuses
	// it untouched rather than start a new, empty store in its place,
	// which would let an operation id already bound be bound again.
	ErrNoStore = errors.New("approval: no approval store there")
	// ErrCorrupt: SQLite reports the file damaged (PRAGMA quick_check at
	// Open, or SQLITE_CORRUPT / SQLITE_NOTADB later). The error is a
	// *CorruptError.
	ErrCorrupt = errors.New("approval: database file is corrupt")
	// ErrReadOnly: a write on a store opened WithReadOnly, or a read-write
	// open of a file or directory the process may not write.
	ErrReadOnly = errors.New("approval: store is read-only")
	// ErrSettings: the database's connection settings break a guarantee
	// of the store (OpenDB over a database opened without WAL,
	// synchronous=FULL, foreign keys or a busy timeout). The error names
	// the setting and the value found.
	ErrSettings = errors.New("approval: database settings break the store's guarantees")
	// ErrInconsistent: a stored row is in a shape the store never writes
	// (for example Completed without an item): the file was changed from
	// outside the store. It is reported, never read as a state.
	ErrInconsistent = errors.New("approval: stored operation is inconsistent")
	// ErrUnavailable: the database server (PostgreSQL) could not be
	// reached, or the connection broke during the call. A read failed; a
	// write may or may not have committed (the answer was lost): read the
	// operation again, or repeat the call, which is safe (Register and
	// Decide are idempotent, Apply applies at most once). Nothing is ever
	// reported done that did not commit.
	ErrUnavailable = errors.New("approval: database unavailable")
	// ErrClosed: the store was closed.
	ErrClosed = errors.New("approval: store closed")
)

// InvalidDraftError lists every problem found with a draft: the ones its
// Validate returned and the ones the store found (nil, not marshalable,
// too large, invalid UTF-8). errors.Is matches ErrInvalidDraft and, through
// Unwrap, any of the problems.
type InvalidDraftError struct {
	OperationID string
	Problems    []error
}

func (e *InvalidDraftError) Error() string {
	msgs := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		msgs[i] = p.Error()
	}
	return fmt.Sprintf("approval: invalid draft for operation %q: %s", e.OperationID, strings.Join(msgs, "; "))
}

// Is reports a match with ErrInvalidDraft.
func (e *InvalidDraftError) Is(target error) bool { return target == ErrInvalidDraft }

// Unwrap returns the problems.
func (e *InvalidDraftError) Unwrap() []error { return e.Problems }

// ReboundError reports an attempt to bind an operation id to a draft other
// than the one it holds. Nothing was changed.
type ReboundError struct {
	OperationID string
	// Stored is the canonical draft the operation holds.
	Stored json.RawMessage
	// Offered is the canonical form of the refused draft.
	Offered json.RawMessage
}

func (e *ReboundError) Error() string {
	return fmt.Sprintf("approval: operation %q already bound to another draft (stored %d bytes, offered %d bytes)",
		e.OperationID, len(e.Stored), len(e.Offered))
}

// Is reports a match with ErrOperationRebound.
func (e *ReboundError) Is(target error) bool { return target == ErrOperationRebound }

// AlreadyDecidedError reports a decision that lost: Standing is the decision
// persisted first, Offered the one refused.
type AlreadyDecidedError struct {
	Standing Decision
	Offered  Decision
	// Status is the operation's status when the offer was refused.
	Status Status
}

func (e *AlreadyDecidedError) Error() string {
	return fmt.Sprintf("approval: operation %q already decided: %s by %q (offered %s by %q)",
		e.Standing.OperationID, e.Standing.Verdict, e.Standing.DecidedBy, e.Offered.Verdict, e.Offered.DecidedBy)
}

// Is reports a match with ErrAlreadyDecided.
func (e *AlreadyDecidedError) Is(target error) bool { return target == ErrAlreadyDecided }

// NotApprovedError reports an Apply on an operation that is Waiting or
// Rejected.
type NotApprovedError struct {
	OperationID string
	Status      Status
}

func (e *NotApprovedError) Error() string {
	return fmt.Sprintf("approval: operation %q is %s, not approved", e.OperationID, e.Status)
}

// Is reports a match with ErrNotApproved.
func (e *NotApprovedError) Is(target error) bool { return target == ErrNotApproved }

// EffectError wraps the error an Effect returned. When Apply returns it,
// nothing of the effect, the item or the completion committed, and the
// operation is still Approved.
type EffectError struct {
	OperationID string
	Err         error
}

func (e *EffectError) Error() string {
	return fmt.Sprintf("approval: effect for operation %q failed: %v", e.OperationID, e.Err)
}

// Is reports a match with ErrEffectFailed.
func (e *EffectError) Is(target error) bool { return target == ErrEffectFailed }

// Unwrap returns the effect's error.
func (e *EffectError) Unwrap() error { return e.Err }

// GraphVersionError reports a receipt written by another graph version.
type GraphVersionError struct {
	OperationID string
	Receipt     string // the receipt's graph version
	Want        string // the version the caller runs
}

func (e *GraphVersionError) Error() string {
	return fmt.Sprintf("approval: receipt for operation %q is from graph version %q, running %q",
		e.OperationID, e.Receipt, e.Want)
}

// Is reports a match with ErrGraphVersionMismatch.
func (e *GraphVersionError) Is(target error) bool { return target == ErrGraphVersionMismatch }

// OpenError reports why Open or OpenDB refused a database: the file, the
// cause (which matches a sentinel through Unwrap) and what to do about it.
type OpenError struct {
	// Path is the database file (for OpenDB, the main file of the
	// caller's database, as SQLite names it; on PostgreSQL, the database
	// and the schema).
	Path string
	// Err is the cause.
	Err error
	// Remedy says what the operator can do; it may be empty.
	Remedy string
}

func (e *OpenError) Error() string {
	msg := fmt.Sprintf("approval: open %s: %s", e.Path, strings.TrimPrefix(e.Err.Error(), "approval: "))
	if e.Remedy != "" {
		msg += " (" + e.Remedy + ")"
	}
	return msg
}

// Unwrap returns the cause.
func (e *OpenError) Unwrap() error { return e.Err }

// CorruptError reports a database file that SQLite finds damaged.
type CorruptError struct {
	// Problems are the lines PRAGMA quick_check reported (at most 10), or
	// the SQLite error met while reading.
	Problems []string
	// Err is the SQLite error, when there is one.
	Err error
}

func (e *CorruptError) Error() string {
	return "approval: database file is corrupt: " + strings.Join(e.Problems, "; ")
}

// Is reports a match with ErrCorrupt.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

// Unwrap returns the SQLite error, if any.
func (e *CorruptError) Unwrap() error { return e.Err }
