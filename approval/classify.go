package approval

import (
	"context"
	"errors"
)

// Kind is the class of a failure, for a caller that branches on it or
// labels telemetry with it. The values are stable snake_case strings.
type Kind string

// The kinds Classify returns; doc.go says what each means for the caller.
const (
	KindInvalidInput         Kind = "invalid_input"
	KindRebound              Kind = "rebound"
	KindUnknownOperation     Kind = "unknown_operation"
	KindAlreadyDecided       Kind = "already_decided"
	KindNotApproved          Kind = "not_approved"
	KindEffectFailed         Kind = "effect_failed"
	KindUnknownReceipt       Kind = "unknown_receipt"
	KindGraphVersionMismatch Kind = "graph_version_mismatch"
	KindNoStore              Kind = "no_store"
	KindCorrupt              Kind = "corrupt"
	KindInconsistent         Kind = "inconsistent"
	KindSchema               Kind = "schema"
	KindSettings             Kind = "settings"
	KindReadOnly             Kind = "read_only"
	KindClosed               Kind = "closed"
	KindBusy                 Kind = "busy"
	KindUnavailable          Kind = "unavailable"
	KindCanceled             Kind = "canceled"
	KindStorage              Kind = "storage"
)

// Classify returns the Kind of an error the store returned, "" for nil.
// An error it does not recognise (an I/O or SQLite failure) is
// KindStorage. An effect's failure is KindEffectFailed whatever the effect
// returned, its own cancellation included.
func Classify(err error) Kind {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrEffectFailed):
		return KindEffectFailed
	case errors.Is(err, ErrInvalidOperationID), errors.Is(err, ErrInvalidDraft), errors.Is(err, ErrInvalidDecision),
		errors.Is(err, ErrInvalidFilter), errors.Is(err, ErrInvalidReceipt):
		return KindInvalidInput
	case errors.Is(err, ErrOperationRebound):
		return KindRebound
	case errors.Is(err, ErrUnknownOperation):
		return KindUnknownOperation
	case errors.Is(err, ErrAlreadyDecided):
		return KindAlreadyDecided
	case errors.Is(err, ErrNotApproved):
		return KindNotApproved
	case errors.Is(err, ErrUnknownReceipt):
		return KindUnknownReceipt
	case errors.Is(err, ErrGraphVersionMismatch):
		return KindGraphVersionMismatch
	case errors.Is(err, ErrNoStore):
		return KindNoStore
	case errors.Is(err, ErrCorrupt):
		return KindCorrupt
	case errors.Is(err, ErrInconsistent):
		return KindInconsistent
	case errors.Is(err, ErrSchemaTooNew), errors.Is(err, ErrSchemaAltered), errors.Is(err, ErrSchemaTooOld):
		return KindSchema
	case errors.Is(err, ErrSettings):
		return KindSettings
	case errors.Is(err, ErrReadOnly):
		return KindReadOnly
	case errors.Is(err, ErrClosed):
		return KindClosed
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return KindCanceled
	case isBusy(err):
		return KindBusy
	case errors.Is(err, ErrUnavailable):
		return KindUnavailable
	}
	return KindStorage
}
