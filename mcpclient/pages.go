package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strconv"

	"github.com/candorkit/candor/internal/httpx"
	"github.com/candorkit/candor/internal/scan"
)

// DefaultMaxPages bounds a scan unless PageOptions.MaxPages says otherwise.
const DefaultMaxPages = 1000

// DefaultPageSize is the page size ("limit") unless PageOptions.Size says
// otherwise.
const DefaultPageSize = 100

// PageOptions are the per-call parameters of Page, Pages and All; the zero
// value pages by cursor, DefaultPageSize items a page, and stops a scan
// after DefaultMaxPages pages.
type PageOptions struct {
	// Size is the "limit" argument of each call (0: DefaultPageSize;
	// negative: an error before any call).
	Size int
	// Offset pages with "limit" and "offset" (0, Size, 2×Size, …) instead
	// of a cursor. Each page must then carry "items" and an integer
	// "total"; the list ends when the items read equal total. With Page,
	// the cursor is then "" for offset 0 and otherwise a NextCursor
	// returned by an earlier offset page (the decimal offset of the next
	// page).
	Offset bool
	// MaxPages stops a Pages or All scan after this many pages (0:
	// DefaultMaxPages); a scan stopped so is not complete. Page, which
	// reads one page, does not use it.
	MaxPages int
	// MaxItems stops a Pages or All scan once it has this many items (0:
	// no cap but MaxPages); a scan stopped so is not complete.
	MaxItems int
}

func (o PageOptions) size() int {
	if o.Size == 0 {
		return DefaultPageSize
	}
	return o.Size
}

func (o PageOptions) maxPages() int {
	if o.MaxPages <= 0 {
		return DefaultMaxPages
	}
	return o.MaxPages
}

// Scan is the outcome of Pages. Complete is true only when the last page
// said it was the last (and its total, if given, matched the items read);
// otherwise Reason says why the scan stopped and Items holds the items of
// the whole pages read before that, which are NOT the full list.
type Scan[T any] struct {
	Items    []T
	Pages    int // pages read and accepted
	Complete bool
	Reason   string // why the scan is not complete ("" when it is)
}

// PageResult is one page read by Page.
type PageResult[T any] struct {
	// Items are the page's items decoded into T, in order; never nil (an
	// empty page gives an empty slice).
	Items []T
	// NextCursor is the cursor to pass to Page for the next page. It is ""
	// exactly when Last is true.
	NextCursor string
	// Last is true only when the page affirmatively said it was the last:
	// nextCursor null or "" (cursor paging), or the offset plus the page's
	// items equal to its total (offset paging).
	Last bool
	// Total is the total the page reported; it is meaningful only when
	// HasTotal is true (a page may omit total, or send null).
	Total    int
	HasTotal bool
	// Raw is the page payload exactly as received: structuredContent, else
	// the text content. It lets a caller that checks more than this package
	// does (for instance fields of the items) report the evidence.
	Raw json.RawMessage
}

// checkPageRequest refuses what Page and Pages cannot send.
func checkPageRequest(args map[string]any, opts PageOptions) error {
	if opts.Size < 0 {
		return usagef("page size %d must not be negative", opts.Size)
	}
	if opts.MaxPages < 0 || opts.MaxItems < 0 {
		return usagef("caps must not be negative (MaxPages %d, MaxItems %d)", opts.MaxPages, opts.MaxItems)
	}
	for _, k := range []string{"limit", "cursor", "offset"} {
		if _, ok := args[k]; ok {
			return usagef("args must not set %q, the pager does", k)
		}
	}
	return nil
}

