package tokenexchange

import (
	"context"
	"errors"
	"net/http"
)

// Kind is the class of a failure, as Classify reports it. Its values are
// stable snake_case strings, usable as telemetry labels.
type Kind string

// The kinds Classify returns. doc.go says what each means for the caller.
const (
	KindNone                 Kind = ""
	KindConfig               Kind = "config"
	KindNoSubjectToken       Kind = "no_subject_token"
	KindInvalidRequest       Kind = "invalid_request"
	KindInvalidGrant         Kind = "invalid_grant"
	KindAccessDenied         Kind = "access_denied"
	KindInvalidTarget        Kind = "invalid_target"
	KindInvalidScope         Kind = "invalid_scope"
	KindInvalidClient        Kind = "invalid_client"
	KindUnauthorizedClient   Kind = "unauthorized_client"
	KindUnauthorized         Kind = "unauthorized"
	KindUnavailable          Kind = "unavailable"
	KindOAuthError           Kind = "oauth_error"
	KindHTTPStatus           Kind = "http_status"
	KindInvalidResponse      Kind = "invalid_response"
	KindRotationNotPersisted Kind = "rotation_not_persisted"
	KindCanceled             Kind = "canceled"
	KindTimeout              Kind = "timeout"
	KindTransport            Kind = "transport"
	KindUnknown              Kind = "unknown"
)

// Classify returns the Kind of an error from this package (or one wrapping
// it): KindNone for nil, KindUnknown for an error this package did not
// produce. An OAuth error is classified on its error code as received,
// never on redacted text.
func Classify(err error) Kind {
	if err == nil {
		return KindNone
	}
	if errors.Is(err, ErrRotationNotPersisted) {
		return KindRotationNotPersisted
	}
	var se *StatusError
	if errors.As(err, &se) {
		return se.kind()
	}
	var te *transportError
	switch {
	case errors.Is(err, ErrInvalidResponse):
		return KindInvalidResponse
	case errors.Is(err, ErrConfig):
		return KindConfig
	case errors.Is(err, ErrNoSubjectToken):
		return KindNoSubjectToken
	case errors.Is(err, context.Canceled):
		return KindCanceled
	case errors.Is(err, context.DeadlineExceeded):
		return KindTimeout
	case errors.As(err, &te):
		if te.Timeout() {
			return KindTimeout
		}
		return KindTransport
	}
	return KindUnknown
}

func (e *StatusError) kind() Kind {
	code := e.rawCode
	if code == "" {
		code = e.ErrorCode // a StatusError built by hand (a test double)
	}
	switch code {
	case "invalid_request", "invalid_token":
		return KindInvalidRequest
	case "invalid_grant":
		return KindInvalidGrant
	case "access_denied":
		return KindAccessDenied
	case "invalid_target":
		return KindInvalidTarget
	case "invalid_scope":
		return KindInvalidScope
	case "invalid_client":
		return KindInvalidClient
	case "unauthorized_client":
		return KindUnauthorizedClient
	case "server_error", "temporarily_unavailable":
		return KindUnavailable
	case "":
	default:
		return KindOAuthError
	}
	switch {
	case e.StatusCode == http.StatusUnauthorized || e.StatusCode == http.StatusForbidden:
		return KindUnauthorized
	case e.StatusCode == http.StatusTooManyRequests || e.StatusCode >= 500:
		return KindUnavailable
	}
	return KindHTTPStatus
}
