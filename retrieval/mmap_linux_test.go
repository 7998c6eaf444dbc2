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
