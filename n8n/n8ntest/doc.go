// Package n8ntest runs n8n for tests, in the style of net/http/httptest:
// Start launches a real n8n, installed by scripts/n8n-local, and StartFake
// a hermetic Fake of the parts of n8n that package n8n uses. Both return
// an Instance with the same fields (BaseURL, APIKey, Email, Password,
// Cookie) and take a testing.TB, so one scenario runs on a Fake and on real
// n8n alike.
//
// # Fake
//
// StartFake serves, on a loopback httptest server, what docs/n8n.md
// records of n8n 1.x (with or without 1.123's draft/publish flag) and 2.x:
//
//   - the public API's workflows (list with its name, active and tags
//     filters and its paging, get, create, update, delete, activate,
//     deactivate, publish, unpublish), with n8n's body rules and
//     versionIds that change with the content;
//   - 1.x's synchronous activation (a 400 for no trigger or an invalid
//     cron expression), 1.123's drafts, 2.x's drafts and asynchronous
//     publication record (settled after the second read of the workflow,
//     its record or its webhook, or after ten requests of any kind);
//   - tags (create, list, delete, a workflow's tags), credentials (create
//     checked against the type's schema, schema, delete, the 2.x public
//     listing and the 1.x 405, the /rest listing) and executions (listed
//     newest first with their filters, read with their data, ids as JSON
//     numbers);
//   - the internal /rest endpoints package n8n uses with a session
//     cookie: login, create with tags, read and patch pinned data, manual
//     runs (running on their first read), the publication record;
//   - production webhooks, answered from the served version's Code node,
//     each call recorded as an execution.
//
// The Fake runs no JavaScript. It models a Code node: a jsCode holding
// throw new Error('m') fails with m (1.x answers an empty 200, 2.x a 500),
// one holding return [] outputs no item (an empty 200), and any other
// answers {"answer": …, "escalate": …}, where answer is the expression
// after "answer:" — string literals and $input.first().json.<path>
// references joined with + (the item of a webhook is {headers, params,
// query, body}) — and escalate the literal after "escalate:".
//
// Fake.FailNext answers the next call of an operation (a FakeOp) with an
// error status and n8n's {"message"} body, doing nothing; Fake.Before runs
// a function just before the next call of one (another writer in the
// middle of a deploy, or a fault armed for a later step). Every operation
// has a FakeOp, the webhooks and the login included.
//
// Package n8n's scenario table runs on a Fake of each configuration and on
// real n8n 1.x and 2.x, and must agree: that is what keeps the Fake true to
// n8n. What the Fake does not model it does not pretend to: it has no
// projects (a projectId filter matches nothing), no users but the owner,
// no node types beyond the triggers and the Code node above, and no
// timing; an unknown path answers 404.
//
// # Real n8n
//
// scripts/n8n-local installs each edition into a cache outside the
// repository ($CANDOR_CACHE, default ~/.cache/candor) and, once the install
// is complete, writes a marker, <cache>/n8n/edition-<N>/installed.env, with
// the n8n version and the absolute paths of its node and n8n binaries.
// MarkerPath and ReadMarker find and read it.
//
// Start launches one edition on 127.0.0.1 with free ports, a temporary user
// folder, the editor UI off and everything that would call out to the internet
// turned off; it waits until the instance answers GET /rest/login with a 401
// JSON body (the only reliable ready signal: during migrations every path
// answers 200 "starting up"), creates an owner, an API key with every scope and
// a session cookie, and registers a t.Cleanup that stops the whole process
// group (n8n and its task runner) by PID.
//
// Instance.Do sends a request as the owner (the API key under /api/, the
// session cookie elsewhere), so a test can check what n8n itself serves and
// records — a workflow's stored state, n8n 2.x's publication record —
// apart from the code under test.
//
// One instance at a time: Start holds an exclusive lock on a file in the
// system's temporary directory from before the process starts until it has
// stopped, so test packages that go test runs in parallel, in any process,
// take turns (an instance takes 260 MB on 1.x and 850 MB on 2.x with its task
// runner). Start one instance per test and share it between subtests; a test
// that started one must not start a second before the first is stopped (its
// own lock would block it).
//
// # Failures
//
//   - StartFake fails the test only when it cannot create its log file in
//     the test's temporary directory; a request beyond what the Fake
//     models answers 404 (or 400 for a body it does not support), never a
//     made-up success.
//   - An edition that is not installed (no marker, an incomplete one, or one
//     naming binaries that are gone) fails the test with the command to run:
//     scripts/n8n-local install <N>.
//   - Only CANDOR_SKIP_N8N=1 turns Start into a skip, and the skip says so;
//     nothing else skips.
//   - An instance that exits before it is ready, is not ready within four
//     minutes, or refuses the bootstrap fails the test with the tail of its
//     log (<user folder>/n8n.log).
//   - An instance that does not stop within 30 s of SIGTERM is killed and
//     the test is marked failed.
//
// Secrets: the instance's API key, owner password and session cookie are in
// exported fields for the tests to use; Instance.String leaves them out.
package n8ntest
