// Package progress prints the builder's progress: one line per step with its
// status and duration, as aligned text or, with -json, as one JSON object per
// line ({"step","status","duration_ms","detail"}).
//
// A step is started with Start and ended exactly once with OK, Fail or Skip;
// ending it again is ignored and reported by the call's false result, so a
// step can never be printed as both failed and passed. Details are collapsed
// to one line.
//
// Failure taxonomy: progress output is best effort; the first write error is
// kept and returned by Err, and never changes a step's status.
package progress