// Page reads one page of a paging tool and decodes its items into T.
//
// Cursor paging (the default) follows the candor MCP convention: the call
// sends args plus "limit": opts.Size and, unless cursor is "", "cursor":
// cursor. Pass "" for the first page, then the NextCursor of the page
// before. The page is a JSON object (structuredContent, else the single
// text content) {"items": [...], "nextCursor": "…"|null, "total": n
// (optional)}; nextCursor null or "" makes it the Last page. With
// opts.Offset the call sends "limit" and "offset" and the page must carry
// an integer total (see PageOptions.Offset for the cursor).
//
// Page applies every rule that one page can break; Pages and All use it
// for each page. The rules that span pages are left to a caller that loops
// over Page: a cursor seen before, a last page whose total differs from
// the items read, a cap on the number of pages.
//
// Failures, always with the zero PageResult:
//   - a negative page size, args that set "limit", "cursor" or "offset",
//     or an offset cursor that is not a non-negative integer: an error
//     before any call (Kind invalid_argument);
//   - a failed call: the error of Client.Call, unwrapped (*ToolError,
//     *ProtocolError, *MalformedResultError, ErrBudgetExceeded, the
//     context's error, …);
//   - a page that breaks the convention (not a JSON object, no items array,
//     no nextCursor key, a nextCursor neither string nor null, a total that
//     is not a non-negative integer; with offset paging a missing total, an
//     empty page before total or more items than total) or an item that is
//     not a T: a *DecodeError whose Raw is the page.
func Page[T any](ctx context.Context, c ToolCaller, tool string, args map[string]any, cursor string, opts PageOptions) (PageResult[T], error) {
	if err := checkPageRequest(args, opts); err != nil {
		return PageResult[T]{}, usagef("mcpclient: page of %q: %v", tool, err)
	}
	p, err := readPage[T](ctx, c, tool, args, cursor, opts)
	if err != nil {
		return PageResult[T]{}, err
	}
	return p, nil
}

// readPage is Page without the argument checks.
func readPage[T any](ctx context.Context, c ToolCaller, tool string, args map[string]any, cursor string, opts PageOptions) (PageResult[T], error) {
	var p PageResult[T]
	call := make(map[string]any, len(args)+2)
	for k, v := range args {
		call[k] = v
	}
	call["limit"] = opts.size()
	start := 0
	switch {
	case opts.Offset:
		if cursor != "" {
			n, err := strconv.Atoi(cursor)
			if err != nil || n < 0 {
				return p, usagef("mcpclient: page of %q: offset cursor %q is not a non-negative integer", tool, httpx.Excerpt([]byte(cursor), 64))
			}
			start = n
		}
		call["offset"] = start
	case cursor != "":
		call["cursor"] = cursor
	}
	res, err := c.Call(ctx, tool, call)
	if err != nil {
		return p, err
	}
	p, err = decodePage[T](res, opts.Offset)
	if err != nil {
		return PageResult[T]{}, &DecodeError{Tool: tool, Raw: p.Raw, Err: err}
	}
	if !opts.Offset {
		p.Last = p.NextCursor == ""
		return p, nil
	}
	// Offset paging: the page ends the list when it reaches total.
	bad := func(format string, a ...any) (PageResult[T], error) {
		return PageResult[T]{}, &DecodeError{Tool: tool, Raw: p.Raw, Err: fmt.Errorf(format, a...)}
	}
	if !p.HasTotal {
		return bad("offset paging needs an integer total")
	}
	switch n := start + len(p.Items); {
	case n == p.Total:
		p.Last, p.NextCursor = true, ""
	case n > p.Total:
		return bad("offset %d plus %d items is more than total %d", start, len(p.Items), p.Total)
	case len(p.Items) == 0:
		return bad("empty page at offset %d before total %d", start, p.Total)
	default:
		p.Last, p.NextCursor = false, strconv.Itoa(n)
	}
	return p, nil
}

// Pages reads every page of a paging tool and decodes the items into T.
//
// Each page is read as Page reads it (cursor paging by default,
// opts.Offset for limit/offset), starting with cursor "" and going on with
// each page's NextCursor. A page that says it is the last ends the scan as
// complete, provided the total the pages reported, if any, equals the
// items read. A malformed page, an item that is not a T, a cursor seen
// before, a total that does not match, a failed call (tool error, budget,
// transport), a cancelled context or a cap (opts.MaxPages, opts.MaxItems)
// stop the scan with Complete false. A tool with another paging scheme can
// be adapted by a small loop over CallJSON, keeping the same rule:
// complete only when the server said so.
//
// The error is nil exactly when the scan is complete; when it is not, the
// error says how far the scan got and why it stopped, and errors.As
// reaches the cause (a *DecodeError for a malformed page, the error of a
// failed call); Classify names a rule that spans pages "incomplete".
// Reason is the error's text.
func Pages[T any](ctx context.Context, c ToolCaller, tool string, args map[string]any, opts PageOptions) (Scan[T], error) {
	var res Scan[T]
	pages, err := scanPages(ctx, c, tool, args, opts, func(it T) bool {
		res.Items = append(res.Items, it)
		return true
	})
	res.Pages = pages
	if err != nil {
		res.Reason = err.Error()
		return res, err
	}
	res.Complete = true
	return res, nil
}

