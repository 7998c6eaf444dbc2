package approval

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/candorkit/candor/internal/pgtest"
	"github.com/candorkit/candor/internal/sqlitex"
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
	s, err := Open(ctx, filepath.Join(b.TempDir(), "a.db"))
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
	db, err := sql.Open("sqlite", storeDSN(filepath.Join(b.TempDir(), "raw.db")))
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

// store10k builds a store of 10,000 completed operations (their items
// included) with receipts for a tenth of them, written in one transaction
// through the schema's own rules, and returns its path.
func store10k(b *testing.B) string {
	b.Helper()
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "10k.db")
	s, err := Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	draft, err := canonicalDraft("x", benchDraft(0), DefaultMaxDraftBytes)
	if err != nil {
		b.Fatal(err)
	}
	err = s.write(ctx, func(tx *sql.Tx) error {
		for i := range 10_000 {
			op := "op-" + strconv.Itoa(i)
			for _, q := range []struct {
				sql  string
				args []any
			}{
				{`INSERT INTO candor_approval_operations (operation_id, draft, status, created_at) VALUES (?, ?, 'waiting', 1)`, []any{op, []byte(draft)}},
				{`UPDATE candor_approval_operations SET status = 'approved', verdict = 'approve', comment = 'ok', decided_by = 'bench', decided_at = 2 WHERE operation_id = ?`, []any{op}},
				{`UPDATE candor_approval_operations SET status = 'completed', completed_at = 3 WHERE operation_id = ?`, []any{op}},
			} {
				if _, err := tx.ExecContext(ctx, q.sql, q.args...); err != nil {
					return err
				}
			}
			if i%10 == 0 {
				if _, err := tx.ExecContext(ctx, `INSERT INTO candor_approval_receipts VALUES (?, 'g', 's', 'c', 'r', 1)`, op); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkOpen10k measures Open of a store of 10,000 operations with
// PRAGMA quick_check (as Open always runs it) against the same Open
// without the check, and the check alone.
func BenchmarkOpen10k(b *testing.B) {
	ctx := context.Background()
	path := store10k(b)
	if fi, err := os.Stat(path); err == nil {
		b.Logf("store of 10,000 operations: %d bytes", fi.Size())
	}
	for _, bc := range []struct {
		name string
		opts []Option
	}{
		{"with_quick_check", nil},
		{"without_quick_check", []Option{func(o *options) { o.noQuickCheck = true }}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				s, err := Open(ctx, path, bc.opts...)
				if err != nil {
					b.Fatal(err)
				}
				if err := s.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("quick_check_alone", func(b *testing.B) {
		s, err := Open(ctx, path)
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		for b.Loop() {
			if err := sqlitex.QuickCheck(ctx, s.db); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkPostgres runs on one throwaway PostgreSQL server (pgtest: fsync
// off, loopback): raw is the floor, one INSERT of a draft-sized row per
// transaction; cycle is Register + Decide + Apply; each with 1, 4 and 16
// concurrent clients sharing one pool. ns/op is wall time per insert or
// per cycle, so throughput is 1e9 / ns/op.
func BenchmarkPostgres(b *testing.B) {
	ctx := context.Background()
	c := pgtest.Start(b)
	db, err := sql.Open("pgx", c.NewDatabase(b))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	db.SetMaxIdleConns(32)
	if _, err := db.ExecContext(ctx, `CREATE TABLE raw (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, k text NOT NULL UNIQUE, v bytea NOT NULL)`); err != nil {
		b.Fatal(err)
	}
	v, err := canonicalDraft("x", benchDraft(0), DefaultMaxDraftBytes)
	if err != nil {
		b.Fatal(err)
	}
	s, err := OpenDB(ctx, db, WithSchema("bench"), WithCreate())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var seq atomic.Int64
	raw := func() error {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO raw (k, v) VALUES ($1, $2)`, "op-"+strconv.FormatInt(seq.Add(1), 10), []byte(v)); err != nil {
			return errors.Join(err, tx.Rollback())
		}
		return tx.Commit()
	}
	cycle := func() error {
		i := seq.Add(1)
		id := "op-" + strconv.FormatInt(i, 10)
		if _, err := s.Register(ctx, Ticket{OperationID: id, Draft: benchDraft(int(i))}); err != nil {
			return err
		}
		if _, err := s.Decide(ctx, Decision{OperationID: id, Verdict: Approve, DecidedBy: "bench"}); err != nil {
			return err
		}
		_, err := s.Apply(ctx, id, nil)
		return err
	}
	// The two interleaved, one insert then one cycle per iteration, so that
	// the load of a shared machine weighs on both alike: the ratio metric is
	// cycles per second over raw inserts per second.
	b.Run("interleaved/clients=1", func(b *testing.B) {
		var rawT, cycleT time.Duration
		for b.Loop() {
			t0 := time.Now()
			if err := raw(); err != nil {
				b.Fatal(err)
			}
			t1 := time.Now()
			if err := cycle(); err != nil {
				b.Fatal(err)
			}
			rawT += t1.Sub(t0)
			cycleT += time.Since(t1)
		}
		b.ReportMetric(float64(rawT.Nanoseconds())/float64(b.N), "raw-ns/op")
		b.ReportMetric(float64(cycleT.Nanoseconds())/float64(b.N), "cycle-ns/op")
		b.ReportMetric(float64(rawT)/float64(cycleT), "cycle/raw-throughput")
	})
	for _, bc := range []struct {
		name string
		fn   func() error
	}{{"raw", raw}, {"cycle", cycle}} {
		for _, clients := range []int{1, 4, 16} {
			b.Run(fmt.Sprintf("%s/clients=%d", bc.name, clients), func(b *testing.B) {
				if clients == 1 {
					for b.Loop() {
						if err := bc.fn(); err != nil {
							b.Fatal(err)
						}
					}
					return
				}
				// RunParallel starts parallelism × GOMAXPROCS goroutines.
				procs := runtime.GOMAXPROCS(0)
				if clients%procs != 0 {
					b.Fatalf("%d clients on GOMAXPROCS %d", clients, procs)
				}
				b.SetParallelism(clients / procs)
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if err := bc.fn(); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
		}
	}
}
