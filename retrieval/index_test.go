package retrieval

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var asOf = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

func day(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

func testManifest(dims int, corpus []Source) Manifest {
	return Manifest{Profile: "test", Provider: "fixture", Model: "hand-placed", ModelVersion: "1", Dims: dims, CorpusDigest: CorpusDigest(corpus)}
}

// openBuilt opens a new index file and rebuilds it with corpus and vecs.
func openBuilt(t *testing.T, corpus []Source, vecs [][]float32, opts ...Option) (*Index, string, Manifest) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "index.db")
	m := testManifest(len(vecs[0]), corpus)
	ix, err := Open(t.Context(), path, m, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ix.Close() })
	require.NoError(t, ix.Rebuild(t.Context(), corpus, m, vecs))
	return ix, path, m
}

// controlled is the policy-first fixture: two dimensions, the chunk of
// ACME-EXPORT at (1,0), every other chunk at (0,1).
func controlled() ([]Source, [][]float32) {
	corpus := []Source{
		{ID: "ACME-BILLING", Title: "Billing", Scopes: []string{"acme"}, Admissible: true,
			Text: "Invoices are issued on the first working day of each month."},
		{ID: "ACME-EXPORT", Title: "Exporting reports", Scopes: []string{"acme"}, Admissible: true,
			ValidFrom: day(2026, 1, 1),
			Text:      "In Reporting, open any report and choose Export > CSV to download its rows as a CSV file."},
		{ID: "ACME-USERS", Title: "Users", Scopes: []string{"acme"}, Admissible: true,
			Text: "Administrators invite users from Settings > Team."},
	}
	var vecs [][]float32
	for _, c := range Chunks(corpus) {
		if c.Source == "ACME-EXPORT" {
			vecs = append(vecs, []float32{1, 0})
		} else {
			vecs = append(vecs, []float32{0, 1})
		}
	}
	return corpus, vecs
}

func hitIDs(hits []Hit) []string {
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.ChunkID
	}
	return ids
}

func TestControlledFixture(t *testing.T) {
	corpus, vecs := controlled()
	ix, _, _ := openBuilt(t, corpus, vecs)
	question := "Where can I export CSV in Reporting?"
	// The query vector an embedder would give the question in this
	// two-dimensional fixture space.
	hits, err := ix.Search(t.Context(), []float32{1, 0}, CorpusPolicy{AsOf: asOf, Scope: "acme"}, 3)
	require.NoError(t, err)
	if got := hitIDs(hits); !reflect.DeepEqual(got, []string{"ACME-EXPORT#0", "ACME-BILLING#0", "ACME-USERS#0"}) {
		t.Fatalf("hits %v: want ACME-EXPORT first, then the tie broken by chunk ID", got)
	}
	if hits[0].Score != 1 || hits[1].Score != 0 || hits[0].Title != "Exporting reports" || hits[0].SourceID != "ACME-EXPORT" {
		t.Fatalf("first hits: %+v", hits[:2])
	}
	ans := AnswerGate{}.Validate(Proposal{Usable: true, Evidence: []Evidence{
		{ChunkID: "ACME-EXPORT#0", Quote: " choose Export > CSV to download its rows as a CSV file. "},
	}}, GateInput{Question: question, AsOf: asOf, Hits: hits})
	require.NoError(t, ans.Err())
	if want := `"choose Export > CSV to download its rows as a CSV file." [ACME-EXPORT#0]`; ans.Text != want || ans.Question != question {
		t.Fatalf("answer %q, want %q", ans.Text, want)
	}
}

