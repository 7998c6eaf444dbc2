// Package scan reads a paged listing to its end, and says so when it could
// not: a scan is complete only when the peer sent its last page (an empty
// Next cursor) within the caps, without repeating a cursor, and with as many
// items as the total it reported.
//
// Scan collects the items into a slice; Seq yields them as the pages
// arrive (iter.Seq2[T, error]) and ends with a final non-nil error when the
// scan could not finish, never with a silent end.
//
// # Failure taxonomy
//
// Every failure is an *IncompleteError (errors.Is(err, ErrIncomplete)) that
// says how far the scan got (Pages, Items) and why it stopped (Reason); the
// Reason's own sentinel matches too:
//
//   - ReasonCursorRepeat (ErrCursorRepeat): the peer sent a cursor the scan
//     had already sent: a loop, never an end.
//   - ReasonPageCap (ErrPageCap): Limits.MaxPages pages were read and the
//     peer has more.
//   - ReasonItemCap (ErrItemCap): Limits.MaxItems items were read and the
//     peer has more (a page past the cap is cut, the rest not examined).
//   - ReasonTotalMismatch (ErrTotalMismatch): the last page came, but the
//     items read differ from the total the peer reported (Total).
//   - ReasonFetch: the fetch function failed; Err is its error (errors.Is
//     and errors.As reach it).
//   - ReasonCanceled: the context ended; Err is its cause.
//
// Limits that are negative are a plain error, returned before any fetch.
package scan
