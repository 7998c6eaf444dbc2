//go:build linux

package retrieval

import (
	"math/rand/v2"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A vector file cut under a handle that maps it (by something other than
// the index, which never shrinks a mapped file) makes the search fail with
// ErrCorrupt instead of crashing the process.
func TestSearchOnCutVectorFile(t *testing.T) {
	const seed = 5
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, seed))
	corpus, vecs := randomCorpus(r, 300, 64)
	ix, path, m := openBuilt(t, corpus, vecs)
	require.NoError(t, ix.Close())
	ro, err := Open(t.Context(), path, m, WithReadOnly())
	require.NoError(t, err)
	defer ro.Close()
	require.NotNil(t, ro.mat.mapped, "matrix mapped")
	p := CorpusPolicy{AsOf: asOf, Scope: "acme"}
	q := randVec(r, 64)
	_, err = ro.Search(t.Context(), q, p, 10)
	require.NoError(t, err)

	require.NoError(t, os.Truncate(vectorFile(t, path), vectorHeaderBytes))
	for _, workers := range []int{1, 2} {
		ro.workers = workers
		hits, err := ro.Search(t.Context(), q, p, 10)
		assert.ErrorIs(t, err, ErrCorrupt, "workers %d", workers)
		assert.Nil(t, hits)
	}
}

// In half precision the matrix is the halves file mapped; a half row
// changed under it (by something other than the index) is found when its
// chunk is a candidate: the float32 row read again from the vector file no
// longer rounds to it, and the search fails with ErrCorrupt rather than
// rank by a row that is not the index's. A halves file cut under the
// mapping fails the search too.
func TestHalfMappingChecked(t *testing.T) {
	corpus, vecs := controlled()
	ix, path, m := openBuilt(t, corpus, vecs)
	require.NoError(t, ix.Close())
	h, err := Open(t.Context(), path, m, WithReadOnly(), WithHalfPrecision())
	require.NoError(t, err)
	defer h.Close()
	require.NotNil(t, h.mat.mapped, "half matrix mapped")
	p := CorpusPolicy{AsOf: asOf, Scope: "acme"}
	hits, err := h.Search(t.Context(), []float32{1, 0}, p, 1)
	require.NoError(t, err)
	require.Equal(t, "ACME-EXPORT#0", hits[0].ChunkID) // row 1

	name := halvesPath(path, 1)
	f, err := os.OpenFile(name, os.O_RDWR, 0)
	require.NoError(t, err)
	defer f.Close()
	row := make([]uint16, 2)
	toHalfGo(row, []float32{0.6, 0.8})
	_, err = f.WriteAt(halfBytes(row, nil), fileHeaderBytes+1*2*2)
	require.NoError(t, err)
	_, err = h.Search(t.Context(), []float32{1, 0}, p, 1)
	var ce *CorruptError
	require.ErrorAs(t, err, &ce)
	assert.Contains(t, ce.What, "vector row 1 differs from its half-precision copy")

	require.NoError(t, f.Truncate(fileHeaderBytes))
	hits, err = h.Search(t.Context(), []float32{1, 0}, p, 1)
	assert.ErrorIs(t, err, ErrCorrupt)
	assert.Nil(t, hits)
}
