package retrieval

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A writable half-precision handle keeps its results equal to a float32
// handle's through Upsert, Delete and compaction: appended rows are scanned
// in half precision and scored again from the vector file.
func TestHalfPrecisionWrites(t *testing.T) {
	r := rand.New(rand.NewPCG(101, 102))
	corpus, vecs := randomCorpus(r, 60, 24)
	h, path, m := openBuilt(t, corpus, vecs, WithHalfPrecision())
	more, moreVecs := randomCorpus(r, 70, 24)
	more = more[60:]                                      // new sources S060…S069
	moreVecs = moreVecs[len(moreVecs)-len(Chunks(more)):] // and their vectors
	require.NoError(t, h.Upsert(t.Context(), more, moreVecs))
	var gone []string
	for _, s := range corpus[:25] {
		gone = append(gone, s.ID)
	}
	require.NoError(t, h.Delete(t.Context(), gone...)) // enough to compact
	assert.Zero(t, h.dead)
	p := CorpusPolicy{AsOf: asOf, Scope: "acme"}
	qs := make([][]float32, 15)
	for i := range qs {
		qs[i] = randVec(r, 24)
	}
	got, err := h.SearchBatch(t.Context(), qs, p, 8)
	require.NoError(t, err)
	require.NoError(t, h.Close())
	m.CorpusDigest = ""
	f, err := Open(t.Context(), path, m, WithReadOnly())
	require.NoError(t, err)
	defer f.Close()
	want, err := f.SearchBatch(t.Context(), qs, p, 8)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	live := append(corpus[25:len(corpus):len(corpus)], more...)
	liveVecs := append(vecsOf(corpus, vecs, corpus[25:]), moreVecs...)
	for i, q := range qs {
		checkExact(t, live, liveVecs, p, q, got[i], 8)
	}
}
