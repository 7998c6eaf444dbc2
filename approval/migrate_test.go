package approval

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
	}
	for _, c := range checks {
		var got string
		if err := s.db.QueryRowContext(ctx, "PRAGMA "+c.pragma).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("PRAGMA %s = %s, want %s", c.pragma, got, c.want)
		}
	}
	// Every transaction begins IMMEDIATE: an open, empty transaction on the
	// store already holds the write lock, so another writer cannot start.
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	other, err := sql.Open("sqlite", path+"?_busy_timeout=1")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	_, err = other.ExecContext(ctx, "BEGIN IMMEDIATE")
	if !surfacedBusy(err) {
		t.Fatalf("a second writer began while the store's empty transaction was open: %v", err)
	}
}

// TestCheckSettings: Open reads the settings back instead of trusting the
// DSN, so a connection that is less durable or less strict than the store
// promises is refused.
func TestCheckSettings(t *testing.T) {
	ctx := context.Background()
	const busy = 2 * time.Second
	tests := []struct {
		name  string
		query string // DSN parameters
		want  string // the setting the error names; "" for none
	}{
		{"as the store opens it", "_busy_timeout=2000&_foreign_keys=1&_synchronous=FULL", ""},
		{"synchronous NORMAL", "_busy_timeout=2000&_foreign_keys=1&_synchronous=NORMAL", "synchronous"},
		{"synchronous OFF", "_busy_timeout=2000&_foreign_keys=1&_synchronous=OFF", "synchronous"},
		{"foreign keys off", "_busy_timeout=2000&_foreign_keys=0&_synchronous=FULL", "foreign_keys"},
		{"other busy timeout", "_busy_timeout=5&_foreign_keys=1&_synchronous=FULL", "busy_timeout"},
		{"rollback journal", "_busy_timeout=2000&_foreign_keys=1&_synchronous=FULL&_journal_mode=DELETE", "journal_mode"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.db")
			if tc.want != "journal_mode" {
				wal, err := sql.Open("sqlite", path+"?_journal_mode=WAL")
				if err != nil {
					t.Fatal(err)
				}
				if err := wal.PingContext(ctx); err != nil {
					t.Fatal(err)
				}
				wal.Close()
			}
			db, err := sql.Open("sqlite", path+"?"+tc.query)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			s := &Store{db: db}
			err = s.checkSettings(ctx, busy)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("checkSettings refused the store's own settings: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("checkSettings = %v, want an error naming %s", err, tc.want)
			}
		})
	}
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
		{"query in path", filepath.Join(dir, "x.db?mode=ro"), nil},
		{"zero busy timeout", filepath.Join(dir, "x.db"), []Option{WithBusyTimeout(0)}},
		{"zero draft bound", filepath.Join(dir, "x.db"), []Option{WithMaxDraftBytes(0)}},
		{"nil clock", filepath.Join(dir, "x.db"), []Option{WithClock(nil)}},
		{"directory missing", filepath.Join(dir, "missing", "x.db"), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Open(ctx, tc.path, append(tc.opts, WithLogger(discardLogger()))...)
			if err == nil {
				s.Close()
				t.Fatalf("Open(%q) succeeded", tc.path)
			}
		})
	}
}

