package decision_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/candorkit/candor/approval"
	"github.com/candorkit/candor/examples/internal/decision"
)

type draft struct{ N int }

func (draft) Validate() []error { return nil }

func openStore(t *testing.T, ids ...string) *approval.Store {
	t.Helper()
	ctx := context.Background()
	s, err := approval.Open(ctx, filepath.Join(t.TempDir(), "approvals.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	for _, id := range ids {
		_, err := s.Register(ctx, approval.Ticket{OperationID: id, Draft: draft{N: 1}})
		require.NoError(t, err)
	}
	return s
}

// TestSameVerdictAnotherPerson pins the one policy: a second decision with
// the standing verdict, by another person, is accepted without recording
// anything; the other verdict is refused.
func TestSameVerdictAnotherPerson(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, "op-a", "op-r")
	for _, v := range []approval.Verdict{approval.Approve, approval.Reject} {
		id := "op-a"
		other := approval.Reject
		if v == approval.Reject {
			id, other = "op-r", approval.Approve
		}
		first, err := decision.Record(ctx, s, approval.Decision{OperationID: id, Verdict: v, DecidedBy: "alice", Comment: "first"})
		require.NoError(t, err)
		assert.False(t, first.Repeated)
		assert.Equal(t, "alice", first.Standing.DecidedBy)

		again, err := decision.Record(ctx, s, approval.Decision{OperationID: id, Verdict: v, DecidedBy: "bob", Comment: "second"})
		require.NoError(t, err, "same verdict, another person")
		assert.True(t, again.Repeated)
		assert.Equal(t, "alice", again.Standing.DecidedBy)
		assert.Contains(t, again.String(), "already ")
		assert.Contains(t, again.String(), " by alice; nothing new recorded")

		st, err := s.Read(ctx, id)
		require.NoError(t, err)
		require.NotNil(t, st.Decision)
		assert.Equal(t, "alice", st.Decision.DecidedBy, "the second person is not recorded")
		assert.Equal(t, "first", st.Decision.Comment)

		_, err = decision.Record(ctx, s, approval.Decision{OperationID: id, Verdict: other, DecidedBy: "carol"})
		assert.ErrorIs(t, err, approval.ErrAlreadyDecided, "the other verdict is refused")
	}
}

func TestUnknownOperation(t *testing.T) {
	s := openStore(t)
	_, err := decision.Record(context.Background(), s, approval.Decision{OperationID: "nope", Verdict: approval.Approve, DecidedBy: "alice"})
	assert.ErrorIs(t, err, approval.ErrUnknownOperation)
}

func ExampleOutcome_String() {
	o := decision.Outcome{Standing: approval.Decision{Verdict: approval.Approve, DecidedBy: "alice"}, Repeated: true}
	fmt.Println(o)
	// Output: already approved by alice; nothing new recorded
}

// TestDefaultDeciderWithoutUSER pins that the default decider exists when
// $USER is unset.
func TestDefaultDeciderWithoutUSER(t *testing.T) {
	none := func(string) (string, bool) { return "", false }
	assert.NotEmpty(t, decision.DefaultDecider(none))
	assert.Equal(t, "alice", decision.DefaultDecider(func(k string) (string, bool) { return map[string]string{"USER": " alice "}[k], true }))
}
