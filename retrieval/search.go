package retrieval

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Hit is one ranked chunk.
type Hit struct {
	ChunkID    string
	SourceID   string
	Title      string
	Text       string
	Score      float32   // cosine similarity in [-1, 1]
	ValidFrom  time.Time // of the source
	ValidUntil time.Time // of the source
}

// MaxK bounds k in Search and SearchBatch.
const MaxK = 10000

// Search returns the k chunks most similar (exact cosine) to query among the
// chunks of sources the policy admits, best first; equal scores are ordered
// by chunk ID (source ID bytewise, then chunk number). Fewer than k hits are
// returned only when fewer chunks are admitted.
//
// The policy is applied before ranking: a refused source's chunks are never
// scored. Errors: ErrInvalidPolicy; ErrInvalidQuery (k out of range, zero or
// non-finite query); ErrManifestMismatch (query of another dimension, or the
// handle's manifest differs from the file's); ErrNotBuilt; ErrNoAdmissible
// when the policy admits nothing; ErrClosed; the context's error. An error
// never comes with partial hits.
func (ix *Index) Search(ctx context.Context, query []float32, policy Policy, k int) ([]Hit, error) {
	res, err := ix.SearchBatch(ctx, [][]float32{query}, policy, k)
	if err != nil {
		return nil, err
	}
	return res[0], nil
}

