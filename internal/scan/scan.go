package scan

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"unicode/utf8"
)

// UnknownTotal is the Page.Total of a peer that does not report one.
const UnknownTotal = -1

// Page is one page of a listing.
type Page[T any] struct {
	// Items are the page's items, in order.
	Items []T
	// Next is the cursor of the following page; "" means this is the last.
	Next string
	// Total is the number of items the peer says the whole listing holds,
	// or UnknownTotal (-1; any negative value reads as unknown). Set it: 0
	// means "the listing is empty". The last total a page reported is
	// checked when the last page comes.
	Total int
}

// Fetch reads the page at cursor ("" asks for the first page).
type Fetch[T any] func(ctx context.Context, cursor string) (Page[T], error)

// DefaultMaxPages is the page cap when Limits.MaxPages is 0.
const DefaultMaxPages = 10000

// Limits caps one scan.
type Limits struct {
	// MaxPages caps the fetches; 0 means DefaultMaxPages.
	MaxPages int
	// MaxItems caps the items; 0 means no cap beyond MaxPages.
	MaxItems int
}

// Reason says why a scan stopped; the values are stable snake_case strings.
type Reason string

// The reasons a scan stops before its end.
const (
	ReasonCursorRepeat  Reason = "cursor_repeat"
	ReasonPageCap       Reason = "page_cap"
	ReasonItemCap       Reason = "item_cap"
	ReasonTotalMismatch Reason = "total_mismatch"
	ReasonFetch         Reason = "fetch"
	ReasonCanceled      Reason = "canceled"
)

// Sentinels; see the package documentation.
var (
	ErrIncomplete    = errors.New("scan: incomplete")
	ErrCursorRepeat  = errors.New("scan: cursor repeated")
	ErrPageCap       = errors.New("scan: page cap reached")
	ErrItemCap       = errors.New("scan: item cap reached")
	ErrTotalMismatch = errors.New("scan: item count differs from the reported total")
)

// IncompleteError reports a scan that did not reach the end of the listing.
type IncompleteError struct {
	Reason Reason
	// Pages is the number of pages fetched, Items the number of items
	// accepted (returned or yielded).
	Pages, Items int
	// Cursor is the cursor concerned: the repeated one, or the one whose
	// fetch failed or was not made.
	Cursor string
	// Total is the last total the peer reported (UnknownTotal if none).
	Total int
	// Err is the fetch error or the context's cause.
	Err error
}

func (e *IncompleteError) Error() string {
	head := fmt.Sprintf("scan: incomplete after %d page(s), %d item(s)", e.Pages, e.Items)
	switch e.Reason {
	case ReasonCursorRepeat:
		return fmt.Sprintf("%s: the peer repeated cursor %s", head, quote(e.Cursor))
	case ReasonPageCap:
		return head + ": page cap reached and the peer has more"
	case ReasonItemCap:
		return head + ": item cap reached and the peer has more"
	case ReasonTotalMismatch:
		return fmt.Sprintf("%s: the peer reported a total of %d", head, e.Total)
	case ReasonCanceled:
		return fmt.Sprintf("%s: %v", head, e.Err)
	}
	return fmt.Sprintf("%s: page at cursor %s: %v", head, quote(e.Cursor), e.Err)
}

// Is matches ErrIncomplete and the Reason's sentinel.
func (e *IncompleteError) Is(target error) bool {
	switch target {
	case ErrIncomplete:
		return true
	case ErrCursorRepeat:
		return e.Reason == ReasonCursorRepeat
	case ErrPageCap:
		return e.Reason == ReasonPageCap
	case ErrItemCap:
		return e.Reason == ReasonItemCap
	case ErrTotalMismatch:
		return e.Reason == ReasonTotalMismatch
	}
	return false
}

func (e *IncompleteError) Unwrap() error { return e.Err }

// quote bounds an untrusted cursor for an error message.
func quote(c string) string {
	const max = 64
	if len(c) <= max {
		return fmt.Sprintf("%q", c)
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(c[cut]) {
		cut--
	}
	return fmt.Sprintf("%q…", c[:cut])
}

// Scan fetches every page, starting at cursor "", and returns all items.
// When the scan cannot finish it returns the items accepted so far and an
// *IncompleteError: never treat them as the whole listing.
func Scan[T any](ctx context.Context, fetch Fetch[T], lim Limits) ([]T, error) {
	var out []T
	err := run(ctx, fetch, lim, func(items []T) bool {
		out = append(out, items...)
		return true
	})
	return out, err
}

// Seq is Scan as an iterator: it yields the items of each page as the page
// arrives and, when the scan cannot finish, a final (zero, err) with the
// *IncompleteError. A total mismatch is known only at the end, after the
// items were yielded. Breaking out of the loop stops the scan without
// another fetch.
func Seq[T any](ctx context.Context, fetch Fetch[T], lim Limits) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		stopped := false
		err := run(ctx, fetch, lim, func(items []T) bool {
			for _, it := range items {
				if !yield(it, nil) {
					stopped = true
					return false
				}
			}
			return true
		})
		if err != nil && !stopped {
			var zero T
			yield(zero, err)
		}
	}
}

// run drives the scan, handing each page's accepted items to accept; it
// returns nil exactly when the scan is complete (or accept stopped it).
func run[T any](ctx context.Context, fetch Fetch[T], lim Limits, accept func([]T) bool) error {
	if lim.MaxPages < 0 || lim.MaxItems < 0 {
		return fmt.Errorf("scan: limits must not be negative (MaxPages %d, MaxItems %d)", lim.MaxPages, lim.MaxItems)
	}
	if fetch == nil {
		return errors.New("scan: nil fetch function")
	}
	maxPages := lim.MaxPages
	if maxPages == 0 {
		maxPages = DefaultMaxPages
	}
	var (
		cursor string
		pages  int
		items  int
		total  = UnknownTotal
		sent   = map[string]bool{}
	)
	stop := func(r Reason, cur string, err error) error {
		return &IncompleteError{Reason: r, Pages: pages, Items: items, Cursor: cur, Total: total, Err: err}
	}
	for {
		if ctx.Err() != nil {
			return stop(ReasonCanceled, cursor, context.Cause(ctx))
		}
		if pages >= maxPages {
			return stop(ReasonPageCap, cursor, nil)
		}
		if lim.MaxItems > 0 && items >= lim.MaxItems {
			return stop(ReasonItemCap, cursor, nil)
		}
		sent[cursor] = true
		p, err := fetch(ctx, cursor)
		pages++
		if err != nil {
			if ctx.Err() != nil {
				return stop(ReasonCanceled, cursor, errors.Join(context.Cause(ctx), err))
			}
			return stop(ReasonFetch, cursor, err)
		}
		if p.Total >= 0 {
			total = p.Total
		}
		got := p.Items
		cut := false
		if lim.MaxItems > 0 && len(got) > lim.MaxItems-items {
			got, cut = got[:lim.MaxItems-items], true
		}
		items += len(got)
		if len(got) > 0 && !accept(got) {
			return nil
		}
		switch {
		case cut:
			return stop(ReasonItemCap, cursor, nil)
		case p.Next == "":
			if total != UnknownTotal && total != items {
				return stop(ReasonTotalMismatch, cursor, nil)
			}
			return nil
		case sent[p.Next]:
			return stop(ReasonCursorRepeat, p.Next, nil)
		}
		cursor = p.Next
	}
}
