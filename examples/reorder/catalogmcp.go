package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
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
// mcpclient.Pages reads a whole list in one call and has no single-page
// form, so each page is one mcpclient.CallJSON and this adapter applies the
// same paging convention itself: {"items": [...], "nextCursor": "…"|null,
// "total": n}, nextCursor required, items required, every product with a
// code and an integer quantityInStock. Anything else is a *pageFormatError
// and the scan stops incomplete; a missing quantity never reads as 0 in
// stock.
type mcpCatalog struct {
	c    *mcpclient.Client
	tool string
}

// Page implements reorder.Catalog.
func (m *mcpCatalog) Page(ctx context.Context, cursor string, size int) (reorder.Batch, string, error) {
	args := map[string]any{"limit": size}
	if cursor != "" {
		args["cursor"] = cursor
	}
	raw, err := mcpclient.CallJSON[json.RawMessage](ctx, m.c, m.tool, args)
	if err != nil {
		return reorder.Batch{}, "", err
	}
	b, next, err := decodePage(raw)
	if err != nil {
		var pe *pageFormatError
		if errors.As(err, &pe) {
			pe.Tool = m.tool
		}
		return reorder.Batch{}, "", err
	}
	return b, next, nil
}

// pageFormatError is a list-products answer that breaks the paging
// convention or carries a product the agent cannot read. Raw is the page as
// received (bounded by the client's response limit).
type pageFormatError struct {
	Tool   string
	Reason string
	Raw    []byte
}

func (e *pageFormatError) Error() string {
	return fmt.Sprintf("%s: malformed page: %s", e.Tool, e.Reason)
}

// wireProduct is a product as the catalog sends it. Pointers tell a missing
// field from a zero value.
type wireProduct struct {
	Code     *string `json:"productCode"`
	Name     *string `json:"productName"`
	Vendor   *string `json:"productVendor"`
	Quantity *int    `json:"quantityInStock"`
}

// decodePage reads one page of the paging convention.
func decodePage(raw []byte) (reorder.Batch, string, error) {
	bad := func(format string, a ...any) (reorder.Batch, string, error) {
		return reorder.Batch{}, "", &pageFormatError{Reason: fmt.Sprintf(format, a...), Raw: raw}
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return bad("not a JSON object")
	}
	rawItems, ok := obj["items"]
	if !ok {
		return bad(`no "items"`)
	}
	var items []json.RawMessage
	if err := json.Unmarshal(rawItems, &items); err != nil || items == nil {
		return bad(`"items" is not an array`)
	}
	rawNext, ok := obj["nextCursor"]
	if !ok {
		return bad(`no "nextCursor": the page does not say whether it is the last`)
	}
	var next *string
	if err := json.Unmarshal(rawNext, &next); err != nil {
		return bad(`"nextCursor" is neither a string nor null`)
	}
	var b reorder.Batch
	if rawTotal, ok := obj["total"]; ok && !bytes.Equal(bytes.TrimSpace(rawTotal), []byte("null")) {
		if err := json.Unmarshal(rawTotal, &b.Total); err != nil || b.Total < 0 {
			return bad(`"total" is not a non-negative integer`)
		}
	}
	b.Items = make([]reorder.Item, 0, len(items))
	for i, it := range items {
		var p wireProduct
		if err := json.Unmarshal(it, &p); err != nil {
			return bad("item %d: %v", i+1, err)
		}
		if p.Code == nil || *p.Code == "" {
			return bad("item %d: no productCode", i+1)
		}
		if p.Quantity == nil {
			return bad("item %d (%s): no quantityInStock", i+1, *p.Code)
		}
		b.Items = append(b.Items, reorder.Item{
			Code: *p.Code, Name: deref(p.Name), Vendor: deref(p.Vendor), OnHand: *p.Quantity,
		})
	}
	if next == nil {
		return b, "", nil
	}
	return b, *next, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
