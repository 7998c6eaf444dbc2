// Command scalebench builds, opens and searches a retrieval index of random
// vectors at a given scale, and reports each step against its floor on the
// same machine:
//
//	go run ./retrieval/internal/scalebench -rows 100000
//	go run ./retrieval/internal/scalebench -rows 1000000
//	go run ./retrieval/internal/scalebench -rows 10000000 -half -dir /big/disk
//
// It builds the index through the public API (an empty Rebuild, then Upserts
// of -batch rows, with a progress line on stderr), then -opens times reads
// the files Open reads sequentially, warm (the Open floor), and opens it in
// a fresh process of itself, so that resident memory is that of Open
// alone; after the last Open it times -queries top-10 searches against a
// plain read of the same number of bytes as the matrix (the search floor,
// measured on at most 1 GiB and scaled). Output is one
// line per measurement on stdout. With -keep -dir DIR the files stay, and
// -reuse -dir DIR measures them again without building. See
// docs/retrieval.md for results.
//
// Exit codes: 0 done, 1 a step failed, 2 usage.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/candorkit/candor/retrieval"
)

const perSource = 10

type config struct {
	rows, dims, batch, queries, opens int
	half, keep, reuse                 bool
	dir, phase, cpuprofile            string
}

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	var c config
	fs := flag.NewFlagSet("scalebench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&c.rows, "rows", 100_000, "vectors to index (a multiple of 10)")
	fs.IntVar(&c.dims, "dims", 768, "dimensions")
	fs.IntVar(&c.batch, "batch", 100_000, "rows per Upsert while building")
	fs.IntVar(&c.queries, "queries", 20, "top-10 searches to time")
	fs.BoolVar(&c.half, "half", false, "open and search in half precision (WithHalfPrecision)")
	fs.BoolVar(&c.keep, "keep", false, "keep the index files")
	fs.BoolVar(&c.reuse, "reuse", false, "use the index a run with -keep left in -dir instead of building one")
	fs.IntVar(&c.opens, "opens", 1, "Opens to time, each in a fresh process right after its raw read")
	fs.StringVar(&c.dir, "dir", "", "directory for the index (default: a new temporary one)")
	fs.StringVar(&c.phase, "phase", "", "internal: run one phase in this process")
	fs.StringVar(&c.cpuprofile, "cpuprofile", "", "write a CPU profile of Open to this file")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: scalebench [-rows N] [-dims D] [-half] [-dir DIR] [-keep] [-reuse] [-opens N] [-batch N] [-queries N]")
		fmt.Fprintln(fs.Output(), "exit codes: 0 done, 1 a step failed, 2 usage")
		fs.PrintDefaults()
	}
	for _, a := range args {
		if a == "-h" || a == "-help" || a == "--help" || a == "--h" {
			fs.SetOutput(stdout)
			fs.Usage()
			return 0
		}
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if c.rows < perSource || c.rows%perSource != 0 || c.dims < 1 || c.batch < perSource || c.queries < 1 || c.opens < 1 || fs.NArg() > 0 || (c.reuse && c.dir == "") {
		fmt.Fprintln(stderr, "scalebench: -rows must be a positive multiple of 10, -dims, -batch (≥ 10), -queries and -opens positive, -reuse needs -dir, no arguments")
		fs.Usage()
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch c.phase {
	case "open":
		err = openPhase(ctx, c, stdout)
	case "fresh-read":
		err = freshRead(c, stdout)
	default:
		err = mainPhase(ctx, c, stdout, stderr)
	}
	if err != nil {
		fmt.Fprintln(stderr, "scalebench:", err)
		return 1
	}
	return 0
}

func manifest(c config) retrieval.Manifest {
	return retrieval.Manifest{Provider: "scalebench", Model: "random", Dims: c.dims}
}

func chunker() retrieval.Chunker { return retrieval.Chunker{MaxRunes: 40} }

func sources(from, n int) []retrieval.Source {
	out := make([]retrieval.Source, n)
	for i := range out {
		var b strings.Builder
		for p := range perSource {
			fmt.Fprintf(&b, "Paragraph %d of source %08d.\n\n", p, from+i)
		}
		out[i] = retrieval.Source{ID: fmt.Sprintf("S%08d", from+i), Scopes: []string{"bench"}, Admissible: true, Text: b.String()}
	}
	return out
}

func mainPhase(ctx context.Context, c config, stdout, stderr io.Writer) error {
	dir := c.dir
	if dir == "" {
		d, err := os.MkdirTemp("", "scalebench")
		if err != nil {
			return err
		}
		dir = d
	}
	path := filepath.Join(dir, fmt.Sprintf("scale-%d.db", c.rows))
	if !c.keep && !c.reuse {
		defer func() {
			matches, _ := filepath.Glob(path + "*")
			for _, m := range matches {
				_ = os.Remove(m)
			}
		}()
	}
	fmt.Fprintf(stdout, "rows %d, dims %d, half %v, GOMAXPROCS %d, files %s*\n", c.rows, c.dims, c.half, runtime.GOMAXPROCS(0), path)

	if !c.reuse {
		if err := build(ctx, c, path, stdout, stderr); err != nil {
			return err
		}
	}
	return measure(ctx, c, dir, path, stdout, stderr)
}

// build builds the index at path through the public API.
func build(ctx context.Context, c config, path string, stdout, stderr io.Writer) error {
	start := time.Now()
	opts := []retrieval.Option{retrieval.WithChunker(chunker())}
	if c.half {
		opts = append(opts, retrieval.WithHalfPrecision())
	}
	m := manifest(c)
	ix, err := retrieval.Open(ctx, path, m, opts...)
	if err != nil {
		return err
	}
	m.CorpusDigest = chunker().Digest(nil)
	if err := ix.Rebuild(ctx, nil, m, nil); err != nil {
		ix.Close()
		return err
	}
	r := rand.New(rand.NewPCG(1, uint64(c.rows)))
	backing := make([]float32, c.batch*c.dims)
	for done := 0; done < c.rows; {
		if err := ctx.Err(); err != nil {
			ix.Close()
			return err
		}
		n := min(c.batch, c.rows-done) / perSource * perSource
		vecs := make([][]float32, n)
		for i := range vecs {
			v := backing[i*c.dims : (i+1)*c.dims]
			for j := range v {
				v[j] = float32(r.NormFloat64())
			}
			vecs[i] = v
		}
		if err := ix.Upsert(ctx, sources(done/perSource, n/perSource), vecs); err != nil {
			ix.Close()
			return err
		}
		done += n
		el := time.Since(start)
		eta := time.Duration(float64(el) / float64(done) * float64(c.rows-done))
		fmt.Fprintf(stderr, "\rbuilding: %d/%d rows (%.0f%%), %s elapsed, about %s to go   ", done, c.rows,
			100*float64(done)/float64(c.rows), el.Round(time.Second), eta.Round(time.Second))
	}
	fmt.Fprintln(stderr)
	if err := ix.Close(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "build: %s\n", time.Since(start).Round(time.Millisecond))

	return nil
}

// measure times Open against the raw read, and RSS and searches after
// it, in fresh processes.
func measure(ctx context.Context, c config, dir, path string, stdout, stderr io.Writer) error {
	// Open floor: one sequential read of the files Open reads: the SQLite
	// file, the source log and the vector file, and in half precision the
	// halves file too.
	files := openFiles(path, c.half)
	buf := make([]byte, 1<<20)
	rawRead := func() (time.Duration, int64, error) {
		var raw time.Duration
		var fileBytes int64
		for range 2 { // the first read warms the page cache where it can
			t0 := time.Now()
			fileBytes = 0
			for _, f := range files {
				n, err := readAll(f, buf)
				if err != nil {
					return 0, 0, err
				}
				fileBytes += n
			}
			raw = time.Since(t0)
		}
		return raw, fileBytes, nil
	}

	// Open, RSS and search, in a fresh process, each Open right after its
	// raw read.
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	args := []string{"-phase", "open", "-rows", strconv.Itoa(c.rows), "-dims", strconv.Itoa(c.dims), "-queries", strconv.Itoa(c.queries), "-dir", dir}
	if c.half {
		args = append(args, "-half")
	}
	if c.cpuprofile != "" {
		args = append(args, "-cpuprofile", c.cpuprofile)
	}
	var res openResult
	var raw time.Duration
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := range c.opens {
		var fileBytes int64
		if raw, fileBytes, err = rawRead(); err != nil {
			return err
		}
		cmd := exec.CommandContext(ctx, exe, args...)
		cmd.Stderr = stderr
		out, err := cmd.Output()
		if err != nil {
			return fmt.Errorf("open phase: %w", err)
		}
		res = openResult{}
		if err := json.Unmarshal(out, &res); err != nil {
			return fmt.Errorf("open phase: %w: %q", err, out)
		}
		r := res.Open.Seconds() / raw.Seconds()
		lo, hi = min(lo, r), max(hi, r)
		fmt.Fprintf(stdout, "open %d: raw sequential read %d bytes in %s (%.2f GB/s), open %s = %.2f× (CPU %s user, %s system)\n", i+1,
			fileBytes, raw.Round(time.Millisecond), float64(fileBytes)/raw.Seconds()/1e9, res.Open.Round(time.Millisecond), r,
			res.OpenUser.Round(time.Millisecond), res.OpenSys.Round(time.Millisecond))
	}
	if c.opens > 1 {
		fmt.Fprintf(stdout, "open: %.2f–%.2f× the raw read run just before it, over %d opens\n", lo, hi, c.opens)
	}
	// The second floor: the same read into fresh memory of the files'
	// size, in a fresh process, which is what any load into memory pays
	// (page faults, and on a virtual machine the host backing new pages).
	// It needs a buffer of the files' size, so it is skipped when they
	// are larger than a quarter of the machine's available memory (at 10M
	// rows they are twice the machine's memory).
	var total int64
	for _, f := range files {
		if st, err := os.Stat(f); err == nil {
			total += st.Size()
		}
	}
	if avail := availableMemory(); avail > 0 && total > avail/4 {
		fmt.Fprintf(stdout, "raw read into fresh memory: skipped (%d MiB of files, %d MiB of memory available)\n", total>>20, avail>>20)
	} else {
		freshArgs := []string{"-phase", "fresh-read", "-rows", strconv.Itoa(c.rows), "-dir", dir}
		if c.half {
			freshArgs = append(freshArgs, "-half")
		}
		cmd := exec.CommandContext(ctx, exe, freshArgs...)
		cmd.Stderr = stderr
		out, err := cmd.Output()
		if err != nil {
			return fmt.Errorf("fresh-read phase: %w", err)
		}
		fresh, err := time.ParseDuration(strings.TrimSpace(string(out)))
		if err != nil {
			return fmt.Errorf("fresh-read phase: %w: %q", err, out)
		}
		fmt.Fprintf(stdout, "raw read into fresh memory (new process): %s; the last open was %.2f× it\n", fresh.Round(time.Millisecond), res.Open.Seconds()/fresh.Seconds())
	}
	fmt.Fprintf(stdout, "rss after open: %d MiB for a matrix of %d MiB = %.3f× (peak %d MiB)\n", res.RSS>>20, res.Matrix>>20, float64(res.RSS)/float64(res.Matrix), res.HWM>>20)
	fmt.Fprintf(stdout, "search top-10: fastest %s (mean %s) of %d queries, floor %s (fastest read of %d MiB): %.2f× the floor\n",
		res.Search.Round(time.Microsecond), res.SearchMean.Round(time.Microsecond), c.queries, res.Floor.Round(time.Microsecond), res.Matrix>>20, res.Search.Seconds()/res.Floor.Seconds())
	if c.half {
		fmt.Fprintf(stdout, "search top-10 in half precision: %.2f× the float32 floor (%s, read of %d MiB)\n",
			res.Search.Seconds()/res.Floor32.Seconds(), res.Floor32.Round(time.Microsecond), 2*res.Matrix>>20)
	}
	return nil
}

// openFiles lists the files an Open in the given mode reads: the SQLite
// file and the current generation's source log and vector file, and for
// half precision its halves file.
func openFiles(path string, half bool) []string {
	kinds := []string{"-sources-", "-vectors-"}
	if half {
		kinds = append(kinds, "-halves-")
	}
	files := []string{path}
	for _, k := range kinds {
		m, _ := filepath.Glob(path + k + "*")
		files = append(files, m...)
	}
	return files
}

// availableMemory is MemAvailable of /proc/meminfo in bytes, 0 where it
// cannot be read.
func availableMemory() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemAvailable:"); ok {
			var kb int64
			if _, err := fmt.Sscan(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), &kb); err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

