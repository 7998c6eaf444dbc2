// Command documented is the documented-approval agent: it answers one fixed
// question, "Where can I export CSV in Reporting?", only with a passage that
// supports it, freezes the backlog item it proposes, stops for a person, and
// applies that person's approval exactly once, in another process.
//
// Usage (from the repository root):
//
//	go run ./examples/documented run    [-dir DIR] [-invalid-evidence] [-live [-ollama-url URL] [-ollama-model MODEL]]
//	go run ./examples/documented resume [-dir DIR] [-by NAME] [-comment TEXT] approve|reject
//	go run ./examples/documented show   [-dir DIR]
//
// Flags may come before or after resume's verdict; -v logs the stores'
// operations to stderr.
//
// # run
//
// run prints the profile line first, then:
//
//  1. builds the retrieval index (package retrieval, a SQLite file) over a
//     built-in corpus: ACME-EXPORT, the passage that says where CSV export
//     lives in Reporting; four decoys that talk about CSV export too (one
//     expired, one not yet valid, one inadmissible, one in another scope);
//     and two unrelated passages. With the controlled profile
//     ("Profile=fixture; controlled dense vectors and answer; no model
//     qualification") every chunk has a two-dimension vector: ACME-EXPORT at
//     (1,0) and every other admissible chunk at (0,1), as the controlled
//     fixture of docs/examples.md has it. Unlike that fixture, which puts every other
//     chunk at (0,1), the four decoys are deliberately placed at (1,0) too,
//     on the query itself, so that the policy, not the vector, keeps them
//     out; run prints a line saying so, checks that the vectors are laid out
//     that way, and checks that the policy did keep the decoys out (each
//     refused for its own reason, none among the hits);
//  2. searches with the query (1,0) as of 2026-03-02 in scope "course";
//  3. validates the controlled answer, one exact quote from ACME-EXPORT#0,
//     with retrieval.AnswerGate; the accepted answer text is rebuilt from
//     the (chunk, quote) pair;
//  4. builds a BacklogDraft (Title "Review Reporting CSV export", Type
//     "Question", Priority "medium", Area "Reporting", Summary the accepted
//     answer text, Links empty), validates it, and registers it under a new
//     operation id ("documented-" and a UUIDv7) in the approval store
//     (package approval), which keeps it as canonical JSON;
//  5. writes evidence.json, a diagnostic copy of the question, hits,
//     evidence and draft that nothing ever reads back, and the waiting
//     receipt (approval.WaitingReceipt, graph version "documented/1");
//  6. prints the operation id and the commands that decide it, and exits.
//
// -invalid-evidence cites chunk INVENTED#0 instead: the gate refuses it and
// run exits with status 1 before anything is registered. -live embeds the
// corpus and the question with Ollama's POST /api/embed instead of the
// controlled vectors (base URL: -ollama-url, else $CANDOR_OLLAMA_URL, else
// http://127.0.0.1:11434; model: -ollama-model, else $CANDOR_OLLAMA_MODEL,
// else nomic-embed-text; -ollama-timeout bounds each call, 60s by default)
// and prints a "Profile=live" line instead; if Ollama fails, run fails with
// the embedder's error and never falls back to the controlled vectors. The
// answer stays the controlled one: no model writes it.
//
// run refuses to start while the operation of the receipt in DIR still waits
// for a decision, so a pending request is never stranded.
//
// # resume
//
// resume is meant to run in a new process. It reads the receipt, has
// approval.Store.Resume check that this store issued it for graph version
// "documented/1", records the decision (decided by -by, default $USER, else
// the login name, else "operator"), and on approval runs approval.Store.Apply with an effect that
// writes one row into the ApprovedBacklogItems table, in the same SQLite
// transaction as the approval's own item, from the draft as stored (never
// from evidence.json or from memory). It prints the stored state: status,
// decision, item id, backlog row, the draft as stored and the number of
// ApprovedBacklogItems rows. The same verdict again, by the same person or
// another, records nothing new: resume prints "Decision: already approved
// by <the standing decider>; nothing new recorded" and exits 0 (an
// approval's apply runs again and writes nothing). The other verdict is
// refused with the standing one (exit status 1) and changes nothing. This is
// the one policy of the examples (docs/examples.md).
//
// # show
//
// show prints every stored operation, the receipt and the number of
// ApprovedBacklogItems rows, after checking that every completed operation
// has exactly one row holding its approved draft and no other operation has
// any.
//
// # Data directory
//
// DIR is -dir, else $CANDOR_DOCUMENTED_DIR, else "candor/documented" under
// the user cache directory (os.UserCacheDir: $XDG_CACHE_HOME or ~/.cache on
// Linux, ~/Library/Caches on macOS). It holds index.db (the retrieval
// index), approvals.db (the approval store and the ApprovedBacklogItems
// table), evidence.json and receipt.json. -approvals moves the approval
// store and the backlog table: a SQLite file path, or a PostgreSQL database
// when the value starts with postgres:// or postgresql:// (schemas candor
// and candor_documented; the rows are immutable there too). A malformed DSN
// is a usage error (exit 2) that never prints the DSN; an unreachable
// database exits 1.
//
// # Failures
//
// Exit status 0: the command did what it printed. Exit status 2: the
// command line is wrong (one line and the usage on stderr; -h prints the
// usage on stdout and exits 0). Exit status 3: no -dir and no user cache
// directory. A first SIGINT or SIGTERM lets the command finish its step; a
// second exits at once. Exit status 1: anything else, with one line on
// stderr that says what, for example:
//
//   - the gate refused the evidence (retrieval.ErrRejected, each rule and
//     chunk named); nothing was registered;
//   - -live could not embed (ollama.ErrEmbed with the HTTP status or
//     transport error); nothing was registered;
//   - an earlier proposal is still waiting; decide it first;
//   - resume without a receipt or store, a receipt from another graph
//     version (approval.ErrGraphVersionMismatch) or one the store never
//     issued (approval.ErrUnknownReceipt);
//   - a decision that contradicts the standing one
//     (approval.ErrAlreadyDecided; the stored state is printed unchanged);
//   - stored rows that contradict the approval store (an item row missing,
//     duplicated or holding another draft).
//
// # Telemetry
//
// With OTEL_EXPORTER_OTLP_ENDPOINT (or the per-signal
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_METRICS_ENDPOINT)
// set, the program installs the OpenTelemetry SDK and the retrieval,
// ollama and approval packages export their spans and metrics over
// OTLP/HTTP, as service OTEL_SERVICE_NAME (default "documented"); with
// none set nothing is exported. A value that is not an http(s) URL is a
// configuration error (exit status 3), reported after the flags are
// checked; -h lists the variables.
package main
