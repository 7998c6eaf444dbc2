// Package n8ntest starts a real n8n, installed by scripts/n8n-local, for
// integration tests.
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
