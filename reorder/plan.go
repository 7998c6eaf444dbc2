package reorder

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/candorkit/candor/internal/scan"
)

// Default values a zero field of Thresholds takes.
const (
	DefaultReorderPoint = 50
	DefaultOrderUpTo    = 150
	DefaultPageSize     = 200
	DefaultMaxPages     = 50
	DefaultMaxItems     = 10000
)

// Thresholds are the rule Plan applies and the read budget it keeps. A zero
// field takes its default, so Thresholds{} are the documented defaults:
// reorder below 50, order up to 150, pages of 200, at most 50 pages and
// 10,000 items. There is no unlimited read: every scan has a page cap and an
// item cap.
type Thresholds struct {
	// ReorderPoint: an item is proposed when its on-hand quantity is strictly
	// below this value.
	ReorderPoint int
	// OrderUpTo is the stock level a proposed purchase restores:
	// Quantity = OrderUpTo − OnHand. It must be at least ReorderPoint.
	OrderUpTo int
	// PageSize is the size asked of the catalog for each page.
	PageSize int
	// MaxPages caps the number of Page calls of one scan.
	MaxPages int
	// MaxItems caps the number of items one scan examines.
	MaxItems int
}

// WithDefaults returns p with every zero field replaced by its default.
func (p Thresholds) WithDefaults() Thresholds {
	if p.ReorderPoint == 0 {
		p.ReorderPoint = DefaultReorderPoint
	}
	if p.OrderUpTo == 0 {
		p.OrderUpTo = DefaultOrderUpTo
	}
	if p.PageSize == 0 {
		p.PageSize = DefaultPageSize
	}
	if p.MaxPages == 0 {
		p.MaxPages = DefaultMaxPages
	}
	if p.MaxItems == 0 {
		p.MaxItems = DefaultMaxItems
	}
	return p
}

// Validate reports a *ThresholdsError when p (after defaults) cannot be applied:
// a negative field, or OrderUpTo below ReorderPoint (which would propose
// nothing, or a negative quantity, for an item that needs stock).
func (p Thresholds) Validate() error {
	p = p.WithDefaults()
	switch {
	case p.ReorderPoint < 0:
		return &ThresholdsError{Field: "ReorderPoint", Value: p.ReorderPoint, Reason: "must not be negative"}
	case p.OrderUpTo < 0:
		return &ThresholdsError{Field: "OrderUpTo", Value: p.OrderUpTo, Reason: "must not be negative"}
	case p.OrderUpTo < p.ReorderPoint:
		return &ThresholdsError{Field: "OrderUpTo", Value: p.OrderUpTo, Reason: fmt.Sprintf("must be at least ReorderPoint (%d)", p.ReorderPoint)}
	case p.PageSize < 0:
		return &ThresholdsError{Field: "PageSize", Value: p.PageSize, Reason: "must not be negative"}
	case p.MaxPages < 0:
		return &ThresholdsError{Field: "MaxPages", Value: p.MaxPages, Reason: "must not be negative"}
	case p.MaxItems < 0:
		return &ThresholdsError{Field: "MaxItems", Value: p.MaxItems, Reason: "must not be negative"}
	}
	return nil
}

// Item is one catalog reference as Plan sees it.
type Item struct {
	Code   string `json:"code"`
	Name   string `json:"name"`
	Vendor string `json:"vendor"`
	OnHand int    `json:"onHand"`
}

// Batch is one page of a catalog.
type Batch struct {
	Items []Item
	// Total is the number of items the catalog says it holds, when it says
	// so; 0 means the catalog did not report a total. A complete scan whose
	// item count differs from a reported total is not complete (ErrTotalMismatch).
	Total int
}

// Catalog is the read side Plan needs. Page returns the page that starts at
// cursor ("" asks for the first page) holding at most size items, and the
// cursor of the following page.
//
// The last page is signalled by next == "" and only by that: a non-empty next
// means more pages exist, even when the batch is empty. A cursor the scan has
// already sent is treated as a loop (ErrCursorRepeat), never as the end.
// When Page returns an error, the batch is discarded and the scan is
// incomplete.
type Catalog interface {
	Page(ctx context.Context, cursor string, size int) (batch Batch, next string, err error)
}

// CatalogFunc adapts a function to the Catalog interface.
type CatalogFunc func(ctx context.Context, cursor string, size int) (Batch, string, error)

// Page calls f.
func (f CatalogFunc) Page(ctx context.Context, cursor string, size int) (Batch, string, error) {
	return f(ctx, cursor, size)
}

