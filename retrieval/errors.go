package retrieval

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error the package returns for one of these
// conditions matches the sentinel with errors.Is; the typed errors below
// carry the evidence.
var (
	// ErrManifestMismatch: the vectors at hand were not made by the model,
	// dimension or corpus the index was built with. See *MismatchError.
	ErrManifestMismatch = errors.New("retrieval: manifest mismatch")
	// ErrNotBuilt: the index holds no manifest yet; call Rebuild first.
	ErrNotBuilt = errors.New("retrieval: index not built")
	// ErrNoAdmissible: the policy admits no chunk of the index, so there is
	// nothing to rank. This is not an empty success.
	ErrNoAdmissible = errors.New("retrieval: policy admits no chunk")
	// ErrInvalidQuery: the query vector or k is unusable. See *QueryError.
	ErrInvalidQuery = errors.New("retrieval: invalid query")
	// ErrInvalidPolicy: a Policy without AsOf or Scope. See *PolicyError.
	ErrInvalidPolicy = errors.New("retrieval: invalid policy")
	// ErrInvalidCorpus: a source, chunk vector or count is unusable. See
	// *CorpusError.
	ErrInvalidCorpus = errors.New("retrieval: invalid corpus")
	// ErrCorrupt: the SQLite file holds data the index cannot trust.
	ErrCorrupt = errors.New("retrieval: corrupt index file")
	// ErrClosed: the Index was closed.
	ErrClosed = errors.New("retrieval: index closed")
	// ErrRejected: AnswerGate refused a proposal. See *RejectedError.
	ErrRejected = errors.New("retrieval: answer rejected")
	// ErrEmbed: an embedder failed. See *EmbedError.
	ErrEmbed = errors.New("retrieval: embedding failed")
)

// MismatchError says which manifest field differs between what the caller
// holds (Want) and what the index holds (Got). It matches
// ErrManifestMismatch.
type MismatchError struct {
	Field   string // "Profile", "Provider", "Model", "ModelVersion", "Dims", "CorpusDigest" or "Chunker.MaxRunes"
	Want    string
	Got     string
	ChunkID string // set when one vector has the wrong dimension
}

func (e *MismatchError) Error() string {
	s := fmt.Sprintf("retrieval: manifest mismatch: %s: want %q, index has %q", e.Field, e.Want, e.Got)
	if e.ChunkID != "" {
		s = fmt.Sprintf("retrieval: manifest mismatch: %s of vector for chunk %q: want %s, got %s", e.Field, e.ChunkID, e.Want, e.Got)
	}
	return s
}

// Unwrap returns ErrManifestMismatch.
func (e *MismatchError) Unwrap() error { return ErrManifestMismatch }

// QueryError describes an unusable query. It matches ErrInvalidQuery.
type QueryError struct {
	Query  int // index of the query in a batch (0 for Search)
	Reason string
}

func (e *QueryError) Error() string {
	return fmt.Sprintf("retrieval: invalid query %d: %s", e.Query, e.Reason)
}

// Unwrap returns ErrInvalidQuery.
func (e *QueryError) Unwrap() error { return ErrInvalidQuery }

// PolicyError describes an unusable Policy. It matches ErrInvalidPolicy.
type PolicyError struct{ Reason string }

func (e *PolicyError) Error() string { return "retrieval: invalid policy: " + e.Reason }

// Unwrap returns ErrInvalidPolicy.
func (e *PolicyError) Unwrap() error { return ErrInvalidPolicy }

// CorpusError describes an unusable source, vector or count. It matches
// ErrInvalidCorpus.
type CorpusError struct {
	SourceID string
	ChunkID  string
	Reason   string
}

func (e *CorpusError) Error() string {
	s := "retrieval: invalid corpus"
	if e.SourceID != "" {
		s += fmt.Sprintf(": source %q", e.SourceID)
	}
	if e.ChunkID != "" {
		s += fmt.Sprintf(": chunk %q", e.ChunkID)
	}
	return s + ": " + e.Reason
}

// Unwrap returns ErrInvalidCorpus.
func (e *CorpusError) Unwrap() error { return ErrInvalidCorpus }

// CorruptError says what in the index file cannot be trusted. It matches
// ErrCorrupt.
type CorruptError struct {
	What string
	Err  error // underlying cause, if any
}

func (e *CorruptError) Error() string {
	if e.Err != nil {
		return "retrieval: corrupt index file: " + e.What + ": " + e.Err.Error()
	}
	return "retrieval: corrupt index file: " + e.What
}

// Unwrap returns ErrCorrupt and the cause.
func (e *CorruptError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrCorrupt, e.Err}
	}
	return []error{ErrCorrupt}
}