// freshRead reads the index files once into one new buffer of their size.
func freshRead(c config, stdout io.Writer) error {
	files := openFiles(filepath.Join(c.dir, fmt.Sprintf("scale-%d.db", c.rows)), c.half)
	var size int64
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			return err
		}
		size += st.Size()
	}
	t := time.Now()
	buf := make([]byte, size)
	at := 0
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		n, err := io.ReadFull(f, buf[at:])
		f.Close()
		at += n
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
			return err
		}
	}
	_, err := fmt.Fprintln(stdout, time.Since(t))
	return err
}

func readAll(name string, buf []byte) (int64, error) {
	f, err := os.Open(name)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var n int64
	for {
		m, err := f.Read(buf)
		n += int64(m)
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

type openResult struct {
	// Search is the fastest of the queries and Floor the fastest of five
	// reads: on a shared machine the minimum is the steadier measure.
	Open, Search, SearchMean, Floor, Floor32 time.Duration
	OpenUser, OpenSys                        time.Duration // CPU time of Open
	RSS, HWM, Matrix                         int64
}

func openPhase(ctx context.Context, c config, stdout io.Writer) error {
	path := filepath.Join(c.dir, fmt.Sprintf("scale-%d.db", c.rows))
	opts := []retrieval.Option{retrieval.WithChunker(chunker()), retrieval.WithReadOnly()}
	if c.half {
		opts = append(opts, retrieval.WithHalfPrecision())
	}
	if c.cpuprofile != "" {
		f, err := os.Create(c.cpuprofile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
	}
	u0, s0 := cpuTimes()
	t0 := time.Now()
	ix, err := retrieval.Open(ctx, path, manifest(c), opts...)
	open := time.Since(t0)
	u1, s1 := cpuTimes()
	pprof.StopCPUProfile()
	if err != nil {
		return err
	}
	defer ix.Close()
	var res openResult
	res.Open, res.OpenUser, res.OpenSys = open, u1-u0, s1-s0
	res.Matrix = ix.MatrixBytes()
	if res.RSS, res.HWM, err = memory(); err != nil {
		return err
	}
	if ix.Len() != c.rows {
		return fmt.Errorf("opened %d rows, want %d", ix.Len(), c.rows)
	}
	r := rand.New(rand.NewPCG(2, 3))
	p := retrieval.CorpusPolicy{AsOf: time.Now(), Scope: "bench"}
	q := make([]float32, c.dims)
	var total time.Duration
	res.Search = time.Duration(1<<63 - 1)
	for range c.queries {
		for j := range q {
			q[j] = float32(r.NormFloat64())
		}
		t := time.Now()
		if _, err := ix.Search(ctx, q, p, 10); err != nil {
			return err
		}
		d := time.Since(t)
		total += d
		res.Search = min(res.Search, d)
	}
	res.SearchMean = total / time.Duration(c.queries)
	res.Floor = floor(res.Matrix)
	res.Floor32 = floor(int64(c.rows) * int64(c.dims) * 4)
	return json.NewEncoder(stdout).Encode(res)
}

// floor times a read of n bytes of memory on every core, summing 64-bit
// words; it reads at most 1 GiB and scales the time to n.
func floor(n int64) time.Duration {
	size := min(n, 1<<30) &^ 63
	buf := make([]uint64, size/8)
	for i := range buf {
		buf[i] = uint64(i)
	}
	parts := runtime.GOMAXPROCS(0)
	best := time.Duration(1<<63 - 1)
	var sink uint64
	for range 5 {
		t := time.Now()
		sink += sumWords(buf, parts)
		best = min(best, time.Since(t))
	}
	_ = unsafe.Sizeof(sink)
	return time.Duration(float64(best) * float64(n) / float64(size))
}

func sumWords(w []uint64, parts int) uint64 {
	per := (len(w) + parts - 1) / parts
	sums := make([]uint64, parts)
	var wg sync.WaitGroup
	for p := range parts {
		wg.Go(func() {
			x := w[min(p*per, len(w)):min((p+1)*per, len(w))]
			var s0, s1, s2, s3, s4, s5, s6, s7 uint64
			i := 0
			for ; i+8 <= len(x); i += 8 {
				y := x[i : i+8 : i+8]
				s0 += y[0]
				s1 += y[1]
				s2 += y[2]
				s3 += y[3]
				s4 += y[4]
				s5 += y[5]
				s6 += y[6]
				s7 += y[7]
			}
			for ; i < len(x); i++ {
				s0 += x[i]
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

// cpuTimes returns the process's user and system CPU time.
func cpuTimes() (user, sys time.Duration) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
}

// memory returns VmRSS and VmHWM from /proc/self/status.
func memory() (rss, hwm int64, err error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, 0, err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		for key, dst := range map[string]*int64{"VmRSS:": &rss, "VmHWM:": &hwm} {
			if v, ok := strings.CutPrefix(line, key); ok {
				kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				if err != nil {
					return 0, 0, err
				}
				*dst = kb << 10
			}
		}
	}
	return rss, hwm, nil
}
