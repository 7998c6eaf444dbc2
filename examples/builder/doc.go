// Command builder is the n8n builder agent: it takes the next automation idea
// from a queue table, generates an n8n workflow with a local model (or reads
// one from a file), has it reviewed, imports it into a sandbox n8n, proves it
// in four test levels, and asks a person before anything reaches production.
//
// Usage:
//
//	builder [flags] init [-sample]                       create the tables (and one sample idea)
//	builder [flags] [run]                                build the next idea, up to awaiting_approval
//	builder [flags] approve [-by NAME] [-comment TEXT] <id>   approve it and import it into production
//	builder [flags] reject [-by NAME] [-comment TEXT] <id>    reject it (failed; sandbox copy deleted)
//
// With nothing configured, builder prints what it needs and exits 2. It
// needs the sandbox n8n's URL, API key and owner login (N8N_SANDBOX_URL,
// N8N_SANDBOX_API_KEY, N8N_SANDBOX_EMAIL, N8N_SANDBOX_PASSWORD, or Vault with
// -secrets vault), the N8N_PRODUCTION_* set for approve, and the model
// (Ollama at -ollama-url with -model, default llama3.1:8b, or -generator
// file:PATH, which the output names). It also prints the exact command that
// starts the project's local n8n installed by scripts/n8n-local.
//
// Every step prints one line with its duration (-json: one JSON object per
// line). The exit status is 0 when the run ends awaiting approval, finds
// nothing to build, or finds the idea claimed by another builder; 1 when the
// build fails (the idea is then failed, or released when the failure came
// before generation); 2 for a usage error.
//
// The queue is SQLite by default (-db builder.db) or PostgreSQL
// (-db postgres://…); scripts/postgres-local start DIR starts a local cluster
// and prints its DSN. Approval tickets live in the SQLite file -approvals.
// A run serves the capture endpoint on -capture-addr (default 127.0.0.1 and a
// free port): the workflows under test call it, and level 4 checks that they
// did.
//
// The reusable parts live in internal/: pipeline (the playbook wired end to
// end, approve and reject), queue (tables, claim, transitions, assertion
// checks, capture endpoint), secrets (environment and Vault sources),
// generate (prompt, Ollama, file, JSON extraction), overseer (rules and
// command overseers), notify (ntfy and the playbook's messages), progress
// (step lines and -json) and pgtest (throwaway PostgreSQL for tests).
package main
