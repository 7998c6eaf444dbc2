// Package decision is the one policy the example programs (reorder,
// documented, builder) apply when a person decides an approval ticket that
// may already be decided; docs/examples.md states it for users.
//
// The first decision stored is the decision. A second decision with the same
// verdict, by the same person or another, is not an error: nothing new is
// stored (the standing decider and comment stay; the second person's name
// and comment are not recorded), the program says who decided, and for an
// approval it runs the idempotent apply again, which finishes an apply that
// was interrupted. A decision with the other verdict is refused and changes
// nothing: the program exits 1.
//
// # Failures
//
// Record returns Decide's errors unchanged, among them an
// *approval.AlreadyDecidedError (errors.Is(err, approval.ErrAlreadyDecided))
// when the standing decision has the other verdict.
package decision

import (
	"context"
	"errors"
	"fmt"
	"os/user"
	"strings"

	"github.com/candorkit/candor/approval"
)

// Decider is the part of *approval.Store that Record uses.
type Decider interface {
	Decide(ctx context.Context, d approval.Decision) (approval.State, error)
}

// Outcome is a decision Record accepted.
type Outcome struct {
	// Standing is the decision stored: d itself when Repeated is false.
	Standing approval.Decision
	// Repeated is true when a decision with the same verdict was already
	// stored, so that nothing new was recorded.
	Repeated bool
	// State is the operation's state after Decide; its zero value when
	// Repeated.
	State approval.State
}

// Record stores d under the policy of the package documentation.
func Record(ctx context.Context, store Decider, d approval.Decision) (Outcome, error) {
	st, err := store.Decide(ctx, d)
	var ad *approval.AlreadyDecidedError
	if errors.As(err, &ad) && ad.Standing.Verdict == d.Verdict {
		return Outcome{Standing: ad.Standing, Repeated: true}, nil
	}
	if err != nil {
		return Outcome{}, err
	}
	standing := d
	if st.Decision != nil {
		standing = *st.Decision
	}
	return Outcome{Standing: standing, State: st}, nil
}

// String says what happened, for instance "approved by alice" or "already
// approved by alice; nothing new recorded".
func (o Outcome) String() string {
	v := pastTense(o.Standing.Verdict)
	if o.Repeated {
		return fmt.Sprintf("already %s by %s; nothing new recorded", v, o.Standing.DecidedBy)
	}
	return fmt.Sprintf("%s by %s", v, o.Standing.DecidedBy)
}

func pastTense(v approval.Verdict) string {
	switch v {
	case approval.Approve:
		return "approved"
	case approval.Reject:
		return "rejected"
	}
	return string(v)
}

// DefaultDecider names the person deciding when -by is not given: $USER
// (read with lookup), else the login name of the process's user, else
// "operator". It is never empty.
func DefaultDecider(lookup func(string) (string, bool)) string {
	if v, _ := lookup("USER"); strings.TrimSpace(v) != "" {
		return strings.TrimSpace(v)
	}
	if u, err := user.Current(); err == nil && strings.TrimSpace(u.Username) != "" {
		return strings.TrimSpace(u.Username)
	}
	return "operator"
}
