package retrieval

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/candorkit/candor/internal/otelx/oteltest"
)

// The benchmark matrix: 100,000 chunks × 768 dimensions (307 MB of
// float32), 10,000 sources of 10 chunks, all admitted. It is built only
// when a benchmark runs (go test -bench), never by go test alone.
const (
	benchSources   = 10_000
	benchPerSource = 10
	benchDims      = 768
)

func benchCorpus(sources int) ([]Source, [][]float32, Chunker) {
	c := Chunker{MaxRunes: 40} // one short paragraph per chunk
	r := rand.New(rand.NewPCG(42, 43))
	corpus := make([]Source, sources)
	for i := range corpus {
		var text strings.Builder
		for p := range benchPerSource {
			fmt.Fprintf(&text, "Paragraph %d of source %06d.\n\n", p, i)
		}
		corpus[i] = Source{ID: fmt.Sprintf("S%06d", i), Scopes: []string{"acme"}, Admissible: true, Text: text.String()}
	}
	n := sources * benchPerSource
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

// floorRead reads b once, split over parts goroutines, summing it as
// 64-bit words: the speed of memory, the floor a scan of the same bytes
// cannot beat. It is plain Go, and memory-bound on these machines.
func floorRead(b []byte, parts int) uint64 {
	words := unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/8)
	per := (len(words) + parts - 1) / parts
	sums := make([]uint64, parts)
	var wg sync.WaitGroup
	for p := range parts {
		wg.Go(func() {
			w := words[min(p*per, len(words)):min((p+1)*per, len(words))]
			var s0, s1, s2, s3, s4, s5, s6, s7 uint64
			i := 0
			for ; i+8 <= len(w); i += 8 {
				x := w[i : i+8 : i+8]
				s0 += x[0]
				s1 += x[1]
				s2 += x[2]
				s3 += x[3]
				s4 += x[4]
				s5 += x[5]
				s6 += x[6]
				s7 += x[7]
			}
			for ; i < len(w); i++ {
				s0 += w[i]
			}
			sums[p] = s0 + s1 + s2 + s3 + s4 + s5 + s6 + s7
		})
	}
	wg.Wait()
	var s uint64
	for _, x := range sums {
		s += x
	}
	return s
}

func matBytes(m *matrix) []byte {
	if m.half {
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(m.f16))), 2*len(m.f16))
	}
	return floatBytes(m.f32)
}

// rawRead reads the index's files sequentially into one reused buffer: the
// floor for Open.
func rawRead(paths []string, buf []byte) (int64, error) {
	var n int64
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return 0, err
		}
		for {
			m, err := f.Read(buf)
			n += int64(m)
			if err == io.EOF {
				break
			}
			if err != nil {
				f.Close()
				return 0, err
			}
		}
		f.Close()
	}
	return n, nil
}

// indexFiles are the files an Open reads: the SQLite file, the source log
// and the vector file, and in half precision the halves file.
func indexFiles(ix *Index, half bool) []string {
	files := []string{ix.path, sourcesPath(ix.path, ix.gen), vectorPath(ix.path, ix.gen)}
	if half {
		files = append(files, halvesPath(ix.path, ix.gen))
	}
	return files
}

// BenchmarkRetrieval100k measures, in one run, each operation against its
// floor over the same 100k × 768 rows:
//
//   - floor-read-f32 / search-top10 (parallel, one worker) / searchbatch-8q:
//     exact search against a read of the float32 matrix (the mapped
//     vector file), and floor-read-f32-anon, the same read of a copy in
//     ordinary memory;
//   - floor-read-f16 / search-half-top10: the half-precision scan against
//     the same floor over half the bytes (and against floor-read-f32);
//   - raw-read-files / open / open-read: Open (mapping the vector file;
//     reading it into memory as where mapping is not available) against a
//     sequential read of the files it reads (SQLite file, source log,
//     vector file) from the page cache; raw-read-files-half / open-half:
//     the same in half precision, whose files include the halves file;
//   - rss-after-open: resident memory of a fresh process after Open,
//     reported as rss/matrix.
func BenchmarkRetrieval100k(b *testing.B) {
	benchScale(b, benchSources)
}

