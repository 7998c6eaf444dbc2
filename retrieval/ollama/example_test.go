package ollama_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/candorkit/candor/retrieval"
	"github.com/candorkit/candor/retrieval/ollama"
)

// An embedder for a local Ollama server, used where retrieval wants an
// Embedder. Nothing is sent until Embed is called.
func Example() {
	emb, err := ollama.New("http://127.0.0.1:11434", "nomic-embed-text",
		ollama.WithTimeout(30*time.Second),
		ollama.WithBatch(32),
		ollama.WithMaxResponseBytes(16<<20))
	if err != nil {
		log.Fatal(err)
	}
	var _ retrieval.Embedder = emb // an Embedder for retrieval
	fmt.Println(emb.Model())

	// A cancelled context fails like every other failure: an error that
	// matches ErrEmbed, and no vectors.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	vecs, err := emb.Embed(ctx, []string{"How do I export a report?"})
	fmt.Println(vecs == nil, errors.Is(err, ollama.ErrEmbed), errors.Is(err, context.Canceled))
	// Output:
	// nomic-embed-text
	// true true true
}
