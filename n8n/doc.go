// Package n8n drives an n8n instance from Go: a client for its public API,
// deploys that do not trust a single 200, workflow validation, directory
// export/plan/apply with canonical JSON, and calls to a workflow's webhook.
//
// Workflows live as JSON in a repository; the instance is not the source of
// truth. The package is written against behaviour observed on real n8n
// 1.123.81 (with and without its draft/publish flag) and 2.41, and its
// tests run on all three; docs/n8n.md lists the facts about n8n's wire
// behaviour the code relies on.
//
// # Client
//
// New(baseURL, apiKey, ...Option) returns a Client for the public API
// (/api/v1, header X-N8N-API-KEY). It does no I/O. Options: WithHTTPClient,
// WithRootCAs, WithLogger (nothing is logged without it), WithTimeout
// (per request, DefaultTimeout when absent) and WithMaxResponseBytes (an
// exact cap, DefaultMaxResponseBytes when absent); an invalid option is an
// error from New. Redirects are never followed.
//
// The Client covers workflows (ListWorkflows and its iterator Workflows,
// get, create, UpdateWorkflow with UpdateWorkflowOptions, delete, activate,
// deactivate, publish, unpublish, tags), executions (ListExecutions and
// Executions with ListExecutionsOptions, GetExecution, WaitExecution),
// credentials (create, delete, schema) and tags. Listings follow nextCursor
// to its end: page sizes are clamped to n8n's 1..250 and limit=0 is never
// sent (n8n answers it with a cursor that points to its own page); a
// listing that cannot finish ends with an error, never silently. Ids
// decode from JSON strings or numbers. Client.Login opens a Session on the
// internal /rest API for what the public API lacks: listing credentials,
// running a stored workflow with pinned trigger data, creating a workflow
// with its tags in one request, and reading n8n 2.x's publication record
// (Session.PublicationStatus).
//
// # Deploy
//
// Deploy writes a definition and makes it live with the discipline of the
// edition it detects, re-reading after every step:
//
//   - n8n 1.x: deactivate, update, activate the versionId the update
//     returned. n8n 1.x starts triggers before activate answers (a trigger
//     that cannot start is a 400), so a re-read showing the version active
//     is proof (Report.Live = LiveActivation). The webhooks answer 404
//     between the deactivate and the activate: Report.Downtime measures
//     that window (about 0.4 s on a loopback n8n 1.123.81, about 0.9 s when
//     a failed activation is restored).
//   - n8n 2.x: save a draft (the published version keeps serving), publish
//     exactly the versionId the update returned, then, with
//     DeployOptions.Session, wait (SettleTimeout) until n8n's publication
//     record has settled: every trigger of the written version active
//     (LivePublication), or a failed or partial publication, which is a
//     *PublicationError with n8n's reasons in Report.Publication, and a
//     restore. n8n 2.x accepts a publish before it starts the triggers and
//     reports it active either way, so without a Session (or a Smoke) the
//     deploy ends in StateUnverified.
//
// DeployOptions.Smoke polls a webhook until it serves the new definition
// (LiveSmoke). DeployOptions.Expect (a Snapshot, see SnapshotOf) is the
// state the caller read: if the workflow changed since, Deploy writes
// nothing and returns a *ConflictError. During a deploy, a re-read that
// shows a version neither the caller nor Deploy wrote stops it without a
// restore (a restore would overwrite the other writer): StateConflict.
//
// On any other failure Deploy restores what was there: the previous
// definition, activation and live version. "Restored" means the version
// live before is live again (or the workflow is inactive, if it was); when
// a newer draft was pending, the version that was live, not the draft.
//
// The states of a Report, per edition:
//
//	state         n8n 1.x (1.123, draft/publish off or on)        n8n 2.x
//	deployed      saved, active at the written version,           saved, published at the written version,
//	              triggers started (activate answered 200)        every trigger active per n8n's record, or the smoke passed
//	unchanged     nothing written (up to date, or refused         same; an active workflow whose publication failed
//	              before the first write)                         or is partial is not up to date
//	restored      previous definition saved, active as before,    previous definition saved; the version live before (or,
//	              the version live before live again              without a pending draft, a new version holding the same
//	                                                              definition) published again and settled (or unpublished)
//	inconsistent  the restore failed or could not be verified     same
//	conflict      another writer's version was seen mid-deploy    same
//	unverified    (not used: activation is synchronous)           published, but no Session or Smoke to see the triggers
//
// On n8n 1.123 with draft/publish on, a webhook runs the saved nodes after
// the live version's trigger: a pending draft's Code node answers before
// it is activated. Deploy makes no claim beyond what n8n does there.
//
// # Telemetry
//
// WithTracerProvider and WithMeterProvider (options of New; nil or absent
// means the global providers, no-ops unless the program installed an SDK)
// give the Client's OpenTelemetry spans and metrics, under the
// instrumentation scope github.com/candorkit/candor/n8n, and every request
// carries the W3C traceparent of its span.
//
// Each request is a client span named "{method} {url.template}", e.g.
// "GET /api/v1/workflows/{id}", with the HTTP conventions' attributes:
//
//	http.request.method        GET, POST, PUT, PATCH, DELETE
//	url.template               the path below the base URL with every id replaced by {id}
//	                           (a credential type by {type}, any unknown segment by
//	                           {segment}): no id, key, cursor or query
//	url.scheme, server.address, server.port   of the base URL
//	http.response.status_code  when a response came
//	error.type                 on failure (see below)
//
// Deploy is one span, n8n.deploy (n8n.workflow.id; at the end
// n8n.deploy.state, n8n.edition "1", "2" or "unknown", n8n.deploy.live when
// live, n8n.deploy.failed_step and error.type on failure), with one child
// span per step, n8n.deploy.<step> (n8n.deploy.step; error.type when the
// step failed): validate, read, expect, detect, read-publication, compare,
// deactivate, unpublish, update, activate, publish, settle, settle-unpublish,
// smoke, verify-* (the re-reads) and verify-serving. The requests a step
// makes are its children. A restore is a span n8n.deploy.restore
// (n8n.deploy.state; error.type "inconsistent" or "conflict" unless the
// state is restored) whose children are its steps, restore-read,
// restore-deactivate, restore-update, restore-activate, restore-publish,
// restore-unpublish, restore-settle and restore-verify*. ApplyPlan and
// ApplyDir make one n8n.deploy span per workflow they deploy.
//
// Metrics:
//
//	http.client.request.duration  histogram, s  http.request.method, url.template, server.address,
//	                                            server.port, http.response.status_code, error.type
//	n8n.deploy.duration           histogram, s  n8n.deploy.state, n8n.edition, error.type (on failure)
//
// error.type is, in this order: validation (*ValidationError), conflict
// (*ConflictError), publication (*PublicationError), unverified
// (ErrUnverified), tags_not_attached (ErrTagsNotAttached), the status code
// of a *StatusError ("404", "400", "500"…, as the HTTP conventions have
// it), response_too_large (ErrResponseTooLarge), decode (*DecodeError),
// incomplete_list (ErrIncompleteList), timeout (a deadline), canceled, transport (no
// answer: refused, reset, DNS), and _OTHER. No span or metric holds the
// API key, the session cookie, the password, a body, a webhook URL or a
// query.
//
// # Files
//
// Validate (and ValidateJSON) report Problems with JSON paths: fixed field
// names as .name, indexes as [i], keys taken from the document as ["key"],
// e.g. $.connections["Code"]["main"][0][0].node. ExportDir writes one
// canonical file per workflow, Plan compares a directory with the instance
// (create, update, unchanged; an active workflow whose saved draft is not
// the live version is an update) and records what it read
// (PlanItem.Current); ApplyPlan applies a reviewed plan with Deploy,
// expecting each workflow as the plan read it; ApplyDir is Plan then
// ApplyPlan. Every document is read as strict JSON: one value and nothing
// after it (a stray "}" or "]" included), no repeated key, no lone
// surrogate escape.
//
// # Webhooks
//
// CallWebhook posts to a workflow's production webhook through package
// reply's client, which owns the webhook contract: the subject token in
// reply.SubjectTokenHeader, only a 200 carrying exactly {"answer",
// "escalate"} is a reply.Reply, reply.DefaultTimeout, an exact cap; its
// errors are reply's (reply.ErrEmpty for n8n's empty 200, *reply.StatusError
// for a 404 or 500, whose text never shows the webhook's path). Package a2a
// uses the same client, so both read a webhook the same way.
//
// # Failures
//
// No failure is returned as a success; every error keeps its evidence:
//
//   - *StatusError: n8n answered an unexpected status (StatusCode, Header,
//     Body cut at MaxErrorBody, Method, Path, n8n's Message). IsStatus tests
//     the status: 404 is a missing workflow, 409 a name taken or (2.x) a
//     published workflow that cannot be deleted, 400 a refused activation.
//   - *DecodeError: a 2xx body that is not the expected JSON (body kept).
//   - ErrResponseTooLarge: a body over the cap; nothing of it is used.
//   - ErrIncompleteList: a listing that could not finish (a repeated
//     cursor, a page without data); no partial list is returned.
//   - *ValidationError: a workflow with Problems; nothing was sent.
//   - *DeployError: a failed deploy, with the Report (state after restore).
//     Its cause may be a *StatusError, a *PublicationError (n8n 2.x
//     triggers that did not start: Publication.Triggers say why), a
//     *ConflictError, or ErrUnverified.
//   - *ConflictError (errors.Is(err, ErrConflict)): the workflow is not at
//     the version expected; During says whether Deploy had written.
//   - ErrUnverified: published on n8n 2.x, but whether the triggers run
//     could not be seen (StateUnverified); give a Session or a Smoke.
//   - ErrTagsNotAttached: Session.CreateWorkflow created the workflow (it is
//     returned too) but n8n did not attach every tag.
//
// There is no Classify: callers branch on IsStatus and on the DeployState
// of a Report, which already says what is left on the instance; the
// error.type of the telemetry (see Telemetry) names the same cases.
//
// Secrets: the API key is sent only in its header, the session cookie only
// in Cookie, the subject token only in its header; none appears in logs,
// errors (a body that echoes the key or the cookie has it redacted) or
// String. Redirects are not followed, so no header is replayed to another
// address.
package n8n
