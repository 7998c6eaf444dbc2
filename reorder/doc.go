// Package reorder computes a periodic purchase proposal from a catalog and is
// honest about how much of the catalog it read.
//
// Plan pages through a Catalog under Thresholds (reorder below 50, order up to
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
// Run reads the wall clock; tests run it in a testing/synctest bubble, where
// waiting for 06:00 takes no real time.
//
// Runner is the "no identity, no action" precondition: it obtains the
// person's Mandate before anything else, and only then opens the catalog
// with the mandate's token and plans. Without a mandate it stops before any
// read. A Mandate's token never appears in its String, GoString, JSON or
// slog forms.
//
// The package imports no other library package of candor (only
// internal/scan, the module's complete-scan loop, which keeps the caps, the
// cursor-repeat check and the total check): callers adapt their catalog
// client (for example an MCP tool behind mcpclient) to Catalog and their
// mandate store to MandateSource.
//
// NewRunner, Plan and Run take Options. WithLogger applies to all three;
// without it (or with a nil logger) nothing is logged, and an error is
// logged under the key "error". WithTracerProvider and WithMeterProvider
// apply to NewRunner and Plan (nil or absent: the global providers, no-ops
// unless the program installed an SDK); Run, the scheduler, refuses them.
//
// # Telemetry
//
// The instrumentation scope is github.com/candorkit/candor/reorder. One span
// per run, kind internal: reorder.run for Runner.Run (the plan it makes is
// part of it, not a span of its own) and reorder.plan for Plan, with
//
//	reorder.operation      "run" or "plan"
//	reorder.complete       bool: the scan covered the whole catalog
//	reorder.escalate       bool: a person must look
//	reorder.items.scanned  int: items examined
//	reorder.items.total    int: the catalog's reported total (0: none)
//	reorder.lines          int: lines proposed
//	error.type             the Kind, on failure only (span status Error, described by the Kind)
//
// and one metric:
//
//	reorder.run.duration  histogram, s  reorder.operation, reorder.complete, error.type (on failure)
//
// A failed run halted before any read (no_mandate) is a span and a data
// point like any other. No attribute holds a mandate's token, a subject, a
// cursor or an item.
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
// Before reading: *ThresholdsError (an invalid Thresholds field, named in
// Field) and ErrNilCatalog. Runner adds *HaltedError (errors.Is(err,
// ErrNoMandate) when no mandate exists; otherwise it wraps the source's own
// error), returned before any read; a failure to open the catalog is
// returned wrapped, also before any read.
// Schedule and Run report ErrSchedule (Run also for WithTracerProvider or
// WithMeterProvider). Items without a code and negative
// on-hand quantities do not stop a scan but add a reason and escalate; an
// item without a code, or with an on-hand quantity so negative that
// OrderUpTo − OnHand overflows, is not proposed. A Line's Quantity is
// always positive.
//
// Classify(err) returns the Kind, a stable snake_case string also used as
// the error.type of the telemetry:
//
//	no_mandate           *HaltedError wrapping ErrNoMandate: nothing was read
//	mandate_unavailable  *HaltedError of a failing MandateSource: nothing was read
//	open_failed          the Opener failed: nothing was read
//	invalid_thresholds   *ThresholdsError
//	nil_catalog          ErrNilCatalog
//	canceled             the context ended
//	catalog_error        *PageError
//	cursor_repeat        ErrCursorRepeat
//	duplicate_code       ErrDuplicateCode
//	page_cap, item_cap   ErrPageCap, ErrItemCap
//	total_mismatch       ErrTotalMismatch
//	schedule             ErrSchedule
//	other                anything else
//
// A scan stopped for several causes is classified by the first of
// canceled, catalog_error, cursor_repeat, duplicate_code, page_cap,
// item_cap, total_mismatch.
package reorder
