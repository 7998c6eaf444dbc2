package reorder_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/candorkit/candor/reorder"
)

func hasReason(p reorder.Proposal, sub string) bool {
	return slices.ContainsFunc(p.Reasons, func(r string) bool { return strings.Contains(r, sub) })
}

var bsa = reorder.Line{Code: "S24_2000", Name: "1960 BSA Gold Star DBD34", Vendor: "Highway 66 Mini Classics", OnHand: 15, Quantity: 135}

func TestPlanFixture(t *testing.T) {
	items := loadFixture(t)
	if len(items) != 110 {
		t.Fatalf("fixture has %d items, want 110", len(items))
	}
	for _, size := range []int{0, 1, 7, 50, 110, 500} {
		cat := &memCatalog{items: items}
		p, err := reorder.Plan(context.Background(), cat, reorder.Thresholds{PageSize: size, MaxPages: 110})
		if err != nil {
			t.Fatalf("size %d: %v", size, err)
		}
		if p.Scanned != 110 || p.Total != 110 || !p.Complete || !p.Escalate {
			t.Fatalf("size %d: got %+v", size, p)
		}
		if len(p.Lines) != 1 || p.Lines[0] != bsa {
			t.Fatalf("size %d: lines %+v, want exactly %+v", size, p.Lines, bsa)
		}
		if !hasReason(p, "1 reference(s) below reorder point 50") {
			t.Fatalf("size %d: reasons %q", size, p.Reasons)
		}
		if size == 0 && cat.calls.Load() != 1 {
			t.Fatalf("default page size 200 should read 110 items in one page, took %d", cat.calls.Load())
		}
	}
}

func TestPlanPageCap(t *testing.T) {
	cat := &memCatalog{items: loadFixture(t)}
	p, err := reorder.Plan(context.Background(), cat, reorder.Thresholds{PageSize: 50, MaxPages: 1})
	if p.Complete || !p.Escalate || p.Scanned != 50 || p.Total != 110 {
		t.Fatalf("got %+v", p)
	}
	if !hasReason(p, "page cap") {
		t.Fatalf("reasons %q lack page cap", p.Reasons)
	}
	if !errors.Is(err, reorder.ErrPageCap) || !errors.Is(err, reorder.ErrIncomplete) {
		t.Fatalf("err = %v", err)
	}
	var ie *reorder.IncompleteError
	if !errors.As(err, &ie) || ie.Scanned != 50 {
		t.Fatalf("err = %#v", err)
	}
	if n := cat.calls.Load(); n != 1 {
		t.Fatalf("catalog called %d times, want 1", n)
	}
}

func TestPlanPageCapExactFit(t *testing.T) {
	// Three pages are allowed and three suffice: the last page arrives
	// within the cap, so the scan is complete.
	cat := &memCatalog{items: loadFixture(t)}
	p, err := reorder.Plan(context.Background(), cat, reorder.Thresholds{PageSize: 50, MaxPages: 3})
	if err != nil || !p.Complete || p.Scanned != 110 {
		t.Fatalf("got %+v, %v", p, err)
	}
}

func TestPlanFailingPage(t *testing.T) {
	boom := errors.New("HTTP 502 from catalog")
	cat := &memCatalog{items: loadFixture(t), failPage: 2, failErr: boom}
	p, err := reorder.Plan(context.Background(), cat, reorder.Thresholds{PageSize: 50})
	if p.Complete || !p.Escalate || p.Scanned != 50 {
		t.Fatalf("got %+v", p)
	}
	if !errors.Is(err, boom) || !errors.Is(err, reorder.ErrIncomplete) {
		t.Fatalf("err = %v", err)
	}
	var pe *reorder.PageError
	if !errors.As(err, &pe) || pe.Page != 2 || pe.Cursor != "50" {
		t.Fatalf("err = %#v", err)
	}
	if !hasReason(p, "catalog error on page 2") || !hasReason(p, "HTTP 502") {
		t.Fatalf("reasons %q", p.Reasons)
	}
}

