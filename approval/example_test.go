package approval_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/candorkit/candor/approval"
)

// PurchaseOrder is a draft an agent proposes.
type PurchaseOrder struct {
	Supplier string `json:"supplier"`
	SKU      string `json:"sku"`
	Quantity int    `json:"quantity"`
}

// Validate lists every problem with the order.
func (p PurchaseOrder) Validate() []error {
	var errs []error
	if p.Supplier == "" {
		errs = append(errs, errors.New("supplier is empty"))
	}
	if p.Quantity <= 0 {
		errs = append(errs, fmt.Errorf("quantity %d is not positive", p.Quantity))
	}
	return errs
}

func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "approval-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	quiet := slog.New(slog.DiscardHandler)
	store, err := approval.Open(ctx, filepath.Join(dir, "approvals.db"), approval.WithLogger(quiet))
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()

	// The agent proposes.
	st, err := store.Register(ctx, approval.Ticket{
		OperationID: "po-2025-0042",
		Draft:       PurchaseOrder{Supplier: "Acme", SKU: "bolt-m6", Quantity: 500},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(st.Status, string(st.Draft))

	// A later, different text under the same id is refused.
	_, err = store.Register(ctx, approval.Ticket{
		OperationID: "po-2025-0042",
		Draft:       PurchaseOrder{Supplier: "Acme", SKU: "bolt-m6", Quantity: 5000},
	})
	fmt.Println(errors.Is(err, approval.ErrOperationRebound))

	// A person decides; a second, different decision loses.
	if _, err := store.Decide(ctx, approval.Decision{
		OperationID: "po-2025-0042", Verdict: approval.Approve, Comment: " ok for Q3 ", DecidedBy: "alice",
	}); err != nil {
		log.Fatal(err)
	}
	_, err = store.Decide(ctx, approval.Decision{OperationID: "po-2025-0042", Verdict: approval.Reject, DecidedBy: "bob"})
	var lost *approval.AlreadyDecidedError
	if errors.As(err, &lost) {
		fmt.Printf("already decided: %s by %s (%q)\n", lost.Standing.Verdict, lost.Standing.DecidedBy, lost.Standing.Comment)
	}

	// The effect runs once, in the store's transaction.
	effect := func(ctx context.Context, tx *sql.Tx, item approval.Item) error {
		fmt.Printf("placing order from item %d: %s\n", item.ID, item.Draft)
		return nil
	}
	first, err := store.Apply(ctx, "po-2025-0042", effect)
	if err != nil {
		log.Fatal(err)
	}
	retry, err := store.Apply(ctx, "po-2025-0042", effect) // no second order
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(first.Status, first.ItemID == retry.ItemID)

	// Output:
	// waiting {"quantity":500,"sku":"bolt-m6","supplier":"Acme"}
	// true
	// already decided: approve by alice ("ok for Q3")
	// placing order from item 1: {"quantity":500,"sku":"bolt-m6","supplier":"Acme"}
	// completed true
}

func ExampleStore_Register_invalidDraft() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "approval-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	store, err := approval.Open(ctx, filepath.Join(dir, "approvals.db"), approval.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()

	_, err = store.Register(ctx, approval.Ticket{OperationID: "po-1", Draft: PurchaseOrder{Quantity: -2}})
	var invalid *approval.InvalidDraftError
	if errors.As(err, &invalid) {
		for _, p := range invalid.Problems {
			fmt.Println(p)
		}
	}
	// Output:
	// supplier is empty
	// quantity -2 is not positive
}
