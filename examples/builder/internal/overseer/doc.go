// Package overseer reviews a generated workflow before it goes anywhere: a
// Verdict is PASS or FAIL with one sentence.
//
// Two overseers exist:
//
//   - Rules (the default) runs the review checks 1–3 of
//     docs/builder-playbook.md, rule 6 (structure,
//     credentials, no stubs) mechanically — check 1 through a StructureFunc
//     (NewRules wires it to n8n.ValidateJSON), checks 2 and 3 itself — and records in every verdict that check 4, "the logic
//     matches the spec", was not performed.
//   - Command (-overseer-cmd, e.g. "claude -p") runs a command once per
//     automation with a prompt under 500 tokens on stdin (the spec cut to 200
//     characters, the workflow reduced to a node summary) and reads PASS or FAIL
//     and a sentence from the first line of its output. A second review of the
//     same automation (a retry) is refused with ErrAlreadyReviewed: the command
//     is never run for retries.
//
// Failure taxonomy (none of these is a PASS):
//   - ErrNotWired: a Rules value without a StructureFunc (use NewRules).
//   - ErrAlreadyReviewed: Command was asked again for an automation it reviewed.
//   - *CommandError: the command could not start, exited non-zero, timed out or
//     wrote more than 64 KiB; it keeps the exit code and the last lines of
//     stderr.
//   - *OutputError: the command's output does not start with PASS or FAIL; it
//     keeps the output (bounded).
//   - A workflow that is not JSON with a "nodes" array is an error before any
//     command runs.
package overseer
