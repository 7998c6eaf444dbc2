// Command a2a-n8n-adapter serves an n8n workflow webhook as an A2A agent
// (spec 1.0 and 0.3 on one endpoint) with the contract-strict facade of
// package github.com/candorkit/candor/a2a.
//
// It is configured only by environment variables; run it with -h for the
// list. It logs JSON lines with log/slog on stderr (never the caller's token)
// and shuts down gracefully on SIGTERM or SIGINT: it stops accepting
// requests and lets the answers in flight finish, those of tasks sent with
// returnImmediately included, within the webhook timeout plus five seconds.
//
// Failures: a missing or malformed variable exits with status 2 and one
// error naming every bad variable; a listen or serve error, or answers still
// running when the shutdown grace ends, exit 1; a task that did not get a
// contract answer is reported to the caller as failed (see package a2a for
// the taxonomy), never as completed.
package main
