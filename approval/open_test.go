package approval

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOpenTruncatedStore: a store file truncated to 0 bytes is refused, not
// opened as a new, empty store in which an operation id already bound
// could be bound to another draft; the file is left as it was.
func TestOpenTruncatedStore(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "approvals.db")
	s := openTest(t, path)
	_, err := s.Register(ctx, Ticket{OperationID: "po-1", Draft: testDraft{Title: "500 bolts", Quantity: 500}})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	for _, side := range []string{"-wal", "-shm"} {
		_, err := os.Stat(path + side)
		require.ErrorIs(t, err, fs.ErrNotExist, "a clean Close leaves no %s file", side)
	}
	require.NoError(t, os.Truncate(path, 0))

	for name, open := range map[string]func() (*Store, error){
		"Open":           func() (*Store, error) { return Open(ctx, path) },
		"Open read-only": func() (*Store, error) { return Open(ctx, path, WithReadOnly()) },
	} {
		t.Run(name, func(t *testing.T) {
			s, err := open()
			if err == nil {
				_, rerr := s.Register(ctx, Ticket{OperationID: "po-1", Draft: testDraft{Title: "5000 bolts", Quantity: 5000}})
				s.Close()
				t.Fatalf("%s opened a truncated store; re-registering po-1 with another draft: %v", name, rerr)
			}
			assert.ErrorIs(t, err, ErrNoStore)
			assert.Equal(t, KindNoStore, Classify(err))
			var oe *OpenError
			require.ErrorAs(t, err, &oe)
			assert.Equal(t, path, oe.Path)
			assert.Contains(t, err.Error(), path)
			assert.Contains(t, err.Error(), "0 bytes")
			assert.Contains(t, oe.Remedy, "backup")
			fi, err := os.Stat(path)
			require.NoError(t, err)
			assert.Zero(t, fi.Size(), "the refused file was written")
		})
	}

	// Over the caller's pool (whose DSN switches the file to WAL, so it is
	// no longer empty), the store's tables are still missing.
	_, err = OpenDB(ctx, rawDB(t, path))
	assert.ErrorIs(t, err, ErrNoStore)

	// Creating a store in it anyway is an explicit decision.
	s, err = Open(ctx, path, WithCreate())
	require.NoError(t, err)
	defer s.Close()
	_, err = s.Read(ctx, "po-1")
	assert.ErrorIs(t, err, ErrUnknownOperation)
}

// TestOpenForeignFile: a SQLite file of another application (its own
// application_id) is refused, even WithCreate.
func TestOpenForeignFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "other.db")
	db := rawDB(t, path)
	execAll(t, db, `PRAGMA application_id = 7`, `CREATE TABLE t (x)`)
	for _, opts := range [][]Option{nil, {WithCreate()}} {
		_, err := Open(ctx, path, opts...)
		assert.ErrorIs(t, err, ErrNoStore)
		assert.Contains(t, fmt.Sprint(err), "another application")
	}
}

// TestOpenConcurrentCreate: goroutines that Open one missing file at once
// all get the same store, created once; no temporary file is left.
func TestOpenConcurrentCreate(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "new.db")
	const n = 8
	stores := make([]*Store, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			stores[i], errs[i] = Open(ctx, path)
		})
	}
	close(start)
	wg.Wait()
	for i := range n {
		require.NoError(t, errs[i], "opener %d", i)
		defer stores[i].Close()
	}
	for i := range n {
		_, err := stores[i].Register(ctx, Ticket{OperationID: "op", Draft: testDraft{Title: "t", Quantity: i + 1}})
		if i == 0 {
			require.NoError(t, err)
		} else {
			assert.ErrorIs(t, err, ErrOperationRebound, "opener %d has a store of its own", i)
		}
	}
	for _, s := range stores {
		require.NoError(t, s.Close())
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.Equal(t, []string{"new.db"}, names)
}

// corruptStore writes a store of n completed operations and closes it.
func corruptStore(t *testing.T, n int) string {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "c.db")
	s := openTest(t, path)
	for i := range n {
		op := fmt.Sprintf("op-%d", i)
		_, err := s.Register(ctx, Ticket{OperationID: op, Draft: testDraft{Title: strings.Repeat("x", 200), Quantity: i + 1}})
		require.NoError(t, err)
	}
	require.NoError(t, s.Close())
	return path
}

