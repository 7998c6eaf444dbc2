// Command a2a-n8n-adapter serves an n8n workflow webhook as an A2A agent
// (spec 1.0 and 0.3 on one endpoint) with the contract-strict facade of
// package github.com/candorkit/candor/a2a.
//
// It is configured only by environment variables (ADAPTER_*; run it with -h
// for the list): reading them is this program's job, the library takes an
// a2a.Config. Every caller's bearer token is verified before anything is
// done for the request: a JWT signed with the keys ADAPTER_OIDC_ISSUER
// publishes, for ADAPTER_OIDC_AUDIENCE, granting ADAPTER_REQUIRED_SCOPES
// (package a2a/jwtauth). ADAPTER_UNVERIFIED_TOKENS=true is the explicit
// opt-out, for a workflow that verifies X-Subject-Token itself.
//
// Tasks live in this process's memory (ADAPTER_MAX_TASKS, ADAPTER_TASK_TTL)
// unless ADAPTER_TASKS_DSN names a PostgreSQL database: then they live
// there (package a2a/pgstore, schema candor_a2a, migrated at start, same
// bounds), and every replica started with the same DSN reads, lists and
// polls every task, whichever replica created it (docs/scaling.md). The
// DSN holds a password: it is never logged or repeated in an error. A
// database that cannot be reached at start is exit code 1.
//
// It logs JSON lines with log/slog on stderr (never the caller's token, and
// the webhook URL by scheme and host only). A first SIGTERM or SIGINT stops
// accepting requests and lets the answers in flight finish, those of tasks
// sent with returnImmediately included, within the webhook timeout plus five
// seconds; a second one ends the process at once.
//
// Besides the agent's paths it serves GET /healthz (200 while the process
// is up) and GET /readyz (200 when the webhook's host accepts a TCP
// connection within 2 s and the task store answers, a PostgreSQL ping;
// else 503 naming which). Neither calls the webhook, so no workflow runs.
//
// OpenTelemetry is configured from the standard environment (package
// examples/internal/telemetry): with OTEL_EXPORTER_OTLP_ENDPOINT (or the
// per-signal endpoints) set, the spans and metrics of packages a2a and
// reply (the JSON-RPC request, the task, the webhook call with its
// traceparent) are exported over OTLP/HTTP under OTEL_SERVICE_NAME
// (default a2a-n8n-adapter); with none set nothing is exported. An
// endpoint that is not an http(s) URL is exit code 3.
//
// Exit codes: 0 stopped after a signal with every answer delivered; 1 a
// listen, serve or shutdown failure (answers abandoned); 2 a usage error
// (one line and the usage on stderr); 3 a configuration error (one line
// naming every bad variable, then "see -h"). A task that did not get a
// contract answer is reported to the caller as failed (see package a2a for
// the taxonomy), never as completed.
package main
