// Package retrieval finds the passages an answer may rest on, and refuses
// answers that do not quote them.
//
// # Corpus and policy
//
// A [Source] is a document with the facts a [CorpusPolicy] decides on:
// scopes, a validity window and whether it is admissible at all. A [Chunker]
// cuts sources into [Chunk]s by paragraphs with a maximum size (the rule is
// documented on Chunker and is deterministic); chunk IDs are
// "<source id>#<n>". A CorpusPolicy (AsOf and Scope, both required) is
// applied to sources before any ranking: chunks of an inadmissible, not yet
// valid, expired or out-of-scope source are never scored, so they cannot
// appear in a result however close their vectors are.
//
// # Index
//
// An [Index] is a SQLite file at the path given to [Open]
// (modernc.org/sqlite, no cgo) holding the [Manifest] (provider, model,
// model version, dimensions, corpus digest), the counts and the table of
// vector segments, and beside it three files of the current generation n:
// a vector file "<path>-vectors-<n>" holding every vector, L2-normalised,
// as consecutive float32 rows; its half-precision copy "<path>-halves-<n>";
// and a source log "<path>-sources-<n>" holding each source's metadata and
// chunk texts as checksummed records. On Linux, Open maps the vector file
// read-only and the float32 matrix is that mapping (the page cache's
// pages: nothing is copied and no fresh memory is touched); WithHalfPrecision
// the matrix is the halves file mapped the same way; elsewhere the rows are
// read into memory. Open checks, in one sequential pass on every core,
// each segment's CRC-32C (the vector digest) and each row's length (and,
// WithHalfPrecision, that every half-precision row is the float32 row
// rounded), the SQLite file with quick_check, and every source record's
// CRC-32C, structure and digest, recomputed from its metadata and chunk
// texts, and from them the corpus digest. Memory after Open is the matrix
// (the mapped file's pages count as resident) plus each source's metadata;
// chunk texts are read from the source log for a search's hits only, and
// checked again there (checksum and digest). Files of the earlier layouts
// (one vector BLOB per chunk; sources and chunk texts in SQLite) are
// migrated by the first writable Open, after the checks those layouts
// made.
//
// The mapped rows never change: Upsert writes new rows after the recorded
// ones and maps the file again at its new length, Rebuild and compaction
// write a new generation, and the old mapping is released only when no
// search reads it (Close too). A file cut or damaged by another program
// while mapped makes a search fail with ErrCorrupt rather than crash the
// process.
//
// [Index.Rebuild] writes a new generation and switches to it in the SQLite
// transaction that records it; [Index.Upsert] and [Index.Delete] append
// rows, half-precision rows and source records and record them in their
// transaction. Each then updates the matrix, so files and memory stay in
// step and a search never reads SQLite. When deleted rows reach a quarter
// of the live ones, a write compacts them away into a new generation.
//
// A writable handle holds the files exclusively for its life; handles
// opened [WithReadOnly] share them with each other (and exclude a writer).
//
// # Search
//
// [Index.Search] and [Index.SearchBatch] are exact: the score of a chunk is
// the dot product of the normalised float32 query and vector evaluated in
// float64, the best k are returned, and equal scores are ordered by chunk
// ID, so results are deterministic and the same on every kernel. The scan
// runs in float32 (or, [WithHalfPrecision], over a half-precision matrix of
// half the bytes) with a proved error bound, and only the rows the bound
// cannot rule out are scored exactly, from the float32 rows (in
// half-precision mode, read from the vector file). On amd64 CPUs with AVX2,
// FMA and F16C (checked at run time with golang.org/x/sys/cpu) the scan
// runs in Go-assembly kernels; elsewhere, or with the purego or noasm build
// tag, or [WithPortableKernel], pure-Go kernels do. Large matrices are
// scanned by one goroutine per core ([WithWorkers]).
//
// # Embedding
//
// [Embedder] turns texts into vectors. The sub-package retrieval/ollama
// implements it for an Ollama server. A failed call is an error: there is no
// fallback to other vectors.
//
// # AnswerGate
//
// [AnswerGate.Validate] accepts a [Proposal] only when it is usable, cites
// at least one [Evidence], and every piece names a chunk among the search's
// hits (valid on the [GateInput]'s date) and quotes at least 20 characters
// of it verbatim. The accepted [Answer.Text] is rebuilt from the (chunk ID,
// quote) pairs alone; a refusal lists each failed [Rule] with the evidence
// it concerns.
//
// # Logging
//
// The index logs only through [WithLogger] (nothing without it), with
// context, errors under the key "error"; logs never hold vectors or chunk
// text.
//
// # Telemetry
//
// [Open] takes [WithTracerProvider] and [WithMeterProvider]; without them
// the global providers are used. When neither can record (no provider
// given, none installed by the program), a search skips every piece of
// telemetry and costs what it did without it. The instrumentation scope is
// "github.com/candorkit/candor/retrieval". No span or metric ever holds a
// chunk text, a title, a source text or a query vector.
//
// Spans (kind internal):
//
//	retrieval.search  one per Search or SearchBatch call
//	  retrieval.k              int     k
//	  retrieval.queries        int     queries in the call (1 for Search)
//	  retrieval.rows.admitted  int     rows the policy admits
//	  retrieval.rows.scanned   int     rows the scan read (every admitted row; 0 when it did not finish)
//	  retrieval.rows.rescored  int     rows scored exactly after the scan
//	  retrieval.workers        int     goroutines the scan ran on
//	  retrieval.kernel         string  as Index.Kernel ("go", "avx2+fma+f16c")
//	  retrieval.precision      string  "float32", or "float16" WithHalfPrecision
//	  error.type               string  the Classify kind, on failure only
//	retrieval.open  one per Open call (its duration is the load and checks)
//	  retrieval.rows           int     live rows loaded
//	  retrieval.bytes          int     bytes of the matrix in memory
//	  retrieval.kernel, retrieval.precision, retrieval.read_only (bool)
//	  error.type               string  the Classify kind, on failure only
//
// A failed span has status Error described by its kind; an error's text is
// never recorded.
//
// Metrics (histograms, unit s):
//
//	retrieval.search.duration  retrieval.kernel, retrieval.precision, error.type (on failure)
//	retrieval.open.duration    retrieval.kernel, retrieval.precision (on success), retrieval.read_only, error.type (on failure)
//
// # Failures
//
// Every failure is an error that matches a sentinel with errors.Is, and a
// typed error with errors.As carries the evidence:
//
//   - [ErrManifestMismatch] / *[MismatchError] (Field, Want, Got: Want is
//     what was expected, Got what was found): the handle's manifest, a
//     vector's or query's dimension, the corpus digest or the chunker
//     differs from what the index was built with. Vectors of one model are
//     never compared with another's.
//   - [ErrInvalidCorpus] / *[CorpusError]: an invalid or duplicate source, a
//     vector count that does not match the chunk count, a zero or
//     non-finite vector, a Delete of an unknown source.
//   - [ErrInvalidQuery] / *[QueryError]: a zero or non-finite query, k out
//     of range.
//   - [ErrInvalidPolicy] / *[CorpusPolicyError]: a CorpusPolicy without AsOf
//     or Scope.
//   - [ErrNoAdmissible]: the policy admits no chunk. An empty result is
//     never returned as a success.
//   - [ErrNotBuilt], [ErrClosed]: nothing to search yet, or after Close.
//   - [ErrLocked]: another handle holds the files (a writer, or, for a
//     writer, read-only handles); retry after it closes.
//   - [ErrReadOnly]: a write through a read-only handle, or a read-only
//     Open of a file that needs migrating (open it writable once).
//   - [ErrCorrupt] / *[CorruptError]: the files fail the checks made at
//     Open: SQLite's own (a damaged or truncated file), an existing file
//     without an index, schema and manifest, a recorded count or length
//     the files cannot hold, the headers and sizes of the vector file,
//     halves file and source log, a segment's CRC-32C, a row that is not
//     unit length, WithHalfPrecision a half-precision row that is not its
//     float32 row rounded, a source record's CRC-32C, structure or digest
//     (recomputed from the record), a source recorded twice, row ranges
//     and chunk counts, the corpus digest; and from a search, a mapped
//     file that could no longer be read (cut or damaged by another program
//     while in use), a hit's source record that no longer passes its
//     checksum and digest, or WithHalfPrecision a candidate's float32 row
//     that is not the one its half-precision row was made from. A search
//     never returns a text that failed its check. Restore the files from a
//     backup or Rebuild into a new path.
//   - [ErrRejected] / *[RejectedError] (from [Answer.Err]): the gate
//     refused a proposal; each [Rejection] names its rule and evidence.
//
// [Classify] maps an error to a stable [Kind], also the error.type of the
// spans and metrics: invalid_query, invalid_policy, invalid_corpus,
// manifest_mismatch, no_admissible, not_built, closed, corrupt, locked,
// read_only, not_found (a read-only Open of a missing file), rejected,
// canceled, deadline_exceeded (the context's errors), and other for
// anything else (an I/O error, an unusable option). A search span fails
// with invalid_query, invalid_policy, manifest_mismatch, no_admissible,
// not_built, closed, corrupt, canceled, deadline_exceeded or other; an
// Open span with invalid_corpus, locked, corrupt, read_only, not_found,
// canceled, deadline_exceeded or other.
//
// Failed writes change nothing that a later Open reads, in the files or in
// memory; a failed search returns no hits.
package retrieval
