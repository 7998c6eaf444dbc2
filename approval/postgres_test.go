package approval

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/candorkit/candor/internal/pgtest"
)

// outageError reports whether err is what a call may return while the
// server is down: ErrUnavailable, or an effect that failed because its
// statement lost the connection.
func outageError(err error) bool {
	var ee *EffectError
	if errors.As(err, &ee) {
		return pgUnavailable(ee.Err)
	}
	return Classify(err) == KindUnavailable
}

// reported is what the API told a worker about one operation.
type reported struct {
	registered, decided, applied bool
	item                         int64
}

// TestPostgresStoppedMidRun: workers run register → decide → apply (with
// an effect writing ledger rows) in a loop while the server is stopped
// twice (a fast shutdown, then an immediate one, like a crash) and started
// again. While it is down every call fails with a typed error; nothing is
// reported registered, decided or applied that the database does not hold;
// after each restart the same store continues; at the end every operation
// completes with its effect written exactly once.
func TestPostgresStoppedMidRun(t *testing.T) {
	const workers = 4
	ctx := context.Background()
	b := &backend{name: backendPostgres, cluster: pgtest.Start(t)}
	dsn := b.location(t, "outage")
	s := b.open(t, dsn)
	ensureLedger(t, s)

	type event struct {
		worker, epoch int
		ok            bool
		err           error
	}
	var epoch atomic.Int64 // even: server up; odd: server stopped
	events := make(chan event, 4096)
	stop := make(chan struct{})
	var mu sync.Mutex
	seen := map[string]*reported{}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				op := fmt.Sprintf("w%d-%d", w, i)
				rep := &reported{}
				mu.Lock()
				seen[op] = rep
				mu.Unlock()
				e := int(epoch.Load())
				err := func() error {
					if _, err := s.Register(ctx, Ticket{OperationID: op, Draft: testDraft{Title: op, Quantity: 1}}); err != nil {
						return err
					}
					mu.Lock()
					rep.registered = true
					mu.Unlock()
					if _, err := s.Decide(ctx, Decision{OperationID: op, Verdict: Approve, DecidedBy: "worker"}); err != nil {
						return err
					}
					mu.Lock()
					rep.decided = true
					mu.Unlock()
					ran := false
					st, err := s.Apply(ctx, op, ledgerEffect(&ran, -1))
					if err != nil {
						return err
					}
					mu.Lock()
					rep.applied, rep.item = true, st.ItemID
					mu.Unlock()
					return nil
				}()
				events <- event{worker: w, epoch: e, ok: err == nil, err: err}
			}
		})
	}

	// waitAll waits until every worker has reported, for a call begun in
	// the current epoch, a success (want true) or a failure.
	kinds := map[string]int{}
	tally := func(ev event) {
		var ee *EffectError
		switch {
		case ev.ok:
		case errors.As(ev.err, &ee):
			kinds["effect lost its connection"]++
		case strings.Contains(ev.err.Error(), "commit"):
			kinds["commit lost its connection"]++
		default:
			kinds[string(Classify(ev.err))]++
		}
	}
	waitAll := func(want bool) {
		cur := int(epoch.Load())
		got := map[int]bool{}
		for len(got) < workers {
			ev := <-events
			tally(ev)
			switch {
			case !ev.ok && !outageError(ev.err):
				t.Errorf("epoch %d worker %d: error of kind %q, want unavailable: %v", ev.epoch, ev.worker, Classify(ev.err), ev.err)
			case ev.ok && ev.epoch%2 == 1:
				t.Errorf("worker %d: a call begun while the server was stopped succeeded", ev.worker)
			}
			if ev.epoch == cur && ev.ok == want {
				got[ev.worker] = true
			}
		}
	}
	waitAll(true)
	// A fast stop ends every session (the server rolls back their
	// transactions); an immediate one ends the server as a crash would
	// (recovery replays the log at the next start).
	for _, mode := range []pgtest.StopOptions{{}, {Immediate: true}} {
		b.cluster.Stop(t, mode)
		epoch.Add(1)
		waitAll(false)
		// Opening the store fails alike while the server is down.
		_, _, err := openAt(ctx, backendPostgres, dsn)
		assert.Equal(t, KindUnavailable, Classify(err), "OpenDB with the server stopped: %v", err)
		var oe *OpenError
		assert.ErrorAs(t, err, &oe)
		// Calls begun from here on may succeed: the epoch is even before the
		// server starts, so an odd one only ever labels a stopped server.
		epoch.Add(1)
		b.cluster.Start(t)
		waitAll(true)
	}
	close(stop)
	go func() {
		wg.Wait()
		close(events)
	}()
	for ev := range events {
		tally(ev)
		if !ev.ok && !outageError(ev.err) {
			t.Errorf("worker %d: %v", ev.worker, ev.err)
		}
	}

	// Nothing reported that the database does not hold; the invariant of
	// Apply holds for every operation; then every operation completes.
	applied, known := 0, 0
	for op, rep := range seen {
		st, err := s.Read(ctx, op)
		if errors.Is(err, ErrUnknownOperation) {
			assert.False(t, rep.registered, "%s: reported registered, unknown to the database", op)
			continue
		}
		require.NoError(t, err, op)
		known++
		if rep.decided {
			assert.Contains(t, []Status{StatusApproved, StatusCompleted}, st.Status, "%s: reported decided", op)
		}
		if rep.applied {
			applied++
			assert.Equal(t, StatusCompleted, st.Status, "%s: reported applied", op)
			assert.Equal(t, rep.item, st.ItemID, "%s: item", op)
		}
		var ledger int
		require.NoError(t, s.db.QueryRowContext(ctx, `SELECT count(*) FROM ledger WHERE operation_id = $1`, op).Scan(&ledger))
		if st.Status == StatusCompleted {
			assert.Equal(t, ledgerLines, ledger, "%s: completed", op)
		} else {
			assert.Zero(t, ledger, "%s: %s", op, st.Status)
		}
		_, err = s.Register(ctx, Ticket{OperationID: op, Draft: testDraft{Title: op, Quantity: 1}})
		require.NoError(t, err, op)
		_, err = s.Decide(ctx, Decision{OperationID: op, Verdict: Approve, DecidedBy: "worker"})
		require.NoError(t, err, op)
		ran := false
		after, err := s.Apply(ctx, op, ledgerEffect(&ran, -1))
		require.NoError(t, err, op)
		assert.Equal(t, st.Status != StatusCompleted, ran, "%s: the retry ran the effect", op)
		if st.Status == StatusCompleted {
			assert.Equal(t, st.ItemID, after.ItemID, op)
		}
	}
	var items, ledger int
	require.NoError(t, s.db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM `+s.table(TableItems)+`), (SELECT count(*) FROM ledger)`).
		Scan(&items, &ledger))
	assert.Equal(t, known, items)
	assert.Equal(t, known*ledgerLines, ledger)
	t.Logf("%d operations attempted, %d registered, %d reported applied before the final pass, 2 outages; failures: %v", len(seen), known, applied, kinds)
}

// TestPostgresOpen: the options and refusals of OpenDB over PostgreSQL.
func TestPostgresOpen(t *testing.T) {
	ctx := context.Background()
	c := pgtest.Start(t)
	dsn := c.NewDatabase(t)
	db, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })

	t.Run("no store without WithCreate", func(t *testing.T) {
		_, err := OpenDB(ctx, db, WithSchema("fresh"))
		assert.ErrorIs(t, err, ErrNoStore)
		var oe *OpenError
		require.ErrorAs(t, err, &oe)
		assert.Contains(t, oe.Path, `schema "fresh"`)
		var n int
		require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*) FROM pg_namespace WHERE nspname = 'fresh'`).Scan(&n))
		assert.Zero(t, n, "a refused open created the schema")
	})
	t.Run("options", func(t *testing.T) {
		_, err := OpenDB(ctx, db, WithSchema("Bad-Name"))
		assert.ErrorContains(t, err, "WithSchema")
		_, err = OpenDB(ctx, db, WithBusyTimeout(1))
		assert.ErrorContains(t, err, "WithBusyTimeout")
		_, err = Open(ctx, filepath.Join(t.TempDir(), "a.db"), WithSchema("x"))
		assert.ErrorContains(t, err, "WithSchema")
		_, err = Open(ctx, dsn)
		assert.ErrorContains(t, err, "OpenDB")
		sq, err := sql.Open("sqlite", storeDSN(filepath.Join(t.TempDir(), "b.db")))
		require.NoError(t, err)
		defer sq.Close()
		_, err = OpenDB(ctx, sq, WithSchema("x"), WithCreate())
		assert.ErrorContains(t, err, "WithSchema")
	})
	t.Run("schemas are separate stores", func(t *testing.T) {
		a, err := OpenDB(ctx, db, WithSchema("one"), WithCreate())
		require.NoError(t, err)
		defer a.Close()
		b, err := OpenDB(ctx, db, WithSchema("two"), WithCreate())
		require.NoError(t, err)
		defer b.Close()
		_, err = a.Register(ctx, Ticket{OperationID: "op", Draft: testDraft{Title: "a", Quantity: 1}})
		require.NoError(t, err)
		_, err = b.Register(ctx, Ticket{OperationID: "op", Draft: testDraft{Title: "b", Quantity: 2}})
		require.NoError(t, err, "the same id in another schema is another store's")
		again, err := OpenDB(ctx, db, WithSchema("one"))
		require.NoError(t, err, "an existing store opens without WithCreate")
		st, err := again.Read(ctx, "op")
		require.NoError(t, err)
		assert.JSONEq(t, `{"title":"a","quantity":1}`, string(st.Draft))
		require.NoError(t, again.Close())
		require.NoError(t, db.PingContext(ctx), "Close left the caller's pool open")
	})
	t.Run("migrations are checksummed", func(t *testing.T) {
		s, err := OpenDB(ctx, db, WithSchema("sums"), WithCreate())
		require.NoError(t, err)
		require.NoError(t, s.Close())
		_, err = db.ExecContext(ctx, `UPDATE sums.candor_approval_migrations SET checksum = 'edited' WHERE version = 1`)
		require.NoError(t, err)
		_, err = OpenDB(ctx, db, WithSchema("sums"))
		assert.ErrorIs(t, err, ErrSchemaAltered)
		_, err = OpenDB(ctx, db, WithSchema("sums"), WithReadOnly())
		assert.ErrorIs(t, err, ErrSchemaAltered)
		_, err = db.ExecContext(ctx, `UPDATE sums.candor_approval_migrations SET checksum = $1 WHERE version = 1`, pgChecksum(pgMigrations()[0]))
		require.NoError(t, err)
		again, err := OpenDB(ctx, db, WithSchema("sums"))
		require.NoError(t, err)
		require.NoError(t, again.Close())
		_, err = db.ExecContext(ctx, `INSERT INTO sums.candor_approval_migrations VALUES (2, 'future', 'x', 0)`)
		require.NoError(t, err)
		_, err = OpenDB(ctx, db, WithSchema("sums"))
		assert.ErrorIs(t, err, ErrSchemaTooNew)
		assert.Equal(t, KindSchema, Classify(err))
	})
	t.Run("read-only", func(t *testing.T) {
		w, err := OpenDB(ctx, db, WithSchema("ro"), WithCreate())
		require.NoError(t, err)
		defer w.Close()
		_, err = w.Register(ctx, Ticket{OperationID: "op", Draft: testDraft{Title: "a", Quantity: 1}})
		require.NoError(t, err)
		r, err := OpenDB(ctx, db, WithSchema("ro"), WithReadOnly())
		require.NoError(t, err)
		defer r.Close()
		_, err = r.Read(ctx, "op")
		assert.NoError(t, err)
		_, err = r.Decide(ctx, Decision{OperationID: "op", Verdict: Approve, DecidedBy: "x"})
		assert.ErrorIs(t, err, ErrReadOnly)
		_, err = OpenDB(ctx, db, WithSchema("absent"), WithReadOnly())
		assert.ErrorIs(t, err, ErrNoStore)
	})
	t.Run("synchronous_commit off is refused", func(t *testing.T) {
		off, err := sql.Open("pgx", dsn+"&synchronous_commit=off")
		require.NoError(t, err)
		defer off.Close()
		_, err = OpenDB(ctx, off, WithSchema("one"))
		assert.ErrorIs(t, err, ErrSettings)
		assert.ErrorContains(t, err, "synchronous_commit")
	})
	t.Run("every object prefixed", func(t *testing.T) {
		s, err := OpenDB(ctx, db, WithSchema("names"), WithCreate())
		require.NoError(t, err)
		defer s.Close()
		rows, err := db.QueryContext(ctx, `
SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'names'
UNION ALL SELECT p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'names'
UNION ALL SELECT t.tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
	WHERE n.nspname = 'names' AND NOT t.tgisinternal
UNION ALL SELECT k.conname FROM pg_constraint k JOIN pg_namespace n ON n.oid = k.connamespace WHERE n.nspname = 'names'`)
		require.NoError(t, err)
		defer rows.Close()
		n := 0
		for rows.Next() {
			var name string
			require.NoError(t, rows.Scan(&name))
			n++
			assert.True(t, strings.HasPrefix(name, "candor_approval_"), "object %s", name)
		}
		require.NoError(t, rows.Err())
		assert.Greater(t, n, 10)
	})
	t.Run("append-only", func(t *testing.T) {
		s, err := OpenDB(ctx, db, WithSchema("rules"), WithCreate())
		require.NoError(t, err)
		defer s.Close()
		_, err = s.Register(ctx, Ticket{OperationID: "op", Draft: testDraft{Title: "a", Quantity: 1}})
		require.NoError(t, err)
		_, err = s.Decide(ctx, Decision{OperationID: "op", Verdict: Approve, DecidedBy: "x"})
		require.NoError(t, err)
		_, err = s.Apply(ctx, "op", nil)
		require.NoError(t, err)
		_, err = s.Register(ctx, Ticket{OperationID: "waits", Draft: testDraft{Title: "w", Quantity: 1}})
		require.NoError(t, err)
		for _, q := range []string{
			`UPDATE rules.candor_approval_operations SET draft = '\x7b7d' WHERE operation_id = 'op'`,
			`UPDATE rules.candor_approval_operations SET comment = 'changed' WHERE operation_id = 'op'`,
			`UPDATE rules.candor_approval_operations SET status = 'approved', completed_at = NULL WHERE operation_id = 'op'`,
			`UPDATE rules.candor_approval_operations SET status = 'completed', completed_at = 1 WHERE operation_id = 'waits'`,
			`DELETE FROM rules.candor_approval_operations WHERE operation_id = 'waits'`,
			`INSERT INTO rules.candor_approval_operations (operation_id, draft, status, created_at, verdict, comment, decided_by, decided_at)
				VALUES ('forged', '\x7b7d', 'approved', 1, 'approve', '', 'x', 1)`,
			`INSERT INTO rules.candor_approval_items (operation_id, id, draft, created_at) VALUES ('waits', 2, '\x7b7d', 1)`,
			`UPDATE rules.candor_approval_items SET draft = '\x7b7d'`,
			`DELETE FROM rules.candor_approval_items`,
			`TRUNCATE rules.candor_approval_items`,
			`TRUNCATE rules.candor_approval_operations CASCADE`,
		} {
			_, err := db.ExecContext(ctx, q)
			assert.Error(t, err, q)
		}
		st, err := s.Read(ctx, "op")
		require.NoError(t, err)
		assert.Equal(t, StatusCompleted, st.Status)
	})
}

