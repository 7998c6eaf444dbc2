package retrieval_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/candorkit/candor/retrieval"
)

// A two-dimensional corpus with hand-placed vectors: the export guide at
// (1,0), everything else at (0,1). A real service gets the vectors from an
// Embedder such as the one in retrieval/ollama.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "retrieval-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	corpus := []retrieval.Source{
		{ID: "ACME-EXPORT", Title: "Exporting reports", Scopes: []string{"acme"}, Admissible: true,
			Text: "In Reporting, open any report and choose Export > CSV to download its rows as a CSV file."},
		{ID: "ACME-OLD-EXPORT", Title: "Exporting (2024)", Scopes: []string{"acme"}, Admissible: true,
			ValidUntil: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC),
			Text:       "CSV export lives under Settings > Data."},
		{ID: "ACME-USERS", Title: "Users", Scopes: []string{"acme"}, Admissible: true,
			Text: "Administrators invite users from Settings > Team."},
	}
	vectors := [][]float32{{1, 0}, {1, 0}, {0, 1}} // one per chunk, in retrieval.Chunks(corpus) order
	m := retrieval.Manifest{Provider: "example", Model: "hand-placed", Dims: 2, CorpusDigest: retrieval.CorpusDigest(corpus)}

	ix, err := retrieval.Open(ctx, filepath.Join(dir, "kb.db"), m)
	if err != nil {
		log.Fatal(err)
	}
	defer ix.Close()
	if err := ix.Rebuild(ctx, corpus, m, vectors); err != nil {
		log.Fatal(err)
	}

	question := "Where can I export CSV in Reporting?"
	asOf := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	hits, err := ix.Search(ctx, []float32{1, 0}, retrieval.CorpusPolicy{AsOf: asOf, Scope: "acme"}, 2)
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range hits {
		fmt.Printf("%s %.2f\n", h.ChunkID, h.Score) // the expired guide never appears
	}

	gate := retrieval.AnswerGate{}
	c := retrieval.GateInput{Question: question, AsOf: asOf, Hits: hits}
	ans := gate.Validate(retrieval.Proposal{Usable: true, Evidence: []retrieval.Evidence{
		{ChunkID: "ACME-EXPORT#0", Quote: "choose Export > CSV to download its rows"},
	}}, c)
	fmt.Println(ans.Accepted, ans.Text)

	ans = gate.Validate(retrieval.Proposal{Usable: true, Evidence: []retrieval.Evidence{
		{ChunkID: "ACME-OLD-EXPORT#0", Quote: "CSV export lives under Settings > Data."},
	}}, c)
	fmt.Println(ans.Accepted, ans.Rejections[0].Rule)
	// Output:
	// ACME-EXPORT#0 1.00
	// ACME-USERS#0 0.00
	// true "choose Export > CSV to download its rows" [ACME-EXPORT#0]
	// false chunk-among-hits
}

// A service that only searches opens the index read-only: any number of
// such handles may share the files, and a writer is refused while they
// hold them. WithHalfPrecision halves the memory and the bytes a search
// scans, with exactly the float32 results.
func ExampleWithReadOnly() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "retrieval-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "kb.db")

	corpus := []retrieval.Source{
		{ID: "ACME-EXPORT", Scopes: []string{"acme"}, Admissible: true, Text: "Choose Export > CSV in any report."},
		{ID: "ACME-USERS", Scopes: []string{"acme"}, Admissible: true, Text: "Invite users from Settings > Team."},
	}
	m := retrieval.Manifest{Provider: "example", Model: "hand-placed", Dims: 2, CorpusDigest: retrieval.CorpusDigest(corpus)}
	w, err := retrieval.Open(ctx, path, m)
	if err != nil {
		log.Fatal(err)
	}
	if err := w.Rebuild(ctx, corpus, m, [][]float32{{1, 0}, {0, 1}}); err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}

	r1, err := retrieval.Open(ctx, path, m, retrieval.WithReadOnly())
	if err != nil {
		log.Fatal(err)
	}
	defer r1.Close()
	r2, err := retrieval.Open(ctx, path, m, retrieval.WithReadOnly(), retrieval.WithHalfPrecision())
	if err != nil {
		log.Fatal(err)
	}
	defer r2.Close()
	policy := retrieval.CorpusPolicy{AsOf: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC), Scope: "acme"}
	for _, ix := range []*retrieval.Index{r1, r2} {
		hits, err := ix.Search(ctx, []float32{0.8, 0.6}, policy, 1)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s %.2f, matrix %d bytes\n", hits[0].ChunkID, hits[0].Score, ix.MatrixBytes())
	}

	_, err = retrieval.Open(ctx, path, m, retrieval.WithBusyTimeout(10*time.Millisecond))
	fmt.Println(errors.Is(err, retrieval.ErrLocked))
	fmt.Println(errors.Is(r1.Delete(ctx, "ACME-USERS"), retrieval.ErrReadOnly))
	// Output:
	// ACME-EXPORT#0 0.80, matrix 16 bytes
	// ACME-EXPORT#0 0.80, matrix 8 bytes
	// true
	// true
}

// Classify names a failure with a stable kind, the same string the
// search span and duration metric carry as error.type.
func ExampleClassify() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "retrieval-classify")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ix, err := retrieval.Open(ctx, filepath.Join(dir, "index.db"),
		retrieval.Manifest{Provider: "example", Model: "hand-placed", Dims: 2})
	if err != nil {
		log.Fatal(err)
	}
	defer ix.Close()
	_, err = ix.Search(ctx, []float32{1, 0}, retrieval.CorpusPolicy{AsOf: time.Now(), Scope: "acme"}, 3)
	fmt.Println(retrieval.Classify(err))
	// Output: not_built
}
