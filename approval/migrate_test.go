package approval

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/candorkit/candor/internal/sqlitex"
)

func TestOpenSettings(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	s := openTest(t, path, WithBusyTimeout(1500*time.Millisecond))
	defer s.Close()
	checks := []struct {
		pragma string
		want   string
	}{
		{"journal_mode", "wal"},
		{"foreign_keys", "1"},
		{"busy_timeout", "1500"},
		{"synchronous", "2"}, // FULL
		{"application_id", strconv.Itoa(int(applicationID))},
	}
	for _, c := range checks {
		var got string
		require.NoError(t, s.db.QueryRowContext(ctx, "PRAGMA "+c.pragma).Scan(&got))
		assert.Equal(t, c.want, got, "PRAGMA %s", c.pragma)
	}
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	// Every transaction begins IMMEDIATE: an open, empty transaction on the
	// store already holds the write lock, so another writer cannot start.
	tx, err := s.db.BeginTx(ctx, nil)
	require.NoError(t, err)
	defer tx.Rollback()
	other, err := sql.Open("sqlite", sqlitex.DSN(path, sqlitex.DSNOptions{BusyTimeout: time.Millisecond}))
	require.NoError(t, err)
	defer other.Close()
	_, err = other.ExecContext(ctx, "BEGIN IMMEDIATE")
	assert.True(t, surfacedBusy(err), "a second writer began while the store's empty transaction was open: %v", err)
}

func TestOpenRefuses(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	tests := []struct {
		name string
		path string
		opts []Option
	}{
		{"empty path", "", nil},
		{"memory", ":memory:", nil},
		{"URI", "file:" + filepath.Join(dir, "x.db"), nil},
		{"zero busy timeout", filepath.Join(dir, "x.db"), []Option{WithBusyTimeout(0)}},
		{"zero draft bound", filepath.Join(dir, "x.db"), []Option{WithMaxDraftBytes(0)}},
		{"read-only and create", filepath.Join(dir, "x.db"), []Option{WithReadOnly(), WithCreate()}},
		{"nil option", filepath.Join(dir, "x.db"), []Option{nil}},
		{"directory missing", filepath.Join(dir, "missing", "x.db"), nil},
		{"a directory", dir, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Open(ctx, tc.path, tc.opts...)
			if err == nil {
				s.Close()
				t.Fatalf("Open(%q) succeeded", tc.path)
			}
		})
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "a refused Open left files behind")
}

// TestOpenPathsLiterally: a path is a file name, whatever it holds.
func TestOpenPathsLiterally(t *testing.T) {
	for _, name := range []string{"a#b.db", "a%41b.db", "a?x.db", "a b&c=d.db"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			s := openTest(t, filepath.Join(dir, name))
			require.NoError(t, s.Close())
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			assert.Equal(t, []string{name}, names)
		})
	}
}

func appliedVersions(t *testing.T, db *sql.DB) []int {
	t.Helper()
	rows, err := db.Query(`SELECT version FROM candor_approval_migrations ORDER BY version`)
	require.NoError(t, err)
	defer rows.Close()
	var vs []int
	for rows.Next() {
		var v int
		require.NoError(t, rows.Scan(&v))
		vs = append(vs, v)
	}
	require.NoError(t, rows.Err())
	return vs
}

// schemaObjects lists the names of the tables, indexes and triggers in db.
func schemaObjects(t *testing.T, db *sql.DB) []string {
	t.Helper()
	rows, err := db.Query(`SELECT name FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%' ORDER BY name`)
	require.NoError(t, err)
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		require.NoError(t, rows.Scan(&n))
		names = append(names, n)
	}
	require.NoError(t, rows.Err())
	return names
}

