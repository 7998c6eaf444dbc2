// Package reorder computes a periodic purchase proposal from a catalog and is
// honest about how much of the catalog it read.
//
// Plan pages through a Catalog under a Policy (reorder below 50, order up to
// 150, pages of 200 by default, always under a page cap and an item cap) and
// proposes OrderUpTo − OnHand for every item strictly below the reorder
// point. The Proposal says how many items it examined (Scanned), how many the
// catalog reported (Total), whether the scan covered the whole catalog
// (Complete) and whether a person must look (Escalate, with Reasons). A
// proposal with a line always escalates: the package proposes, it never
// orders.
//
// Schedule and Run start a job every day at a wall-clock time in a named zone
// (06:00 Europe/Paris by default), one job at a time; see Schedule for what
// happens on the skipped and the repeated hour of daylight-saving changes.
// Time is injected through Clock, so schedules are tested without sleeping.
//
// Runner is the "no identity, no action" precondition: it obtains the
// person's Mandate before anything else, and only then opens the catalog
// with the mandate's token and plans. Without a mandate it stops before any
// read. A Mandate's token never appears in its String, GoString, JSON or
// slog forms.
//
// The package imports nothing of candor: callers adapt their catalog client
// (for example an MCP tool behind mcpclient) to Catalog and their mandate
// store to MandateSource.
//
// # Failure taxonomy
//
// Plan returns a nil error exactly when the Proposal is Complete. Any other
// outcome still returns the Proposal filled with what was read (Complete
// false, Escalate true, a reason per cause) together with an
// *IncompleteError (errors.Is(err, ErrIncomplete)) wrapping the cause:
//
//   - ErrPageCap, ErrItemCap: the read budget ran out before the last page
//     (a catalog sending more items than asked is cut at the item cap);
//   - *PageError: Catalog.Page failed; it keeps the page number, the cursor
//     and the catalog's error unchanged for errors.As;
//   - context.Canceled / context.DeadlineExceeded: the run was cancelled;
//   - ErrCursorRepeat: the catalog sent a cursor twice (a loop);
//   - ErrDuplicateCode: a code appeared twice (the catalog changed mid-scan);
//   - *TotalMismatchError (ErrTotalMismatch): the last page came but the
//     count differs from the total the catalog reported.
//
// Before reading: *PolicyError (invalid Policy) and ErrNilCatalog. Runner
// adds *MandateError (errors.Is(err, ErrNoMandate) when no mandate exists;
// otherwise it wraps the source's own error), returned before any read.
// Schedule and Run report ErrSchedule. Items without a code and negative
// on-hand quantities do not stop a scan but add a reason and escalate; an
// item without a code, or with an on-hand quantity so negative that
// OrderUpTo − OnHand overflows, is not proposed. A Line's Quantity is
// always positive.
package reorder
