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
	// ErrInvalidPolicy: a CorpusPolicy without AsOf or Scope. See *CorpusPolicyError.
	ErrInvalidPolicy = errors.New("retrieval: invalid policy")
	// ErrInvalidCorpus: a source, chunk vector or count is unusable. See
	// *CorpusError.
	ErrInvalidCorpus = errors.New("retrieval: invalid corpus")
	// ErrCorrupt: the index files hold data the index cannot trust. See
	// *CorruptError.
	ErrCorrupt = errors.New("retrieval: corrupt index file")
	// ErrLocked: another handle holds the file: a writer excludes every
	// other handle, read-only handles exclude writers.
	ErrLocked = errors.New("retrieval: index file is locked by another handle")
	// ErrReadOnly: a write through a handle opened WithReadOnly, or a file
	// that only a writable Open can migrate.
	ErrReadOnly = errors.New("retrieval: read-only handle")
	// ErrClosed: the Index was closed.
	ErrClosed = errors.New("retrieval: index closed")
	// ErrRejected: AnswerGate refused a proposal. See *RejectedError.
	ErrRejected = errors.New("retrieval: answer rejected")
)

// MismatchError says which field differs, and how. Want is always the
// value that was expected and Got the value that was found: for the model
// identity, Want is the manifest the handle was opened with and Got the
// manifest the file records (or, for Rebuild, the manifest passed with the
// vectors); for a dimension, Want is the index's and Got the dimension of the
// query or vector; for a corpus digest, Want is the digest the manifest
// states and Got the digest of the corpus at hand. It matches
// ErrManifestMismatch.
type MismatchError struct {
	Field   string // "Profile", "Provider", "Model", "ModelVersion", "Dims", "CorpusDigest" or "Chunker.MaxRunes"
	Want    string
	Got     string
	ChunkID string // set when one vector has the wrong dimension
	Query   int    // the query's index in a batch, when a query has the wrong dimension
}

func (e *MismatchError) Error() string {
	what := e.Field
	if e.ChunkID != "" {
		what = fmt.Sprintf("%s of vector for chunk %q", e.Field, e.ChunkID)
	}
	return fmt.Sprintf("retrieval: manifest mismatch: %s: want %q, got %q", what, e.Want, e.Got)
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

// CorpusPolicyError describes an unusable CorpusPolicy. It matches ErrInvalidPolicy.
type CorpusPolicyError struct{ Reason string }

func (e *CorpusPolicyError) Error() string { return "retrieval: invalid policy: " + e.Reason }

// Unwrap returns ErrInvalidPolicy.
func (e *CorpusPolicyError) Unwrap() error { return ErrInvalidPolicy }

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