// TestEveryObjectPrefixed: the store's tables, indexes and triggers are all
// named candor_approval_…, and the exported table names are the tables.
func TestEveryObjectPrefixed(t *testing.T) {
	s := newStore(t)
	objs := schemaObjects(t, s.db)
	require.NotEmpty(t, objs)
	for _, n := range objs {
		assert.True(t, strings.HasPrefix(n, "candor_approval_"), "object %s is not prefixed", n)
		assert.NotContains(t, n, "_v1_", "staging table %s left behind", n)
	}
	for _, table := range []string{TableOperations, TableItems, TableReceipts, TableMigrations} {
		assert.Contains(t, objs, table)
	}
}

// TestLegacyStoreAdopted: a store written before the prefix (built here
// from that version's schema SQL, at each of its versions) opens, keeps its
// data and ends with only prefixed tables and the rules in force.
func TestLegacyStoreAdopted(t *testing.T) {
	ctx := context.Background()
	for v := 1; v <= len(legacyMigrations()); v++ {
		t.Run(legacyMigrations()[v-1].name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "legacy.db")
			db := rawDB(t, path)
			buildLegacyStore(t, db, v)
			// A waiting, an approved, a rejected and (written the way
			// versions before 4 did: item first, then the status) a
			// completed operation, and a receipt.
			seed := []string{
				`INSERT INTO operations (operation_id, draft, status, created_at) VALUES ('old', '{"title":"old"}', 'waiting', 1)`,
				`INSERT INTO operations (operation_id, draft, status, created_at) VALUES ('ok', '{"title":"ok"}', 'waiting', 1)`,
				`UPDATE operations SET status = 'approved', verdict = 'approve', comment = '', decided_by = 'x', decided_at = 2 WHERE operation_id = 'ok'`,
				`INSERT INTO operations (operation_id, draft, status, created_at) VALUES ('no', '{"title":"no"}', 'waiting', 1)`,
				`UPDATE operations SET status = 'rejected', verdict = 'reject', comment = 'nope', decided_by = 'y', decided_at = 2 WHERE operation_id = 'no'`,
				`INSERT INTO receipts (operation_id, graph_version, session_id, checkpoint_id, request_id, issued_at) VALUES ('old', 'g', 's', 'c', 'r', 1)`,
			}
			if v < 4 {
				seed = append(seed,
					`INSERT INTO operations (operation_id, draft, status, created_at) VALUES ('done', '{"title":"done"}', 'waiting', 1)`,
					`UPDATE operations SET status = 'approved', verdict = 'approve', comment = '', decided_by = 'x', decided_at = 2 WHERE operation_id = 'done'`,
					`INSERT INTO items (operation_id, id, draft, created_at) SELECT operation_id, seq, draft, 3 FROM operations WHERE operation_id = 'done'`,
					`UPDATE operations SET status = 'completed', completed_at = 3 WHERE operation_id = 'done'`)
			} else {
				seed = append(seed,
					`INSERT INTO operations (operation_id, draft, status, created_at) VALUES ('done', '{"title":"done"}', 'waiting', 1)`,
					`UPDATE operations SET status = 'approved', verdict = 'approve', comment = '', decided_by = 'x', decided_at = 2 WHERE operation_id = 'done'`,
					`UPDATE operations SET status = 'completed', completed_at = 3 WHERE operation_id = 'done'`)
			}
			execAll(t, db, seed...)
			require.NoError(t, db.Close())

			before := schemaObjects(t, rawDB(t, path))
			_, err := Open(ctx, path, WithReadOnly())
			require.ErrorIs(t, err, ErrSchemaTooOld, "a read-only open cannot migrate")
			assert.Contains(t, err.Error(), "read-write once")
			assert.Equal(t, before, schemaObjects(t, rawDB(t, path)))

			s := openTest(t, path)
			defer s.Close()
			assert.Equal(t, []int{1, 2}, appliedVersions(t, s.db))
			for _, n := range schemaObjects(t, s.db) {
				assert.True(t, strings.HasPrefix(n, "candor_approval_"), "object %s left after adoption", n)
			}
			var appID int32
			require.NoError(t, s.db.QueryRowContext(ctx, "PRAGMA application_id").Scan(&appID))
			assert.Equal(t, applicationID, appID)

			st, err := s.Read(ctx, "old")
			require.NoError(t, err)
			assert.Equal(t, `{"title":"old"}`, string(st.Draft))
			assert.Equal(t, StatusWaiting, st.Status)
			st, err = s.Read(ctx, "no")
			require.NoError(t, err)
			assert.Equal(t, StatusRejected, st.Status)
			assert.Equal(t, "nope", st.Decision.Comment)
			done, err := s.Read(ctx, "done")
			require.NoError(t, err)
			assert.Equal(t, StatusCompleted, done.Status)
			assert.Equal(t, int64(4), done.ItemID, "the item keeps its id (the operation's seq)")
			_, err = s.Resume(ctx, WaitingReceipt{GraphVersion: "g", SessionID: "s", CheckpointID: "c", OperationID: "old", RequestID: "r"}, "g")
			assert.NoError(t, err, "the receipt was kept")

			applied, err := s.Apply(ctx, "ok", nil)
			require.NoError(t, err)
			assert.Equal(t, StatusCompleted, applied.Status)
			assert.Equal(t, int64(2), applied.ItemID)
			_, err = s.Register(ctx, Ticket{OperationID: "done", Draft: testDraft{Title: "other", Quantity: 1}})
			assert.ErrorIs(t, err, ErrOperationRebound, "bindings survive adoption")
			_, err = s.db.ExecContext(ctx, `DELETE FROM candor_approval_operations`)
			assert.Error(t, err, "append-only triggers not in force after adoption")

			// Opening again changes nothing.
			require.NoError(t, s.Close())
			s2 := openTest(t, path)
			defer s2.Close()
			assert.Equal(t, []int{1, 2}, appliedVersions(t, s2.db))
		})
	}
}

