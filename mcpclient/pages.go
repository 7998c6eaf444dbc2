package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// DefaultMaxPages bounds a scan unless WithMaxPages says otherwise.
const DefaultMaxPages = 1000

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

// PageOption configures Page and Pages.
type PageOption func(*pageConfig)

type pageConfig struct {
	offset   bool
	maxPages int
}

// WithOffsetPaging pages with "limit" and "offset" (0, pageSize, 2×pageSize,
// …) instead of a cursor. Each page must then carry "items" and an integer
// "total"; the list ends when the items read equal total. With Page, the
// cursor is then "" for offset 0 and otherwise a NextCursor returned by an
// earlier offset page (the decimal offset of the next page).
func WithOffsetPaging() PageOption { return func(p *pageConfig) { p.offset = true } }

// WithMaxPages stops a Pages scan after n pages (default DefaultMaxPages); a
// scan stopped so is not complete. Page, which reads one page, ignores it.
func WithMaxPages(n int) PageOption { return func(p *pageConfig) { p.maxPages = n } }

func newPageConfig(opts []PageOption) pageConfig {
	cfg := pageConfig{maxPages: DefaultMaxPages}
	for _, o := range opts {
		o(&cfg)
	}
	return cfg
}

// checkPageRequest refuses what Page and Pages cannot send.
func checkPageRequest(args map[string]any, pageSize int) error {
	if pageSize <= 0 {
		return fmt.Errorf("page size %d must be positive", pageSize)
	}
	for _, k := range []string{"limit", "cursor", "offset"} {
		if _, ok := args[k]; ok {
			return fmt.Errorf("args must not set %q, the pager does", k)
		}
	}
	return nil
}

// Page reads one page of a paging tool and decodes its items into T.
//
// Cursor paging (the default) follows the candor MCP convention: the call
// sends args plus "limit": pageSize and, unless cursor is "", "cursor":
// cursor. Pass "" for the first page, then the NextCursor of the page
// before. The page is a JSON object (structuredContent, else the single
// text content) {"items": [...], "nextCursor": "…"|null, "total": n
// (optional)}; nextCursor null or "" makes it the Last page. With
// WithOffsetPaging the call sends "limit" and "offset" and the page must
// carry an integer total (see WithOffsetPaging for the cursor).
//
// Page applies every rule that one page can break; Pages uses it for each
// page. The rules that span pages are left to a caller that loops over
// Page: a cursor seen before, a last page whose total differs from the
// items read, a cap on the number of pages.
//
// Failures, always with the zero PageResult:
//   - a page size ≤ 0, args that set "limit", "cursor" or "offset", or an
//     offset cursor that is not a non-negative integer: an error before any
//     call;
//   - a failed call: the error of Client.Call, unwrapped (*ToolError,
//     *ProtocolError, *MalformedResultError, ErrBudgetExceeded, the
//     context's error, …);
//   - a page that breaks the convention (not a JSON object, no items array,
//     no nextCursor key, a nextCursor neither string nor null, a total that
//     is not a non-negative integer; with offset paging a missing total, an
//     empty page before total or more items than total) or an item that is
//     not a T: a *DecodeError whose Raw is the page.
func Page[T any](ctx context.Context, c *Client, tool string, args map[string]any, pageSize int, cursor string, opts ...PageOption) (PageResult[T], error) {
	cfg := newPageConfig(opts)
	if err := checkPageRequest(args, pageSize); err != nil {
		return PageResult[T]{}, fmt.Errorf("mcpclient: page of %q: %w", tool, err)
	}
	p, _, err := readPage[T](ctx, c, tool, args, pageSize, cursor, cfg.offset)
	if err != nil {
		return PageResult[T]{}, err
	}
	return p, nil
}

