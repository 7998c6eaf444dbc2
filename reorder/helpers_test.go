package reorder_test

import (
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/candorkit/candor/reorder"
)

// loadFixture reads the 110-product classicmodels catalog.
func loadFixture(t testing.TB) []reorder.Item {
	t.Helper()
	f, err := os.Open("testdata/classicmodels-products.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got := rows[0]; got[0] != "productCode" || got[1] != "productName" || got[4] != "productVendor" || got[5] != "quantityInStock" {
		t.Fatalf("unexpected header %q", got)
	}
	items := make([]reorder.Item, 0, len(rows)-1)
	for _, r := range rows[1:] {
		n, err := strconv.Atoi(r[5])
		if err != nil {
			t.Fatalf("row %q: %v", r, err)
		}
		items = append(items, reorder.Item{Code: r[0], Name: r[1], Vendor: r[4], OnHand: n})
	}
	return items
}

// memCatalog is an in-memory catalog paged by offset cursors that reports
// its total, counting calls. Hooks let a test break a specific page.
type memCatalog struct {
	items     []reorder.Item
	noTotal   bool
	calls     atomic.Int64
	sizes     []int
	failPage  int   // 1-based page that fails
	failErr   error // its error
	onPage    func(page int)
	overServe int // extra items served beyond size
}

func (c *memCatalog) Page(ctx context.Context, cursor string, size int) (reorder.Batch, string, error) {
	page := int(c.calls.Add(1))
	c.sizes = append(c.sizes, size)
	if c.onPage != nil {
		c.onPage(page)
	}
	if page == c.failPage {
		return reorder.Batch{Items: c.items[:1]}, "ignored", c.failErr
	}
	if err := ctx.Err(); err != nil {
		return reorder.Batch{}, "", err
	}
	off := 0
	if cursor != "" {
		var err error
		if off, err = strconv.Atoi(cursor); err != nil {
			return reorder.Batch{}, "", fmt.Errorf("bad cursor %q", cursor)
		}
	}
	end := min(off+size+c.overServe, len(c.items))
	b := reorder.Batch{Items: c.items[off:end]}
	if !c.noTotal {
		b.Total = len(c.items)
	}
	next := ""
	if end < len(c.items) {
		next = strconv.Itoa(end)
	}
	return b, next, nil
}
