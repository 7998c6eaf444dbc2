package mandate

import (
	"errors"
	"fmt"
	"strings"

	"github.com/candorkit/candor/tokenexchange"
)

// Sentinel errors. Match them with errors.Is.
var (
	// ErrNoMandate reports that the agent holds no usable mandate for the
	// user. errors.Is(err, ErrNoMandate) is also true for ErrRevoked,
	// ErrUnreadable and ErrRejected: in every case the agent has no
	// authority and must stop.
	ErrNoMandate = errors.New("mandate: no mandate")
	// ErrRevoked reports a mandate the user revoked.
	ErrRevoked = errors.New("mandate: revoked")
	// ErrUnreadable reports a sealed mandate the store's key cannot open: a
	// wrong key, or a row that was tampered with or moved.
	ErrUnreadable = errors.New("mandate: cannot be opened with this key")
	// ErrRejected reports that the provider refused the stored refresh
	// token (invalid_grant): expired, revoked at the provider, or already
	// rotated by someone else.
	ErrRejected = errors.New("mandate: rejected by the provider")
	// ErrUnknownAgent reports an agent the Store has no Config for.
	ErrUnknownAgent = errors.New("mandate: unknown agent")
	// ErrProviderNotRevoked reports a Revoke that revoked the mandate in the
	// store (Token will never redeem it again) but could not revoke the
	// refresh token at the provider's RevocationURL: the provider refused
	// or could not be reached, or the key cannot open the sealed token. The
	// token may stay valid there until it expires, held by no one.
	ErrProviderNotRevoked = errors.New("mandate: revoked in the store but not at the provider")
	// ErrSchema reports a database whose record of the store's schema
	// migrations is not this program's: it was migrated by a newer
	// version, or a recorded migration was altered. Open and OpenDB
	// refuse it and write nothing.
	ErrSchema = errors.New("mandate: the database schema is not this program's")
	// ErrLeaseLost reports a redemption abandoned because its lease on the
	// mandate could not be renewed (the database was unreachable for most
	// of the lease, or another process took the lease over): it stopped
	// before another holder could start. The mandate is intact unless the
	// provider had already answered; retrying is safe.
	ErrLeaseLost = errors.New("mandate: redemption lease lost")
	// ErrStore reports a failure of the database: unreachable, or it
	// refused the statement. Nothing the call was about is reported as
	// stored.
	ErrStore = errors.New("mandate: store failure")
)

// Error is what the Store returns about one (user, agent) mandate. Reason
// is one of the sentinels above or tokenexchange.ErrRotationNotPersisted,
// or nil; Err is the underlying cause (a database error, a
// *tokenexchange.StatusError from the provider) or nil. Both are reachable
// with errors.Is and errors.As.
type Error struct {
	User   string
	Agent  string
	Reason error
	Err    error
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "mandate of user %q for agent %q", e.User, e.Agent)
	if e.Reason != nil && !errors.Is(e.Err, e.Reason) {
		b.WriteString(": ")
		b.WriteString(strings.TrimPrefix(e.Reason.Error(), "mandate: "))
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns Reason and Err.
func (e *Error) Unwrap() []error {
	var out []error
	if e.Reason != nil {
		out = append(out, e.Reason)
	}
	if e.Err != nil {
		out = append(out, e.Err)
	}
	return out
}

// Is makes every "no authority" kind match ErrNoMandate.
func (e *Error) Is(target error) bool {
	if target != ErrNoMandate {
		return false
	}
	switch e.Reason {
	case ErrRevoked, ErrUnreadable, ErrRejected:
		return true
	}
	return false
}

func mandateErr(user, agent string, reason, cause error) *Error {
	return &Error{User: user, Agent: agent, Reason: reason, Err: cause}
}

// Kind is the class of a failure, as Classify reports it: a stable
// snake_case string, usable as a telemetry label.
type Kind string

// The kinds Classify returns. A failure of the provider that is not about
// the mandate itself (the exchange after a successful refresh, a transport
// error) is reported with tokenexchange's kind, converted.
const (
	KindNone                 Kind = ""
	KindConfig               Kind = "config"
	KindNoMandate            Kind = "no_mandate"
	KindRevoked              Kind = "mandate_revoked"
	KindUnreadable           Kind = "mandate_unreadable"
	KindRejected             Kind = "mandate_rejected"
	KindUnknownAgent         Kind = "unknown_agent"
	KindRotationNotPersisted Kind = "rotation_not_persisted"
	KindProviderNotRevoked   Kind = "provider_not_revoked"
	KindSchema               Kind = "schema"
	KindLeaseLost            Kind = "lease_lost"
	KindStore                Kind = "store"
)

// Classify returns the Kind of an error from this package: KindNone for
// nil; for a provider failure that is not one of this package's kinds,
// Kind(tokenexchange.Classify(err)) (for example "invalid_request",
// "transport", "invalid_response"); KindStore for a database failure.
func Classify(err error) Kind {
	if err == nil {
		return KindNone
	}
	var me *Error
	hasMandate := errors.As(err, &me)
	switch {
	case errors.Is(err, ErrProviderNotRevoked):
		return KindProviderNotRevoked
	case errors.Is(err, ErrRevoked):
		return KindRevoked
	case errors.Is(err, ErrUnreadable):
		return KindUnreadable
	case errors.Is(err, ErrRejected):
		return KindRejected
	case errors.Is(err, ErrUnknownAgent):
		return KindUnknownAgent
	case errors.Is(err, ErrNoMandate):
		return KindNoMandate
	case errors.Is(err, tokenexchange.ErrRotationNotPersisted):
		return KindRotationNotPersisted
	case errors.Is(err, ErrLeaseLost):
		return KindLeaseLost
	case errors.Is(err, ErrStore):
		return KindStore
	case errors.Is(err, tokenexchange.ErrConfig):
		return KindConfig
	case errors.Is(err, ErrSchema):
		return KindSchema
	}
	if k := tokenexchange.Classify(err); k != tokenexchange.KindUnknown {
		return Kind(k)
	}
	if hasMandate {
		return KindStore
	}
	return Kind(tokenexchange.KindUnknown)
}
