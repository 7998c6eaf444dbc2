// Package retrieval finds the passages an answer may rest on, and refuses
// answers that do not quote them.
//
// # Corpus and policy
//
// A [Source] is a document with the facts a [Policy] decides on: scopes, a
// validity window and whether it is admissible at all. A [Chunker] cuts
// sources into [Chunk]s by paragraphs with a maximum size (the rule is
// documented on Chunker and is deterministic); chunk IDs are
// "<source id>#<n>". A Policy (AsOf and Scope, both required) is applied to
// sources before any ranking: chunks of an inadmissible, not yet valid,
// expired or out-of-scope source are never scored, so they cannot appear in
// a result however close their vectors are.
//
// # Index
//
// [Index] stores sources, chunks and vectors (float32 little-endian BLOBs)
// in one SQLite file (modernc.org/sqlite, no cgo) and records the
// [Manifest] (provider, model, model version, dimensions, corpus digest)
// the vectors were made with. [Open] loads every vector once into one
// contiguous, L2-normalised in-memory matrix; [Index.Rebuild],
// [Index.Upsert] and [Index.Delete] each write one SQLite transaction and
// then update the matrix, so the two stay in step and a search never reads
// SQLite. The handle locks the file exclusively for its lifetime.
//
// [Index.Search] and [Index.SearchBatch] are exact: every admitted chunk is
// scored by cosine similarity, the best k are returned, and equal scores are
// ordered by chunk ID, so results are deterministic. On amd64 CPUs with AVX2
// and FMA (checked at run time with golang.org/x/sys/cpu) the dot products
// run in a Go-assembly kernel; elsewhere, or with the purego or noasm build
// tag, or with [WithPortableKernel], a pure-Go kernel does. Both stay within
// the float32 summation bound n·2⁻²⁴·Σ|aᵢbᵢ| of the exact dot product, so
// their scores can differ in the last bits. Large matrices are scanned by
// one goroutine per core ([WithWorkers]).
//
// # Embedding
//
// [Embedder] turns texts into vectors; [OllamaEmbedder] calls an Ollama
// server's POST /api/embed with a configurable base URL and model, a
// timeout, a bound on the response size, and truncation off by default. A
// failed call is an error: there is no fallback to other vectors.
//
// # AnswerGate
//
// [AnswerGate.Validate] accepts a [Proposal] only when it is usable, cites
// at least one [Evidence], and every piece names a chunk among the search's
// hits (valid on the context's date) and quotes at least 20 characters of it
// verbatim. The accepted [Answer.Text] is rebuilt from the (chunk ID, quote)
// pairs alone; a refusal lists each failed [Rule] with the evidence it
// concerns.
//
// # Failures
//
// Every failure is an error that matches a sentinel with errors.Is, and a
// typed error with errors.As carries the evidence:
//
//   - [ErrManifestMismatch] / *[MismatchError] (Field, Want, Got): the
//     handle's manifest, a vector's or query's dimension, the corpus digest
//     or the chunker differs from what the index was built with. Vectors of
//     one model are never compared with another's.
//   - [ErrInvalidCorpus] / *[CorpusError]: an invalid or duplicate source, a
//     vector count that does not match the chunk count, a zero or
//     non-finite vector, a Delete of an unknown source.
//   - [ErrInvalidQuery] / *[QueryError]: a zero or non-finite query, k out
//     of range.
//   - [ErrInvalidPolicy] / *[PolicyError]: a Policy without AsOf or Scope.
//   - [ErrNoAdmissible]: the policy admits no chunk. An empty result is
//     never returned as a success.
//   - [ErrNotBuilt], [ErrClosed]: nothing to search yet, or after Close.
//   - [ErrCorrupt] / *[CorruptError]: the file's content fails the checks
//     made at Open (schema, manifest, a recorded chunk count the file
//     cannot hold, vector sizes, zero or non-finite vectors, chunk
//     numbering, the recorded corpus digest recomputed from the stored
//     chunks).
//   - [ErrEmbed] / *[EmbedError] (Op, StatusCode, Body up to [MaxErrorBody]
//     bytes, Reason): an embedding call failed.
//   - [ErrRejected] / *[RejectedError] (from [Answer.Err]): the gate
//     refused a proposal; each [Rejection] names its rule and evidence.
//
// Failed writes change nothing, in the file or in memory; a failed search
// returns no hits.
package retrieval
