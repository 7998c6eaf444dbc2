// Package n8n drives an n8n instance from Go: a client for its public API,
// deploys that do not trust a single 200, workflow validation, directory
// export/plan/apply with canonical JSON, and the webhook reply contract.
//
// Workflows live as JSON in a repository; the instance is not the source of
// truth. The package is written against behaviour observed on real n8n
// 1.123.81 and 2.41 (see the repository's notes), and its tests run on both.
//
// # Client
//
// New(baseURL, apiKey, Options) returns a Client for the public API
// (/api/v1, header X-N8N-API-KEY): workflows (list with paging that follows
// nextCursor and fails on a repeated cursor, get, create, update, delete,
// activate, deactivate, publish, unpublish, tags), executions (list by
// workflow and status, get with data, WaitExecution), credentials (create,
// delete, schema) and tags. Page sizes are clamped to n8n's 1..250 and
// limit=0 is never sent (n8n answers it with a cursor that points to its own
// page). Ids decode from JSON strings or numbers. Client.Login opens a
// Session on the internal /rest API for what the public API lacks: listing
// credentials, running a stored workflow with pinned trigger data, and
// creating a workflow with its tags in one request (so a crash cannot leave
// it untagged).
//
// # Deploy
//
// Deploy writes a definition and makes it live with the discipline of the
// edition it detects — n8n 1.x: deactivate, update, activate; n8n 2.x: save a
// draft, publish exactly the versionId the update returned — re-reading
// after every step, then verifies that the workflow is active with the
// version just written and, optionally, polls a webhook until it serves the
// new definition. On failure it restores the previous definition and
// activation (on 2.x, the version that was live, even when a newer draft was
// pending). Its Report says which state the workflow is left in:
// StateDeployed, StateUnchanged, StateRestored or StateInconsistent.
//
// # Files
//
// Validate (and ValidateJSON) report Problems with JSON paths. ExportDir
// writes one canonical file per workflow, Plan compares a directory with the
// instance (create, update, unchanged; an active workflow whose saved draft
// is not the published version is an update) and ApplyDir applies it with
// Deploy.
//
// # Webhook contract
//
// CallWebhook posts to a workflow's webhook with the caller's token in
// X-Subject-Token and accepts only a 200 whose body is exactly
// {"answer": string, "escalate": bool}. The strict decoding is package
// reply's (reply.Decode), shared with package a2a, so both read a body the
// same way.
//
// # Failures
//
// No failure is returned as a success; every error keeps its evidence:
//
//   - *APIError: n8n answered an unexpected status (Method, Path, Status,
//     n8n's Message, Body cut at MaxErrorBody). IsStatus tests the status.
//   - *DecodeError: a 2xx body that is not the expected JSON (body kept).
//   - ErrResponseTooLarge: a body over Options.MaxResponseBytes (default
//     32 MiB); ErrCursorLoop: a paging cursor repeated (no partial list).
//   - *ValidationError: a workflow with Problems; nothing was sent.
//   - *DeployError: a failed deploy, with the Report (state after restore).
//   - ErrEmptyReply (== reply.ErrEmpty): a webhook answered 200 with an
//     empty body, n8n's answer when a node fails before Respond to Webhook.
//   - *ContractError: any other off-contract answer (Status, Reason, Raw);
//     it unwraps to *reply.ContractError.
//   - ErrNoSubjectToken: CallWebhook without a token; nothing was sent.
//   - ErrTagsNotAttached: Session.CreateWorkflow created the workflow (it is
//     returned too) but n8n did not attach every tag.
//
// Secrets: the API key is sent only in its header, the session cookie only
// in Cookie, the subject token only in X-Subject-Token; none appears in
// logs, errors or String. Redirects are not followed, so no header is
// replayed to another address.
package n8n
