package reorder

import (
	"errors"
	"fmt"
)

// Sentinel errors. Each incomplete-scan cause is wrapped by an
// *IncompleteError, so errors.Is(err, ErrIncomplete) holds for all of them and
// errors.Is(err, ErrPageCap) (and so on) names the cause.
var (
	// ErrIncomplete matches every error Plan returns after reading part of
	// the catalog.
	ErrIncomplete = errors.New("reorder: incomplete catalog scan")
	// ErrPageCap: Thresholds.MaxPages pages were read and the catalog had more.
	ErrPageCap = errors.New("reorder: page cap reached")
	// ErrItemCap: Thresholds.MaxItems items were examined and the catalog had more.
	ErrItemCap = errors.New("reorder: item cap reached")
	// ErrCursorRepeat: the catalog returned a cursor the scan had already
	// sent, which would loop forever.
	ErrCursorRepeat = errors.New("reorder: catalog repeated a cursor")
	// ErrDuplicateCode: the same item code appeared twice in one scan, so
	// the catalog changed or paged inconsistently and items may be missing.
	ErrDuplicateCode = errors.New("reorder: duplicate item code")
	// ErrTotalMismatch matches a *TotalMismatchError.
	ErrTotalMismatch = errors.New("reorder: scanned count differs from the catalog's total")
	// ErrNilCatalog: Plan was given no catalog.
	ErrNilCatalog = errors.New("reorder: nil catalog")
	// ErrNoMandate: no mandate exists for the run. A MandateSource returns
	// it (or wraps it) when the person never granted one or revoked it; the
	// Runner also uses it for a mandate without a token.
	ErrNoMandate = errors.New("reorder: no mandate")
	// ErrSchedule: a zero Schedule, or an hour/minute out of range.
	ErrSchedule = errors.New("reorder: invalid schedule")
)

// IncompleteError is returned by Plan alongside a Proposal that is not
// Complete. Err holds the cause(s), joined when there are several.
type IncompleteError struct {
	// Scanned is the number of items examined before the scan stopped.
	Scanned int
	Err     error
}

func (e *IncompleteError) Error() string {
	return fmt.Sprintf("reorder: incomplete catalog scan after %d item(s): %v", e.Scanned, e.Err)
}

// Unwrap returns the cause.
func (e *IncompleteError) Unwrap() error { return e.Err }

// Is reports whether target is ErrIncomplete.
func (e *IncompleteError) Is(target error) bool { return target == ErrIncomplete }

// PageError is a failure of one Catalog.Page call; Err is the catalog's error
// unchanged (so errors.As reaches the transport's own typed error).
type PageError struct {
	// Page is the 1-based number of the page that failed.
	Page int
	// Cursor is the cursor sent for that page ("" for the first).
	Cursor string
	Err    error
}

func (e *PageError) Error() string {
	return fmt.Sprintf("reorder: catalog page %d (cursor %s): %v", e.Page, quoteCursor(e.Cursor), e.Err)
}

// Unwrap returns the catalog's error.
func (e *PageError) Unwrap() error { return e.Err }

// TotalMismatchError: the catalog signalled its last page but the number of
// items read differs from the total it reported.
type TotalMismatchError struct {
	Reported, Scanned int
}

func (e *TotalMismatchError) Error() string {
	return fmt.Sprintf("reorder: catalog reported %d item(s), scan read %d", e.Reported, e.Scanned)
}

// Is reports whether target is ErrTotalMismatch.
func (e *TotalMismatchError) Is(target error) bool { return target == ErrTotalMismatch }

// ThresholdsError is an invalid Thresholds field.
type ThresholdsError struct {
	// Field is the name of the Thresholds field, for instance "OrderUpTo".
	Field string
	// Value is the field's value after defaults.
	Value  int
	Reason string
}

func (e *ThresholdsError) Error() string {
	return fmt.Sprintf("reorder: invalid thresholds: %s = %d %s", e.Field, e.Value, e.Reason)
}