// Line is one proposed purchase.
type Line struct {
	Code     string `json:"code"`
	Name     string `json:"name"`
	Vendor   string `json:"vendor"`
	OnHand   int    `json:"onHand"`
	Quantity int    `json:"quantity"`
}

// Proposal is the outcome of one scan. It never claims more than it read:
// Complete is true only when the catalog signalled its last page within the
// caps, without error, and (when it reported one) the item count matched its
// Total. Escalate is true whenever there is a line or the scan is not
// complete; Reasons says why, one sentence per cause.
type Proposal struct {
	// Scanned is the number of items examined.
	Scanned int `json:"scanned"`
	// Total is the item count the catalog reported, 0 when it reported none.
	Total    int      `json:"total,omitempty"`
	Complete bool     `json:"complete"`
	Lines    []Line   `json:"lines"`
	Escalate bool     `json:"escalate"`
	Reasons  []string `json:"reasons"`
}

// maxCursorInReason bounds how much of an untrusted cursor a reason quotes.
const maxCursorInReason = 64

func quoteCursor(c string) string {
	if len(c) > maxCursorInReason {
		return fmt.Sprintf("%q…", c[:maxCursorInReason])
	}
	return fmt.Sprintf("%q", c)
}

// Plan pages through catalog under t and proposes a purchase of
// OrderUpTo − OnHand for every item strictly below ReorderPoint, in catalog
// order.
//
// The error is nil exactly when the returned Proposal is Complete. Otherwise
// the Proposal is still filled in with what was read (Complete false,
// Escalate true, Reasons naming the cause) and the error is an
// *IncompleteError (errors.Is(err, ErrIncomplete)) wrapping the cause:
// ErrPageCap, ErrItemCap, a *PageError, ErrCursorRepeat, ErrDuplicateCode,
// ErrTotalMismatch, or the context's error. Invalid thresholds or a nil
// catalog are a *ThresholdsError (or ErrNilCatalog) and nothing is read.
//
// Options: WithTracerProvider and WithMeterProvider (the span reorder.plan
// and the metric reorder.run.duration), WithLogger (one record per plan).
func Plan(ctx context.Context, catalog Catalog, t Thresholds, opts ...Option) (Proposal, error) {
	o := newOptions(opts)
	tel := newTelemetry(o)
	ctx, span, start := tel.start(ctx, "plan")
	prop, err := plan(ctx, catalog, t)
	tel.end(ctx, span, start, "plan", prop, err)
	if o.logger.Enabled(ctx, slog.LevelInfo) {
		o.logger.LogAttrs(ctx, slog.LevelInfo, "reorder: planned",
			slog.Int("scanned", prop.Scanned), slog.Int("total", prop.Total),
			slog.Bool("complete", prop.Complete), slog.Int("lines", len(prop.Lines)),
			slog.Bool("escalate", prop.Escalate))
	}
	return prop, err
}

