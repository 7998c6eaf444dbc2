package retrieval

import (
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// editFile changes a closed index file behind the package's back.
func editFile(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

func TestOpenReordersUngroupedChunks(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	corpus, _ := randomCorpus(r, 20, 8)
	corpus = append(corpus, Source{ID: "LONG", Scopes: []string{"acme"}, Admissible: true, Text: strings.Repeat("lorem ipsum ", 300)})
	var vecs [][]float32
	for range Chunks(corpus) {
		vecs = append(vecs, randVec(r, 8))
	}
	ix, path, m := openBuilt(t, corpus, vecs)
	q := randVec(r, 8)
	p := Policy{AsOf: asOf, Scope: "acme"}
	want, err := ix.Search(t.Context(), q, p, 20)
	if err != nil {
		t.Fatal(err)
	}
	ix.Close()
	// Move the first chunk of a multi-chunk source to the end of rowid order.
	var sid string
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`SELECT source_id FROM chunks GROUP BY source_id HAVING count(*) > 1 LIMIT 1`).Scan(&sid); err != nil {
		t.Fatal(err)
	}
	db.Close()
	editFile(t, path,
		`CREATE TEMP TABLE c AS SELECT * FROM chunks WHERE source_id='`+sid+`' AND n=0`,
		`DELETE FROM chunks WHERE source_id='`+sid+`' AND n=0`,
		`INSERT INTO chunks SELECT * FROM temp.c`)
	re, err := Open(t.Context(), path, m)
	if err != nil {
		t.Fatal(err)
	}
	defer re.Close()
	got, err := re.Search(t.Context(), q, p, 20)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("after reordering rows: %v, want %v", hitIDs(got), hitIDs(want))
	}
}

func TestOpenRejectsCorruptFile(t *testing.T) {
	cases := map[string]string{
		"short vector":         `UPDATE chunks SET vector = substr(vector, 1, 4) WHERE n = 0`,
		"zero vector":          `UPDATE chunks SET vector = zeroblob(8) WHERE source_id = 'ACME-USERS'`,
		"edited text":          `UPDATE chunks SET text = 'Export is under Settings.' WHERE source_id = 'ACME-EXPORT'`,
		"edited admissibility": `UPDATE sources SET admissible = 0 WHERE id = 'ACME-USERS'`,
		"lost chunk":           `DELETE FROM chunks WHERE source_id = 'ACME-USERS'`,
		"bad manifest":         `UPDATE meta SET value = '{' WHERE key = 'manifest'`,
		"chunk count":          `UPDATE meta SET value = '2' WHERE key = 'chunks'`,
		"schema":               `UPDATE meta SET value = '9' WHERE key = 'schema'`,
	}
	for name, stmt := range cases {
		corpus, vecs := controlled()
		ix, path, m := openBuilt(t, corpus, vecs)
		ix.Close()
		editFile(t, path, stmt)
		re, err := Open(t.Context(), path, m)
		if err == nil {
			re.Close()
			t.Errorf("%s: opened", name)
			continue
		}
		var ce *CorruptError
		if !errors.Is(err, ErrCorrupt) || !errors.As(err, &ce) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// A recorded chunk count the file cannot hold is refused before Open sizes
// the matrix by it: a corrupt count must be an error, not an allocation of
// terabytes.
func TestOpenRejectsImpossibleChunkCount(t *testing.T) {
	corpus, _ := controlled()
	r := rand.New(rand.NewPCG(5, 6))
	vecs := [][]float32{randVec(r, 768), randVec(r, 768), randVec(r, 768)}
	ix, path, m := openBuilt(t, corpus, vecs)
	ix.Close()
	editFile(t, path, `UPDATE meta SET value = '2147483647' WHERE key = 'chunks'`)
	re, err := Open(t.Context(), path, m)
	if err == nil {
		re.Close()
		t.Fatal("opened a file that records 2³¹-1 chunks of 768 dimensions")
	}
	var ce *CorruptError
	if !errors.As(err, &ce) || !strings.Contains(ce.What, "chunk count") {
		t.Fatalf("%v, want a CorruptError about the chunk count", err)
	}
}

// A bad vector deep in a large file is found whether the vectors are
// normalised on the scanning goroutine or behind it on another, and the
// error names the first bad chunk in file order either way.
func TestOpenFindsFirstBadVector(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	const dims = 512 // 128 rows per normaliser block
	n := 400
	corpus := make([]Source, n)
	vecs := make([][]float32, n)
	for i := range corpus {
		corpus[i] = Source{ID: fmt.Sprintf("S%05d", i), Scopes: []string{"acme"}, Admissible: true, Text: "t"}
		vecs[i] = randVec(r, dims)
	}
	ix, path, m := openBuilt(t, corpus, vecs)
	ix.Close()
	nan := strings.Repeat("0000C07F", dims) // little-endian float32 NaN
	editFile(t, path,
		`UPDATE chunks SET vector = zeroblob(2048) WHERE source_id = 'S00350'`,
		`UPDATE chunks SET vector = x'`+nan+`' WHERE source_id = 'S00300'`)
	for _, workers := range []int{1, 4} {
		re, err := Open(t.Context(), path, m, WithWorkers(workers))
		if err == nil {
			re.Close()
			t.Fatalf("workers %d: opened a file with a NaN vector", workers)
		}
		var ce *CorruptError
		if !errors.As(err, &ce) || !strings.Contains(ce.What, `"S00300#0": non-finite component`) {
			t.Fatalf("workers %d: %v", workers, err)
		}
	}
}

// Open reads the file through mmap but leaves the handle without it.
func TestOpenLeavesMmapOff(t *testing.T) {
	corpus, vecs := controlled()
	ix, path, m := openBuilt(t, corpus, vecs)
	ix.Close()
	re, err := Open(t.Context(), path, m)
	if err != nil {
		t.Fatal(err)
	}
	defer re.Close()
	var size int64
	if err := re.db.QueryRowContext(t.Context(), `PRAGMA mmap_size`).Scan(&size); err != nil || size != 0 {
		t.Fatalf("mmap_size after Open = %d (%v), want 0", size, err)
	}
}
