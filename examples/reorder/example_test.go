package main

import "fmt"

// A draft is what a person approves; Validate refuses one that a person
// must not approve, here a proposal from a scan that stopped at a page cap
// and a line that does not follow the rule it states.
func ExampleDraft_Validate() {
	d := Draft{
		Kind: draftKind, RunDate: "2025-06-02", Zone: "Europe/Paris", Subject: "marie",
		ReorderPoint: 50, OrderUpTo: 150, Scanned: 50, Total: 110, Complete: false,
		Lines: []DraftLine{{Code: "S24_2000", Name: "1960 BSA Gold Star DBD34", OnHand: 15, Quantity: 200}},
	}
	for _, err := range d.Validate() {
		fmt.Println(err)
	}

	d.Scanned, d.Complete, d.Lines[0].Quantity = 110, true, 135
	id, _ := operationID(d)
	fmt.Println(len(d.Validate()), "problems; operation id", id[:len("reorder-2025-06-02-")]+"…")
	// Output:
	// the scan is incomplete: a proposal covering part of the catalog cannot be approved
	// scanned 50 of a reported 110
	// line 1 (S24_2000): quantity 200, the rule gives 135
	// 0 problems; operation id reorder-2025-06-02-…
}
