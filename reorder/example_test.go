package reorder_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/candorkit/candor/reorder"
)

// sliceCatalog pages a slice with offset cursors and reports its total.
type sliceCatalog []reorder.Item

func (c sliceCatalog) Page(_ context.Context, cursor string, size int) (reorder.Batch, string, error) {
	off := 0
	if cursor != "" {
		var err error
		if off, err = strconv.Atoi(cursor); err != nil {
			return reorder.Batch{}, "", err
		}
	}
	end := min(off+size, len(c))
	next := ""
	if end < len(c) {
		next = strconv.Itoa(end)
	}
	return reorder.Batch{Items: c[off:end], Total: len(c)}, next, nil
}

func ExamplePlan() {
	catalog := sliceCatalog{
		{Code: "S10_1678", Name: "1969 Harley Davidson Ultimate Chopper", Vendor: "Min Lin Diecast", OnHand: 7933},
		{Code: "S24_2000", Name: "1960 BSA Gold Star DBD34", Vendor: "Highway 66 Mini Classics", OnHand: 15},
		{Code: "S12_1099", Name: "1968 Ford Mustang", Vendor: "Autoart Studio Design", OnHand: 68},
	}
	p, err := reorder.Plan(context.Background(), catalog, reorder.Thresholds{PageSize: 2})
	fmt.Println("error:", err)
	fmt.Printf("scanned %d of %d, complete %t, escalate %t\n", p.Scanned, p.Total, p.Complete, p.Escalate)
	for _, l := range p.Lines {
		fmt.Printf("%s %s: on hand %d, order %d\n", l.Code, l.Name, l.OnHand, l.Quantity)
	}

	// The same catalog read with a budget of one page is not presented as a
	// whole one.
	p, err = reorder.Plan(context.Background(), catalog, reorder.Thresholds{PageSize: 2, MaxPages: 1})
	fmt.Println("error:", err)
	fmt.Printf("scanned %d of %d, complete %t, escalate %t\n", p.Scanned, p.Total, p.Complete, p.Escalate)
	fmt.Println(p.Reasons[0])
	// Output:
	// error: <nil>
	// scanned 3 of 3, complete true, escalate true
	// S24_2000 1960 BSA Gold Star DBD34: on hand 15, order 135
	// error: reorder: incomplete catalog scan after 2 item(s): reorder: page cap reached
	// scanned 2 of 3, complete false, escalate true
	// page cap: read 1 page(s), the limit, and the catalog has more
}

func ExampleSchedule_Next() {
	s, err := reorder.NewSchedule(2, 30, "Europe/Paris")
	if err != nil {
		fmt.Println(err)
		return
	}
	// 02:30 does not exist on 2025-03-30 and happens twice on 2025-10-26.
	for _, after := range []string{"2025-03-29T12:00:00Z", "2025-10-25T12:00:00Z"} {
		t, _ := time.Parse(time.RFC3339, after)
		fmt.Println(s.Next(t).Format("2006-01-02 15:04 MST"), "=", s.Next(t).UTC().Format("15:04Z"))
	}
	// Output:
	// 2025-03-30 03:30 CEST = 01:30Z
	// 2025-10-26 02:30 CEST = 00:30Z
}

func ExampleRunner() {
	noMandate := reorder.MandateFunc(func(context.Context) (reorder.Mandate, error) {
		return reorder.Mandate{}, reorder.ErrNoMandate
	})
	reads := 0
	r, err := reorder.NewRunner(noMandate, func(context.Context, reorder.Mandate) (reorder.Catalog, error) {
		reads++
		return sliceCatalog{}, nil
	}, reorder.Thresholds{})
	if err != nil {
		fmt.Println(err)
		return
	}
	p, err := r.Run(context.Background())
	fmt.Println(err)
	fmt.Println(p.Reasons[0], "- catalog opened", reads, "times")
	// Output:
	// reorder: halted before any read: reorder: no mandate
	// no mandate: halted before any read - catalog opened 0 times
}

func ExampleThresholds_Validate() {
	err := reorder.Thresholds{ReorderPoint: 40, OrderUpTo: 30}.Validate()
	var te *reorder.ThresholdsError
	fmt.Println(errors.As(err, &te), te.Field, te.Value)
	fmt.Println(err)
	// Output:
	// true OrderUpTo 30
	// reorder: invalid thresholds: OrderUpTo = 30 must be at least ReorderPoint (40)
}
