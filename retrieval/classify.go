package retrieval

import (
	"context"
	"errors"
	"os"
)

// Kind is a stable failure kind of the package, for callers that branch on
// a failure and as the error.type of its spans and metrics. The values are
// listed in the package documentation.
type Kind string

// The failure kinds Classify returns.
const (
	KindInvalidQuery     Kind = "invalid_query"
	KindInvalidPolicy    Kind = "invalid_policy"
	KindInvalidCorpus    Kind = "invalid_corpus"
	KindManifestMismatch Kind = "manifest_mismatch"
	KindNoAdmissible     Kind = "no_admissible"
	KindNotBuilt         Kind = "not_built"
	KindClosed           Kind = "closed"
	KindCorrupt          Kind = "corrupt"
	KindLocked           Kind = "locked"
	KindReadOnly         Kind = "read_only"
	KindNotFound         Kind = "not_found"
	KindRejected         Kind = "rejected"
	KindCanceled         Kind = "canceled"
	KindDeadlineExceeded Kind = "deadline_exceeded"
	KindOther            Kind = "other"
)

// Classify returns the kind of err, an error the package returned; "" for
// nil. An error of none of the documented kinds is KindOther.
func Classify(err error) Kind {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrClosed):
		return KindClosed
	case errors.Is(err, ErrCorrupt):
		return KindCorrupt
	case errors.Is(err, ErrLocked):
		return KindLocked
	case errors.Is(err, ErrReadOnly):
		return KindReadOnly
	case errors.Is(err, ErrNotBuilt):
		return KindNotBuilt
	case errors.Is(err, ErrManifestMismatch):
		return KindManifestMismatch
	case errors.Is(err, ErrInvalidPolicy):
		return KindInvalidPolicy
	case errors.Is(err, ErrInvalidQuery):
		return KindInvalidQuery
	case errors.Is(err, ErrInvalidCorpus):
		return KindInvalidCorpus
	case errors.Is(err, ErrNoAdmissible):
		return KindNoAdmissible
	case errors.Is(err, ErrRejected):
		return KindRejected
	case errors.Is(err, context.Canceled):
		return KindCanceled
	case errors.Is(err, context.DeadlineExceeded):
		return KindDeadlineExceeded
	case errors.Is(err, os.ErrNotExist):
		return KindNotFound
	}
	return KindOther
}
