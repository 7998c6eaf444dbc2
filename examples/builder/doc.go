// Command builder is the n8n builder agent: it takes the next automation idea
// from a queue table, generates an n8n workflow with a local model (or reads
// one from a file), has it reviewed, imports it into a sandbox n8n, proves it
// in four test levels, and asks a person before anything reaches production.
//
// Usage:
//
//	builder [flags] init [-sample]      create the tables (and one sample idea)
//	builder [flags] [run]               build the next idea (phase two: not wired yet)
//	builder [flags] approve <id>        approve an automation awaiting approval (phase two)
//	builder [flags] reject <id>         reject it (phase two)
//
// With nothing configured, builder prints what it needs: the sandbox n8n URL
// and API key (N8N_SANDBOX_URL, N8N_SANDBOX_API_KEY, or Vault with -secrets
// vault), the model (Ollama at -ollama-url with -model, default llama3.1:8b, or
// -generator file:PATH), and how to start the project's local n8n.
//
// The database is SQLite by default (-db builder.db) or PostgreSQL
// (-db postgres://…); scripts/postgres-local start DIR starts a local cluster
// and prints its DSN.
//
// The reusable parts live in internal/: queue (tables, claim, transitions,
// assertion checks, capture endpoint), secrets (environment and Vault
// sources), generate (prompt, Ollama, file, JSON extraction), overseer (rules
// and command overseers), notify (ntfy and the playbook's messages), progress
// (step lines and -json) and pgtest (throwaway PostgreSQL for tests).
package main
