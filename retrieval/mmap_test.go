package retrieval

import (
	"errors"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A float32 matrix is the vector file mapped, through every write that
// changes it (an Upsert that grows it, a compaction, a Rebuild), and the
// results stay exact; Close releases it.
func TestMappedMatrixFollowsWrites(t *testing.T) {
	const seed = 91
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, seed))
	corpus, vecs := randomCorpus(r, 60, 32)
	ix, _, m := openBuilt(t, corpus, vecs)
	mapped := func(what string) {
		t.Helper()
		ix.mu.RLock()
		defer ix.mu.RUnlock()
		assert.Equal(t, mapsVectors(), ix.mat.mapped != nil, "%s: matrix mapped", what)
		assert.Len(t, ix.mat.f32, ix.rows*32, "%s: matrix rows", what)
	}
	p := CorpusPolicy{AsOf: asOf, Scope: "acme"}
	check := func(what string, corpus []Source, vecs [][]float32) {
		t.Helper()
		mapped(what)
		for range 5 {
			q := randVec(r, 32)
			hits, err := ix.Search(t.Context(), q, p, 10)
			require.NoError(t, err, what)
			checkExact(t, corpus, vecs, p, q, hits, 10)
		}
	}
	check("after Rebuild", corpus, vecs)

	more, moreVecs := randomCorpus(r, 80, 32)
	more, moreVecs = more[60:], vecsOf(more, moreVecs, more[60:])
	for i := range more {
		more[i].ID = "N" + more[i].ID
	}
	require.NoError(t, ix.Upsert(t.Context(), more, moreVecs))
	corpus, vecs = append(corpus, more...), append(vecs, moreVecs...)
	check("after Upsert", corpus, vecs)

	gen := ix.gen
	var ids []string
	for _, s := range corpus[:40] {
		ids = append(ids, s.ID)
	}
	require.NoError(t, ix.Delete(t.Context(), ids...))
	assert.Greater(t, ix.gen, gen, "the Delete compacted into a new generation")
	vecs, corpus = vecsOf(corpus, vecs, corpus[40:]), corpus[40:]
	check("after compaction", corpus, vecs)

	corpus, vecs = randomCorpus(r, 30, 32)
	m.CorpusDigest = CorpusDigest(corpus)
	require.NoError(t, ix.Rebuild(t.Context(), corpus, m, vecs))
	check("after a second Rebuild", corpus, vecs)

	require.NoError(t, ix.Close())
	assert.Nil(t, ix.mat)
	_, err := ix.Search(t.Context(), randVec(r, 32), p, 10)
	assert.ErrorIs(t, err, ErrClosed)
}

// Searches racing Close either finish with their hits or fail with
// ErrClosed: Close unmaps the matrix only once no search reads it.
func TestSearchRacingClose(t *testing.T) {
	const seed = 17
	t.Logf("seed %d", seed)
	for round := range 20 {
		r := rand.New(rand.NewPCG(seed, uint64(round)))
		corpus, vecs := randomCorpus(r, 200, 64)
		for _, half := range []bool{false, true} {
			var opts []Option
			if half {
				opts = append(opts, WithHalfPrecision())
			}
			ix, _, _ := openBuilt(t, corpus, vecs, opts...)
			p := CorpusPolicy{AsOf: asOf, Scope: "acme"}
			q := randVec(r, 64)
			start := make(chan struct{})
			errs := make(chan error, 8)
			var wg sync.WaitGroup
			for range 4 {
				wg.Go(func() {
					<-start
					for {
						hits, err := ix.Search(t.Context(), q, p, 5)
						if errors.Is(err, ErrClosed) {
							return
						}
						if err != nil || len(hits) != 5 {
							errs <- err
							return
						}
					}
				})
			}
			close(start)
			require.NoError(t, ix.Close())
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Errorf("round %d, half %v: search racing Close: %v", round, half, err)
			}
		}
	}
}
