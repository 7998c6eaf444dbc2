package retrieval

import (
	"strconv"
	"strings"
)

// Manifest names what produced an index's vectors. Vectors are only ever
// compared with vectors of the same manifest: an Index refuses to search or
// update when the manifest it was opened with differs from the one it was
// built with (ErrManifestMismatch).
type Manifest struct {
	Profile      string // caller's label for the embedding profile (prompt prefix, task type…); may be empty
	Provider     string // required, e.g. "ollama"
	Model        string // required, e.g. "nomic-embed-text"
	ModelVersion string // e.g. the model digest; compared exactly, may be empty
	Dims         int    // required, > 0
	// CorpusDigest is Chunker.Digest of the corpus the vectors were made
	// from. Rebuild requires it to match the corpus it is given. In the
	// manifest passed to Open it is optional: when set, it pins the corpus
	// the caller expects the index to hold.
	CorpusDigest string
}

func (m Manifest) validate() error {
	switch {
	case strings.TrimSpace(m.Provider) == "":
		return &CorpusError{Reason: "manifest Provider is empty"}
	case strings.TrimSpace(m.Model) == "":
		return &CorpusError{Reason: "manifest Model is empty"}
	case m.Dims <= 0:
		return &CorpusError{Reason: "manifest Dims must be positive"}
	case m.Dims > maxDims:
		return &CorpusError{Reason: "manifest Dims above " + strconv.Itoa(maxDims)}
	}
	return nil
}

// maxDims bounds the vector dimension (the largest common embedding models
// have 4096).
const maxDims = 1 << 16

// mismatch compares the model identity of want (caller) against got (index)
// and, when checkDigest and want.CorpusDigest are set, the corpus digest.
func mismatch(want, got Manifest, checkDigest bool) error {
	fields := []struct{ name, w, g string }{
		{"Profile", want.Profile, got.Profile},
		{"Provider", want.Provider, got.Provider},
		{"Model", want.Model, got.Model},
		{"ModelVersion", want.ModelVersion, got.ModelVersion},
		{"Dims", strconv.Itoa(want.Dims), strconv.Itoa(got.Dims)},
	}
	if checkDigest && want.CorpusDigest != "" {
		fields = append(fields, struct{ name, w, g string }{"CorpusDigest", want.CorpusDigest, got.CorpusDigest})
	}
	for _, f := range fields {
		if f.w != f.g {
			return &MismatchError{Field: f.name, Want: f.w, Got: f.g}
		}
	}
	return nil
}
