package retrieval

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bruteForce ranks every admitted chunk by the float64 dot product of the
// normalised float32 query and vector, then chunk ID, and returns the top k
// as (chunk ID, float32 score) pairs.
func bruteForce(corpus []Source, vecs [][]float32, p CorpusPolicy, q []float32, k int) []string {
	qn := append([]float32(nil), q...)
	normalise(qn)
	type scored struct {
		src   string
		n     int
		score float64
	}
	var all []scored
	vi := 0
	for _, s := range corpus {
		for _, c := range Chunks([]Source{s}) {
			if p.Check(s) == Admitted {
				v := append([]float32(nil), vecs[vi]...)
				normalise(v)
				var dot float64
				for i := range qn {
					dot += float64(qn[i]) * float64(v[i])
				}
				all = append(all, scored{s.ID, c.N, dot})
			}
			vi++
		}
	}
	slices.SortFunc(all, func(a, b scored) int {
		if a.score != b.score {
			return cmp.Compare(b.score, a.score)
		}
		if c := strings.Compare(a.src, b.src); c != 0 {
			return c
		}
		return a.n - b.n
	})
	var out []string
	for _, s := range all[:min(k, len(all))] {
		out = append(out, fmt.Sprintf("%s %.9g", ChunkID(s.src, s.n), float32(s.score)))
	}
	return out
}

func hitScores(hits []Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = fmt.Sprintf("%s %.9g", h.ChunkID, h.Score)
	}
	return out
}

// Float32 and half-precision handles, with either kernel and one or several
// workers, return exactly the float64 brute-force top k: over 100 random
// queries, and over adversarial near-ties (vectors one float32 ulp apart,
// vectors whose halves are equal, exact duplicates, and queries that sit on
// a stored vector).
func TestSearchIsExact(t *testing.T) {
	seed := uint64(rand.Uint32())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 91))
	const dims = 96
	n := parallelMinFloats/dims + 300 // large enough for the parallel path
	corpus := make([]Source, n)
	vecs := make([][]float32, n)
	for i := range corpus {
		corpus[i] = Source{ID: fmt.Sprintf("S%05d", i), Scopes: []string{"acme"}, Admissible: i%9 != 4, Text: "t"}
		vecs[i] = randVec(r, dims)
	}
	// Near-ties around a few anchors: copies nudged by one ulp in one
	// component, copies nudged below half precision, exact duplicates.
	var anchors []int
	for a := range 8 {
		base := 50 + 370*a
		anchors = append(anchors, base)
		for j := 1; j <= 24; j++ {
			v := append([]float32(nil), vecs[base]...)
			c := r.IntN(dims)
			switch j % 4 {
			case 0: // one float32 ulp
				v[c] = math.Nextafter32(v[c], float32(math.Inf(int(2*r.IntN(2)-1))))
			case 1: // far below a half ulp
				v[c] *= 1 + float32(r.IntN(5)-2)*0x1p-20
			case 2: // noise of the size of half-precision rounding
				for i := range v {
					v[i] *= 1 + float32(r.Float64()-0.5)*0x1p-10
				}
			}
			vecs[base+j] = v
		}
	}
	dir := t.TempDir()
	m := testManifest(dims, corpus)
	path := dir + "/exact.db"
	ix, err := Open(t.Context(), path, m)
	require.NoError(t, err)
	require.NoError(t, ix.Rebuild(t.Context(), corpus, m, vecs))
	require.NoError(t, ix.Close())

	p := CorpusPolicy{AsOf: asOf, Scope: "acme"}
	var queries [][]float32
	for range 100 {
		queries = append(queries, randVec(r, dims))
	}
	for _, a := range anchors {
		queries = append(queries, vecs[a])
		q := append([]float32(nil), vecs[a]...)
		q[0] = math.Nextafter32(q[0], 0)
		queries = append(queries, q)
	}
	want := make([][]string, len(queries))
	for i, q := range queries {
		want[i] = bruteForce(corpus, vecs, p, q, 10)
	}
	modes := []struct {
		name string
		opts []Option
	}{
		{"f32", nil},
		{"f32-portable-1", []Option{WithPortableKernel(), WithWorkers(1)}},
		{"f16", []Option{WithHalfPrecision()}},
		{"f16-portable-1", []Option{WithHalfPrecision(), WithPortableKernel(), WithWorkers(1)}},
		{"f16-4", []Option{WithHalfPrecision(), WithWorkers(4)}},
	}
	for _, mode := range modes {
		h, err := Open(t.Context(), path, m, append(mode.opts, WithReadOnly())...)
		require.NoError(t, err)
		diffs := 0
		batch, err := h.SearchBatch(t.Context(), queries, p, 10)
		require.NoError(t, err)
		for i := range queries {
			if got := hitScores(batch[i]); !assert.Equal(t, want[i], got, "%s query %d", mode.name, i) {
				diffs++
			}
		}
		assert.Zero(t, diffs, mode.name)
		require.NoError(t, h.Close())
	}
}

// The bound holds for the kernels on rows made to be hard for half
// precision: components in the half subnormal range, and components just
// off the half grid.
func TestScanBoundHolds(t *testing.T) {
	r := rand.New(rand.NewPCG(93, 94))
	for _, dims := range []int{8, 64, 768, 1536} {
		for trial := range 50 {
			q := randVec(r, dims)
			row := randVec(r, dims)
			for i := range row {
				switch trial % 3 {
				case 0:
					row[i] *= 0x1p-16 // mostly half subnormals after normalising tiny rows
					if i%7 == 0 {
						row[i] = 1
					}
				case 1:
					row[i] = halfToFloat(floatToHalf(row[i])) * (1 + 0x1p-12)
				}
			}
			normalise(q)
			normalise(row)
			m16 := make([]uint16, dims)
			toHalfGo(m16, row)
			exact := exactScore(q, row)
			for _, k := range kernels(t) {
				out := make([]float32, 1)
				k.dots16(q, m16, dims, out)
				assert.LessOrEqual(t, math.Abs(float64(out[0])-exact), scanBound(q, true), "%s f16 dims %d", k.name, dims)
				k.dots(q, row, dims, out)
				assert.LessOrEqual(t, math.Abs(float64(out[0])-exact), scanBound(q, false), "%s f32 dims %d", k.name, dims)
				k.dots(row, row, dims, out)
				lo, hi := unitBounds(dims)
				assert.True(t, out[0] >= lo && out[0] <= hi, "%s: a normalised row passes the unit check (%g)", k.name, out[0])
			}
		}
	}
}
