package retrieval

import "context"

// Embedder turns texts into vectors, one per text, in order. An
// implementation returns an error for any failure; it never substitutes
// other vectors. The sub-package retrieval/ollama provides one for an
// Ollama server.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}