// TestOpenCorrupt: damage is found at Open (PRAGMA quick_check), as a
// *CorruptError, not later in a List.
func TestOpenCorrupt(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		damage func(t *testing.T, path string)
	}{
		{"garbage over the last page", func(t *testing.T, path string) {
			fi, err := os.Stat(path)
			require.NoError(t, err)
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			require.NoError(t, err)
			_, err = f.WriteAt(bytes.Repeat([]byte{0xa5}, 4096), fi.Size()-4096)
			require.NoError(t, err)
			require.NoError(t, f.Close())
		}},
		{"truncated to half", func(t *testing.T, path string) {
			fi, err := os.Stat(path)
			require.NoError(t, err)
			require.NoError(t, os.Truncate(path, fi.Size()/2/4096*4096))
		}},
		{"header overwritten", func(t *testing.T, path string) {
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			require.NoError(t, err)
			_, err = f.WriteAt([]byte("this is not SQLite"), 0)
			require.NoError(t, err)
			require.NoError(t, f.Close())
		}},
	}
	for _, tc := range tests {
		for _, ro := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/read-only=%v", tc.name, ro), func(t *testing.T) {
				path := corruptStore(t, 40)
				tc.damage(t, path)
				var opts []Option
				if ro {
					opts = append(opts, WithReadOnly())
				}
				s, err := Open(ctx, path, opts...)
				if err == nil {
					_, lerr := s.List(ctx, Filter{Limit: MaxPageSize})
					s.Close()
					t.Fatalf("Open accepted a damaged file; List then says %v", lerr)
				}
				assert.ErrorIs(t, err, ErrCorrupt)
				assert.Equal(t, KindCorrupt, Classify(err))
				var ce *CorruptError
				require.ErrorAs(t, err, &ce)
				assert.NotEmpty(t, ce.Problems)
				var oe *OpenError
				require.ErrorAs(t, err, &oe)
				assert.Equal(t, path, oe.Path)
				assert.Contains(t, oe.Remedy, "backup")
			})
		}
	}
}

