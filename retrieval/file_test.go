package retrieval

import (
	"database/sql"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// editFile changes a closed index file behind the package's back.
func editFile(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer db.Close()
	for _, s := range stmts {
		_, err := db.Exec(s)
		require.NoError(t, err, s)
	}
}

// vectorFile returns the path of the current vector file of a closed index.
func vectorFile(t *testing.T, path string) string {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer db.Close()
	var gen int64
	require.NoError(t, db.QueryRow(`SELECT value FROM meta WHERE key='vector_file'`).Scan(&gen))
	return vectorPath(path, gen)
}

// writeRow overwrites row r of a closed index's vector file with v.
func writeRow(t *testing.T, path string, dims, r int, v []float32) {
	t.Helper()
	f, err := os.OpenFile(vectorFile(t, path), os.O_RDWR, 0)
	require.NoError(t, err)
	defer f.Close()
	_, err = f.WriteAt(encodeVector(nil, v), vectorHeaderBytes+int64(r*4*dims))
	require.NoError(t, err)
}

// reseal recomputes every segment checksum of a closed index, as a tool that
// rewrote the file consistently would.
func reseal(t *testing.T, path string, dims int) {
	t.Helper()
	f, err := os.Open(vectorFile(t, path))
	require.NoError(t, err)
	defer f.Close()
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer db.Close()
	rows, err := db.Query(`SELECT first_row, rows FROM segments`)
	require.NoError(t, err)
	var segs [][2]int
	for rows.Next() {
		var a, b int
		require.NoError(t, rows.Scan(&a, &b))
		segs = append(segs, [2]int{a, b})
	}
	require.NoError(t, rows.Close())
	for _, s := range segs {
		b := make([]byte, s[1]*4*dims)
		_, err := f.ReadAt(b, vectorHeaderBytes+int64(s[0]*4*dims))
		require.NoError(t, err)
		_, err = db.Exec(`UPDATE segments SET crc32c=? WHERE first_row=?`, int64(crc32.Checksum(b, castagnoli)), s[0])
		require.NoError(t, err)
	}
}

func requireCorrupt(t *testing.T, path string, m Manifest, what string, opts ...Option) *CorruptError {
	t.Helper()
	re, err := Open(t.Context(), path, m, opts...)
	if err == nil {
		re.Close()
		t.Fatalf("%s: a damaged index opened", what)
	}
	t.Logf("%s: %v", what, err)
	var ce *CorruptError
	require.ErrorIs(t, err, ErrCorrupt, what)
	require.ErrorAs(t, err, &ce, what)
	return ce
}

// metaValue reads one meta value of a closed index.
func metaValue(t *testing.T, path, key string) string {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer db.Close()
	var v string
	require.NoError(t, db.QueryRow(`SELECT value FROM meta WHERE key=?`, key).Scan(&v))
	return v
}

// sourcesFile returns the path of the current source log of a closed index.
func sourcesFile(t *testing.T, path string) string {
	t.Helper()
	gen, err := strconv.ParseInt(metaValue(t, path, "vector_file"), 10, 64)
	require.NoError(t, err)
	return sourcesPath(path, gen)
}

// logRecords returns the records (headers included) of a closed index's
// source log, up to its recorded length.
func logRecords(t *testing.T, path string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(sourcesFile(t, path))
	require.NoError(t, err)
	end, err := strconv.Atoi(metaValue(t, path, "sources_bytes"))
	require.NoError(t, err)
	var recs [][]byte
	for at := fileHeaderBytes; at < end; {
		n := recordHead + int(binary.LittleEndian.Uint32(b[at:]))
		recs = append(recs, b[at:at+n:at+n])
		at += n
	}
	return recs
}

// writeLog replaces the records of a closed index's source log and
// records its new length, as a tool that rewrote the file would.
func writeLog(t *testing.T, path string, recs [][]byte) {
	t.Helper()
	name := sourcesFile(t, path)
	b, err := os.ReadFile(name)
	require.NoError(t, err)
	b = b[:fileHeaderBytes]
	for _, r := range recs {
		b = append(b, r...)
	}
	require.NoError(t, os.WriteFile(name, b, 0o600))
	editFile(t, path, fmt.Sprintf(`UPDATE meta SET value = '%d' WHERE key = 'sources_bytes'`, len(b)))
}

// putOf returns the index of the put record of source id.
func putOf(t *testing.T, recs [][]byte, id string) int {
	t.Helper()
	for i, r := range recs {
		rec, err := parseRecord(r[recordHead:], nil)
		require.NoError(t, err)
		if rec.kind == recordPut && rec.e.meta.ID == id {
			return i
		}
	}
	t.Fatalf("no record of %s", id)
	return -1
}

// resealPut re-encodes a put record after edit changed its source, texts
// or first row, with a valid checksum and the stored digest unchanged: a
// consistent rewrite of the record but for its digest.
func resealPut(t *testing.T, r []byte, edit func(e *entry, texts *[]string)) []byte {
	t.Helper()
	rec, err := parseRecord(r[recordHead:], nil)
	require.NoError(t, err)
	texts, ok := splitTexts(rec.texts, rec.e.n, true)
	require.True(t, ok)
	edit(&rec.e, &texts)
	return appendPut(nil, &rec.e, texts, rec.e.start)
}

// editLog applies edit to the records of a closed index's source log.
func editLog(t *testing.T, path string, edit func(recs [][]byte) [][]byte) {
	t.Helper()
	writeLog(t, path, edit(logRecords(t, path)))
}

func TestOpenRejectsCorruptFile(t *testing.T) {
	cases := map[string]string{
		"bad manifest":       `UPDATE meta SET value = '{' WHERE key = 'manifest'`,
		"chunk count":        `UPDATE meta SET value = '2' WHERE key = 'chunks'`,
		"schema":             `UPDATE meta SET value = '9' WHERE key = 'schema'`,
		"segment checksum":   `UPDATE segments SET crc32c = (crc32c + 1) % 4294967296`,
		"lost segment":       `DELETE FROM segments`,
		"more rows":          `UPDATE meta SET value = '4' WHERE key = 'vector_rows'`,
		"other file ID":      `UPDATE meta SET value = '00000000000000000000000000000000' WHERE key = 'vector_file_id'`,
		"other generation":   `UPDATE meta SET value = '7' WHERE key = 'vector_file'`,
		"source log length":  `UPDATE meta SET value = CAST(value AS INTEGER) - 1 WHERE key = 'sources_bytes'`,
		"source log longer":  `UPDATE meta SET value = CAST(value AS INTEGER) + 100 WHERE key = 'sources_bytes'`,
		"no source log size": `DELETE FROM meta WHERE key = 'sources_bytes'`,
	}
	for name, stmt := range cases {
		t.Run(name, func(t *testing.T) {
			corpus, vecs := controlled()
			ix, path, m := openBuilt(t, corpus, vecs)
			ix.Close()
			editFile(t, path, stmt)
			requireCorrupt(t, path, m, name)
		})
	}
	// The source log, edited as a tool would: records rewritten with valid
	// checksums (resealed) are found by the digest recomputed from them,
	// the counts and the row ranges; bytes damaged in place by the
	// record's CRC-32C.
	edit := func(id string, f func(e *entry, texts *[]string)) func([][]byte) [][]byte {
		return func(recs [][]byte) [][]byte {
			i := putOf(t, recs, id)
			recs[i] = resealPut(t, recs[i], f)
			return recs
		}
	}
	logCases := map[string]func([][]byte) [][]byte{
		"edited text": edit("ACME-EXPORT", func(_ *entry, texts *[]string) { (*texts)[0] = "Export is under Settings." }),
		"bad chunk texts": func(recs [][]byte) [][]byte {
			i := putOf(t, recs, "ACME-EXPORT")
			r := resealPut(t, recs[i], func(_ *entry, texts *[]string) { *texts = []string{"short"} })
			r[len(r)-6] = 0x7f // the text's length now runs past the record
			recs[i] = sealRecord(r, 0)
			return recs
		},
		"edited admissibility": edit("ACME-USERS", func(e *entry, _ *[]string) { e.meta.Admissible = false }),
		"edited scopes":        edit("ACME-USERS", func(e *entry, _ *[]string) { e.meta.Scopes = []string{"other"} }),
		"lost chunk":           edit("ACME-USERS", func(_ *entry, texts *[]string) { *texts = nil }),
		"lost source": func(recs [][]byte) [][]byte {
			i := putOf(t, recs, "ACME-USERS")
			return append(recs[:i], recs[i+1:]...)
		},
		"source twice": func(recs [][]byte) [][]byte {
			return append(recs, recs[putOf(t, recs, "ACME-USERS")])
		},
		"delete of an unknown source": func(recs [][]byte) [][]byte { return append(recs, appendDelete(nil, "ACME-NONE")) },
		"overlapping rows":            edit("ACME-USERS", func(e *entry, _ *[]string) { e.start = 0 }),
		"rows past the end":           edit("ACME-USERS", func(e *entry, _ *[]string) { e.start = 7 }),
		"damaged record": func(recs [][]byte) [][]byte {
			i := putOf(t, recs, "ACME-EXPORT")
			recs[i][len(recs[i])-3] ^= 0x20 // a letter of its text, in place
			return recs
		},
		"record length": func(recs [][]byte) [][]byte {
			recs[0][0]++
			return recs
		},
	}
	for name, f := range logCases {
		t.Run(name, func(t *testing.T) {
			corpus, vecs := controlled()
			ix, path, m := openBuilt(t, corpus, vecs)
			ix.Close()
			editLog(t, path, f)
			requireCorrupt(t, path, m, name)
		})
	}
	t.Run("truncated vector file", func(t *testing.T) {
		corpus, vecs := controlled()
		ix, path, m := openBuilt(t, corpus, vecs)
		ix.Close()
		require.NoError(t, os.Truncate(vectorFile(t, path), vectorHeaderBytes+8))
		requireCorrupt(t, path, m, "truncated vector file")
	})
	t.Run("truncated source log", func(t *testing.T) {
		corpus, vecs := controlled()
		ix, path, m := openBuilt(t, corpus, vecs)
		ix.Close()
		require.NoError(t, os.Truncate(sourcesFile(t, path), fileHeaderBytes+8))
		requireCorrupt(t, path, m, "truncated source log")
	})
	t.Run("truncated halves file", func(t *testing.T) {
		corpus, vecs := controlled()
		ix, path, m := openBuilt(t, corpus, vecs)
		ix.Close()
		name := strings.Replace(vectorFile(t, path), "-vectors-", "-halves-", 1)
		require.NoError(t, os.Truncate(name, fileHeaderBytes+2))
		requireCorrupt(t, path, m, "truncated halves file")
		requireCorrupt(t, path, m, "truncated halves file, half precision", WithHalfPrecision())
	})
	for _, file := range []string{"-vectors-", "-halves-", "-sources-"} {
		t.Run("header of "+file, func(t *testing.T) {
			corpus, vecs := controlled()
			ix, path, m := openBuilt(t, corpus, vecs)
			ix.Close()
			f, err := os.OpenFile(strings.Replace(vectorFile(t, path), "-vectors-", file, 1), os.O_RDWR, 0)
			require.NoError(t, err)
			_, err = f.WriteAt([]byte{3}, 32) // dimensions
			require.NoError(t, err)
			require.NoError(t, f.Close())
			requireCorrupt(t, path, m, "file header")
		})
	}
}

// A vector replaced by other finite values of the right length, here the
// unit vector of another chunk, is found by the vector digest at Open.
func TestOpenChecksVectorDigest(t *testing.T) {
	corpus, vecs := controlled()
	ix, path, m := openBuilt(t, corpus, vecs)
	before, err := ix.Search(t.Context(), []float32{1, 0}, CorpusPolicy{AsOf: asOf, Scope: "acme"}, 3)
	require.NoError(t, err)
	require.Equal(t, "ACME-EXPORT#0", before[0].ChunkID)
	ix.Close()
	writeRow(t, path, 2, 0, []float32{1, 0}) // ACME-BILLING now sits on the query
	ce := requireCorrupt(t, path, m, "replaced vector")
	assert.Contains(t, ce.What, "vector digest")
}

// A damaged SQLite file (cut to half its length, or garbage over any one
// of its pages) fails Open with ErrCorrupt, never with a bare SQLite error
// and never by opening; so does garbage over any page of the source log
// or the vector file, and of the halves file for a half-precision handle.
func TestOpenRejectsDamagedFile(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	corpus, vecs := randomCorpus(r, 300, 4)
	ix, path, m := openBuilt(t, corpus, vecs)
	ix.Close()
	const page = 4096
	vf := vectorFile(t, path)
	files := []struct {
		name string
		opts []Option
	}{
		{path, nil},
		{sourcesFile(t, path), nil},
		{vf, nil},
		{strings.Replace(vf, "-vectors-", "-halves-", 1), []Option{WithHalfPrecision()}},
	}
	total := 0
	for _, file := range files {
		pristine, err := os.ReadFile(file.name)
		require.NoError(t, err)
		pages := (len(pristine) + page - 1) / page
		require.Greater(t, pages, 1, "%s spans several pages", file.name)
		total += pages
		restore := func() { require.NoError(t, os.WriteFile(file.name, pristine, 0o600)) }
		if file.name == path {
			require.Zero(t, len(pristine)%page)
			require.NoError(t, os.WriteFile(path, pristine[:len(pristine)/2], 0o600))
			requireCorrupt(t, path, m, "truncated to half")
			restore()
		}
		garbage := make([]byte, page)
		for p := range pages {
			for i := range garbage {
				garbage[i] = byte(r.Uint32())
			}
			b := append([]byte(nil), pristine...)
			copy(b[p*page:], garbage)
			b = b[:len(pristine)]
			require.NoError(t, os.WriteFile(file.name, b, 0o600))
			requireCorrupt(t, path, m, fmt.Sprintf("garbage over page %d of %d of %s", p+1, pages, file.name), file.opts...)
		}
		restore()
	}
	require.Greater(t, total, 8, "the fixture spans several pages")
	re, err := Open(t.Context(), path, m)
	require.NoError(t, err, "the restored files open")
	require.NoError(t, re.Close())

	// A file truncated to 0 bytes is not taken for a new, empty index.
	require.NoError(t, os.WriteFile(path, nil, 0o600))
	requireCorrupt(t, path, m, "truncated to 0 bytes")
}

// A recorded row count the files cannot hold is refused before Open sizes
// the matrix by it: a corrupt count must be an error, not an allocation of
// terabytes.
func TestOpenRejectsImpossibleChunkCount(t *testing.T) {
	corpus, _ := controlled()
	r := rand.New(rand.NewPCG(5, 6))
	vecs := [][]float32{randVec(r, 768), randVec(r, 768), randVec(r, 768)}
	ix, path, m := openBuilt(t, corpus, vecs)
	ix.Close()
	editFile(t, path, `UPDATE meta SET value = '2147483647' WHERE key IN ('chunks', 'vector_rows')`,
		`UPDATE segments SET rows = 2147483647`)
	requireCorrupt(t, path, m, "2³¹-1 rows of 768 dimensions")
}

// A vector that is not unit length (here a NaN row and a zero row, in a file
// whose checksums were recomputed) is found whether the segments are read
// by one worker or several, and the error names the first bad row in file
// order either way.
func TestOpenFindsFirstBadVector(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	const dims = 512 // 512 rows per segment
	n := 1400
	corpus := make([]Source, n)
	vecs := make([][]float32, n)
	for i := range corpus {
		corpus[i] = Source{ID: fmt.Sprintf("S%05d", i), Scopes: []string{"acme"}, Admissible: true, Text: "t"}
		vecs[i] = randVec(r, dims)
	}
	ix, path, m := openBuilt(t, corpus, vecs)
	ix.Close()
	nan := make([]float32, dims)
	for i := range nan {
		nan[i] = float32(math.NaN())
	}
	writeRow(t, path, dims, 1100, make([]float32, dims))
	writeRow(t, path, dims, 600, nan)
	reseal(t, path, dims)
	for _, workers := range []int{1, 4} {
		ce := requireCorrupt(t, path, m, "bad vectors", WithWorkers(workers))
		assert.Contains(t, ce.What, "vector row 600 is not unit length", "workers %d", workers)
	}
}

// Want is what was expected and Got what was found, in every MismatchError:
// for a dimension, Want is the index's.
func TestMismatchWantGot(t *testing.T) {
	corpus, vecs := controlled()
	ix, _, m := openBuilt(t, corpus, vecs)
	p := CorpusPolicy{AsOf: asOf, Scope: "acme"}
	var me *MismatchError
	_, err := ix.SearchBatch(t.Context(), [][]float32{{1, 0}, {1, 0, 0}}, p, 1)
	require.ErrorAs(t, err, &me)
	assert.Equal(t, MismatchError{Field: "Dims", Want: "2", Got: "3", Query: 1}, *me, "query of 3 dims")
	err = ix.Rebuild(t.Context(), corpus, m, [][]float32{{0, 1}, {1, 0, 0}, {0, 1}})
	require.ErrorAs(t, err, &me)
	assert.Equal(t, MismatchError{Field: "Dims", Want: "2", Got: "3", ChunkID: "ACME-EXPORT#0"}, *me, "vector of 3 dims")
	other := m
	other.Model = "other"
	err = ix.Rebuild(t.Context(), corpus, other, vecs)
	require.ErrorAs(t, err, &me)
	assert.Equal(t, MismatchError{Field: "Model", Want: m.Model, Got: "other"}, *me, "rebuild with another model")
	assert.Equal(t, `retrieval: manifest mismatch: Model: want "hand-placed", got "other"`, me.Error())
}

// A writer holds the file alone; read-only handles share it with each other
// and serve the same results; each side gets ErrLocked from the other.
func TestLockingAndReadOnlyHandles(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 52))
	corpus, vecs := randomCorpus(r, 40, 8)
	w, path, m := openBuilt(t, corpus, vecs)
	q := randVec(r, 8)
	p := CorpusPolicy{AsOf: asOf, Scope: "acme"}
	want, err := w.Search(t.Context(), q, p, 10)
	require.NoError(t, err)

	_, err = Open(t.Context(), path, m, WithBusyTimeout(10*time.Millisecond))
	require.ErrorIs(t, err, ErrLocked, "a second writer")
	_, err = Open(t.Context(), path, m, WithBusyTimeout(10*time.Millisecond), WithReadOnly())
	require.ErrorIs(t, err, ErrLocked, "a reader while the writer holds the file")
	require.NoError(t, w.Close())

	r1, err := Open(t.Context(), path, m, WithReadOnly())
	require.NoError(t, err)
	defer r1.Close()
	r2, err := Open(t.Context(), path, m, WithReadOnly(), WithHalfPrecision())
	require.NoError(t, err)
	defer r2.Close()
	for _, h := range []*Index{r1, r2} {
		got, err := h.Search(t.Context(), q, p, 10)
		require.NoError(t, err)
		assert.Equal(t, want, got)
	}
	_, err = Open(t.Context(), path, m, WithBusyTimeout(10*time.Millisecond))
	require.ErrorIs(t, err, ErrLocked, "a writer while readers hold the file")
	assert.ErrorIs(t, r1.Upsert(t.Context(), corpus[:1], vecs[:1]), ErrReadOnly)
	assert.ErrorIs(t, r1.Delete(t.Context(), corpus[0].ID), ErrReadOnly)
	assert.ErrorIs(t, r1.Rebuild(t.Context(), corpus, m, vecs), ErrReadOnly)
	_, err = Open(t.Context(), path+".missing", m, WithReadOnly())
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// Leftovers of a crash are harmless: rows and records appended but never
// recorded are ignored and then overwritten, and an unrecorded next
// generation's files are removed at the next Open.
func TestCrashLeftovers(t *testing.T) {
	corpus, vecs := controlled()
	ix, path, m := openBuilt(t, corpus, vecs)
	ix.Close()
	vf := vectorFile(t, path)
	f, err := os.OpenFile(vf, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.Write(make([]byte, 4*2*5))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	// A record appended to the source log but never recorded.
	f, err = os.OpenFile(sourcesFile(t, path), os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.Write(appendDelete(nil, "ACME-USERS"))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	for _, next := range generationFiles(path, 2) {
		require.NoError(t, os.WriteFile(next, []byte("half-written"), 0o600))
	}

	re, err := Open(t.Context(), path, m)
	require.NoError(t, err)
	defer re.Close()
	assert.Equal(t, 3, re.Len(), "the unrecorded delete is ignored")
	for _, next := range generationFiles(path, 2) {
		_, err = os.Stat(next)
		assert.ErrorIs(t, err, os.ErrNotExist, "stale next generation removed: %s", next)
	}
	extra := Source{ID: "ACME-EXTRA", Scopes: []string{"acme"}, Admissible: true, Text: "Extra passage."}
	m.CorpusDigest = ""
	require.NoError(t, re.Upsert(t.Context(), []Source{extra}, [][]float32{{0.6, 0.8}}))
	hits, err := re.Search(t.Context(), []float32{0.6, 0.8}, CorpusPolicy{AsOf: asOf, Scope: "acme"}, 1)
	require.NoError(t, err)
	assert.Equal(t, "ACME-EXTRA#0", hits[0].ChunkID)
	require.NoError(t, re.Close())
	re2, err := Open(t.Context(), path, m)
	require.NoError(t, err)
	assert.Equal(t, 4, re2.Len())
	require.NoError(t, re2.Close())
}

// Deleting enough rows compacts the vector file into a new generation and
// removes the old one.
func TestCompactionSwitchesGeneration(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 62))
	corpus, vecs := randomCorpus(r, 40, 8)
	ix, path, _ := openBuilt(t, corpus, vecs)
	first := vectorPath(path, ix.gen)
	var ids []string
	for _, s := range corpus[:20] {
		ids = append(ids, s.ID)
	}
	require.NoError(t, ix.Delete(t.Context(), ids...))
	assert.Equal(t, int64(2), ix.gen)
	assert.Zero(t, ix.dead)
	_, err := os.Stat(first)
	assert.ErrorIs(t, err, os.ErrNotExist, "old generation removed")
	checkExact(t, corpus[20:], vecsOf(corpus, vecs, corpus[20:]), CorpusPolicy{AsOf: asOf, Scope: "acme"}, vecs[0], mustSearch(t, ix, vecs[0], 10), 10)
}

