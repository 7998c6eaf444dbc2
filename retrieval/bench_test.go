package retrieval

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"
)

// The benchmark matrix of the issue: 100,000 chunks × 768 dimensions
// (307 MB of float32), 10,000 sources of 10 chunks, all admitted. It is
// built only when this benchmark runs, never by `go test` alone.
const (
	benchSources   = 10_000
	benchPerSource = 10
	benchDims      = 768
)

func benchCorpus() ([]Source, [][]float32, Chunker) {
	c := Chunker{MaxRunes: 40} // one short paragraph per chunk
	r := rand.New(rand.NewPCG(42, 43))
	corpus := make([]Source, benchSources)
	for i := range corpus {
		text := ""
		for p := range benchPerSource {
			text += fmt.Sprintf("Paragraph %d of source %05d.\n\n", p, i)
		}
		corpus[i] = Source{ID: fmt.Sprintf("S%05d", i), Scopes: []string{"acme"}, Admissible: true, Text: text}
	}
	n := benchSources * benchPerSource
	backing := make([]float32, n*benchDims)
	for i := range backing {
		backing[i] = float32(r.NormFloat64())
	}
	vecs := make([][]float32, n)
	for i := range vecs {
		vecs[i] = backing[i*benchDims : (i+1)*benchDims]
	}
	return corpus, vecs, c
}

// floorSum reads the whole matrix once, split over the same number of
// goroutines a search uses, with the same kernel's vector sum: the speed of
// memory, the floor a scan cannot beat.
func floorSum(ix *Index) float32 {
	mat := ix.mat
	parts := ix.partitions(len(mat)/ix.stored.Dims, ix.stored.Dims)
	per := (len(mat) + parts - 1) / parts
	sums := make([]float32, parts)
	var wg sync.WaitGroup
	for p := range parts {
		wg.Go(func() {
			lo := min(p*per, len(mat))
			hi := min(lo+per, len(mat))
			sums[p] = ix.kern.sum(mat[lo:hi])
		})
	}
	wg.Wait()
	var s float32
	for _, x := range sums {
		s += x
	}
	return s
}

// BenchmarkRetrieval100k measures, in one run, the memory floor, top-10
// search (parallel, then one worker), an 8-query SearchBatch, and the time
// to open the file and load 100k vectors. Compare search-top10 with
// floor-sum: the target is ≤ 1.3×.
func BenchmarkRetrieval100k(b *testing.B) {
	corpus, vecs, c := benchCorpus()
	path := filepath.Join(b.TempDir(), "bench.db")
	m := Manifest{Provider: "bench", Model: "random", Dims: benchDims, CorpusDigest: c.Digest(corpus)}
	ix, err := Open(b.Context(), path, m, WithChunker(c))
	if err != nil {
		b.Fatal(err)
	}
	if err := ix.Rebuild(b.Context(), corpus, m, vecs); err != nil {
		b.Fatal(err)
	}
	if ix.Len() != len(vecs) {
		b.Fatalf("Len = %d", ix.Len())
	}
	r := rand.New(rand.NewPCG(7, 7))
	q := randVec(r, benchDims)
	qs := make([][]float32, 8)
	for i := range qs {
		qs[i] = randVec(r, benchDims)
	}
	vecs = nil // let the input copy go; the index holds its own matrix
	p := Policy{AsOf: asOf, Scope: "acme"}
	matBytes := int64(len(ix.mat) * 4)
	b.Logf("kernel %s, workers %d, matrix %d MB", ix.Kernel(), ix.partitions(ix.Len(), benchDims), matBytes>>20)

	var sink float32
	b.Run("floor-sum", func(b *testing.B) {
		b.SetBytes(matBytes)
		for b.Loop() {
			sink += floorSum(ix)
		}
	})
	b.Run("search-top10", func(b *testing.B) {
		b.SetBytes(matBytes)
		for b.Loop() {
			hits, err := ix.Search(b.Context(), q, p, 10)
			if err != nil || len(hits) != 10 {
				b.Fatal(len(hits), err)
			}
		}
	})
	b.Run("search-top10-1worker", func(b *testing.B) {
		old := ix.workers
		ix.workers = 1
		defer func() { ix.workers = old }()
		b.SetBytes(matBytes)
		for b.Loop() {
			if _, err := ix.Search(b.Context(), q, p, 10); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("searchbatch-8q-top10", func(b *testing.B) {
		b.SetBytes(matBytes)
		for b.Loop() {
			if _, err := ix.SearchBatch(b.Context(), qs, p, 10); err != nil {
				b.Fatal(err)
			}
		}
	})
	_ = sink
	if err := ix.Close(); err != nil {
		b.Fatal(err)
	}
	b.Run("open-load-100k", func(b *testing.B) {
		for b.Loop() {
			re, err := Open(b.Context(), path, m, WithChunker(c))
			if err != nil {
				b.Fatal(err)
			}
			if re.Len() != benchSources*benchPerSource {
				b.Fatalf("loaded %d vectors", re.Len())
			}
			if err := re.Close(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkKernel compares the kernels on 256 rows × 768 dims (768 KB,
// cache-resident): compute speed without the memory bound.
func BenchmarkKernel(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	const rows = 256
	q, m := randVec(r, benchDims), randVec(r, rows*benchDims)
	out := make([]float32, rows)
	kernels := []kernel{portableKernel()}
	if k, ok := simdKernel(); ok {
		kernels = append(kernels, k)
	}
	for _, k := range kernels {
		b.Run(k.name, func(b *testing.B) {
			b.SetBytes(rows * benchDims * 4)
			for b.Loop() {
				k.dots(q, m, benchDims, out)
			}
		})
	}
}
