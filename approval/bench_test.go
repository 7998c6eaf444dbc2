package approval

import (
	"context"
	"database/sql"
	"log/slog"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// benchDraft is a draft of a realistic size for the benchmarks.
func benchDraft(i int) testDraft {
	return testDraft{Title: "reorder " + strconv.Itoa(i), Quantity: 12, Lines: []string{"sku-1 x 4", "sku-2 x 8"}}
}

// BenchmarkCycle measures one register + decide + apply cycle: three
// write transactions with their reads, on a file in WAL mode with
// synchronous=FULL.
func BenchmarkCycle(b *testing.B) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(b.TempDir(), "a.db"), WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	i := 0
	for b.Loop() {
		i++
		id := "op-" + strconv.Itoa(i)
		if _, err := s.Register(ctx, Ticket{OperationID: id, Draft: benchDraft(i)}); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Decide(ctx, Decision{OperationID: id, Verdict: Approve, DecidedBy: "bench"}); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Apply(ctx, id, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRawInsert is the floor the cycle is compared with: one INSERT of
// a draft-sized row per transaction, on the same connection settings.
func BenchmarkRawInsert(b *testing.B) {
	ctx := context.Background()
	dsn, err := dataSourceName(filepath.Join(b.TempDir(), "raw.db"), 10*time.Second)
	if err != nil {
		b.Fatal(err)
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var mode string
	if err := db.QueryRowContext(ctx, "PRAGMA journal_mode = WAL").Scan(&mode); err != nil || mode != "wal" {
		b.Fatalf("journal_mode %q, %v", mode, err)
	}
	if _, err := db.ExecContext(ctx, `CREATE TABLE raw (id INTEGER PRIMARY KEY, k TEXT NOT NULL UNIQUE, v BLOB NOT NULL)`); err != nil {
		b.Fatal(err)
	}
	v, err := canonicalDraft("x", benchDraft(0), DefaultMaxDraftBytes)
	if err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		i++
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO raw (k, v) VALUES (?, ?)`, "op-"+strconv.Itoa(i), []byte(v)); err != nil {
			b.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	}
}