func mustSearch(t *testing.T, ix *Index, q []float32, k int) []Hit {
	t.Helper()
	hits, err := ix.Search(t.Context(), q, CorpusPolicy{AsOf: asOf, Scope: "acme"}, k)
	require.NoError(t, err)
	return hits
}

// vecsOf returns the vectors of the chunks of keep, a sub-corpus of corpus.
func vecsOf(corpus []Source, vecs [][]float32, keep []Source) [][]float32 {
	want := map[string]bool{}
	for _, s := range keep {
		want[s.ID] = true
	}
	var out [][]float32
	vi := 0
	for _, s := range corpus {
		for range Chunks([]Source{s}) {
			if want[s.ID] {
				out = append(out, vecs[vi])
			}
			vi++
		}
	}
	return out
}

// Open allocates little beyond the matrix it keeps: in total at most 1.15
// times the matrix bytes, so the heap after Open stays within that without
// waiting for a collection.
func TestOpenAllocatesAboutTheMatrix(t *testing.T) {
	r := rand.New(rand.NewPCG(71, 72))
	const dims, n = 768, 10000
	corpus := make([]Source, n/10)
	for i := range corpus {
		var text strings.Builder
		for p := range 10 {
			fmt.Fprintf(&text, "Paragraph %d of source %05d.\n\n", p, i)
		}
		corpus[i] = Source{ID: fmt.Sprintf("S%05d", i), Scopes: []string{"acme"}, Admissible: true, Text: text.String()}
	}
	c := Chunker{MaxRunes: 40}
	vecs := make([][]float32, n)
	for i := range vecs {
		vecs[i] = randVec(r, dims)
	}
	path := t.TempDir() + "/alloc.db"
	m := Manifest{Provider: "fixture", Model: "random", Dims: dims, CorpusDigest: c.Digest(corpus)}
	ix, err := Open(t.Context(), path, m, WithChunker(c))
	require.NoError(t, err)
	require.NoError(t, ix.Rebuild(t.Context(), corpus, m, vecs))
	require.NoError(t, ix.Close())
	var overhead32 int64
	for _, half := range []bool{false, true} {
		opts := []Option{WithChunker(c), WithWorkers(2)}
		if half {
			opts = append(opts, WithHalfPrecision())
		}
		before := allocatedBytes()
		re, err := Open(t.Context(), path, m, opts...)
		require.NoError(t, err)
		alloc := int64(allocatedBytes() - before)
		matrix := re.MatrixBytes()
		// A mapped matrix is the file's pages, not heap memory.
		heap := matrix
		if re.mat.mapped != nil {
			heap = 0
		}
		assert.Equal(t, mapsVectors(), re.mat.mapped != nil, "matrix mapped")
		require.NoError(t, re.Close())
		t.Logf("half %v: Open allocated %d bytes for a matrix of %d (%.3f×)", half, alloc, matrix, float64(alloc)/float64(matrix))
		if !half {
			assert.LessOrEqual(t, float64(alloc), 1.15*float64(matrix))
			overhead32 = alloc - heap
		} else {
			// The sources weigh the same in either mode; each worker adds its
			// read buffers.
			assert.LessOrEqual(t, alloc-heap, overhead32+2*segmentBytes+1<<20)
		}
	}
}

