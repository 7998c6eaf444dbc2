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
//	builder -h                                            the usage, the flags and what the builder needs
//
// The steps, the test levels, the failure rule and the messages are those of
// docs/builder-playbook.md.
//
// With nothing configured, builder prints what it needs and exits 3. It
// needs the sandbox n8n's URL, API key and owner login (N8N_SANDBOX_URL,
// N8N_SANDBOX_API_KEY, N8N_SANDBOX_EMAIL, N8N_SANDBOX_PASSWORD, or Vault with
// -secrets vault), the N8N_PRODUCTION_* set for approve, and the model
// (Ollama at -ollama-url with -model, default llama3.1:8b, or -generator
// file:PATH, which the output names). It also prints the exact command that
// starts the project's local n8n installed by scripts/n8n-local.
//
// Every step prints one line with its duration (-json: one JSON object per
// line). The exit status is 0 when the run ends awaiting approval, finds
// nothing to build, or finds the idea claimed by another builder, and when a
// decision is recorded or the same verdict already stands; 1 when the build
// fails (the idea is then failed, or released when the failure came before
// generation) or a decision or deploy fails or is refused; 2 for a usage
// error (one line and the usage on stderr); 3 when the secret source lacks
// the n8n URL, key or login. Flags are checked before the environment. A
// first SIGINT or SIGTERM lets the step in flight finish; a second exits at
// once. -by defaults to $USER, else the login name, else "operator"; a
// second decision with the same verdict, by anyone, records nothing and
// exits 0, the other verdict is refused (docs/examples.md).
//
// # Telemetry
//
// With OTEL_EXPORTER_OTLP_ENDPOINT (or the per-signal
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_METRICS_ENDPOINT)
// set, the program installs the OpenTelemetry SDK and every candor package
// it uses exports its spans and metrics over OTLP/HTTP, as service
// OTEL_SERVICE_NAME (default: the program's name); with none set nothing
// is exported. A value that is not an http(s) URL is a configuration
// error (exit 3), reported after the flags are checked; -h lists the
// variables.
//
// The queue is SQLite by default (-db builder.db) or PostgreSQL
// (-db postgres://…); scripts/postgres-local start DIR starts a local cluster
// and prints its DSN. Approval tickets live in -approvals: a SQLite file
// (default builder-approvals.db), or a PostgreSQL database when the value
// starts with postgres:// or postgresql:// (the store's schema is created
// when missing). A malformed DSN is a usage error (exit 2) that never
// prints the DSN; an unreachable database exits 1 naming the server
// without the password.
// A run serves the capture endpoint on -capture-addr (default 127.0.0.1 and a
// free port): the workflows under test call it, and level 4 checks that they
// did.
//
// The reusable parts live in internal/: pipeline (the steps wired end to
// end, approve and reject), queue (tables, claim, transitions, assertion
// checks, capture endpoint), secrets (environment and Vault sources),
// generate (prompt, Ollama, file, JSON extraction), overseer (rules and
// command overseers), notify (ntfy and the messages), and progress (step
// lines and -json). The tests' throwaway PostgreSQL is the module's
// internal/pgtest.
package main
