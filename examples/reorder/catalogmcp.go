package main

import (
	"context"
	"fmt"

	"github.com/candorkit/candor/mcpclient"
	"github.com/candorkit/candor/reorder"
)

// listTool is the catalog's paged listing tool (candor paging convention).
const listTool = "list-products"

// mcpCatalog adapts the catalog's paged list-products tool, called through
// mcpclient, to reorder.Catalog, one page per Page call, so that reorder.Plan
// keeps the page and item caps and decides completeness.
//
// mcpclient.Page applies the paging convention ({"items": [...],
// "nextCursor": "…"|null, "total": n}: items and nextCursor required, the
// page is the last only when nextCursor is null or "") and decodes each
// product; a page that breaks it, or a product field of the wrong JSON type
// (a fractional or string quantityInStock, say), is a *mcpclient.DecodeError
// keeping the page. This adapter adds what only the agent knows: every
// product has a code and a quantityInStock that is present and not null;
// anything else is a *pageFormatError keeping the page. Either way the scan
// stops incomplete, and a missing quantity never reads as 0 in stock.
type mcpCatalog struct {
	c    *mcpclient.Client
	tool string
}

// Page implements reorder.Catalog.
func (m *mcpCatalog) Page(ctx context.Context, cursor string, size int) (reorder.Batch, string, error) {
	p, err := mcpclient.Page[wireProduct](ctx, m.c, m.tool, nil, cursor, mcpclient.PageOptions{Size: size})
	if err != nil {
		return reorder.Batch{}, "", err
	}
	b, err := batchOf(m.tool, p)
	if err != nil {
		return reorder.Batch{}, "", err
	}
	return b, p.NextCursor, nil
}

// pageFormatError is a list-products page, well-formed by the paging
// convention, that carries a product the agent cannot read. Raw is the page
// as received (bounded by the client's response limit).
type pageFormatError struct {
	Tool   string
	Reason string
	Raw    []byte
}

func (e *pageFormatError) Error() string {
	return fmt.Sprintf("%s: malformed page: %s", e.Tool, e.Reason)
}

// wireProduct is a product as the catalog sends it. Pointers tell a missing
// (or null) field from a zero value.
type wireProduct struct {
	Code     *string `json:"productCode"`
	Name     *string `json:"productName"`
	Vendor   *string `json:"productVendor"`
	Quantity *int    `json:"quantityInStock"`
}

// batchOf checks the products of a decoded page and converts them. A total
// the page did not report stays 0, which reorder.Batch reads as unknown.
func batchOf(tool string, p mcpclient.PageResult[wireProduct]) (reorder.Batch, error) {
	b := reorder.Batch{Items: make([]reorder.Item, 0, len(p.Items))}
	if p.HasTotal {
		b.Total = p.Total
	}
	for i, w := range p.Items {
		bad := func(format string, a ...any) (reorder.Batch, error) {
			reason := fmt.Sprintf("item %d: ", i+1) + fmt.Sprintf(format, a...)
			return reorder.Batch{}, &pageFormatError{Tool: tool, Reason: reason, Raw: p.Raw}
		}
		if w.Code == nil || *w.Code == "" {
			return bad("no productCode")
		}
		if w.Quantity == nil {
			return bad("(%s) no quantityInStock", *w.Code)
		}
		b.Items = append(b.Items, reorder.Item{
			Code: *w.Code, Name: deref(w.Name), Vendor: deref(w.Vendor), OnHand: *w.Quantity,
		})
	}
	return b, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
