package retrieval

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestErrorsCarryTheirReason: each invalid-input error says which input and
// why, so a caller can report it without parsing the message.
func TestErrorsCarryTheirReason(t *testing.T) {
	corpus, vecs := controlled()
	ix, _, _ := openBuilt(t, corpus, vecs)

	_, err := ix.SearchBatch(t.Context(), [][]float32{{1, 0}, {0, 0}}, CorpusPolicy{AsOf: asOf, Scope: "acme"}, 3)
	var qe *QueryError
	require.ErrorAs(t, err, &qe)
	assert.ErrorIs(t, err, ErrInvalidQuery)
	assert.Equal(t, 1, qe.Query, "the second query of the batch is the zero vector")
	assert.NotEmpty(t, qe.Reason)

	var pe *CorpusPolicyError
	require.ErrorAs(t, CorpusPolicy{Scope: "acme"}.Validate(), &pe)
	assert.Contains(t, pe.Reason, "AsOf")

	long := append([]Source(nil), corpus...)
	long[0].ID = strings.Repeat("x", MaxSourceIDBytes+1)
	err = ix.Rebuild(t.Context(), long, testManifest(2, long), vecs)
	var ce *CorpusError
	require.ErrorAs(t, err, &ce)
	assert.ErrorIs(t, err, ErrInvalidCorpus)
	assert.NotEmpty(t, ce.Reason)

	atLimit := append([]Source(nil), corpus...)
	atLimit[0].ID = strings.Repeat("x", MaxSourceIDBytes)
	assert.NoError(t, ix.Rebuild(t.Context(), atLimit, testManifest(2, atLimit), vecs), "an ID of exactly MaxSourceIDBytes is valid")
}

// TestRejectionDetail: a rejection names its rule and explains it.
func TestRejectionDetail(t *testing.T) {
	ans := AnswerGate{}.Validate(Proposal{Usable: true}, gateContext())
	require.False(t, ans.Accepted)
	var r Rejection
	require.NotEmpty(t, ans.Rejections)
	r = ans.Rejections[0]
	assert.Equal(t, RuleEvidence, r.Rule)
	assert.NotEmpty(t, r.Detail)
	assert.Contains(t, r.String(), string(RuleEvidence))
}