func benchScale(b *testing.B, sources int) {
	corpus, vecs, c := benchCorpus(sources)
	path := filepath.Join(b.TempDir(), "bench.db")
	m := Manifest{Provider: "bench", Model: "random", Dims: benchDims, CorpusDigest: c.Digest(corpus)}
	ix, err := Open(b.Context(), path, m, WithChunker(c))
	if err != nil {
		b.Fatal(err)
	}
	if err := ix.Rebuild(b.Context(), corpus, m, vecs); err != nil {
		b.Fatal(err)
	}
	rows := len(vecs)
	r := rand.New(rand.NewPCG(7, 7))
	q := randVec(r, benchDims)
	qs := make([][]float32, 8)
	for i := range qs {
		qs[i] = randVec(r, benchDims)
	}
	vecs = nil // let the input copy go; the index holds its own matrix
	p := CorpusPolicy{AsOf: asOf, Scope: "acme"}
	parts := ix.partitions(rows, benchDims)
	b.Logf("kernel %s, workers %d, matrix %d MiB", ix.Kernel(), parts, ix.MatrixBytes()>>20)

	var sink uint64
	b.Run("floor-read-f32", func(b *testing.B) {
		mb := matBytes(ix.mat)
		b.SetBytes(int64(len(mb)))
		for b.Loop() {
			sink += floorRead(mb, parts)
		}
	})
	// The same floor over a copy of the matrix in ordinary memory (advised
	// huge pages, as a loaded matrix was before the vector file was
	// mapped): the mapped matrix's scan must not be slower than this.
	b.Run("floor-read-f32-anon", func(b *testing.B) {
		anon := newMatrix(benchDims, rows, false)
		copy(anon.f32, ix.mat.f32)
		mb := matBytes(anon)
		b.SetBytes(int64(len(mb)))
		for b.Loop() {
			sink += floorRead(mb, parts)
		}
	})
	want, err := ix.Search(b.Context(), q, p, 10)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("search-top10", func(b *testing.B) {
		b.SetBytes(ix.MatrixBytes())
		for b.Loop() {
			hits, err := ix.Search(b.Context(), q, p, 10)
			if err != nil || len(hits) != 10 {
				b.Fatal(len(hits), err)
			}
		}
	})
	// The same search recording its span and duration to the SDK's
	// in-memory exporter, against search-top10 (no provider: telemetry
	// skipped).
	b.Run("search-top10-otel", func(b *testing.B) {
		rec := oteltest.New(b)
		old := ix.tel
		ix.tel = newTelemetry(rec.TracerProvider(), rec.MeterProvider())
		defer func() { ix.tel = old }()
		b.SetBytes(ix.MatrixBytes())
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
		b.SetBytes(ix.MatrixBytes())
		for b.Loop() {
			if _, err := ix.Search(b.Context(), q, p, 10); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("searchbatch-8q-top10", func(b *testing.B) {
		b.SetBytes(ix.MatrixBytes())
		for b.Loop() {
			if _, err := ix.SearchBatch(b.Context(), qs, p, 10); err != nil {
				b.Fatal(err)
			}
		}
	})
	files, halfFiles := indexFiles(ix, false), indexFiles(ix, true)
	if err := ix.Close(); err != nil {
		b.Fatal(err)
	}

	buf := make([]byte, 1<<20)
	for _, floor := range []struct {
		name  string
		files []string
	}{{"raw-read-files", files}, {"raw-read-files-half", halfFiles}} {
		fs := floor.files
		b.Run(floor.name, func(b *testing.B) {
			defer reportCPU(b)()
			for b.Loop() {
				n, err := rawRead(fs, buf)
				if err != nil {
					b.Fatal(err)
				}
				b.SetBytes(n)
			}
		})
	}
	for _, mode := range []struct {
		name string
		opts []Option
		read bool // the read path instead of the mapping
	}{{"open", nil, false}, {"open-read", nil, true}, {"open-half", []Option{WithHalfPrecision()}, false}} {
		b.Run(mode.name, func(b *testing.B) {
			if mode.read {
				mapVectorFiles = false
				defer func() { mapVectorFiles = canMap }()
			}
			// Only Open is timed (wall and CPU), not the Close after it.
			var cpu time.Duration
			for b.Loop() {
				c0 := cpuTime()
				re, err := Open(b.Context(), path, m, append(mode.opts, WithChunker(c))...)
				cpu += cpuTime() - c0
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if re.Len() != rows {
					b.Fatalf("loaded %d vectors", re.Len())
				}
				if err := re.Close(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(cpu)/float64(b.N)/1e6, "cpu-ms/op")
		})
	}

	half, err := Open(b.Context(), path, m, WithChunker(c), WithHalfPrecision(), WithReadOnly())
	if err != nil {
		b.Fatal(err)
	}
	defer half.Close()
	got, err := half.Search(b.Context(), q, p, 10)
	if err != nil {
		b.Fatal(err)
	}
	if fmt.Sprint(hitIDs(got)) != fmt.Sprint(hitIDs(want)) {
		b.Fatalf("half-precision hits %v, float32 hits %v", hitIDs(got), hitIDs(want))
	}
	b.Run("floor-read-f16", func(b *testing.B) {
		mb := matBytes(half.mat)
		b.SetBytes(int64(len(mb)))
		for b.Loop() {
			sink += floorRead(mb, parts)
		}
	})
	b.Run("search-half-top10", func(b *testing.B) {
		b.SetBytes(half.MatrixBytes())
		for b.Loop() {
			if _, err := half.Search(b.Context(), q, p, 10); err != nil {
				b.Fatal(err)
			}
		}
	})
	_ = sink

	for _, mode := range []string{"f32", "f16"} {
		b.Run("rss-after-open-"+mode, func(b *testing.B) {
			for b.Loop() {
				rss, matrix, err := childRSS(path, mode == "f16")
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(rss)/float64(matrix), "rss/matrix")
				b.ReportMetric(float64(rss)/(1<<20), "rss-MiB")
			}
		})
	}
}

// reportCPU reports the process's CPU time (user and system) per
// iteration beside the wall time: on a machine shared with other work the
// CPU time is the steadier measure.
func reportCPU(b *testing.B) func() {
	start := cpuTime()
	return func() {
		b.ReportMetric(float64(cpuTime()-start)/float64(b.N)/1e6, "cpu-ms/op")
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

const rssChildEnv = "RETRIEVAL_RSS_CHILD"

// childRSS opens path in a fresh process of this test binary and returns
// its resident memory and matrix size after Open.
func childRSS(path string, half bool) (rss, matrix int64, err error) {
	exe, err := os.Executable()
	if err != nil {
		return 0, 0, err
	}
	cmd := exec.Command(exe, "-test.run=^TestRSSChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), rssChildEnv+"="+strconv.FormatBool(half)+":"+path)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return 0, 0, fmt.Errorf("%v: %s", err, out)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 3 && f[0] == "rss-child" {
			rss, _ = strconv.ParseInt(f[1], 10, 64)
			matrix, _ = strconv.ParseInt(f[2], 10, 64)
			return rss, matrix, nil
		}
	}
	return 0, 0, fmt.Errorf("no measurement in %q", out)
}

// TestRSSChild is the child process of childRSS; run without its
// environment variable (as by go test), it does nothing.
func TestRSSChild(t *testing.T) {
	spec := os.Getenv(rssChildEnv)
	if spec == "" {
		return
	}
	half, path, _ := strings.Cut(spec, ":")
	opts := []Option{WithReadOnly(), WithChunker(Chunker{MaxRunes: 40})}
	if half == "true" {
		opts = append(opts, WithHalfPrecision())
	}
	m := Manifest{Provider: "bench", Model: "random", Dims: benchDims}
	ix, err := Open(t.Context(), path, m, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	rss, err := residentBytes()
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("rss-child %d %d\n", rss, ix.MatrixBytes())
}

// residentBytes reads VmRSS from /proc/self/status.
func residentBytes() (int64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/self/status")
}

// BenchmarkKernel compares the kernels on 256 rows × 768 dims (768 KB,
// cache-resident): compute speed without the memory bound.
func BenchmarkKernel(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	const rows = 256
	q, m := randVec(r, benchDims), randVec(r, rows*benchDims)
	m16 := make([]uint16, len(m))
	toHalfGo(m16, m)
	out := make([]float32, rows)
	kernels := []kernel{portableKernel()}
	if k, ok := simdKernel(); ok {
		kernels = append(kernels, k)
	}
	for _, k := range kernels {
		b.Run(k.name+"/f32", func(b *testing.B) {
			b.SetBytes(rows * benchDims * 4)
			for b.Loop() {
				k.dots(q, m, benchDims, out)
			}
		})
		b.Run(k.name+"/f16", func(b *testing.B) {
			b.SetBytes(rows * benchDims * 2)
			for b.Loop() {
				k.dots16(q, m16, benchDims, out)
			}
		})
	}
}
