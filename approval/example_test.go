package approval_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	_ "github.com/jackc/pgx/v5/stdlib" // the PostgreSQL driver, "pgx"

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

	store, err := approval.Open(ctx, filepath.Join(dir, "approvals.db"))
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
	store, err := approval.Open(ctx, filepath.Join(dir, "approvals.db"))
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

// The store shares the caller's database: the effect writes the caller's
// own table through the store's transaction, so the order row commits with
// the completion, or, when the effect fails, neither does.
func ExampleOpenDB() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "approval-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	// The caller's database: the modernc.org/sqlite driver, with the
	// settings the store requires in the DSN, so every connection has them.
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "app.db")+
		"?_pragma=journal_mode(wal)&_pragma=synchronous(full)&_pragma=foreign_keys(1)&_pragma=busy_timeout(10000)&_txlock=immediate")
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	// The caller's own table may refer to the store's.
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS orders (
		operation_id TEXT PRIMARY KEY REFERENCES `+approval.TableItems+` (operation_id),
		sku TEXT NOT NULL, quantity INTEGER NOT NULL)`); err != nil {
		log.Fatal(err)
	}
	// WithCreate: this program just set the database up. A later start
	// omits it, so that a database that lost the store is refused.
	store, err := approval.OpenDB(ctx, db, approval.WithCreate())
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close() // leaves db open

	placeOrder := func(fail bool) approval.Effect {
		return func(ctx context.Context, tx *sql.Tx, item approval.Item) error {
			var po PurchaseOrder
			if err := json.Unmarshal(item.Draft, &po); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO orders (operation_id, sku, quantity) VALUES (?, ?, ?)`,
				item.OperationID, po.SKU, po.Quantity); err != nil {
				return err
			}
			if fail {
				return errors.New("supplier unreachable")
			}
			return nil
		}
	}
	for i, id := range []string{"po-1", "po-2"} {
		if _, err := store.Register(ctx, approval.Ticket{OperationID: id,
			Draft: PurchaseOrder{Supplier: "Acme", SKU: "bolt-m6", Quantity: 100 * (i + 1)}}); err != nil {
			log.Fatal(err)
		}
		if _, err := store.Decide(ctx, approval.Decision{OperationID: id, Verdict: approval.Approve, DecidedBy: "alice"}); err != nil {
			log.Fatal(err)
		}
	}
	if _, err := store.Apply(ctx, "po-1", placeOrder(false)); err != nil {
		log.Fatal(err)
	}
	_, err = store.Apply(ctx, "po-2", placeOrder(true))
	fmt.Println(approval.Classify(err), errors.Is(err, approval.ErrEffectFailed))

	var orders int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM orders`).Scan(&orders); err != nil {
		log.Fatal(err)
	}
	st, err := store.Read(ctx, "po-2")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(orders, "order;", "po-2 is", st.Status)
	// Output:
	// effect_failed true
	// 1 order; po-2 is approved
}

func ExampleStore_All() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "approval-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	store, err := approval.Open(ctx, filepath.Join(dir, "approvals.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	for _, id := range []string{"po-1", "po-2", "po-3"} {
		if _, err := store.Register(ctx, approval.Ticket{OperationID: id,
			Draft: PurchaseOrder{Supplier: "Acme", SKU: "nut-m6", Quantity: 10}}); err != nil {
			log.Fatal(err)
		}
	}
	for st, err := range store.All(ctx, approval.Filter{Status: approval.StatusWaiting, Limit: 2}) {
		if err != nil {
			log.Fatal(err) // a listing that stopped early always ends with an error
		}
		fmt.Println(st.OperationID, st.Status)
	}
	// Output:
	// po-1 waiting
	// po-2 waiting
	// po-3 waiting
}

// A store file that lost its contents is refused, not started again empty;
// a read-only open serves a show command on a read-only mount.
func ExampleWithReadOnly() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "approval-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "approvals.db")
	store, err := approval.Open(ctx, path)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := store.Register(ctx, approval.Ticket{OperationID: "po-1",
		Draft: PurchaseOrder{Supplier: "Acme", SKU: "nut-m6", Quantity: 10}}); err != nil {
		log.Fatal(err)
	}
	if err := store.Close(); err != nil {
		log.Fatal(err)
	}

	show, err := approval.Open(ctx, path, approval.WithReadOnly())
	if err != nil {
		log.Fatal(err)
	}
	st, err := show.Read(ctx, "po-1")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(st.OperationID, st.Status)
	_, err = show.Decide(ctx, approval.Decision{OperationID: "po-1", Verdict: approval.Approve, DecidedBy: "alice"})
	fmt.Println(approval.Classify(err))
	if err := show.Close(); err != nil {
		log.Fatal(err)
	}

	if err := os.Truncate(path, 0); err != nil {
		log.Fatal(err)
	}
	_, err = approval.Open(ctx, path)
	var oe *approval.OpenError
	fmt.Println(approval.Classify(err), errors.As(err, &oe) && oe.Path == path)
	// Output:
	// po-1 waiting
	// read_only
	// no_store true
}

// On PostgreSQL the caller opens a pool with the pgx driver and passes it
// to OpenDB, which recognises the driver, keeps the store's tables in the
// schema WithSchema names and leaves the pool open at Close. The effect is
// the same code as on SQLite: $1-style placeholders bind by position in
// both drivers. (No output: it needs a server, here from APPROVAL_DSN.)
func ExampleOpenDB_postgres() {
	ctx := context.Background()
	db, err := sql.Open("pgx", os.Getenv("APPROVAL_DSN")) // e.g. postgres://app@db.internal/app
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	db.SetMaxIdleConns(16) // one idle connection per concurrent caller
	store, err := approval.OpenDB(ctx, db, approval.WithSchema("approvals"))
	if err != nil {
		log.Fatal(err) // ErrNoStore on a first start: pass WithCreate on the path that sets the database up
	}
	defer store.Close()
	_, err = store.Apply(ctx, "po-1", func(ctx context.Context, tx *sql.Tx, item approval.Item) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO orders (operation_id, body) VALUES ($1, $2)`, item.OperationID, []byte(item.Draft))
		return err
	})
	if approval.Classify(err) == approval.KindUnavailable {
		// The server went away: the apply may or may not have committed.
		// Repeating it is safe; it applies at most once.
		log.Print(err)
	}
}