func plan(ctx context.Context, catalog Catalog, t Thresholds) (Proposal, error) {
	prop := Proposal{Lines: []Line{}, Reasons: []string{}}
	fail := func(err error) (Proposal, error) {
		prop.Escalate = true
		prop.Reasons = append(prop.Reasons, "not run: "+err.Error())
		return prop, err
	}
	if catalog == nil {
		return fail(ErrNilCatalog)
	}
	if err := t.Validate(); err != nil {
		return fail(err)
	}
	p := t.WithDefaults()

	var (
		causes []error
		seen   = map[string]bool{}
		// unproposed counts the items examined but not assessed: no
		// code, or an on-hand quantity out of range.
		unproposed int
		page       int  // the number of the page being read
		index      int  // the 1-based index of the item in its page
		truncated  bool // the last page held more items than the room left
	)
	incomplete := func(reason string, cause error) {
		prop.Reasons = append(prop.Reasons, reason)
		causes = append(causes, cause)
	}
	// The paging loop (caps, cursor repeats, the reported total) is
	// internal/scan's; Plan assesses the items of each page as they come.
	fetch := func(ctx context.Context, cursor string) (scan.Page[Item], error) {
		page++
		room := p.MaxItems - prop.Scanned
		batch, next, err := catalog.Page(ctx, cursor, min(p.PageSize, room))
		if err != nil {
			return scan.Page[Item]{}, &PageError{Page: page, Cursor: cursor, Err: err}
		}
		total := scan.UnknownTotal
		if batch.Total > 0 {
			prop.Total, total = batch.Total, batch.Total
		}
		truncated, index = len(batch.Items) > room, 0
		return scan.Page[Item]{Items: batch.Items, Next: next, Total: total}, nil
	}
	assess := func(it Item) {
		prop.Scanned++
		index++
		if strings.TrimSpace(it.Code) == "" {
			unproposed++
			prop.Reasons = append(prop.Reasons, fmt.Sprintf("item %d of page %d has no code: not proposed", index, page))
			return
		}
		if seen[it.Code] {
			incomplete(fmt.Sprintf("code %s appeared twice: the catalog changed or paged inconsistently during the scan", it.Code),
				fmt.Errorf("%w: %s", ErrDuplicateCode, it.Code))
			return
		}
		seen[it.Code] = true
		if it.OnHand >= p.ReorderPoint {
			return
		}
		// OrderUpTo ≥ ReorderPoint > OnHand, so the quantity is positive
		// unless the subtraction overflowed.
		qty := p.OrderUpTo - it.OnHand
		if qty <= 0 {
			unproposed++
			prop.Reasons = append(prop.Reasons, fmt.Sprintf("%s reports an on-hand quantity out of range (%d): not proposed", it.Code, it.OnHand))
			return
		}
		if it.OnHand < 0 {
			prop.Reasons = append(prop.Reasons, fmt.Sprintf("%s reports a negative on-hand quantity (%d)", it.Code, it.OnHand))
		}
		prop.Lines = append(prop.Lines, Line{Code: it.Code, Name: it.Name, Vendor: it.Vendor, OnHand: it.OnHand, Quantity: qty})
	}
	reached := true // the catalog signalled its last page
	for it, err := range scan.Seq(ctx, fetch, scan.Limits{MaxPages: p.MaxPages, MaxItems: p.MaxItems}) {
		if err == nil {
			assess(it)
			continue
		}
		reached = false
		var se *scan.IncompleteError
		if !errors.As(err, &se) {
			incomplete("scan failed: "+err.Error(), err) // not reached: the limits are valid
			break
		}
		var pe *PageError
		switch se.Reason {
		case scan.ReasonCanceled:
			if errors.As(se.Err, &pe) {
				incomplete(fmt.Sprintf("cancelled during page %d: %v", pe.Page, pe.Err), se.Err)
			} else {
				incomplete(fmt.Sprintf("cancelled after %d page(s): %v", se.Pages, ctx.Err()), se.Err)
			}
		case scan.ReasonFetch:
			if errors.As(se.Err, &pe) {
				incomplete(fmt.Sprintf("catalog error on page %d: %v", pe.Page, pe.Err), pe)
			} else {
				incomplete(fmt.Sprintf("catalog error on page %d: %v", se.Pages, se.Err), se.Err)
			}
		case scan.ReasonPageCap:
			incomplete(fmt.Sprintf("page cap: read %d page(s), the limit, and the catalog has more", se.Pages), ErrPageCap)
		case scan.ReasonItemCap:
			if truncated {
				incomplete(fmt.Sprintf("item cap: the catalog sent more than the %d item(s) allowed; the rest were not examined", p.MaxItems), ErrItemCap)
			} else {
				incomplete(fmt.Sprintf("item cap: read %d item(s), the limit, and the catalog has more", prop.Scanned), ErrItemCap)
			}
		case scan.ReasonCursorRepeat:
			incomplete(fmt.Sprintf("catalog returned cursor %s again on page %d: stopped to avoid a loop", quoteCursor(se.Cursor), se.Pages), ErrCursorRepeat)
		case scan.ReasonTotalMismatch:
			reached = true
			incomplete(fmt.Sprintf("catalog reports %d item(s) but the scan read %d", prop.Total, prop.Scanned),
				&TotalMismatchError{Reported: prop.Total, Scanned: prop.Scanned})
		default:
			incomplete("scan stopped: "+err.Error(), err)
		}
	}
	prop.Complete = reached && len(causes) == 0
	if n := len(prop.Lines); n > 0 {
		prop.Reasons = append(prop.Reasons, fmt.Sprintf("%d reference(s) below reorder point %d: a purchase needs a human decision", n, p.ReorderPoint))
	}
	prop.Escalate = !prop.Complete || len(prop.Lines) > 0 || unproposed > 0
	if prop.Complete {
		return prop, nil
	}
	return prop, &IncompleteError{Scanned: prop.Scanned, Err: errors.Join(causes...)}
}
