// Package cli is the command-line convention every example program keeps
// (CONTRIBUTING.md, "Example programs"), written once:
//
//   - Parse turns -h into the usage on stdout and exit 0, and a bad flag into
//     one line and the usage on stderr and exit 2; UsageError does the same
//     for an argument the program refuses after parsing.
//   - ExitOK, ExitFail, ExitUsage and ExitConfig are the exit codes: 0 done,
//     1 the work failed or was refused, 2 usage, 3 configuration.
//   - Main runs a program under a context that ends at the first SIGINT or
//     SIGTERM, so that work in flight drains; a second signal exits at once
//     with ExitFail.
//
// # Failures
//
// Parse and UsageError report through the exit code they return; they write
// only to the writers they are given. Main exits the process.
package cli