// TestPostgresLifecycle: the store's behaviour over PostgreSQL, call by
// call, as the SQLite suites pin it.
func TestPostgresLifecycle(t *testing.T) {
	ctx := context.Background()
	b := &backend{name: backendPostgres, cluster: pgtest.Start(t)}
	s := b.open(t, b.location(t, "life"))
	ensureLedger(t, s)

	st, err := s.Register(ctx, Ticket{OperationID: "op-1", Draft: reorderedDraft{Quantity: 1, Title: "x"}})
	require.NoError(t, err)
	assert.Equal(t, `{"quantity":1,"title":"x"}`, string(st.Draft))
	again, err := s.Register(ctx, Ticket{OperationID: "op-1", Draft: reorderedDraft{Quantity: 1, Title: "x"}})
	require.NoError(t, err)
	assert.Equal(t, st.CreatedAt, again.CreatedAt)
	_, err = s.Register(ctx, Ticket{OperationID: "op-1", Draft: reorderedDraft{Quantity: 2, Title: "x"}})
	var re *ReboundError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, `{"quantity":2,"title":"x"}`, string(re.Offered))

	_, err = s.Apply(ctx, "op-1", nil)
	assert.ErrorIs(t, err, ErrNotApproved)
	_, err = s.Decide(ctx, Decision{OperationID: "nope", Verdict: Approve, DecidedBy: "x"})
	assert.ErrorIs(t, err, ErrUnknownOperation)
	_, err = s.Decide(ctx, Decision{OperationID: "op-1", Verdict: Approve, DecidedBy: "x", Comment: "a\x00b"})
	assert.ErrorIs(t, err, ErrInvalidDecision)
	d := Decision{OperationID: "op-1", Verdict: Approve, DecidedBy: "alice", Comment: " fine "}
	st, err = s.Decide(ctx, d)
	require.NoError(t, err)
	assert.Equal(t, "fine", st.Decision.Comment)
	_, err = s.Decide(ctx, d)
	assert.NoError(t, err, "an exact repeat is idempotent")
	_, err = s.Decide(ctx, Decision{OperationID: "op-1", Verdict: Reject, DecidedBy: "bob"})
	var ade *AlreadyDecidedError
	require.ErrorAs(t, err, &ade)
	assert.Equal(t, "alice", ade.Standing.DecidedBy)

	// A failing effect commits nothing; a panicking one neither.
	boom := errors.New("boom")
	_, err = s.Apply(ctx, "op-1", func(ctx context.Context, tx *sql.Tx, item Item) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO ledger (operation_id, item_id, line) VALUES ($1, $2, 0)`, item.OperationID, item.ID)
		require.NoError(t, err)
		return boom
	})
	assert.ErrorIs(t, err, boom)
	assert.Equal(t, KindEffectFailed, Classify(err))
	assert.Panics(t, func() {
		_, _ = s.Apply(ctx, "op-1", func(context.Context, *sql.Tx, Item) error { panic("effect") })
	})
	st, err = s.Read(ctx, "op-1")
	require.NoError(t, err)
	assert.Equal(t, StatusApproved, st.Status)
	ran := false
	st, err = s.Apply(ctx, "op-1", ledgerEffect(&ran, -1))
	require.NoError(t, err)
	assert.True(t, ran)
	assert.Equal(t, StatusCompleted, st.Status)
	ran = false
	again, err = s.Apply(ctx, "op-1", ledgerEffect(&ran, -1))
	require.NoError(t, err)
	assert.False(t, ran, "a completed operation's effect never runs again")
	assert.Equal(t, st.ItemID, again.ItemID)
	checkApplyInvariant(t, s, "op-1")

	// An effect that ends the transaction is caught.
	_, err = s.Register(ctx, Ticket{OperationID: "op-2", Draft: testDraft{Title: "t", Quantity: 1}})
	require.NoError(t, err)
	_, err = s.Decide(ctx, Decision{OperationID: "op-2", Verdict: Approve, DecidedBy: "x"})
	require.NoError(t, err)
	_, err = s.Apply(ctx, "op-2", func(ctx context.Context, tx *sql.Tx, _ Item) error {
		_, err := tx.ExecContext(ctx, "ROLLBACK")
		return err
	})
	assert.Error(t, err)
	st, err = s.Read(ctx, "op-2")
	require.NoError(t, err)
	assert.Equal(t, StatusApproved, st.Status)

	// Listing pages in registration order.
	for i := 3; i <= 7; i++ {
		_, err := s.Register(ctx, Ticket{OperationID: fmt.Sprintf("op-%d", i), Draft: testDraft{Title: "t", Quantity: i}})
		require.NoError(t, err)
	}
	var ids []string
	for st, err := range s.All(ctx, Filter{Limit: 2}) {
		require.NoError(t, err)
		ids = append(ids, st.OperationID)
	}
	assert.Equal(t, []string{"op-1", "op-2", "op-3", "op-4", "op-5", "op-6", "op-7"}, ids)
	page, err := s.List(ctx, Filter{Status: StatusWaiting})
	require.NoError(t, err)
	assert.Len(t, page.States, 5)

	// Receipts.
	r := WaitingReceipt{GraphVersion: "g1", SessionID: "s", CheckpointID: "c", OperationID: "op-3", RequestID: "r"}
	_, err = s.Receipt(ctx, r)
	require.NoError(t, err)
	_, err = s.Receipt(ctx, r)
	require.NoError(t, err, "issuing a receipt again is a no-op")
	_, err = s.Resume(ctx, r, "g1")
	require.NoError(t, err)
	r.SessionID = "forged"
	_, err = s.Resume(ctx, r, "g1")
	assert.ErrorIs(t, err, ErrUnknownReceipt)
	r.OperationID = "nope"
	_, err = s.Receipt(ctx, r)
	assert.ErrorIs(t, err, ErrUnknownOperation)

	require.NoError(t, s.Close())
	_, err = s.Read(ctx, "op-1")
	assert.ErrorIs(t, err, ErrClosed)
}

// TestPostgresListWaitsForRegistrations: a registration whose sequence
// number is drawn but not committed holds List back, so that a cursor past
// a later number never skips it.
func TestPostgresListWaitsForRegistrations(t *testing.T) {
	ctx := context.Background()
	b := &backend{name: backendPostgres, cluster: pgtest.Start(t)}
	s := b.open(t, b.location(t, "list"))

	// A registration in flight: the store's own statement, in a
	// transaction the test holds open.
	tx, err := s.db.BeginTx(ctx, nil)
	require.NoError(t, err)
	defer tx.Rollback()
	canon, err := canonicalDraft("early", testDraft{Title: "early", Quantity: 1}, DefaultMaxDraftBytes)
	require.NoError(t, err)
	_, err = tx.ExecContext(ctx, s.q.register, "early", []byte(canon), int64(1), s.listLock)
	require.NoError(t, err)
	// A later registration commits first, with a higher number.
	_, err = s.Register(ctx, Ticket{OperationID: "late", Draft: testDraft{Title: "late", Quantity: 1}})
	require.NoError(t, err)

	listed := make(chan Page, 1)
	go func() {
		page, err := s.List(ctx, Filter{})
		assert.NoError(t, err)
		listed <- page
	}()
	// Wait until the listing waits for the lock (polling the server's lock
	// table, not the clock).
	for {
		var waiting int
		require.NoError(t, s.db.QueryRowContext(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`).Scan(&waiting))
		if waiting > 0 {
			break
		}
	}
	select {
	case page := <-listed:
		t.Fatalf("List returned %d operations while a registration was in flight", len(page.States))
	default:
	}
	require.NoError(t, tx.Commit())
	page := <-listed
	var ids []string
	for _, st := range page.States {
		ids = append(ids, st.OperationID)
	}
	assert.Equal(t, []string{"early", "late"}, ids)
}
