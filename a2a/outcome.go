package a2a

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/candorkit/candor/reply"
)

// State is the final state of a task as the facade reports it. A backend
// answer only ever becomes one of these two states.
type State string

const (
	// Completed means the backend answered and did not ask for a person.
	Completed State = "completed"
	// Failed means anything else: an escalation, no reply, an error status, an
	// off-contract reply, an unreachable or slow backend.
	Failed State = "failed"
)

// Outcome is what a Backend returns for one Question: the task's final state
// and what the caller is told. Build one with Answer or Fail; the Server
// reports any other shape (unknown state, blank answer, a Completed outcome
// carrying an error, a Failed one without) as failed with ErrInvalidOutcome.
type Outcome struct {
	// State is Completed or Failed.
	State State
	// Text is the answer when Completed; when Failed, the one-line reason the
	// caller reads in the task's status message (for an escalation, the
	// workflow's own answer).
	Text string
	// Raw is evidence the caller reads as a second part of the status
	// message of a Failed outcome: for an off-contract 2xx reply, the body
	// as received (with the webhook's URL, path and query redacted), so
	// drift in a workflow is visible; for a non-2xx status, only a short
	// redacted excerpt of the body. Nil otherwise.
	Raw []byte
	// Err is nil for Completed and the typed cause for Failed (see Classify
	// and the package documentation for the taxonomy).
	Err error
}

// Answer is a Completed outcome carrying text.
func Answer(text string) Outcome {
	return Outcome{State: Completed, Text: text}
}

// Fail is a Failed outcome with the reason the caller reads and its cause.
// A nil err is replaced by ErrInvalidOutcome so that a failure always has a
// cause.
func Fail(text string, err error) Outcome {
	if err == nil {
		err = ErrInvalidOutcome
	}
	return Outcome{State: Failed, Text: text, Err: err}
}

// Sentinel causes found with errors.Is on Outcome.Err.
var (
	// ErrEscalated: the workflow answered with "escalate": true.
	ErrEscalated = errors.New("a2a: the workflow escalated to a person")
	// ErrInvalidOutcome: a Backend returned an Outcome that is neither a
	// proper Answer nor a proper Fail.
	ErrInvalidOutcome = errors.New("a2a: the backend returned an invalid outcome")
	// ErrNoToken: the request carried no bearer token, so nothing was asked
	// (failure "no_identity").
	ErrNoToken = errors.New("a2a: no bearer token")
)

// Text the caller reads when the workflow sent nothing.
const noReplyText = "the workflow returned no reply"

// MapReply maps the result of one reply.Client.Call to an Outcome. It is
// pure: it reads only its arguments.
//
//   - nil error, "escalate": false: Completed with the answer;
//   - nil error, "escalate": true: Failed, Text the workflow's answer,
//     errors.Is(err, ErrEscalated);
//   - reply.ErrEmpty: Failed, "the workflow returned no reply";
//   - *reply.StatusError: Failed, "the workflow answered HTTP <code>", Raw a
//     short redacted excerpt of the body (the body itself can name the
//     webhook's secret path or carry a stack trace);
//   - *reply.ContractError: Failed, "the workflow reply is off-contract:
//     <reason>", Raw the body with the webhook's URL redacted;
//   - any other error: Failed with a fixed sentence per kind (too large,
//     timeout, unreachable...); the error text is never shown to the caller.
//
// Err is always the error given (wrapped with ErrEscalated or ErrNoToken
// where they apply), so Classify and errors.As reach the reply's type.
func MapReply(r reply.Reply, err error) Outcome {
	var (
		se *reply.StatusError
		ce *reply.ContractError
	)
	switch kind := reply.Classify(err); {
	case err == nil && r.Escalate:
		return Fail(r.Answer, ErrEscalated)
	case err == nil && strings.TrimSpace(r.Answer) == "":
		return Fail("the backend returned an invalid answer", fmt.Errorf("%w: a blank answer", ErrInvalidOutcome))
	case err == nil:
		return Answer(r.Answer)
	case errors.As(err, &se):
		o := Fail(fmt.Sprintf("the workflow answered HTTP %d %s", se.StatusCode, http.StatusText(se.StatusCode)), err)
		o.Text = strings.TrimSpace(o.Text)
		if ex := se.Excerpt(); ex != "" {
			o.Raw = []byte(ex)
		}
		return o
	case errors.As(err, &ce):
		o := Fail("the workflow reply is off-contract: "+ce.Reason, err)
		o.Raw = ce.Redacted()
		return o
	case kind == reply.KindNoReply:
		return Fail(noReplyText, err)
	case kind == reply.KindTooLarge:
		return Fail("the workflow reply exceeds the size cap", err)
	case kind == reply.KindTimeout:
		return Fail("the workflow did not answer in time", err)
	case kind == reply.KindCanceled:
		return Fail("the question was withdrawn before the workflow answered", err)
	case kind == reply.KindUnreachable:
		return Fail("the workflow could not be reached", err)
	case kind == reply.KindNoIdentity:
		return Fail(noIdentityText, fmt.Errorf("%w: %w", ErrNoToken, err))
	}
	return Fail("the workflow could not be called", err)
}

// FailureKey is the status-message metadata key naming why a task failed;
// its value is Classify's Kind.
const FailureKey = "failure"

// Kind names why a task failed. The values are stable snake_case strings:
// the status message metadata "failure" carries them, and they are
// telemetry labels.
type Kind string

// The kinds Classify returns.
const (
	KindNone           Kind = ""                // no error: the task completed
	KindEscalated      Kind = "escalated"       // ErrEscalated
	KindNoIdentity     Kind = "no_identity"     // ErrNoToken
	KindNoReply        Kind = "no_reply"        // reply.ErrEmpty
	KindHTTPStatus     Kind = "http_status"     // *reply.StatusError
	KindOffContract    Kind = "off_contract"    // *reply.ContractError
	KindTooLarge       Kind = "too_large"       // reply.ErrTooLarge
	KindTimeout        Kind = "timeout"         // no answer in time
	KindCanceled       Kind = "canceled"        // the question was withdrawn
	KindUnreachable    Kind = "unreachable"     // *reply.TransportError
	KindInvalidOutcome Kind = "invalid_outcome" // ErrInvalidOutcome
	KindBackend        Kind = "backend"         // any other cause
)

// Classify returns the kind of a failure cause (Outcome.Err).
func Classify(err error) Kind {
	switch {
	case err == nil:
		return KindNone
	case errors.Is(err, ErrEscalated):
		return KindEscalated
	case errors.Is(err, ErrNoToken):
		return KindNoIdentity
	case errors.Is(err, ErrInvalidOutcome):
		return KindInvalidOutcome
	}
	switch reply.Classify(err) {
	case reply.KindNoIdentity:
		return KindNoIdentity
	case reply.KindNoReply:
		return KindNoReply
	case reply.KindHTTPStatus:
		return KindHTTPStatus
	case reply.KindOffContract:
		return KindOffContract
	case reply.KindTooLarge:
		return KindTooLarge
	case reply.KindTimeout:
		return KindTimeout
	case reply.KindCanceled:
		return KindCanceled
	case reply.KindUnreachable:
		return KindUnreachable
	}
	return KindBackend
}