// TestOpenDBSharesTransaction: over the caller's database, an effect's rows
// in the caller's own table commit with the completion or not at all, and
// Close leaves the caller's pool open.
func TestOpenDBSharesTransaction(t *testing.T) {
	ctx := context.Background()
	db := rawDB(t, filepath.Join(t.TempDir(), "app.db"))
	execAll(t, db, `CREATE TABLE orders (operation_id TEXT PRIMARY KEY REFERENCES candor_approval_items (operation_id), qty INTEGER)`)
	_, err := OpenDB(ctx, db)
	require.ErrorIs(t, err, ErrNoStore, "a database without the store's tables needs WithCreate")
	s, err := OpenDB(ctx, db, WithCreate())
	require.NoError(t, err)
	for _, op := range []string{"a", "b"} {
		_, err = s.Register(ctx, Ticket{OperationID: op, Draft: testDraft{Title: op, Quantity: 3}})
		require.NoError(t, err)
		_, err = s.Decide(ctx, Decision{OperationID: op, Verdict: Approve, DecidedBy: "alice"})
		require.NoError(t, err)
	}
	order := func(fail bool) Effect {
		return func(ctx context.Context, tx *sql.Tx, item Item) error {
			if _, err := tx.ExecContext(ctx, `INSERT INTO orders (operation_id, qty) VALUES (?, 3)`, item.OperationID); err != nil {
				return err
			}
			if fail {
				return errors.New("supplier down")
			}
			return nil
		}
	}
	_, err = s.Apply(ctx, "a", order(false))
	require.NoError(t, err)
	_, err = s.Apply(ctx, "b", order(true))
	require.ErrorIs(t, err, ErrEffectFailed)
	require.NoError(t, s.Close())

	var orders int
	require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*) FROM orders`).Scan(&orders))
	assert.Equal(t, 1, orders, "the failed effect's row was rolled back, the other committed")
	s, err = OpenDB(ctx, db)
	require.NoError(t, err)
	defer s.Close()
	b, err := s.Read(ctx, "b")
	require.NoError(t, err)
	assert.Equal(t, StatusApproved, b.Status)
}

// TestOpenDBSettings: OpenDB refuses a database whose settings break the
// store's guarantees, naming each one, and arguments that do not apply.
func TestOpenDBSettings(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	full := "_pragma=journal_mode(wal)&_pragma=synchronous(full)&_pragma=foreign_keys(1)&_pragma=busy_timeout(5000)"
	tests := []struct {
		name, query, want string
	}{
		{"as documented", full + "&_txlock=immediate", ""},
		{"without _txlock", full, ""},
		{"synchronous EXTRA", strings.Replace(full, "synchronous(full)", "synchronous(extra)", 1), ""},
		{"synchronous NORMAL", strings.Replace(full, "synchronous(full)", "synchronous(normal)", 1), "synchronous is 1"},
		{"foreign keys off", strings.Replace(full, "foreign_keys(1)", "foreign_keys(0)", 1), "foreign_keys is 0"},
		{"no busy timeout", strings.Replace(full, "busy_timeout(5000)", "busy_timeout(0)", 1), "busy_timeout is 0"},
		{"rollback journal", strings.Replace(full, "journal_mode(wal)", "journal_mode(delete)", 1), "journal_mode is delete"},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, fmt.Sprintf("s%d.db", i))
			db, err := sql.Open("sqlite", "file:"+path+"?"+tc.query)
			require.NoError(t, err)
			defer db.Close()
			s, err := OpenDB(ctx, db, WithCreate())
			if tc.want == "" {
				require.NoError(t, err)
				require.NoError(t, s.Close())
				return
			}
			if err == nil {
				s.Close()
				t.Fatal("OpenDB accepted the settings")
			}
			assert.ErrorIs(t, err, ErrSettings)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), path)
		})
	}
	mem, err := sql.Open("sqlite", ":memory:")
	require.NoError(t, err)
	defer mem.Close()
	_, err = OpenDB(ctx, mem, WithCreate())
	assert.ErrorIs(t, err, ErrSettings, "an in-memory database")
	_, err = OpenDB(ctx, nil)
	assert.Error(t, err)
	_, err = OpenDB(ctx, rawDB(t, filepath.Join(dir, "b.db")), WithCreate(), WithBusyTimeout(DefaultBusyTimeout))
	assert.ErrorContains(t, err, "WithBusyTimeout does not apply")
}

// TestOpenDBChecksEachConnection: a pragma set with Exec reaches one
// connection of a pool; a write on another one is refused, not run with
// weaker settings.
func TestOpenDBChecksEachConnection(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "pool.db")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(wal)")
	require.NoError(t, err)
	defer db.Close()
	c1, err := db.Conn(ctx)
	require.NoError(t, err)
	for _, q := range []string{"PRAGMA synchronous = FULL", "PRAGMA foreign_keys = 1", "PRAGMA busy_timeout = 5000"} {
		_, err := c1.ExecContext(ctx, q)
		require.NoError(t, err)
	}
	require.NoError(t, c1.Close()) // back to the pool, where OpenDB finds it
	s, err := OpenDB(ctx, db, WithCreate())
	require.NoError(t, err)
	defer s.Close()
	hold, err := db.Conn(ctx) // the configured connection, most likely; a write then needs another
	require.NoError(t, err)
	defer hold.Close()
	var sync int
	require.NoError(t, hold.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&sync))
	require.Equal(t, 2, sync, "the held connection is the configured one")
	_, err = s.Register(ctx, Ticket{OperationID: "op", Draft: testDraft{Title: "t", Quantity: 1}})
	assert.ErrorIs(t, err, ErrSettings)
	assert.Equal(t, KindSettings, Classify(err))
}

// TestOpenDBWritersQueue: stores over two pools on one file (two
// processes, in effect) whose DSN has no _txlock race Register, Decide and
// Apply: the store's transactions take the write lock with their first
// statement, so none fails with SQLITE_BUSY.
func TestOpenDBWritersQueue(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "q.db")
	dsn := "file:" + path + "?_pragma=journal_mode(wal)&_pragma=synchronous(full)&_pragma=foreign_keys(1)&_pragma=busy_timeout(10000)"
	var stores []*Store
	for i := range 2 {
		db, err := sql.Open("sqlite", dsn)
		require.NoError(t, err)
		defer db.Close()
		opts := []Option{}
		if i == 0 {
			opts = append(opts, WithCreate())
		}
		s, err := OpenDB(ctx, db, opts...)
		require.NoError(t, err)
		defer s.Close()
		stores = append(stores, s)
	}
	const n = 24
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			s := stores[i%2]
			op := fmt.Sprintf("op-%d", i/2) // two writers per operation, one per pool
			if _, err := s.Register(ctx, Ticket{OperationID: op, Draft: testDraft{Title: op, Quantity: 1}}); err != nil {
				errs[i] = err
				return
			}
			_, err := s.Decide(ctx, Decision{OperationID: op, Verdict: Approve, DecidedBy: "x"})
			if err != nil && !errors.Is(err, ErrAlreadyDecided) {
				errs[i] = err
				return
			}
			_, errs[i] = s.Apply(ctx, op, nil)
		})
	}
	wg.Wait()
	for i, err := range errs {
		assert.NoError(t, err, "writer %d", i)
	}
}

func TestAll(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	var want []string
	for i := range 7 {
		op := fmt.Sprintf("op-%d", i)
		_, err := s.Register(ctx, Ticket{OperationID: op, Draft: testDraft{Title: op, Quantity: 1}})
		require.NoError(t, err)
		if i%2 == 0 {
			_, err = s.Decide(ctx, Decision{OperationID: op, Verdict: Reject, DecidedBy: "x"})
			require.NoError(t, err)
			want = append(want, op)
		}
	}
	var got []string
	for st, err := range s.All(ctx, Filter{Status: StatusRejected, Limit: 1}) {
		require.NoError(t, err)
		got = append(got, st.OperationID)
	}
	assert.Equal(t, want, got)
	n := 0
	for _, err := range s.All(ctx, Filter{Limit: 2}) {
		require.NoError(t, err)
		n++
		if n == 3 {
			break
		}
	}
	assert.Equal(t, 3, n)
	var last error
	for _, err := range s.All(ctx, Filter{Limit: -1}) {
		last = err
	}
	assert.ErrorIs(t, last, ErrInvalidFilter, "a listing that cannot run ends with its error")
}

func TestClassify(t *testing.T) {
	tests := []struct {
		err  error
		want Kind
	}{
		{nil, ""},
		{fmt.Errorf("x: %w", ErrInvalidOperationID), KindInvalidInput},
		{&InvalidDraftError{}, KindInvalidInput},
		{ErrInvalidDecision, KindInvalidInput},
		{ErrInvalidFilter, KindInvalidInput},
		{ErrInvalidReceipt, KindInvalidInput},
		{&ReboundError{}, KindRebound},
		{ErrUnknownOperation, KindUnknownOperation},
		{&AlreadyDecidedError{}, KindAlreadyDecided},
		{&NotApprovedError{}, KindNotApproved},
		{&EffectError{Err: context.Canceled}, KindEffectFailed},
		{ErrUnknownReceipt, KindUnknownReceipt},
		{&GraphVersionError{}, KindGraphVersionMismatch},
		{&OpenError{Err: ErrNoStore}, KindNoStore},
		{&OpenError{Err: &CorruptError{}}, KindCorrupt},
		{ErrInconsistent, KindInconsistent},
		{ErrSchemaTooNew, KindSchema},
		{ErrSchemaAltered, KindSchema},
		{ErrSchemaTooOld, KindSchema},
		{ErrSettings, KindSettings},
		{ErrReadOnly, KindReadOnly},
		{ErrClosed, KindClosed},
		{fmt.Errorf("approval: commit: %w", ErrUnavailable), KindUnavailable},
		{context.DeadlineExceeded, KindCanceled},
		{errors.New("disk I/O error"), KindStorage},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, Classify(tc.err), "%v", tc.err)
	}
}

// TestBusyClassified: a writer that waits longer than the busy timeout for
// another process's lock fails as KindBusy.
func TestBusyClassified(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "busy.db")
	s := openTest(t, path, WithBusyTimeout(1))
	defer s.Close()
	other := rawDB(t, path)
	c, err := other.Conn(ctx)
	require.NoError(t, err)
	defer c.Close()
	_, err = c.ExecContext(ctx, "BEGIN IMMEDIATE")
	require.NoError(t, err)
	defer c.ExecContext(ctx, "ROLLBACK")
	_, err = s.Register(ctx, Ticket{OperationID: "op", Draft: testDraft{Title: "t", Quantity: 1}})
	assert.Equal(t, KindBusy, Classify(err), "%v", err)
}

// TestLogging: without WithLogger nothing is logged, not even to
// slog.Default; with it, records carry the operation id and never the
// draft or the comment.
func TestLogging(t *testing.T) {
	ctx := context.Background()
	var def bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&def, nil)))
	defer slog.SetDefault(prev)
	cycle := func(s *Store) {
		_, err := s.Register(ctx, Ticket{OperationID: "op", Draft: testDraft{Title: "secret-title", Quantity: 1}})
		require.NoError(t, err)
		_, err = s.Decide(ctx, Decision{OperationID: "op", Verdict: Approve, Comment: "secret-comment", DecidedBy: "a"})
		require.NoError(t, err)
		_, err = s.Apply(ctx, "op", nil)
		require.NoError(t, err)
	}
	cycle(newStore(t))
	assert.Empty(t, def.String(), "the store logged without a logger")

	var buf bytes.Buffer
	cycle(newStore(t, WithLogger(slog.New(slog.NewTextHandler(&buf, nil)))))
	out := buf.String()
	assert.Contains(t, out, "operation_id=op")
	assert.Contains(t, out, "item_id=1")
	assert.NotContains(t, out, "secret")
	assert.Empty(t, def.String())
}