func TestPlanItemCap(t *testing.T) {
	cat := &memCatalog{items: loadFixture(t)}
	p, err := reorder.Plan(context.Background(), cat, reorder.Thresholds{PageSize: 50, MaxItems: 60})
	if !errors.Is(err, reorder.ErrItemCap) || p.Complete || !p.Escalate || p.Scanned != 60 {
		t.Fatalf("got %+v, %v", p, err)
	}
	if !slices.Equal(cat.sizes, []int{50, 10}) {
		t.Fatalf("asked sizes %v, want [50 10] (never more than the item cap)", cat.sizes)
	}
	if !hasReason(p, "item cap") {
		t.Fatalf("reasons %q", p.Reasons)
	}

	// A cap equal to the catalog's size still completes.
	cat = &memCatalog{items: loadFixture(t)}
	p, err = reorder.Plan(context.Background(), cat, reorder.Thresholds{PageSize: 50, MaxItems: 110})
	if err != nil || !p.Complete || p.Scanned != 110 {
		t.Fatalf("got %+v, %v", p, err)
	}

	// A catalog that sends more than asked is cut at the cap.
	cat = &memCatalog{items: loadFixture(t), overServe: 100}
	p, err = reorder.Plan(context.Background(), cat, reorder.Thresholds{PageSize: 10, MaxItems: 30})
	if !errors.Is(err, reorder.ErrItemCap) || p.Scanned != 30 || p.Complete {
		t.Fatalf("got %+v, %v", p, err)
	}
}

func TestPlanCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cat := &memCatalog{items: loadFixture(t)}
	p, err := reorder.Plan(ctx, cat, reorder.Thresholds{})
	if !errors.Is(err, context.Canceled) || p.Complete || !p.Escalate || p.Scanned != 0 {
		t.Fatalf("got %+v, %v", p, err)
	}
	if cat.calls.Load() != 0 || !hasReason(p, "cancelled") {
		t.Fatalf("calls %d reasons %q", cat.calls.Load(), p.Reasons)
	}

	// Cancelled while page 2 is being served.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	cat = &memCatalog{items: loadFixture(t), onPage: func(page int) {
		if page == 2 {
			cancel()
		}
	}}
	p, err = reorder.Plan(ctx, cat, reorder.Thresholds{PageSize: 50})
	if !errors.Is(err, context.Canceled) || p.Complete || !p.Escalate || p.Scanned != 50 || !hasReason(p, "cancelled during page 2") {
		t.Fatalf("got %+v, %v", p, err)
	}
	var pe *reorder.PageError
	if !errors.As(err, &pe) || pe.Page != 2 {
		t.Fatalf("err = %v", err)
	}
}

func TestPlanCatalogMisbehaviour(t *testing.T) {
	items := loadFixture(t)[:3]
	ctx := context.Background()

	t.Run("repeated cursor", func(t *testing.T) {
		calls := 0
		cat := reorder.CatalogFunc(func(ctx context.Context, cursor string, size int) (reorder.Batch, string, error) {
			calls++
			return reorder.Batch{Items: items[calls-1 : calls]}, "same", nil
		})
		p, err := reorder.Plan(ctx, cat, reorder.Thresholds{})
		if !errors.Is(err, reorder.ErrCursorRepeat) || p.Complete || calls != 2 || !hasReason(p, `cursor "same" again`) {
			t.Fatalf("got %+v, %v after %d calls", p, err, calls)
		}
	})
	t.Run("duplicate code", func(t *testing.T) {
		dup := []reorder.Item{items[0], items[1], items[0]}
		p, err := reorder.Plan(ctx, &memCatalog{items: dup}, reorder.Thresholds{})
		if !errors.Is(err, reorder.ErrDuplicateCode) || p.Complete || !p.Escalate || !hasReason(p, items[0].Code+" appeared twice") {
			t.Fatalf("got %+v, %v", p, err)
		}
	})
	t.Run("total mismatch", func(t *testing.T) {
		cat := reorder.CatalogFunc(func(ctx context.Context, cursor string, size int) (reorder.Batch, string, error) {
			return reorder.Batch{Items: items, Total: 110}, "", nil
		})
		p, err := reorder.Plan(ctx, cat, reorder.Thresholds{})
		var tm *reorder.TotalMismatchError
		if !errors.As(err, &tm) || tm.Reported != 110 || tm.Scanned != 3 || !errors.Is(err, reorder.ErrTotalMismatch) || p.Complete {
			t.Fatalf("got %+v, %v", p, err)
		}
	})
	t.Run("item without code", func(t *testing.T) {
		odd := []reorder.Item{{Name: "nameless", OnHand: 1}, items[0]}
		p, err := reorder.Plan(ctx, &memCatalog{items: odd, noTotal: true}, reorder.Thresholds{})
		if err != nil || !p.Complete || !p.Escalate || len(p.Lines) != 0 || !hasReason(p, "has no code") {
			t.Fatalf("got %+v, %v", p, err)
		}
	})
	t.Run("on hand too negative to compute a quantity", func(t *testing.T) {
		odd := []reorder.Item{{Code: "X1", OnHand: math.MinInt}, {Code: "X2", OnHand: 10}}
		p, err := reorder.Plan(ctx, &memCatalog{items: odd}, reorder.Thresholds{})
		if err != nil || !p.Complete || !p.Escalate || len(p.Lines) != 1 || p.Lines[0].Code != "X2" || p.Lines[0].Quantity != 140 ||
			!hasReason(p, "X1 reports an on-hand quantity out of range") {
			t.Fatalf("got %+v, %v", p, err)
		}
		for _, l := range p.Lines {
			if l.Quantity <= 0 {
				t.Fatalf("line %+v proposes a quantity that is not positive", l)
			}
		}
	})
	t.Run("negative on hand", func(t *testing.T) {
		neg := []reorder.Item{{Code: "X1", OnHand: -5}}
		p, err := reorder.Plan(ctx, &memCatalog{items: neg}, reorder.Thresholds{})
		if err != nil || len(p.Lines) != 1 || p.Lines[0].Quantity != 155 || !hasReason(p, "negative") {
			t.Fatalf("got %+v, %v", p, err)
		}
	})
}