// SearchBatch runs several queries under one policy in one pass over the
// matrix: each block of rows is read from memory once and scored against
// every query while it is in cache. res[i] are the hits of queries[i], with
// the same results Search would return for it.
func (ix *Index) SearchBatch(ctx context.Context, queries [][]float32, policy Policy, k int) ([][]Hit, error) {
	if err := policy.Validate(); err != nil {
		return nil, err
	}
	if k < 1 || k > MaxK {
		return nil, &QueryError{Reason: "k must be in [1, " + strconv.Itoa(MaxK) + "], got " + strconv.Itoa(k)}
	}
	if len(queries) == 0 {
		return nil, &QueryError{Reason: "no query"}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if err := ix.usable(); err != nil {
		return nil, err
	}
	dims := ix.stored.Dims
	qs := make([]float32, len(queries)*dims)
	for i, q := range queries {
		if len(q) != dims {
			return nil, &MismatchError{Field: "Dims", Want: strconv.Itoa(len(q)), Got: strconv.Itoa(dims)}
		}
		row := qs[i*dims : (i+1)*dims]
		copy(row, q)
		if reason := normalise(row); reason != "" {
			return nil, &QueryError{Query: i, Reason: reason}
		}
	}

	ranges, total := ix.admitted(policy)
	if total == 0 {
		return nil, fmt.Errorf("%w (scope %q, as of %s)", ErrNoAdmissible, policy.Scope, policy.AsOf.Format(time.RFC3339))
	}
	parts := splitRanges(ranges, total, ix.partitions(total, dims))
	heaps := make([][]topK, len(parts))
	errs := make([]error, len(parts))
	if len(parts) == 1 {
		heaps[0], errs[0] = ix.scan(ctx, qs, dims, parts[0], k)
	} else {
		var wg sync.WaitGroup
		for p := range parts {
			wg.Go(func() { heaps[p], errs[p] = ix.scan(ctx, qs, dims, parts[p], k) })
		}
		wg.Wait()
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	res := make([][]Hit, len(queries))
	for qi := range queries {
		var cands []cand
		for p := range parts {
			cands = append(cands, heaps[p][qi].items...)
		}
		slices.SortFunc(cands, ix.compareCand)
		cands = cands[:min(k, len(cands))]
		hits := make([]Hit, len(cands))
		for i, c := range cands {
			e := ix.owner[c.row]
			ch := e.chunks[int(c.row)-e.start]
			hits[i] = Hit{ChunkID: ch.ID, SourceID: e.meta.ID, Title: e.meta.Title, Text: ch.Text,
				Score: c.score, ValidFrom: e.meta.ValidFrom, ValidUntil: e.meta.ValidUntil}
		}
		res[qi] = hits
	}
	return res, nil
}

type rowRange struct{ start, end int }

// admitted returns the row ranges of sources the policy admits, in row
// order with adjacent ranges merged, and their total row count.
func (ix *Index) admitted(p Policy) ([]rowRange, int) {
	var rs []rowRange
	total := 0
	for _, e := range ix.order {
		if p.check(e.meta) != Admitted {
			continue
		}
		s, t := e.start, e.start+len(e.chunks)
		total += t - s
		if n := len(rs); n > 0 && rs[n-1].end == s {
			rs[n-1].end = t
			continue
		}
		rs = append(rs, rowRange{s, t})
	}
	return rs, total
}

// parallelMinFloats is the matrix size (in float32) from which a search is
// split across goroutines: below it, starting them costs more than it saves.
const parallelMinFloats = 1 << 18

func (ix *Index) partitions(rows, dims int) int {
	if ix.workers <= 1 || rows*dims < parallelMinFloats {
		return 1
	}
	return min(ix.workers, max(1, rows*dims/parallelMinFloats))
}

// splitRanges cuts ranges into n parts of about equal row counts.
func splitRanges(ranges []rowRange, total, n int) [][]rowRange {
	if n <= 1 {
		return [][]rowRange{ranges}
	}
	parts := make([][]rowRange, 0, n)
	per := (total + n - 1) / n
	var cur []rowRange
	left := per
	for _, r := range ranges {
		for r.start < r.end {
			take := min(left, r.end-r.start)
			cur = append(cur, rowRange{r.start, r.start + take})
			r.start += take
			left -= take
			if left == 0 {
				parts = append(parts, cur)
				cur, left = nil, per
			}
		}
	}
	if len(cur) > 0 {
		parts = append(parts, cur)
	}
	return parts
}

// scanBlockBytes is the amount of matrix scored against every query of a
// batch before moving on, small enough to stay in a core's L2 cache.
const scanBlockBytes = 128 << 10

func (ix *Index) scan(ctx context.Context, qs []float32, dims int, ranges []rowRange, k int) ([]topK, error) {
	nq := len(qs) / dims
	heaps := make([]topK, nq)
	for i := range heaps {
		heaps[i] = topK{k: k, less: ix.worse, items: make([]cand, 0, k)}
	}
	block := max(1, scanBlockBytes/(4*dims))
	scores := make([]float32, block)
	for _, r := range ranges {
		for s := r.start; s < r.end; s += block {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			e := min(s+block, r.end)
			m := ix.mat[s*dims : e*dims]
			out := scores[:e-s]
			for qi := range nq {
				ix.kern.dots(qs[qi*dims:(qi+1)*dims], m, dims, out)
				h := &heaps[qi]
				for i, sc := range out {
					if len(h.items) == h.k && sc < h.items[0].score {
						continue // cheaper than offer for the vast majority of rows
					}
					h.offer(cand{row: int32(s + i), score: sc})
				}
			}
		}
	}
	return heaps, nil
}

type cand struct {
	row   int32
	score float32
}

// compareCand orders candidates best first: higher score, then chunk ID.
func (ix *Index) compareCand(a, b cand) int {
	if a.score != b.score {
		return cmp.Compare(b.score, a.score)
	}
	ea, eb := ix.owner[a.row], ix.owner[b.row]
	if c := strings.Compare(ea.meta.ID, eb.meta.ID); c != 0 {
		return c
	}
	return cmp.Compare(int(a.row)-ea.start, int(b.row)-eb.start)
}

func (ix *Index) worse(a, b cand) bool { return ix.compareCand(a, b) > 0 }

// topK keeps the k best candidates in a heap whose root is the worst.
type topK struct {
	k     int
	less  func(a, b cand) bool // less(a, b): a is worse than b
	items []cand
}

func (h *topK) offer(c cand) {
	if len(h.items) < h.k {
		h.items = append(h.items, c)
		h.up(len(h.items) - 1)
		return
	}
	root := h.items[0]
	if c.score < root.score || (c.score == root.score && !h.less(root, c)) {
		return
	}
	h.items[0] = c
	h.down(0)
}

func (h *topK) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(h.items[i], h.items[p]) {
			return
		}
		h.items[i], h.items[p] = h.items[p], h.items[i]
		i = p
	}
}

func (h *topK) down(i int) {
	n := len(h.items)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && h.less(h.items[r], h.items[l]) {
			m = r
		}
		if !h.less(h.items[m], h.items[i]) {
			return
		}
		h.items[i], h.items[m] = h.items[m], h.items[i]
		i = m
	}
}
