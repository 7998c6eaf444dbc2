package a2a

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"strconv"

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
	// Raw is, for a Failed outcome caused by a non-2xx status or an
	// off-contract body, the body exactly as received. The Server returns it
	// verbatim to the caller as a second part of the status message, so drift
	// in a workflow is visible.
	Raw []byte
	// Err is nil for Completed and the typed cause for Failed (see the package
	// documentation for the taxonomy).
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
	// ErrStatus: the workflow answered with a status outside 2xx.
	ErrStatus = errors.New("a2a: the workflow answered with an error status")
	// ErrTooLarge: the reply body exceeded the configured bound.
	ErrTooLarge = errors.New("a2a: the workflow reply exceeds the size bound")
	// ErrInvalidOutcome: a Backend returned an Outcome that is neither a
	// proper Answer nor a proper Fail.
	ErrInvalidOutcome = errors.New("a2a: the backend returned an invalid outcome")
	// ErrNoToken: the request carried no bearer token, so nothing was asked
	// (failure "no_identity").
	ErrNoToken = errors.New("a2a: no bearer token")
)

// ReplyError is the cause of a Failed outcome mapped from a webhook reply. It
// keeps the raw evidence: status, header and body exactly as received. Err is
// one of reply.ErrEmpty, *reply.ContractError, ErrEscalated, ErrStatus or
// ErrTooLarge, reachable with errors.Is / errors.As.
type ReplyError struct {
	Status int
	Header http.Header
	Body   []byte
	Err    error
}

func (e *ReplyError) Error() string {
	return "a2a: webhook reply (HTTP " + strconv.Itoa(e.Status) + "): " + e.Err.Error()
}

func (e *ReplyError) Unwrap() error { return e.Err }

// Text the caller reads when the workflow sent nothing.
const noReplyText = "the workflow returned no reply"

// MapReply maps one webhook reply to an Outcome. It is pure: it reads only its
// arguments, which it does not modify (the outcome holds copies).
//
//   - a body of only white space, whatever the status: Failed, "the workflow
//     returned no reply", errors.Is(err, reply.ErrEmpty);
//   - a status outside 200-299: Failed, with the status in Text and the body
//     verbatim in Raw, errors.Is(err, ErrStatus);
//   - a 2xx body that is not exactly {"answer": string, "escalate": bool}
//     (decided by reply.Decode): Failed, the body verbatim in Raw,
//     errors.As(err, **reply.ContractError);
//   - {"answer": a, "escalate": true}: Failed, Text a, errors.Is(err, ErrEscalated);
//   - {"answer": a, "escalate": false}: Completed, Text a.
//
// The header is kept as evidence in the ReplyError; it never changes the state.
func MapReply(status int, header http.Header, body []byte) Outcome {
	fail := func(text string, raw bool, cause error) Outcome {
		b := bytes.Clone(body)
		o := Outcome{State: Failed, Text: text, Err: &ReplyError{Status: status, Header: header.Clone(), Body: b, Err: cause}}
		if raw {
			o.Raw = b
		}
		return o
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return fail(noReplyText, false, reply.ErrEmpty)
	}
	if status < 200 || status > 299 {
		return fail(fmt.Sprintf("the workflow answered HTTP %d", status), true, ErrStatus)
	}
	r, err := reply.Decode(body)
	if err != nil {
		var ce *reply.ContractError
		if errors.As(err, &ce) {
			return fail("the workflow reply is off-contract: "+ce.Reason, true, ce)
		}
		return fail(noReplyText, false, err)
	}
	if r.Escalate {
		return fail(r.Answer, false, ErrEscalated)
	}
	return Answer(r.Answer)
}