// TestLegacyStoreAltered: a legacy store whose history was edited is
// refused untouched.
func TestLegacyStoreAltered(t *testing.T) {
	ctx := context.Background()
	for name, tamper := range map[string]string{
		"edited checksum": `UPDATE schema_migrations SET checksum = 'edited' WHERE version = 2`,
		"missing step":    `DELETE FROM schema_migrations WHERE version = 2`,
		"unknown version": `INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES (5, 'future', 'x', 1)`,
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "legacy.db")
			db := rawDB(t, path)
			buildLegacyStore(t, db, 4)
			execAll(t, db, tamper)
			before := schemaObjects(t, db)
			s, err := Open(ctx, path)
			if err == nil {
				s.Close()
				t.Fatal("Open accepted a legacy store with an edited history")
			}
			assert.Equal(t, KindSchema, Classify(err), "%v", err)
			assert.Equal(t, before, schemaObjects(t, db), "a refused Open changed the schema")
		})
	}
}

// TestSharedFile: a file that golang-migrate manages (its schema_migrations
// table) and that holds the caller's own items table takes a store beside
// them, with WithCreate, and leaves them alone.
func TestSharedFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "app.db")
	db := rawDB(t, path)
	execAll(t, db,
		`CREATE TABLE schema_migrations (version bigint NOT NULL PRIMARY KEY, dirty boolean NOT NULL)`,
		`INSERT INTO schema_migrations (version, dirty) VALUES (3, false)`,
		`CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL)`,
		`INSERT INTO items (name) VALUES ('widget')`,
		`CREATE TABLE operations (id INTEGER PRIMARY KEY)`,
	)
	_, err := Open(ctx, path)
	require.ErrorIs(t, err, ErrNoStore, "an existing database is not turned into a store without WithCreate")

	s := openTest(t, path, WithCreate())
	_, err = s.Register(ctx, Ticket{OperationID: "op", Draft: testDraft{Title: "t", Quantity: 1}})
	require.NoError(t, err)
	_, err = s.Decide(ctx, Decision{OperationID: "op", Verdict: Approve, DecidedBy: "a"})
	require.NoError(t, err)
	_, err = s.Apply(ctx, "op", func(ctx context.Context, tx *sql.Tx, item Item) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO items (name) VALUES (?)`, "from "+item.OperationID)
		return err
	})
	require.NoError(t, err)
	require.NoError(t, s.Close())

	// Reopened without WithCreate, by path and over the caller's pool.
	s = openTest(t, path)
	st, err := s.Read(ctx, "op")
	require.NoError(t, err)
	assert.Equal(t, StatusCompleted, st.Status)
	require.NoError(t, s.Close())
	s, err = OpenDB(ctx, db)
	require.NoError(t, err)
	require.NoError(t, s.Close())

	var version, names int
	require.NoError(t, db.QueryRowContext(ctx, `SELECT (SELECT version FROM schema_migrations), (SELECT count(*) FROM items)`).Scan(&version, &names))
	assert.Equal(t, 3, version)
	assert.Equal(t, 2, names)
}

// TestIndexesAreUsed: every index the schema keeps up to date on each write
// is used by at least one of the store's statements; an index no query
// reads only slows every Register, Decide and Apply down.
func TestIndexesAreUsed(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	used := map[string]bool{}
	for _, q := range sqliteQueries.all() {
		args := make([]any, strings.Count(q, "?"))
		if strings.Contains(q, "?6") {
			args = make([]any, 6)
		}
		for i := range args {
			args[i] = "x"
		}
		rows, err := s.db.QueryContext(ctx, "EXPLAIN QUERY PLAN "+q, args...)
		require.NoError(t, err, q)
		for rows.Next() {
			var id, parent, unused int
			var detail string
			require.NoError(t, rows.Scan(&id, &parent, &unused, &detail))
			if _, after, ok := strings.Cut(detail, " INDEX "); ok {
				name, _, _ := strings.Cut(after, " ")
				used[name] = true
			}
		}
		require.NoError(t, rows.Close())
	}
	rows, err := s.db.QueryContext(ctx, `SELECT name FROM sqlite_schema WHERE type = 'index'`)
	require.NoError(t, err)
	defer rows.Close()
	n := 0
	for rows.Next() {
		var name string
		require.NoError(t, rows.Scan(&name))
		n++
		assert.True(t, used[name], "index %s is maintained on every write but no statement uses it (used: %v)", name, used)
	}
	require.NoError(t, rows.Err())
	require.NotZero(t, n, "no index found: the operation id lookup needs one")
}

func TestMigrationsRefuse(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		tamper string
		want   error
	}{
		{"newer database", `INSERT INTO candor_approval_migrations (version, name, checksum, applied_at) VALUES (99, 'future', 'x', 1)`, ErrSchemaTooNew},
		{"edited migration", `UPDATE candor_approval_migrations SET checksum = 'edited' WHERE version = 1`, ErrSchemaAltered},
		{"missing step", `DELETE FROM candor_approval_migrations WHERE version = 1`, ErrSchemaAltered},
	}
	for _, tc := range tests {
		for _, ro := range []bool{false, true} {
			name := tc.name
			if ro {
				name += " read-only"
			}
			t.Run(name, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "m.db")
				require.NoError(t, openTest(t, path).Close())
				db := rawDB(t, path)
				execAll(t, db, tc.tamper)
				before := appliedVersions(t, db)
				var opts []Option
				if ro {
					opts = append(opts, WithReadOnly())
				}
				s, err := Open(ctx, path, opts...)
				if err == nil {
					s.Close()
				}
				require.ErrorIs(t, err, tc.want)
				var oe *OpenError
				require.ErrorAs(t, err, &oe)
				assert.Equal(t, path, oe.Path)
				assert.Equal(t, before, appliedVersions(t, db), "a refused Open changed the versions")
			})
		}
	}
}

func TestMigrationsAreWellFormed(t *testing.T) {
	seen := map[string]bool{}
	for i, m := range sqlMigrations() {
		assert.Equal(t, i+1, m.Version)
		assert.False(t, seen[m.Checksum()] || strings.TrimSpace(m.SQL) == "" || m.Name == "",
			"migration %d is empty, unnamed or a duplicate", m.Version)
		seen[m.Checksum()] = true
	}
}