func TestPolicyBeforeRanking(t *testing.T) {
	corpus := []Source{
		{ID: "EXPIRED", Scopes: []string{"acme"}, Admissible: true, ValidUntil: day(2026, 1, 1), Text: "Old export instructions."},
		{ID: "FUTURE", Scopes: []string{"acme"}, Admissible: true, ValidFrom: day(2027, 1, 1), Text: "Next year's export instructions."},
		{ID: "OTHER-SCOPE", Scopes: []string{"globex"}, Admissible: true, Text: "Another customer's export instructions."},
		{ID: "INADMISSIBLE", Scopes: []string{"acme"}, Admissible: false, Text: "A draft nobody approved."},
		{ID: "KEPT", Scopes: []string{"acme", "globex"}, Admissible: true, ValidFrom: day(2025, 1, 1), ValidUntil: day(2027, 1, 1), Text: "Current export instructions."},
		{ID: "KEPT-FAR", Scopes: []string{"acme"}, Admissible: true, Text: "Unrelated."},
	}
	// The refused sources sit exactly on the query; the admitted ones far off.
	vecs := [][]float32{{1, 0, 0}, {1, 0, 0}, {1, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}}
	ix, _, _ := openBuilt(t, corpus, vecs)
	for _, workers := range []int{1, 4} {
		ix.workers = workers
		hits, err := ix.Search(t.Context(), []float32{1, 0, 0}, CorpusPolicy{AsOf: asOf, Scope: "acme"}, 10)
		require.NoError(t, err)
		if got := hitIDs(hits); !reflect.DeepEqual(got, []string{"KEPT#0", "KEPT-FAR#0"}) {
			t.Fatalf("workers %d: hits %v, want only the admitted sources", workers, got)
		}
	}
	// A policy that admits nothing is an error, not an empty success.
	_, err := ix.Search(t.Context(), []float32{1, 0, 0}, CorpusPolicy{AsOf: asOf, Scope: "initech"}, 10)
	if !errors.Is(err, ErrNoAdmissible) {
		t.Fatalf("empty admission: %v", err)
	}
	if _, err := ix.Search(t.Context(), []float32{1, 0, 0}, CorpusPolicy{Scope: "acme"}, 10); !errors.Is(err, ErrInvalidPolicy) {
		t.Fatalf("policy without AsOf: %v", err)
	}
}

