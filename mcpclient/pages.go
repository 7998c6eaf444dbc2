package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// PageOption configures Pages.
type PageOption func(*pageConfig)

type pageConfig struct {
	offset   bool
	maxPages int
}

// WithOffsetPaging pages with "limit" and "offset" (0, pageSize, 2×pageSize,
// …) instead of a cursor. Each page must then carry "items" and an integer
// "total"; the scan is complete when the items read equal total.
func WithOffsetPaging() PageOption { return func(p *pageConfig) { p.offset = true } }

// WithMaxPages stops a scan after n pages (default DefaultMaxPages); a scan
// stopped so is not complete.
func WithMaxPages(n int) PageOption { return func(p *pageConfig) { p.maxPages = n } }

// Pages reads every page of a paging tool and decodes the items into T.
//
// Cursor paging (the default) follows the candor MCP convention: each call
// sends args plus "limit": pageSize and, from the second page on, "cursor":
// the previous page's nextCursor. A page is a JSON object (structuredContent,
// else the text content) {"items": [...], "nextCursor": "…"|null,
// "total": n (optional)}; a nextCursor of null or "" ends the scan as
// complete. A page without an items array or without the nextCursor key, a
// cursor seen before, an item that is not a T, a failed call (tool error,
// budget, transport), a cancelled context or the page cap stop the scan with
// Complete false. A tool with another paging scheme can be adapted by a
// small loop over CallJSON, keeping the same rule: complete only when the
// server said so.
//
// The error is nil exactly when the scan is complete; when it is not, the
// error is the cause (a *DecodeError for a malformed page) and Reason is its
// text.
func Pages[T any](ctx context.Context, c *Client, tool string, args map[string]any, pageSize int, opts ...PageOption) (Scan[T], error) {
	cfg := pageConfig{maxPages: DefaultMaxPages}
	for _, o := range opts {
		o(&cfg)
	}
	var scan Scan[T]
	stop := func(err error) (Scan[T], error) {
		scan.Complete = false
		scan.Reason = err.Error()
		return scan, err
	}
	if pageSize <= 0 {
		return stop(fmt.Errorf("mcpclient: pages of %q: page size %d must be positive", tool, pageSize))
	}
	for _, k := range []string{"limit", "cursor", "offset"} {
		if _, ok := args[k]; ok {
			return stop(fmt.Errorf("mcpclient: pages of %q: args must not set %q, Pages does", tool, k))
		}
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
		call := make(map[string]any, len(args)+2)
		for k, v := range args {
			call[k] = v
		}
		call["limit"] = pageSize
		switch {
		case cfg.offset:
			call["offset"] = len(scan.Items)
		case scan.Pages > 0:
			call["cursor"] = cursor
		}
		res, err := c.Call(ctx, tool, call)
		if err != nil {
			return stop(fmt.Errorf("mcpclient: pages of %q: page %d: %w", tool, scan.Pages+1, err))
		}
		page, err := decodePage[T](res, cfg.offset)
		if err != nil {
			return stop(&DecodeError{Tool: tool, Raw: page.raw, Err: fmt.Errorf("page %d: %w", scan.Pages+1, err)})
		}
		scan.Items = append(scan.Items, page.items...)
		scan.Pages++

		if cfg.offset {
			if page.total == nil {
				return stop(&DecodeError{Tool: tool, Raw: page.raw, Err: fmt.Errorf("page %d: offset paging needs an integer total", scan.Pages)})
			}
			switch n := len(scan.Items); {
			case n == *page.total:
				scan.Complete = true
				return scan, nil
			case n > *page.total:
				return stop(fmt.Errorf("mcpclient: pages of %q: read %d items but total says %d", tool, n, *page.total))
			case len(page.items) == 0:
				return stop(fmt.Errorf("mcpclient: pages of %q: empty page at offset %d before total %d", tool, n, *page.total))
			}
			continue
		}

		if page.next == "" {
			if page.total != nil && *page.total != len(scan.Items) {
				return stop(fmt.Errorf("mcpclient: pages of %q: last page reached with %d items but total says %d", tool, len(scan.Items), *page.total))
			}
			scan.Complete = true
			return scan, nil
		}
		if seen[page.next] {
			return stop(fmt.Errorf("mcpclient: pages of %q: page %d repeats cursor %q", tool, scan.Pages, truncate(page.next, 64)))
		}
		seen[page.next] = true
		cursor = page.next
	}
}

type page[T any] struct {
	items []T
	next  string
	total *int
	raw   []byte
}

func decodePage[T any](res *Result, offset bool) (page[T], error) {
	var p page[T]
	payload, err := payloadOf(res)
	p.raw = payload
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
	for i, it := range items {
		v, err := decodeStrict[T](it)
		if err != nil {
			return p, fmt.Errorf("item %d: %w", i, err)
		}
		p.items = append(p.items, v)
	}
	if rawTotal, ok := obj["total"]; ok && !isNull(rawTotal) {
		var n int
		if err := json.Unmarshal(rawTotal, &n); err != nil || n < 0 {
			return p, errors.New(`page "total" is not a non-negative integer`)
		}
		p.total = &n
	}
	rawNext, ok := obj["nextCursor"]
	if !ok {
		if offset {
			return p, nil
		}
		return p, errors.New(`page has no "nextCursor" key`)
	}
	if !isNull(rawNext) {
		if err := json.Unmarshal(rawNext, &p.next); err != nil {
			return p, errors.New(`page "nextCursor" is neither a string nor null`)
		}
	}
	return p, nil
}