func TestPlanNothingToOrder(t *testing.T) {
	items := []reorder.Item{{Code: "A", OnHand: 50}, {Code: "B", OnHand: 51}}
	p, err := reorder.Plan(context.Background(), &memCatalog{items: items}, reorder.Thresholds{})
	if err != nil || !p.Complete || p.Escalate || len(p.Lines) != 0 || len(p.Reasons) != 0 {
		t.Fatalf("got %+v, %v", p, err)
	}
	// An empty catalog is a complete scan of nothing.
	p, err = reorder.Plan(context.Background(), &memCatalog{}, reorder.Thresholds{})
	if err != nil || !p.Complete || p.Escalate || p.Scanned != 0 {
		t.Fatalf("got %+v, %v", p, err)
	}
}

func TestPlanPolicy(t *testing.T) {
	items := []reorder.Item{{Code: "A", OnHand: 9}, {Code: "B", OnHand: 10}}
	p, err := reorder.Plan(context.Background(), &memCatalog{items: items}, reorder.Thresholds{ReorderPoint: 10, OrderUpTo: 40})
	if err != nil || len(p.Lines) != 1 || p.Lines[0].Code != "A" || p.Lines[0].Quantity != 31 {
		t.Fatalf("got %+v, %v", p, err)
	}
	for _, bad := range []reorder.Thresholds{
		{ReorderPoint: 100, OrderUpTo: 90},
		{ReorderPoint: -1},
		{PageSize: -1},
		{MaxPages: -2},
		{MaxItems: -3},
	} {
		cat := &memCatalog{items: items}
		p, err := reorder.Plan(context.Background(), cat, bad)
		var pe *reorder.ThresholdsError
		if !errors.As(err, &pe) || p.Complete || !p.Escalate || cat.calls.Load() != 0 {
			t.Fatalf("policy %+v: got %+v, %v, %d calls", bad, p, err, cat.calls.Load())
		}
	}
	if _, err := reorder.Plan(context.Background(), nil, reorder.Thresholds{}); !errors.Is(err, reorder.ErrNilCatalog) {
		t.Fatalf("nil catalog: %v", err)
	}
	d := reorder.Thresholds{}.WithDefaults()
	if d != (reorder.Thresholds{ReorderPoint: 50, OrderUpTo: 150, PageSize: 200, MaxPages: 50, MaxItems: 10000}) {
		t.Fatalf("defaults %+v", d)
	}
}

func TestProposalJSON(t *testing.T) {
	p, _ := reorder.Plan(context.Background(), &memCatalog{items: loadFixture(t)}, reorder.Thresholds{})
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"scanned":110,"total":110,"complete":true,"lines":[{"code":"S24_2000","name":"1960 BSA Gold Star DBD34","vendor":"Highway 66 Mini Classics","onHand":15,"quantity":135}],"escalate":true,"reasons":["1 reference(s) below reorder point 50: a purchase needs a human decision"]}`
	if string(b) != want {
		t.Fatalf("json\n got %s\nwant %s", b, want)
	}
	// Nothing proposed still encodes arrays, not null.
	p, _ = reorder.Plan(context.Background(), &memCatalog{}, reorder.Thresholds{})
	b, _ = json.Marshal(p)
	if !strings.Contains(string(b), `"lines":[]`) || !strings.Contains(string(b), `"reasons":[]`) {
		t.Fatalf("json %s", b)
	}
}

func BenchmarkPlanFixture(b *testing.B) {
	cat := &memCatalog{items: loadFixture(b)}
	ctx := context.Background()
	for b.Loop() {
		cat.sizes = cat.sizes[:0]
		if _, err := reorder.Plan(ctx, cat, reorder.Thresholds{PageSize: 50}); err != nil {
			b.Fatal(err)
		}
	}
}
