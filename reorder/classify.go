package reorder

import (
	"context"
	"errors"
)

// Kind is the class of a failure of Plan or Runner.Run, for a caller that
// branches on it or labels telemetry with it. The values are stable
// snake_case strings; doc.go says what each means.
type Kind string

// The kinds Classify returns.
const (
	KindNoMandate          Kind = "no_mandate"
	KindMandateUnavailable Kind = "mandate_unavailable"
	KindOpenFailed         Kind = "open_failed"
	KindInvalidThresholds  Kind = "invalid_thresholds"
	KindNilCatalog         Kind = "nil_catalog"
	KindPageCap            Kind = "page_cap"
	KindItemCap            Kind = "item_cap"
	KindCatalogError       Kind = "catalog_error"
	KindCanceled           Kind = "canceled"
	KindCursorRepeat       Kind = "cursor_repeat"
	KindDuplicateCode      Kind = "duplicate_code"
	KindTotalMismatch      Kind = "total_mismatch"
	KindSchedule           Kind = "schedule"
	KindOther              Kind = "other"
)

// Classify returns the Kind of an error Plan, Runner.Run or Run returned,
// "" for nil. A scan stopped for several causes at once is classified by
// the first of: cancellation, a catalog error, a cursor repeat, a duplicate
// code, the page cap, the item cap, a total mismatch.
func Classify(err error) Kind {
	if err == nil {
		return ""
	}
	var halted *HaltedError
	var opened *openError
	var th *ThresholdsError
	var pe *PageError
	switch {
	case errors.As(err, &halted):
		if errors.Is(err, ErrNoMandate) {
			return KindNoMandate
		}
		return KindMandateUnavailable
	case errors.As(err, &opened):
		return KindOpenFailed
	case errors.As(err, &th):
		return KindInvalidThresholds
	case errors.Is(err, ErrNilCatalog):
		return KindNilCatalog
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return KindCanceled
	case errors.As(err, &pe):
		return KindCatalogError
	case errors.Is(err, ErrCursorRepeat):
		return KindCursorRepeat
	case errors.Is(err, ErrDuplicateCode):
		return KindDuplicateCode
	case errors.Is(err, ErrPageCap):
		return KindPageCap
	case errors.Is(err, ErrItemCap):
		return KindItemCap
	case errors.Is(err, ErrTotalMismatch):
		return KindTotalMismatch
	case errors.Is(err, ErrSchedule):
		return KindSchedule
	}
	return KindOther
}

// openError is a failure of the Runner's Opener; its text and chain are
// the wrapped error's.
type openError struct{ err error }

func (e *openError) Error() string { return e.err.Error() }
func (e *openError) Unwrap() error { return e.err }