func allocatedBytes() uint64 {
	runtime.GC() // flush per-P caches into the statistics
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

var _ = binary.LittleEndian
var _ = reflect.DeepEqual

// The chunk texts are not kept in memory: a search reads the record of
// each source among its hits again, and a record damaged or rewritten
// since Open (here in place, with the handle open) makes that search fail
// with ErrCorrupt, never return the text; searches whose hits are
// elsewhere still succeed.
func TestTextCheckedWhenRead(t *testing.T) {
	corpus, vecs := controlled()
	ix, path, _ := openBuilt(t, corpus, vecs)
	p := CorpusPolicy{AsOf: asOf, Scope: "acme"}
	hits, err := ix.Search(t.Context(), []float32{1, 0}, p, 1)
	require.NoError(t, err)
	require.Equal(t, "ACME-EXPORT#0", hits[0].ChunkID)
	want := hits[0].Text

	ix.mu.RLock()
	e := ix.sourceOf(1)
	rec, recLen, gen := e.rec, e.recLen, ix.gen
	ix.mu.RUnlock()
	require.Equal(t, "ACME-EXPORT", e.meta.ID)
	f, err := os.OpenFile(sourcesPath(path, gen), os.O_RDWR, 0)
	require.NoError(t, err)
	defer f.Close()
	pristine := make([]byte, recLen)
	_, err = f.ReadAt(pristine, rec)
	require.NoError(t, err)

	damaged := append([]byte(nil), pristine...)
	damaged[len(damaged)-3] ^= 0x20 // a letter of the text
	resealed := sealRecord(append([]byte(nil), damaged...), 0)
	for name, b := range map[string][]byte{"damaged in place": damaged, "rewritten with a valid checksum": resealed} {
		_, err = f.WriteAt(b, rec)
		require.NoError(t, err)
		hits, err := ix.Search(t.Context(), []float32{1, 0}, p, 1)
		var ce *CorruptError
		require.ErrorAs(t, err, &ce, name)
		assert.ErrorIs(t, err, ErrCorrupt, name)
		assert.Contains(t, ce.What, `source log record of source "ACME-EXPORT"`, name)
		assert.Nil(t, hits, name)
		others, err := ix.Search(t.Context(), []float32{0, 1}, p, 2)
		require.NoError(t, err, name)
		assert.ElementsMatch(t, []string{"ACME-BILLING#0", "ACME-USERS#0"}, hitIDs(others), name)
	}
	_, err = f.WriteAt(pristine, rec)
	require.NoError(t, err)
	hits, err = ix.Search(t.Context(), []float32{1, 0}, p, 1)
	require.NoError(t, err)
	assert.Equal(t, want, hits[0].Text, "restored")
}

// The halves file is checked row by row against the vector file's checked
// rows by a half-precision Open; a float32 handle does not read it past
// its header and size.
func TestOpenChecksHalfCopy(t *testing.T) {
	r := rand.New(rand.NewPCG(111, 112))
	corpus, vecs := randomCorpus(r, 50, 16)
	ix, path, m := openBuilt(t, corpus, vecs)
	require.NoError(t, ix.Close())
	name := strings.Replace(vectorFile(t, path), "-vectors-", "-halves-", 1)
	f, err := os.OpenFile(name, os.O_RDWR, 0)
	require.NoError(t, err)
	// Row 7's first component one half-precision step off.
	b := make([]byte, 2)
	_, err = f.ReadAt(b, fileHeaderBytes+7*2*16)
	require.NoError(t, err)
	binary.LittleEndian.PutUint16(b, binary.LittleEndian.Uint16(b)+1)
	_, err = f.WriteAt(b, fileHeaderBytes+7*2*16)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	for _, workers := range []int{1, 3} {
		ce := requireCorrupt(t, path, m, "half copy", WithHalfPrecision(), WithWorkers(workers))
		assert.Contains(t, ce.What, "half-precision copy of vector row 7 differs", "workers %d", workers)
	}
	re, err := Open(t.Context(), path, m, WithReadOnly())
	require.NoError(t, err, "a float32 handle does not use the halves")
	require.NoError(t, re.Close())
}
