package retrieval_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/candorkit/candor/retrieval"
)

// A two-dimensional corpus with hand-placed vectors: the export guide at
// (1,0), everything else at (0,1). A real service gets the vectors from an
// Embedder such as retrieval.NewOllamaEmbedder.
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
	hits, err := ix.Search(ctx, []float32{1, 0}, retrieval.Policy{AsOf: asOf, Scope: "acme"}, 2)
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range hits {
		fmt.Printf("%s %.2f\n", h.ChunkID, h.Score) // the expired guide never appears
	}

	gate := retrieval.AnswerGate{}
	c := retrieval.Context{Question: question, AsOf: asOf, Hits: hits}
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
