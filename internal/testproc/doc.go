// Package testproc holds the plumbing tests use to run a program as a
// separate process: building a main package into an executable, and
// collecting a child's output while the test reads it.
//
// Build compiles a main package with the go command (found on PATH, else in
// the bin directory of the Go installation that built the test binary) into
// a directory from t.TempDir, so the executable is removed when the test that
// asked for it ends. Each call builds: a test that needs the executable runs
// Build once and keeps the path for its subtests. The build runs under
// t.Context, so a test that is stopped stops its build.
//
// Buffer is an io.Writer safe to hand to exec.Cmd as Stdout or Stderr (exec
// copies into it from its own goroutine) while the test calls String.
//
// # Failures
//
//   - No go command on PATH nor in the Go installation fails the test with
//     the places looked at.
//   - A build that fails (compile error, missing package, a pkgDir that is
//     not a main package) fails the test with the go command's combined
//     output, so the compiler's message is in the test log.
//   - Buffer does not fail: Write takes every byte and returns a nil error,
//     as bytes.Buffer does.
package testproc