// readPage is Page without the argument checks. When err is a *DecodeError
// about a page that decoded but whose offset and total disagree, decoded is
// true and p holds the page: Pages counts such a page as read.
func readPage[T any](ctx context.Context, c *Client, tool string, args map[string]any, pageSize int, cursor string, offset bool) (p PageResult[T], decoded bool, err error) {
	call := make(map[string]any, len(args)+2)
	for k, v := range args {
		call[k] = v
	}
	call["limit"] = pageSize
	start := 0
	switch {
	case offset:
		if cursor != "" {
			n, err := strconv.Atoi(cursor)
			if err != nil || n < 0 {
				return p, false, fmt.Errorf("mcpclient: page of %q: offset cursor %q is not a non-negative integer", tool, truncate(cursor, 64))
			}
			start = n
		}
		call["offset"] = start
	case cursor != "":
		call["cursor"] = cursor
	}
	res, err := c.Call(ctx, tool, call)
	if err != nil {
		return p, false, err
	}
	p, err = decodePage[T](res, offset)
	if err != nil {
		raw := p.Raw
		return PageResult[T]{}, false, &DecodeError{Tool: tool, Raw: raw, Err: err}
	}
	if !offset {
		p.Last = p.NextCursor == ""
		return p, true, nil
	}
	// Offset paging: the page ends the list when it reaches total.
	bad := func(format string, a ...any) (PageResult[T], bool, error) {
		return p, true, &DecodeError{Tool: tool, Raw: p.Raw, Err: fmt.Errorf(format, a...)}
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
	return p, true, nil
}

// Pages reads every page of a paging tool and decodes the items into T.
//
// Each page is read as Page reads it (cursor paging by default,
// WithOffsetPaging for limit/offset), starting with cursor "" and going on
// with each page's NextCursor. A page that says it is the last ends the
// scan as complete, provided its total, if any, equals the items read. A
// malformed page, an item that is not a T, a cursor seen before, a total
// that does not match, a failed call (tool error, budget, transport), a
// cancelled context or the page cap stop the scan with Complete false. A
// tool with another paging scheme can be adapted by a small loop over
// CallJSON, keeping the same rule: complete only when the server said so.
//
// The error is nil exactly when the scan is complete; when it is not, the
// error is the cause (a *DecodeError for a malformed page) and Reason is its
// text.
func Pages[T any](ctx context.Context, c *Client, tool string, args map[string]any, pageSize int, opts ...PageOption) (Scan[T], error) {
	cfg := newPageConfig(opts)
	var scan Scan[T]
	stop := func(err error) (Scan[T], error) {
		scan.Complete = false
		scan.Reason = err.Error()
		return scan, err
	}
	if err := checkPageRequest(args, pageSize); err != nil {
		return stop(fmt.Errorf("mcpclient: pages of %q: %w", tool, err))
	}
	seen := map[string]bool{}
	cursor := ""
	for {
		if err := ctx.Err(); err != nil {
			return stop(fmt.Errorf("mcpclient: pages of %q: stopped after %d pages: %w", tool, scan.Pages, context.Cause(ctx)))
		}
		if scan.Pages >= cfg.maxPages {
			return stop(fmt.Errorf("mcpclient: pages of %q: page cap %d reached before the last page", tool, cfg.maxPages))
		}
		n := scan.Pages + 1
		page, decoded, err := readPage[T](ctx, c, tool, args, pageSize, cursor, cfg.offset)
		if decoded {
			scan.Items = append(scan.Items, page.Items...)
			scan.Pages++
		}
		if err != nil {
			if de, ok := errors.AsType[*DecodeError](err); ok {
				return stop(&DecodeError{Tool: de.Tool, Raw: de.Raw, Err: fmt.Errorf("page %d: %w", n, de.Err)})
			}
			return stop(fmt.Errorf("mcpclient: pages of %q: page %d: %w", tool, n, err))
		}

		if page.Last {
			if page.HasTotal && page.Total != len(scan.Items) {
				return stop(fmt.Errorf("mcpclient: pages of %q: last page reached with %d items but total says %d", tool, len(scan.Items), page.Total))
			}
			scan.Complete = true
			return scan, nil
		}
		if seen[page.NextCursor] {
			return stop(fmt.Errorf("mcpclient: pages of %q: page %d repeats cursor %q", tool, scan.Pages, truncate(page.NextCursor, 64)))
		}
		seen[page.NextCursor] = true
		cursor = page.NextCursor
	}
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
