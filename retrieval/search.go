package retrieval

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"runtime/debug"
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
// The ranking is exact and the same whatever the kernel, the number of
// workers or WithHalfPrecision: the score of a chunk is the dot product of
// the normalised float32 query and vector, evaluated in float64, and a scan
// in a cheaper precision only rules out chunks whose score provably cannot
// reach the top k (the bound is proved in half.go). Hit.Score is that score
// rounded to float32.
//
// The policy is applied before ranking: a refused source's chunks are never
// scored. Errors: ErrInvalidPolicy; ErrInvalidQuery (k out of range, zero or
// non-finite query); ErrManifestMismatch (query of another dimension, or the
// handle's manifest differs from the file's); ErrNotBuilt; ErrNoAdmissible
// when the policy admits nothing; ErrClosed; the context's error; an error
// reading the source log (for the hits' texts) or, in half-precision mode,
// the vector file; ErrCorrupt when a hit's source record fails its
// checksum or digest, a file was cut under a mapping, or in half-precision
// mode a candidate's float32 row is not the one its half-precision row was
// made from. An error never comes with partial hits.
func (ix *Index) Search(ctx context.Context, query []float32, policy CorpusPolicy, k int) ([]Hit, error) {
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
func (ix *Index) SearchBatch(ctx context.Context, queries [][]float32, policy CorpusPolicy, k int) ([][]Hit, error) {
	if ix.tel.off() {
		var st searchStats
		return ix.searchBatch(ctx, queries, policy, k, &st)
	}
	return ix.searchTraced(ctx, queries, policy, k)
}

// searchStats is what a search reports to its span.
type searchStats struct {
	admitted, scanned, rescored, workers int
}

func (ix *Index) searchBatch(ctx context.Context, queries [][]float32, policy CorpusPolicy, k int, st *searchStats) (_ [][]Hit, err error) {
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
	if ix.mat.mapped != nil {
		// The exact scores read the mapped rows too (see scan).
		defer recoverFault(&err, "vector file")
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	}
	dims := ix.stored.Dims
	qs := make([]float32, len(queries)*dims)
	bounds := make([]float64, len(queries))
	for i, q := range queries {
		if len(q) != dims {
			return nil, &MismatchError{Field: "Dims", Want: strconv.Itoa(dims), Got: strconv.Itoa(len(q)), Query: i}
		}
		row := qs[i*dims : (i+1)*dims]
		copy(row, q)
		if reason := normalise(row); reason != "" {
			return nil, &QueryError{Query: i, Reason: reason}
		}
		bounds[i] = scanBound(row, ix.mat.half)
	}

	ranges, total := ix.admitted(policy)
	if total == 0 {
		return nil, fmt.Errorf("%w (scope %q, as of %s)", ErrNoAdmissible, policy.Scope, policy.AsOf.Format(time.RFC3339))
	}
	st.admitted = total
	parts := splitRanges(ranges, total, ix.partitions(total, dims))
	st.workers = len(parts)
	scans := make([][]scanState, len(parts))
	errs := make([]error, len(parts))
	if len(parts) == 1 {
		scans[0], errs[0] = ix.scan(ctx, qs, bounds, dims, parts[0], k)
	} else {
		var wg sync.WaitGroup
		for p := range parts {
			wg.Go(func() { scans[p], errs[p] = ix.scan(ctx, qs, bounds, dims, parts[p], k) })
		}
		wg.Wait()
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	st.scanned = total
	res := make([][]Hit, len(queries))
	var rowBuf []float32
	var byteBuf []byte
	var halfBuf []uint16
	texts := map[*entry][]string{}
	for qi := range queries {
		q := qs[qi*dims : (qi+1)*dims]
		// T: the k-th best approximate score over every part.
		var best []float32
		for p := range parts {
			best = append(best, scans[p][qi].top.items...)
		}
		cut := float32(math.Inf(-1))
		if len(best) >= k {
			slices.Sort(best)
			cut = cutoff(best[len(best)-k], bounds[qi])
		}
		var cands []cand
		for p := range parts {
			for _, c := range scans[p][qi].near {
				if c.approx >= cut {
					cands = append(cands, c)
				}
			}
		}
		st.rescored += len(cands)
		for i := range cands {
			row, err := ix.row(int(cands[i].row), dims, &rowBuf, &byteBuf, &halfBuf)
			if err != nil {
				return nil, err
			}
			cands[i].score = exactScore(q, row)
			if cands[i].src = ix.sourceOf(int(cands[i].row)); cands[i].src == nil {
				return nil, fmt.Errorf("retrieval: search: row %d has no source", cands[i].row) // not reached: admitted rows are owned
			}
		}
		slices.SortFunc(cands, compareCand)
		cands = cands[:min(k, len(cands))]
		hits := make([]Hit, len(cands))
		for i, c := range cands {
			e := c.src
			ts, ok := texts[e]
			if !ok {
				var err error
				if ts, err = readTexts(ix.sf, e); err != nil {
					return nil, fmt.Errorf("retrieval: search: %w", err)
				}
				texts[e] = ts
			}
			n := int(c.row) - e.start
			hits[i] = Hit{ChunkID: ChunkID(e.meta.ID, n), SourceID: e.meta.ID, Title: e.meta.Title, Text: ts[n],
				Score: float32(c.score), ValidFrom: e.meta.ValidFrom, ValidUntil: e.meta.ValidUntil}
		}
		res[qi] = hits
	}
	return res, nil
}

// row returns the float32 row r: from the matrix, or in half-precision mode
// from the vector file, checked against its half-precision row (unit
// length, and the row that half-precision row was made from). The caller
// holds mu.
func (ix *Index) row(r, dims int, buf *[]float32, bytes *[]byte, halves *[]uint16) ([]float32, error) {
	if !ix.mat.half {
		return ix.mat.f32[r*dims : (r+1)*dims], nil
	}
	if cap(*buf) < dims {
		*buf = make([]float32, dims)
		*bytes = make([]byte, 4*dims)
		*halves = make([]uint16, dims)
	}
	b := (*bytes)[:4*dims]
	if _, err := ix.vf.ReadAt(b, vectorHeaderBytes+int64(r)*int64(4*dims)); err != nil {
		return nil, fmt.Errorf("retrieval: search: read vector row %d: %w", r, err)
	}
	v := (*buf)[:dims]
	decodeVector(v, b)
	if err := checkHalfRow(r, v, ix.mat.f16[r*dims:(r+1)*dims], ix.kern, *halves); err != nil {
		return nil, fmt.Errorf("retrieval: search: %w", err)
	}
	return v, nil
}

type rowRange struct{ start, end int }

// admitted returns the row ranges of sources the policy admits, in row
// order with adjacent ranges merged, and their total row count.
func (ix *Index) admitted(p CorpusPolicy) ([]rowRange, int) {
	var rs []rowRange
	total := 0
	for _, e := range ix.order {
		if p.check(e.meta) != Admitted {
			continue
		}
		s, t := e.start, e.start+e.n
		total += t - s
		if n := len(rs); n > 0 && rs[n-1].end == s {
			rs[n-1].end = t
			continue
		}
		rs = append(rs, rowRange{s, t})
	}
	return rs, total
}

// parallelMinFloats is the matrix size (in values) from which a search is
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

// scanState is one query's scan of one part: the k best approximate scores
// (a min-heap) and every row that could still reach the top k.
type scanState struct {
	top   minHeap
	near  []cand
	cut   float32 // rows scoring below it are ruled out
	bound float64
	keep  int // prune near when it grows past this
}

func (st *scanState) offer(row int32, sc float32) {
	if sc < st.cut {
		return
	}
	st.near = append(st.near, cand{row: row, approx: sc})
	if len(st.top.items) < st.top.k {
		st.top.push(sc)
		if len(st.top.items) == st.top.k {
			st.cut = cutoff(st.top.items[0], st.bound)
		}
	} else if sc > st.top.items[0] {
		st.top.replaceRoot(sc)
		st.cut = cutoff(st.top.items[0], st.bound)
	}
	if len(st.near) > st.keep {
		st.near = slices.DeleteFunc(st.near, func(c cand) bool { return c.approx < st.cut })
		st.keep = max(st.keep, 2*len(st.near))
	}
}

func (ix *Index) scan(ctx context.Context, qs []float32, bounds []float64, dims int, ranges []rowRange, k int) (_ []scanState, err error) {
	if ix.mat.mapped != nil {
		// The matrix is the vector file mapped: a file cut or failing
		// under the mapping is an error of this search, not a crash.
		defer recoverFault(&err, "vector file")
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	}
	nq := len(qs) / dims
	sts := make([]scanState, nq)
	for i := range sts {
		sts[i] = scanState{top: minHeap{k: k, items: make([]float32, 0, k)}, cut: float32(math.Inf(-1)),
			bound: bounds[i], keep: 4*k + 1024}
	}
	mat := ix.mat
	esize := 4
	if mat.half {
		esize = 2
	}
	block := max(1, scanBlockBytes/(esize*dims))
	scores := make([]float32, block)
	for _, r := range ranges {
		for s := r.start; s < r.end; s += block {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			e := min(s+block, r.end)
			out := scores[:e-s]
			for qi := range nq {
				q := qs[qi*dims : (qi+1)*dims]
				if mat.half {
					ix.kern.dots16(q, mat.f16[s*dims:e*dims], dims, out)
				} else {
					ix.kern.dots(q, mat.f32[s*dims:e*dims], dims, out)
				}
				st := &sts[qi]
				for i, sc := range out {
					if sc < st.cut {
						continue // the vast majority of rows
					}
					st.offer(int32(s+i), sc)
				}
			}
		}
	}
	return sts, nil
}

type cand struct {
	row    int32
	approx float32 // the scan's score
	score  float64 // the exact score
	src    *entry  // the row's source, set with score
}

// compareCand orders candidates best first: higher exact score, then chunk
// ID.
func compareCand(a, b cand) int {
	if a.score != b.score {
		return cmp.Compare(b.score, a.score)
	}
	ea, eb := a.src, b.src
	if c := strings.Compare(ea.meta.ID, eb.meta.ID); c != 0 {
		return c
	}
	return cmp.Compare(int(a.row)-ea.start, int(b.row)-eb.start)
}

// minHeap keeps the k largest scores; its root is the smallest of them.
type minHeap struct {
	k     int
	items []float32
}

func (h *minHeap) push(x float32) {
	h.items = append(h.items, x)
	i := len(h.items) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !(h.items[i] < h.items[p]) {
			return
		}
		h.items[i], h.items[p] = h.items[p], h.items[i]
		i = p
	}
}

func (h *minHeap) replaceRoot(x float32) {
	h.items[0] = x
	n := len(h.items)
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && h.items[r] < h.items[l] {
			m = r
		}
		if !(h.items[m] < h.items[i]) {
			return
		}
		h.items[i], h.items[m] = h.items[m], h.items[i]
		i = m
	}
}
