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
			if _, err := db.ExecContext(ctx, `INSERT INTO operations (operation_id, draft, status, created_at) VALUES ('old', '{"title":"old"}', 'waiting', 1)`); err != nil {
				t.Fatal(err)
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
			if _, err := s.db.ExecContext(ctx, `DELETE FROM operations`); err == nil {
				t.Fatal("append-only triggers not in force after migration")
			}
			var idx int
			if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name = 'operations_by_status'`).Scan(&idx); err != nil || idx != 1 {
				t.Fatalf("status index: %d, %v", idx, err)
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