// All is Pages as an iterator: it yields the items of each page as the
// page arrives, and a scan that cannot finish yields a final (zero, err)
// with the error Pages would return, never a silent end. Items yielded
// before such an error are NOT the full list (a total that does not match
// is known only after the last page's items). Breaking out of the loop
// stops the scan without another call.
func All[T any](ctx context.Context, c ToolCaller, tool string, args map[string]any, opts PageOptions) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		stopped := false
		_, err := scanPages(ctx, c, tool, args, opts, func(it T) bool {
			if !yield(it, nil) {
				stopped = true
				return false
			}
			return true
		})
		if err != nil && !stopped {
			var zero T
			yield(zero, err)
		}
	}
}

// scanPages runs the scan, handing each item to accept; it returns the
// number of pages read and accepted, and nil exactly when the scan is
// complete (or accept stopped it).
func scanPages[T any](ctx context.Context, c ToolCaller, tool string, args map[string]any, opts PageOptions, accept func(T) bool) (int, error) {
	if err := checkPageRequest(args, opts); err != nil {
		return 0, usagef("mcpclient: pages of %q: %v", tool, err)
	}
	pages := 0
	fetch := func(ctx context.Context, cursor string) (scan.Page[T], error) {
		p, err := readPage[T](ctx, c, tool, args, cursor, opts)
		if err != nil {
			return scan.Page[T]{}, err
		}
		pages++
		total := scan.UnknownTotal
		if p.HasTotal {
			total = p.Total
		}
		return scan.Page[T]{Items: p.Items, Next: p.NextCursor, Total: total}, nil
	}
	lim := scan.Limits{MaxPages: opts.maxPages(), MaxItems: opts.MaxItems}
	for it, err := range scan.Seq(ctx, fetch, lim) {
		if err != nil {
			return pages, fmt.Errorf("mcpclient: pages of %q: %w", tool, err)
		}
		if !accept(it) {
			break
		}
	}
	return pages, nil
}

// isIncomplete reports a scan stopped by a rule that spans pages: a
// repeated cursor, a cap, a total that does not match.
func isIncomplete(err error) bool {
	return errors.Is(err, scan.ErrCursorRepeat) || errors.Is(err, scan.ErrPageCap) ||
		errors.Is(err, scan.ErrItemCap) || errors.Is(err, scan.ErrTotalMismatch)
}

// decodePage decodes a page payload by the paging convention. On error,
// the returned page still carries Raw.
func decodePage[T any](res *Result, offset bool) (PageResult[T], error) {
	var p PageResult[T]
	payload, err := payloadOf(res)
	p.Raw = payload
	if err != nil {
		return p, err
	}
	obj, err := decodeStrict[map[string]json.RawMessage](payload)
	if err != nil {
		return p, fmt.Errorf("page is not a JSON object: %w", err)
	}
	rawItems, ok := obj["items"]
	if !ok {
		return p, errors.New(`page has no "items"`)
	}
	var items []json.RawMessage
	if err := json.Unmarshal(rawItems, &items); err != nil || items == nil {
		return p, errors.New(`page "items" is not an array`)
	}
	p.Items = make([]T, 0, len(items))
	for i, it := range items {
		v, err := decodeStrict[T](it)
		if err != nil {
			return p, fmt.Errorf("item %d: %w", i, err)
		}
		p.Items = append(p.Items, v)
	}
	if rawTotal, ok := obj["total"]; ok && !isNull(rawTotal) {
		if err := json.Unmarshal(rawTotal, &p.Total); err != nil || p.Total < 0 {
			return p, errors.New(`page "total" is not a non-negative integer`)
		}
		p.HasTotal = true
	}
	rawNext, ok := obj["nextCursor"]
	if !ok {
		if offset {
			return p, nil
		}
		return p, errors.New(`page has no "nextCursor" key`)
	}
	if !isNull(rawNext) {
		if err := json.Unmarshal(rawNext, &p.NextCursor); err != nil {
			return p, errors.New(`page "nextCursor" is neither a string nor null`)
		}
	}
	return p, nil
}