func appliedVersions(t *testing.T, db *sql.DB) []int {
	t.Helper()
	rows, err := db.Query(`SELECT version FROM schema_migrations ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var vs []int
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		vs = append(vs, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return vs
}

// rawDB opens path with the store's settings but without migrating it.
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	dsn, err := dataSourceName(path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func migrateTo(t *testing.T, db *sql.DB, ms []migration) {
	t.Helper()
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if err := migrate(ctx, tx, ms, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// TestMigrationsForward opens a database left at every earlier version,
// with data in it, and checks that Open brings it to the current version
// with the data intact and the later steps in force.
func TestMigrationsForward(t *testing.T) {
	ctx := context.Background()
	all := schemaMigrations()
	for v := 1; v <= len(all); v++ {
		t.Run(all[v-1].name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "m.db")
			db := rawDB(t, path)
			migrateTo(t, db, all[:v])
			// A waiting, an approved and (written the way versions before 4
			// did: item first, then the status) a completed operation.
			seed := []string{
				`INSERT INTO operations (operation_id, draft, status, created_at) VALUES ('old', '{"title":"old"}', 'waiting', 1)`,
				`INSERT INTO operations (operation_id, draft, status, created_at) VALUES ('ok', '{"title":"ok"}', 'waiting', 1)`,
				`UPDATE operations SET status = 'approved', verdict = 'approve', comment = '', decided_by = 'x', decided_at = 2 WHERE operation_id = 'ok'`,
			}
			if v < 4 {
				seed = append(seed,
					`INSERT INTO operations (operation_id, draft, status, created_at) VALUES ('done', '{"title":"done"}', 'waiting', 1)`,
					`UPDATE operations SET status = 'approved', verdict = 'approve', comment = '', decided_by = 'x', decided_at = 2 WHERE operation_id = 'done'`,
					`INSERT INTO items (operation_id, id, draft, created_at) SELECT operation_id, seq, draft, 3 FROM operations WHERE operation_id = 'done'`,
					`UPDATE operations SET status = 'completed', completed_at = 3 WHERE operation_id = 'done'`)
			}
			for _, q := range seed {
				if _, err := db.ExecContext(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			s := openTest(t, path)
			defer s.Close()
			if got := appliedVersions(t, s.db); len(got) != len(all) || got[len(got)-1] != len(all) {
				t.Fatalf("versions after Open: %v", got)
			}
			st, err := s.Read(ctx, "old")
			if err != nil || string(st.Draft) != `{"title":"old"}` || st.Status != StatusWaiting {
				t.Fatalf("row from version %d: %+v, %v", v, st, err)
			}
			if v < 4 {
				if st, err := s.Read(ctx, "done"); err != nil || st.Status != StatusCompleted || st.ItemID == 0 {
					t.Fatalf("completed row from version %d: %+v, %v", v, st, err)
				}
			}
			applied, err := s.Apply(ctx, "ok", nil)
			if err != nil || applied.Status != StatusCompleted || applied.ItemID == 0 {
				t.Fatalf("Apply of an operation approved at version %d: %+v, %v", v, applied, err)
			}
			if _, err := s.db.ExecContext(ctx, `DELETE FROM operations`); err == nil {
				t.Fatal("append-only triggers not in force after migration")
			}
			if _, err := s.db.ExecContext(ctx, `INSERT INTO items (operation_id, id, draft, created_at) VALUES ('old', 1, '{"title":"old"}', 1)`); err == nil {
				t.Fatal("an item was inserted on its own after migration")
			}
			var idx int
			if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name = 'operations_by_status'`).Scan(&idx); err != nil || idx != 0 {
				t.Fatalf("status index dropped by migration 4 still there: %d, %v", idx, err)
			}
			// Opening again changes nothing.
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s2 := openTest(t, path)
			defer s2.Close()
			if got := appliedVersions(t, s2.db); len(got) != len(all) {
				t.Fatalf("versions after reopening: %v", got)
			}
		})
	}
}

// TestIndexesAreUsed: every index the schema keeps up to date on each write
// is used by at least one of the store's statements; an index no query
// reads only slows every Register, Decide and Apply down.
func TestIndexesAreUsed(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	used := map[string]bool{}
	for _, q := range statements() {
		args := make([]any, strings.Count(q, "?"))
		for i := range args {
			args[i] = "x"
		}
		rows, err := s.db.QueryContext(ctx, "EXPLAIN QUERY PLAN "+q, args...)
		if err != nil {
			t.Fatalf("explain %s: %v", q, err)
		}
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			if _, after, ok := strings.Cut(detail, " INDEX "); ok {
				name, _, _ := strings.Cut(after, " ")
				used[name] = true
			}
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := s.db.QueryContext(ctx, `SELECT name FROM sqlite_schema WHERE type = 'index'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		n++
		if !used[name] {
			t.Errorf("index %s is maintained on every write but no statement uses it (used: %v)", name, used)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("no index found: the operation id lookup needs one")
	}
}

func TestMigrationsRefuse(t *testing.T) {
	ctx := context.Background()
	all := schemaMigrations()
	tests := []struct {
		name   string
		tamper string
		want   error
	}{
		{"newer database", `INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES (99, 'future', 'x', 1)`, ErrSchemaTooNew},
		{"edited migration", `UPDATE schema_migrations SET checksum = 'edited' WHERE version = 1`, ErrSchemaAltered},
		{"missing step", `DELETE FROM schema_migrations WHERE version = 2`, ErrSchemaAltered},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "m.db")
			db := rawDB(t, path)
			migrateTo(t, db, all)
			if _, err := db.ExecContext(ctx, tc.tamper); err != nil {
				t.Fatal(err)
			}
			before := appliedVersions(t, db)
			s, err := Open(ctx, path, WithLogger(discardLogger()))
			if !errors.Is(err, tc.want) {
				if err == nil {
					s.Close()
				}
				t.Fatalf("Open = %v, want %v", err, tc.want)
			}
			if after := appliedVersions(t, db); len(after) != len(before) {
				t.Fatalf("a refused Open changed the versions: %v -> %v", before, after)
			}
		})
	}
}

func TestMigrationsAreWellFormed(t *testing.T) {
	seen := map[string]bool{}
	for i, m := range schemaMigrations() {
		if m.version != i+1 {
			t.Errorf("migration %d has version %d", i, m.version)
		}
		if seen[m.checksum()] || strings.TrimSpace(m.sql) == "" || m.name == "" {
			t.Errorf("migration %d is empty, unnamed or a duplicate", m.version)
		}
		seen[m.checksum()] = true
	}
}
