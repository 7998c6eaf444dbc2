// Package pipeline is the builder playbook (docs/builder-playbook.md) wired
// end to end: Builder.Run
// takes one idea from the queue to a tested sandbox workflow awaiting a
// person's approval, and Builder.Approve / Builder.Reject act on that
// person's decision.
//
// Run, in order, one progress line per step:
//
//	pick        next n8n_automation idea, ready_to_build, not_started (priority, then id)
//	claim       not_started → queued, one conditional UPDATE; lost → SKIPPED, stop
//	secrets     sandbox URL, API key and owner login from the secret source
//	credentials log in, detect the edition, list the sandbox credentials (names, types)
//	generate    queued → building; prompt with spec, infrastructure, credentials; Ollama or file
//	review      overseer PASS/FAIL (rules: n8n.ValidateJSON, credentials, no stubs; or a command)
//	import      create the workflow in the sandbox, inactive; record its id
//	resolve     bind every credential reference (see ResolveCredentials)
//	level1..4   structure, deployment, smoke (stored definition, pinned trigger
//	            data, execution polled up to 60 s), assertion (SQL rows, HTTP captures)
//	approval    approval ticket (Draft), building → awaiting_approval, READY
//
// Every level writes an agent_test_results row and the first failure stops
// the run.
//
// Failures follow rule 12 of docs/builder-playbook.md. Before generation starts the claim
// is released (not_started) so another run can retry; after, the idea is left
// failed with last_error. A workflow that was imported is deleted from the
// sandbox. An unhandled error also writes a test_level 0 fail row. Each
// failure sends its message (FAIL, BLOCKED or ERROR). A notification that
// cannot be delivered is logged and shown as a failed "notify" line, and it
// changes nothing else.
//
// Approve records the decision and, in one approval.Apply, imports the
// approved workflow into production (inactive) with each "-sandbox"
// credential reference mapped to the production credential of the same name
// without the suffix, then marks the idea deployed. The queue may be
// PostgreSQL while the approval store is SQLite, so the queue row is not
// written through Apply's transaction. Two things make a repeated effect
// safe. MarkDeployed is a conditional UPDATE. The production workflow is
// created carrying a tag derived from the operation id, in the same request
// (n8n.Session.CreateWorkflow; n8n's public API cannot tag on create), and a
// repeated effect looks that tag up before creating anything, so a crash at
// any point of the effect leaves at most one production workflow. What is
// left is outside the builder: a person removing the tag or the workflow in
// production between two approves, or an n8n that drops tags (workflow tags
// disabled), where the untagged workflow is deleted again and the approve
// fails. Production may be a second n8n or the same one; the
// tests use the same instance for both, with "X-sandbox" and "X" credentials.
// The production workflow is not activated: activating it is a decision taken
// in production.
//
// The capture endpoint (CaptureServer) records the HTTP calls that the
// workflows under test make to {capture_base}/capture/{name}. It must be
// reachable from n8n. The same URL replaces queue.CaptureBasePlaceholder in
// the idea's infrastructure and in the generated workflow, so a workflow file
// can name the endpoint before its port is known.
//
// Failure taxonomy (errors.Is on the *Failure that Run returns):
//   - ErrOverseerRejected: the overseer said FAIL; failed, "FAIL — Overseer
//     rejected".
//   - ErrImportFailed: n8n refused the sandbox import; failed, "failed N8N
//     import".
//   - ErrBlocked (the cause is a *CredentialError, ErrUnresolved): a
//     reference does not resolve in the sandbox; failed, "BLOCKED — … needs
//     credentials".
//   - ErrLevelFailed (Failure.Level 1..4): failed, "failed Level n".
//   - ErrUnhandled: anything else. The claim is released before generation
//     and the idea is failed after it; a level 0 row is written and "ERROR"
//     is sent.
//
// Failure.Cleanup reports cleanup that did not complete, for example a
// sandbox workflow that could not be deleted; it is also kept in last_error.
// Approve and Reject return ErrNotAwaiting when the automation has no ticket
// in a state they can act on, approval's errors as they are (for example
// ErrAlreadyDecided for a reject after an approve), and for a refused
// production deploy an approval.ErrEffectFailed that wraps the
// *CredentialError or the n8n error. Nothing is committed then, and the
// ticket stays approved so that approving again retries the deploy.
// ErrNoLogin: the n8n connection has no owner login. n8n 1.x lists
// credentials and runs workflows only for a logged-in session.
package pipeline
