package sqlitex

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// DSNOptions are the connection settings DSN writes and Verify checks.
type DSNOptions struct {
	// ReadOnly opens the file read-only (mode=ro); the file must exist.
	// WAL is not set on a read-only connection (switching the journal mode
	// is a write), and Verify does not check it.
	ReadOnly bool
	// MustExist opens the file read-write without creating it (mode=rw).
	MustExist bool
	// BusyTimeout is how long a statement waits for a lock before failing
	// with SQLITE_BUSY; 0 leaves SQLite's default (no wait).
	BusyTimeout time.Duration
	// WAL sets journal_mode WAL (persistent in the file).
	WAL bool
	// SyncFull sets synchronous FULL.
	SyncFull bool
	// ForeignKeys enforces foreign keys.
	ForeignKeys bool
	// Immediate makes every transaction begun through database/sql a
	// BEGIN IMMEDIATE one (_txlock=immediate): it takes the write lock at
	// once instead of failing later on the upgrade from a read.
	Immediate bool
}

// DSN returns the data source name that opens the file at path with the
// modernc.org/sqlite driver ("sqlite") and the settings in o. The path is
// taken literally (escaped into a "file:" URI), never as a URI or as
// ":memory:"; it must not be empty.
func DSN(path string, o DSNOptions) string {
	// A leading "//" would start a URI authority, a leading ':' might read
	// as a special name: anchor such paths without changing the file.
	switch {
	case strings.HasPrefix(path, "//"):
		path = "/" + strings.TrimLeft(path, "/")
	case strings.HasPrefix(path, ":"):
		path = "./" + path
	}
	q := url.Values{}
	if o.BusyTimeout > 0 {
		q.Add("_pragma", "busy_timeout("+strconv.FormatInt(busyMillis(o.BusyTimeout), 10)+")")
	}
	if o.WAL && !o.ReadOnly {
		q.Add("_pragma", "journal_mode(WAL)")
	}
	if o.SyncFull {
		q.Add("_pragma", "synchronous(FULL)")
	}
	if o.ForeignKeys {
		q.Add("_pragma", "foreign_keys(1)")
	}
	switch {
	case o.ReadOnly:
		q.Set("mode", "ro")
	case o.MustExist:
		q.Set("mode", "rw")
	}
	if o.Immediate {
		q.Set("_txlock", "immediate")
	}
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath()
	if len(q) > 0 {
		dsn += "?" + q.Encode()
	}
	return dsn
}

func busyMillis(d time.Duration) int64 { return max(d.Milliseconds(), 1) }

// PragmaError reports a setting that Verify read back with another value
// than the one asked for.
type PragmaError struct {
	Pragma string
	Got    string
	Want   string
}

func (e *PragmaError) Error() string {
	return fmt.Sprintf("sqlitex: PRAGMA %s is %q, want %q", e.Pragma, e.Got, e.Want)
}

// Verify reads the settings of o back on a connection of db and returns a
// *PragmaError for the first that did not take effect. While another
// process holds the file (SQLITE_BUSY, for example two openers switching a
// new file to WAL at once) it retries, with a short backoff, for up to
// o.BusyTimeout or until ctx ends.
func Verify(ctx context.Context, db *sql.DB, o DSNOptions) error {
	deadline := time.Now().Add(o.BusyTimeout)
	delay := time.Millisecond
	for {
		err := verifyOnce(ctx, db, o)
		if err == nil || !IsBusy(err) || !time.Now().Before(deadline) {
			return err
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return errors.Join(err, context.Cause(ctx))
		case <-t.C:
		}
		delay = min(2*delay, 50*time.Millisecond)
	}
}

func verifyOnce(ctx context.Context, db *sql.DB, o DSNOptions) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("sqlitex: connect: %w", err)
	}
	defer conn.Close()
	type want struct{ pragma, value string }
	var ws []want
	if o.WAL && !o.ReadOnly {
		ws = append(ws, want{"journal_mode", "wal"})
	}
	if o.SyncFull {
		ws = append(ws, want{"synchronous", "2"})
	}
	if o.ForeignKeys {
		ws = append(ws, want{"foreign_keys", "1"})
	}
	if o.BusyTimeout > 0 {
		ws = append(ws, want{"busy_timeout", strconv.FormatInt(busyMillis(o.BusyTimeout), 10)})
	}
	for _, w := range ws {
		var got string
		if err := conn.QueryRowContext(ctx, "PRAGMA "+w.pragma).Scan(&got); err != nil {
			return fmt.Errorf("sqlitex: read PRAGMA %s: %w", w.pragma, err)
		}
		if !strings.EqualFold(got, w.value) {
			return &PragmaError{Pragma: w.pragma, Got: got, Want: w.value}
		}
	}
	return nil
}

// Exists reports whether path names an existing file (of any size, so a
// file truncated to 0 bytes exists). A directory, or a Stat failure other
// than "does not exist", is an error.
func Exists(path string) (bool, error) {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("sqlitex: %w", err)
	case fi.IsDir():
		return false, fmt.Errorf("sqlitex: %s is a directory, not a database file", path)
	}
	return true, nil
}
