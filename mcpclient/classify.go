package mcpclient

import (
	"context"
	"errors"
	"net/http"
)

// Kind names the class of a failure, for callers that decide by class
// rather than by type. The values are stable snake_case strings, fit for
// telemetry labels; doc.go says what each means.
type Kind string

// The kinds Classify returns.
const (
	KindNone            Kind = ""                 // a nil error
	KindOutcomeUnknown  Kind = "outcome_unknown"  // the server took the call; its outcome was never read
	KindClosed          Kind = "closed"           // ErrClosed
	KindNoToken         Kind = "no_token"         // ErrNoToken: nothing was sent
	KindBudgetExceeded  Kind = "budget_exceeded"  // ErrBudgetExceeded
	KindTooLarge        Kind = "too_large"        // ErrResponseTooLarge
	KindUnauthorized    Kind = "unauthorized"     // HTTP 401 (ErrUnauthorized), also an *AuthorizationError of a 401
	KindForbidden       Kind = "forbidden"        // HTTP 403, also an *AuthorizationError of a 403
	KindSessionExpired  Kind = "session_expired"  // ErrSessionExpired
	KindStatus          Kind = "status"           // another non-2xx *StatusError
	KindToolError       Kind = "tool_error"       // *ToolError
	KindMalformedResult Kind = "malformed_result" // *MalformedResultError, ErrIDMismatch
	KindProtocol        Kind = "protocol"         // *ProtocolError
	KindDecode          Kind = "decode"           // *DecodeError
	KindIncomplete      Kind = "incomplete"       // a scan stopped by a rule across pages
	KindPoolFull        Kind = "pool_full"        // ErrPoolFull: nothing was sent
	KindInvalidArgument Kind = "invalid_argument" // refused before sending (also *SchemaError, ErrUnknownTool)
	KindCanceled        Kind = "canceled"         // context.Canceled
	KindTimeout         Kind = "timeout"          // context.DeadlineExceeded or a transport timeout
	KindTransport       Kind = "transport"        // anything else: the network, the server's HTTP
)

// Classify returns the Kind of an error returned by this package. The
// first matching kind wins, in the order of the constants above: an
// unknown outcome is reported as such even when its cause was, say, a
// spent budget, because it is what the caller must act on (the tool may
// have run).
func Classify(err error) Kind {
	if err == nil {
		return KindNone
	}
	var (
		se *StatusError
		ue *usageError
		to interface{ Timeout() bool }
	)
	switch {
	case errors.Is(err, ErrOutcomeUnknown):
		return KindOutcomeUnknown
	case errors.Is(err, ErrClosed):
		return KindClosed
	case errors.Is(err, ErrNoToken):
		return KindNoToken
	case errors.Is(err, ErrBudgetExceeded):
		return KindBudgetExceeded
	case errors.Is(err, ErrResponseTooLarge):
		return KindTooLarge
	case errors.Is(err, ErrUnauthorized):
		return KindUnauthorized
	case errors.As(err, &se) && se.StatusCode == http.StatusForbidden:
		return KindForbidden
	case isForbidden(err):
		return KindForbidden
	case errors.Is(err, ErrSessionExpired):
		return KindSessionExpired
	case se != nil:
		return KindStatus
	case isType[*ToolError](err):
		return KindToolError
	case isType[*MalformedResultError](err), errors.Is(err, ErrIDMismatch):
		return KindMalformedResult
	case isType[*ProtocolError](err):
		return KindProtocol
	case isType[*DecodeError](err):
		return KindDecode
	case isIncomplete(err):
		return KindIncomplete
	case errors.Is(err, ErrPoolFull):
		return KindPoolFull
	case errors.As(err, &ue), isType[*SchemaError](err):
		return KindInvalidArgument
	case errors.Is(err, context.Canceled):
		return KindCanceled
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &to) && to.Timeout():
		return KindTimeout
	}
	return KindTransport
}

// isForbidden reports a 403 whose Authorizer could not help.
func isForbidden(err error) bool {
	ae, ok := errors.AsType[*AuthorizationError](err)
	return ok && ae.StatusCode == http.StatusForbidden
}

func isType[E error](err error) bool {
	_, ok := errors.AsType[E](err)
	return ok
}