func TestSearchRejectsBadQueries(t *testing.T) {
	corpus, vecs := controlled()
	ix, _, _ := openBuilt(t, corpus, vecs)
	p := CorpusPolicy{AsOf: asOf, Scope: "acme"}
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	for name, q := range map[string][]float32{
		"zero": {0, 0}, "nan": {nan, 1}, "inf": {inf, 0},
	} {
		hits, err := ix.Search(t.Context(), q, p, 3)
		if !errors.Is(err, ErrInvalidQuery) || hits != nil {
			t.Errorf("%s query: hits %v, err %v", name, hits, err)
		}
	}
	var me *MismatchError
	if _, err := ix.Search(t.Context(), []float32{1, 0, 0}, p, 3); !errors.As(err, &me) || me.Field != "Dims" || !errors.Is(err, ErrManifestMismatch) {
		t.Errorf("3-dim query on a 2-dim index: %v", err)
	}
	for _, k := range []int{0, -1, MaxK + 1} {
		if _, err := ix.Search(t.Context(), []float32{1, 0}, p, k); !errors.Is(err, ErrInvalidQuery) {
			t.Errorf("k=%d: %v", k, err)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := ix.Search(ctx, []float32{1, 0}, p, 3); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
}

func TestRebuildChecks(t *testing.T) {
	corpus, vecs := controlled()
	path := filepath.Join(t.TempDir(), "i.db")
	m := testManifest(2, corpus)
	ix, err := Open(t.Context(), path, m)
	require.NoError(t, err)
	defer ix.Close()
	if _, err := ix.Search(t.Context(), []float32{1, 0}, CorpusPolicy{AsOf: asOf, Scope: "acme"}, 1); !errors.Is(err, ErrNotBuilt) {
		t.Fatalf("search before rebuild: %v", err)
	}
	var me *MismatchError
	var ce *CorpusError
	cases := []struct {
		name  string
		call  func() error
		check func(error) bool
	}{
		{"one vector short", func() error { return ix.Rebuild(t.Context(), corpus, m, vecs[:2]) },
			func(err error) bool { return errors.As(err, &ce) && errors.Is(err, ErrInvalidCorpus) }},
		{"wrong dims", func() error {
			return ix.Rebuild(t.Context(), corpus, m, [][]float32{{0, 1}, {1, 0, 0}, {0, 1}})
		}, func(err error) bool {
			return errors.As(err, &me) && me.Field == "Dims" && me.ChunkID == "ACME-EXPORT#0"
		}},
		{"zero vector", func() error { return ix.Rebuild(t.Context(), corpus, m, [][]float32{{0, 1}, {0, 0}, {0, 1}}) },
			func(err error) bool { return errors.Is(err, ErrInvalidCorpus) }},
		{"stale digest", func() error {
			m2 := m
			m2.CorpusDigest = CorpusDigest(corpus[:2])
			return ix.Rebuild(t.Context(), corpus, m2, vecs)
		}, func(err error) bool { return errors.As(err, &me) && me.Field == "CorpusDigest" }},
		{"other model", func() error {
			m2 := m
			m2.Model = "other"
			return ix.Rebuild(t.Context(), corpus, m2, vecs)
		}, func(err error) bool { return errors.As(err, &me) && me.Field == "Model" }},
		{"duplicate source", func() error {
			c := append(corpus[:3:3], corpus[0])
			m2 := m
			m2.CorpusDigest = CorpusDigest(c)
			return ix.Rebuild(t.Context(), c, m2, append(vecs[:3:3], []float32{0, 1}))
		}, func(err error) bool { return errors.Is(err, ErrInvalidCorpus) }},
	}
	for _, c := range cases {
		if err := c.call(); err == nil || !c.check(err) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	if _, built := ix.Manifest(); built || ix.Len() != 0 {
		t.Fatal("a failed rebuild changed the index")
	}
	require.NoError(t, ix.Rebuild(t.Context(), corpus, m, vecs))
	if ix.Len() != 3 {
		t.Fatalf("Len = %d", ix.Len())
	}
}

func TestPersistenceAcrossReopen(t *testing.T) {
	corpus, vecs := randomCorpus(rand.New(rand.NewPCG(7, 8)), 40, 16)
	ix, path, m := openBuilt(t, corpus, vecs)
	q := randVec(rand.New(rand.NewPCG(9, 10)), 16)
	p := CorpusPolicy{AsOf: asOf, Scope: "acme"}
	before, err := ix.Search(t.Context(), q, p, 10)
	require.NoError(t, err)
	require.NoError(t, ix.Close())
	if _, err := ix.Search(t.Context(), q, p, 10); !errors.Is(err, ErrClosed) {
		t.Fatalf("search after close: %v", err)
	}
	re, err := Open(t.Context(), path, m)
	require.NoError(t, err)
	defer re.Close()
	after, err := re.Search(t.Context(), q, p, 10)
	require.NoError(t, err)
	if !reflect.DeepEqual(before, after) {
		t.Fatalf("results changed across reopen:\n%v\n%v", hitIDs(before), hitIDs(after))
	}
	if got, built := re.Manifest(); !built || got != m {
		t.Fatalf("manifest after reopen: %+v", got)
	}
}

func TestManifestMismatch(t *testing.T) {
	corpus, vecs := controlled()
	ix, path, m := openBuilt(t, corpus, vecs)
	require.NoError(t, ix.Close())
	p := CorpusPolicy{AsOf: asOf, Scope: "acme"}
	for _, c := range []struct {
		field string
		edit  func(*Manifest)
	}{
		{"Model", func(m *Manifest) { m.Model = "another-model" }},
		{"ModelVersion", func(m *Manifest) { m.ModelVersion = "2" }},
		{"Provider", func(m *Manifest) { m.Provider = "ollama" }},
		{"Profile", func(m *Manifest) { m.Profile = "query" }},
		{"Dims", func(m *Manifest) { m.Dims = 3 }},
		{"CorpusDigest", func(m *Manifest) { m.CorpusDigest = CorpusDigest(corpus[:1]) }},
	} {
		want := m
		c.edit(&want)
		ix, err := Open(t.Context(), path, want)
		if err != nil {
			t.Fatalf("%s: open: %v", c.field, err)
		}
		q := make([]float32, want.Dims)
		q[0] = 1
		_, serr := ix.Search(t.Context(), q, p, 1)
		uerr := ix.Upsert(t.Context(), corpus[:1], [][]float32{q})
		derr := ix.Delete(t.Context(), "ACME-USERS")
		for op, err := range map[string]error{"search": serr, "upsert": uerr, "delete": derr} {
			var me *MismatchError
			if !errors.Is(err, ErrManifestMismatch) || !errors.As(err, &me) || me.Field != c.field {
				t.Errorf("%s mismatch: %s: %v", c.field, op, err)
			}
		}
		require.NoError(t, ix.Close())
	}
	// Nothing was changed by the refused updates.
	ix, err := Open(t.Context(), path, m)
	require.NoError(t, err)
	defer ix.Close()
	if ix.Len() != 3 {
		t.Fatalf("Len = %d after refused updates", ix.Len())
	}
	// A handle opened with another chunker may search but not update.
	ix.Close()
	ix, err = Open(t.Context(), path, m, WithChunker(Chunker{MaxRunes: 50}))
	require.NoError(t, err)
	defer ix.Close()
	if _, err := ix.Search(t.Context(), []float32{1, 0}, p, 1); err != nil {
		t.Fatal(err)
	}
	var me *MismatchError
	if err := ix.Delete(t.Context(), "ACME-USERS"); !errors.As(err, &me) || me.Field != "Chunker.MaxRunes" {
		t.Fatalf("delete with another chunker: %v", err)
	}
}

// randomCorpus returns sources with 1-3 chunks each (some refused by the
// acme policy) and random vectors.
func randomCorpus(r *rand.Rand, n, dims int) ([]Source, [][]float32) {
	var corpus []Source
	for i := range n {
		s := Source{ID: fmt.Sprintf("S%03d", i), Title: fmt.Sprint("title ", i), Scopes: []string{"acme"}, Admissible: i%7 != 3}
		if i%11 == 5 {
			s.ValidUntil = day(2026, 1, 1)
		}
		paras := 1 + r.IntN(3)
		for p := range paras {
			s.Text += fmt.Sprintf("Paragraph %d of source %d, long enough to make a chunk of its own.\n\n", p, i)
		}
		corpus = append(corpus, s)
	}
	var vecs [][]float32
	for range Chunks(corpus) {
		vecs = append(vecs, randVec(r, dims))
	}
	return corpus, vecs
}

func TestUpsertDeleteStayInStep(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	const dims = 8
	c := Chunker{MaxRunes: 80}
	corpus, _ := randomCorpus(r, 30, dims)
	vecsFor := func(srcs []Source) [][]float32 {
		var v [][]float32
		for range c.ChunkCorpus(srcs) {
			v = append(v, randVec(r, dims))
		}
		return v
	}
	vecs := vecsFor(corpus)
	path := filepath.Join(t.TempDir(), "i.db")
	m := Manifest{Provider: "fixture", Model: "random", Dims: dims, CorpusDigest: c.Digest(corpus)}
	ix, err := Open(t.Context(), path, m, WithChunker(c))
	require.NoError(t, err)
	defer ix.Close()
	require.NoError(t, ix.Rebuild(t.Context(), corpus, m, vecs))
	// The live corpus, mirrored here: id -> (source, vectors).
	live := map[string]Source{}
	liveVecs := map[string][][]float32{}
	vi := 0
	for _, s := range corpus {
		n := len(c.Chunk(s))
		live[s.ID], liveVecs[s.ID] = s, vecs[vi:vi+n]
		vi += n
	}
	next := 30
	for step := range 40 {
		switch step % 3 {
		case 0, 1: // replace one source and add one
			old := live[corpus[r.IntN(len(corpus))].ID]
			if old.ID == "" {
				continue
			}
			old.Text = fmt.Sprintf("Rewritten at step %d.\n\nWith a second paragraph that is long enough to split.", step)
			nw := Source{ID: fmt.Sprintf("N%03d", next), Scopes: []string{"acme"}, Admissible: true, Text: "New source."}
			next++
			batch := []Source{old, nw}
			v := vecsFor(batch)
			require.NoError(t, ix.Upsert(t.Context(), batch, v))
			live[old.ID], liveVecs[old.ID] = old, v[:len(c.Chunk(old))]
			live[nw.ID], liveVecs[nw.ID] = nw, v[len(c.Chunk(old)):]
		case 2:
			for id := range live {
				require.NoError(t, ix.Delete(t.Context(), id))
				delete(live, id)
				delete(liveVecs, id)
				break
			}
		}
	}
	if err := ix.Upsert(t.Context(), nil, nil); !errors.Is(err, ErrInvalidCorpus) {
		t.Fatalf("empty upsert: %v", err)
	}
	if err := ix.Delete(t.Context()); !errors.Is(err, ErrInvalidCorpus) {
		t.Fatalf("empty delete: %v", err)
	}
	if err := ix.Delete(t.Context(), "no-such-source"); !errors.Is(err, ErrInvalidCorpus) {
		t.Fatalf("delete of a missing source: %v", err)
	}
	// A fresh index rebuilt from the mirrored corpus must answer exactly
	// like the incrementally updated one, and so must the reopened file.
	var fresh []Source
	var freshVecs [][]float32
	for _, s := range live {
		fresh = append(fresh, s)
		freshVecs = append(freshVecs, liveVecs[s.ID]...)
	}
	if got, _ := ix.Manifest(); got.CorpusDigest != c.Digest(fresh) {
		t.Fatalf("recorded digest %s, digest of live corpus %s", got.CorpusDigest, c.Digest(fresh))
	}
	m2 := m
	m2.CorpusDigest = c.Digest(fresh)
	ref, err := Open(t.Context(), filepath.Join(t.TempDir(), "ref.db"), m2, WithChunker(c))
	require.NoError(t, err)
	defer ref.Close()
	require.NoError(t, ref.Rebuild(t.Context(), fresh, m2, freshVecs))
	require.NoError(t, ix.Close())
	re, err := Open(t.Context(), path, m2, WithChunker(c))
	require.NoError(t, err)
	defer re.Close()
	p := CorpusPolicy{AsOf: asOf, Scope: "acme"}
	for range 10 {
		q := randVec(r, dims)
		want, err := ref.Search(t.Context(), q, p, 15)
		require.NoError(t, err)
		got, err := re.Search(t.Context(), q, p, 15)
		require.NoError(t, err)
		if !reflect.DeepEqual(hitIDs(got), hitIDs(want)) {
			t.Fatalf("incremental index differs from a rebuild:\n%v\n%v", hitIDs(got), hitIDs(want))
		}
	}
}

func TestSearchBatchMatchesSearch(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	const dims = 37 // exercises every kernel tail
	corpus, vecs := randomCorpus(r, 300, dims)
	ix, _, _ := openBuilt(t, corpus, vecs)
	p := CorpusPolicy{AsOf: asOf, Scope: "acme"}
	qs := [][]float32{randVec(r, dims), randVec(r, dims), randVec(r, dims)}
	batch, err := ix.SearchBatch(t.Context(), qs, p, 7)
	require.NoError(t, err)
	for i, q := range qs {
		one, err := ix.Search(t.Context(), q, p, 7)
		require.NoError(t, err)
		if !reflect.DeepEqual(one, batch[i]) {
			t.Fatalf("query %d: batch %v, single %v", i, hitIDs(batch[i]), hitIDs(one))
		}
		checkExact(t, corpus, vecs, p, q, one, 7)
	}
	if _, err := ix.SearchBatch(t.Context(), [][]float32{qs[0], make([]float32, dims)}, p, 3); !errors.Is(err, ErrInvalidQuery) {
		t.Fatalf("batch with a zero query: %v", err)
	}
}

func TestParallelAndPortableAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	const dims = 64
	// Enough rows for the parallel path (rows*dims >= parallelMinFloats).
	n := parallelMinFloats/dims + 500
	corpus := make([]Source, n)
	vecs := make([][]float32, n)
	for i := range corpus {
		corpus[i] = Source{ID: fmt.Sprintf("S%05d", i), Scopes: []string{"acme"}, Admissible: i%5 != 0, Text: "t"}
		vecs[i] = randVec(r, dims)
	}
	// Exact duplicates make ties that only the chunk ID can order.
	copy(vecs[101], vecs[7])
	copy(vecs[4001], vecs[7])
	ix, path, m := openBuilt(t, corpus, vecs, WithWorkers(4))
	require.NoError(t, ix.Close())
	p := CorpusPolicy{AsOf: asOf, Scope: "acme"}
	qs := [][]float32{vecs[7], randVec(r, dims), randVec(r, dims)}
	// One handle at a time: a handle holds the file exclusively.
	search := func(opts ...Option) ([][]Hit, string) {
		ix, err := Open(t.Context(), path, m, opts...)
		require.NoError(t, err)
		defer ix.Close()
		var res [][]Hit
		for _, q := range qs {
			hits, err := ix.Search(t.Context(), q, p, 10)
			require.NoError(t, err)
			res = append(res, hits)
		}
		return res, ix.Kernel()
	}
	single, _ := search(WithWorkers(1), WithPortableKernel())
	par, kern := search(WithWorkers(4))
	for qi := range qs {
		if !reflect.DeepEqual(hitIDs(single[qi]), hitIDs(par[qi])) {
			t.Fatalf("query %d: portable/1 worker %v, %s/4 workers %v", qi, hitIDs(single[qi]), kern, hitIDs(par[qi]))
		}
	}
	if got := hitIDs(par[0])[:3]; !reflect.DeepEqual(got, []string{"S00007#0", "S00101#0", "S04001#0"}) {
		t.Fatalf("ties not ordered by chunk ID: %v", got)
	}
}

// Writers and readers on one handle from several goroutines: run under
// -race, any unsynchronised access to the handle's state fails the test.
func TestConcurrentUse(t *testing.T) {
	corpus, vecs := controlled()
	ix, _, m := openBuilt(t, corpus, vecs)
	p := CorpusPolicy{AsOf: asOf, Scope: "acme"}
	extra := Source{ID: "ACME-EXTRA", Scopes: []string{"acme"}, Admissible: true, Text: "Extra passage."}
	errs := make(chan error, 4)
	var wg sync.WaitGroup
	wg.Go(func() {
		for range 20 {
			if err := ix.Upsert(t.Context(), []Source{extra}, [][]float32{{0, 1}}); err != nil {
				errs <- err
				return
			}
		}
	})
	wg.Go(func() {
		for range 20 {
			if err := ix.Rebuild(t.Context(), corpus, m, vecs); err != nil {
				errs <- err
				return
			}
		}
	})
	wg.Go(func() {
		for range 40 {
			hits, err := ix.Search(t.Context(), []float32{1, 0}, p, 1)
			if err != nil {
				errs <- err
				return
			}
			if hits[0].ChunkID != "ACME-EXPORT#0" {
				errs <- fmt.Errorf("first hit %s", hits[0].ChunkID)
				return
			}
			_, _ = ix.Manifest()
			_ = ix.Len()
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// checkExact compares hits with an exhaustive float64 cosine ranking of
// every chunk the policy admits: each score is right, the hits are in order,
// and no admitted chunk left out scores better than the last hit.
func checkExact(t *testing.T, corpus []Source, vecs [][]float32, p CorpusPolicy, q []float32, hits []Hit, k int) {
	t.Helper()
	const tol = 1e-5
	cos := func(a, b []float32) float64 {
		var ab, aa, bb float64
		for i := range a {
			ab += float64(a[i]) * float64(b[i])
			aa += float64(a[i]) * float64(a[i])
			bb += float64(b[i]) * float64(b[i])
		}
		return ab / math.Sqrt(aa*bb)
	}
	ref := map[string]float64{}
	vi := 0
	for _, s := range corpus {
		for _, c := range Chunks([]Source{s}) {
			if p.Check(s) == Admitted {
				ref[c.ID] = cos(q, vecs[vi])
			}
			vi++
		}
	}
	if len(hits) != min(k, len(ref)) {
		t.Fatalf("%d hits, want %d", len(hits), min(k, len(ref)))
	}
	returned := map[string]bool{}
	for i, h := range hits {
		want, ok := ref[h.ChunkID]
		if !ok {
			t.Fatalf("hit %s is not an admitted chunk", h.ChunkID)
		}
		if math.Abs(float64(h.Score)-want) > tol {
			t.Fatalf("hit %s scores %g, exact cosine %g", h.ChunkID, h.Score, want)
		}
		if i > 0 && h.Score > hits[i-1].Score {
			t.Fatalf("hits out of order at %d: %v", i, hitIDs(hits))
		}
		returned[h.ChunkID] = true
	}
	last := float64(hits[len(hits)-1].Score)
	for id, sc := range ref {
		if !returned[id] && sc > last+tol {
			t.Fatalf("admitted chunk %s (cosine %g) left out, last hit scores %g", id, sc, last)
		}
	}
}
