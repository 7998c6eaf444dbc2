package pgtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/user"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStartServesOnLoopbackAndCleansUp(t *testing.T) {
	var c *Cluster
	t.Run("cluster", func(t *testing.T) {
		c = Start(t)
		db, err := sql.Open("pgx", c.DSN)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		var addr, listen, superuser string
		if err := db.QueryRow(`SELECT host(inet_server_addr()), current_setting('listen_addresses'), current_user`).Scan(&addr, &listen, &superuser); err != nil {
			t.Fatalf("query the throwaway cluster: %v", err)
		}
		if addr != "127.0.0.1" || listen != "127.0.0.1" || superuser != "postgres" {
			t.Fatalf("server address %q, listen_addresses %q, user %q; want 127.0.0.1, 127.0.0.1, postgres", addr, listen, superuser)
		}
		if !strings.Contains(c.DSN, "127.0.0.1:"+strconv.Itoa(c.Port)+"/") {
			t.Fatalf("DSN does not name port %d on 127.0.0.1", c.Port)
		}
		other := c.NewDatabase(t)
		db2, err := sql.Open("pgx", other)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db2.Close() })
		var dbname string
		if err := db2.QueryRow(`SELECT current_database()`).Scan(&dbname); err != nil {
			t.Fatalf("connect to the new database: %v", err)
		}
		if !strings.HasPrefix(dbname, "t_") || !strings.Contains(other, "/"+dbname) {
			t.Fatalf("NewDatabase gave %q connected to %q", other, dbname)
		}
		// A wrong password is refused: the cluster does not trust loopback.
		bad := strings.Replace(c.DSN, "postgres:", "postgres:x", 1)
		dbBad, err := sql.Open("pgx", bad)
		if err != nil {
			t.Fatal(err)
		}
		defer dbBad.Close()
		if err := dbBad.Ping(); err == nil {
			t.Fatal("a wrong password was accepted")
		}
		if os.Geteuid() == 0 {
			fi, err := os.Stat(c.Dir)
			if err != nil {
				t.Fatal(err)
			}
			st := fi.Sys().(*syscall.Stat_t)
			if st.Uid == 0 {
				t.Fatalf("cluster directory %s is owned by root; want the cluster user", c.Dir)
			}
			if os.Getenv("CANDOR_PG_USER") == "" {
				owner, err := user.LookupId(strconv.FormatUint(uint64(st.Uid), 10))
				require.NoError(t, err)
				assert.Equal(t, DefaultUser, owner.Username, "owner of the cluster directory")
			}
		}
	})
	if c == nil {
		t.Fatal("subtest did not start a cluster")
	}
	if _, err := os.Stat(c.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("cluster directory %s still present after cleanup (stat err %v)", c.Dir, err)
	}
	conn, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(c.Port))
	if err == nil {
		conn.Close()
		t.Fatalf("port %d still accepts connections after cleanup", c.Port)
	}
}

func TestMissingBinariesNameTheInstallScript(t *testing.T) {
	t.Setenv("CANDOR_PG_BIN", t.TempDir())
	_, err := start(context.Background())
	if !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("err = %v; want ErrNotInstalled", err)
	}
	if !strings.Contains(err.Error(), InstallHint) {
		t.Fatalf("error %q does not name %q", err, InstallHint)
	}
}

// fatalRecorder records Fatalf instead of ending the real test.
type fatalRecorder struct {
	testing.TB
	mu  sync.Mutex
	msg string
}

func (f *fatalRecorder) Helper() {}
func (f *fatalRecorder) Fatalf(format string, args ...any) {
	f.mu.Lock()
	f.msg = strings.TrimSpace(fmt.Sprintf(format, args...))
	f.mu.Unlock()
	runtime.Goexit()
}

func TestStartFailsInsteadOfSkipping(t *testing.T) {
	t.Setenv("CANDOR_PG_BIN", t.TempDir())
	msg := fatalOf(t, func(tb testing.TB) { Start(tb) })
	if !strings.Contains(msg, InstallHint) {
		t.Fatalf("Start without PostgreSQL reported %q; want a failure naming %q", msg, InstallHint)
	}
}

func TestMissingClusterUserNamesTheInstallScript(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the cluster user is only needed when running as root")
	}
	t.Setenv("CANDOR_PG_USER", "candor-pg-no-such-user")
	_, err := start(context.Background())
	if !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), "candor-pg-no-such-user") {
		t.Fatalf("err = %v; want ErrNotInstalled naming the missing user", err)
	}
}

// fatalOf runs fn with a recorder in place of the test and returns the
// message fn failed it with ("" when it did not).
func fatalOf(t *testing.T, fn func(tb testing.TB)) string {
	rec := &fatalRecorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(rec)
	}()
	<-done
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.msg
}

// Stop takes the server away mid-test and Start brings it back on the same
// DSN with the data in place, after a fast and after an immediate stop; a
// cluster left stopped is still removed at cleanup, without an error.
func TestStopAndStartKeepTheCluster(t *testing.T) {
	var c *Cluster
	t.Run("cluster", func(t *testing.T) {
		c = Start(t)
		db, err := sql.Open("pgx", c.NewDatabase(t))
		require.NoError(t, err)
		t.Cleanup(func() { db.Close() })
		db.SetMaxIdleConns(0) // every query dials: none reuses a connection the stop broke
		ctx := context.Background()
		_, err = db.ExecContext(ctx, `CREATE TABLE kept (id int PRIMARY KEY); INSERT INTO kept VALUES (1)`)
		require.NoError(t, err)

		assert.Contains(t, fatalOf(t, func(tb testing.TB) { c.Start(tb) }), "is running")
		for _, opts := range []StopOptions{{}, {Immediate: true}} {
			c.Stop(t, opts)
			assert.Error(t, db.PingContext(ctx), "ping with the server stopped (%+v)", opts)
			conn, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(c.Port))
			if err == nil {
				conn.Close()
			}
			assert.Error(t, err, "port %d accepts connections after Stop(%+v)", c.Port, opts)
			assert.Contains(t, fatalOf(t, func(tb testing.TB) { c.Stop(tb, opts) }), "already stopped")

			c.Start(t)
			var n int
			require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*) FROM kept`).Scan(&n), "after Stop(%+v) and Start", opts)
			assert.Equal(t, 1, n)
			_, err = db.ExecContext(ctx, `INSERT INTO kept VALUES ((SELECT max(id) + 1 FROM kept)); DELETE FROM kept WHERE id > 1`)
			assert.NoError(t, err, "writes after Stop(%+v) and Start", opts)
		}
		c.Stop(t, StopOptions{}) // left stopped: cleanup removes it
	})
	require.NotNil(t, c, "subtest did not start a cluster")
	_, err := os.Stat(c.Dir)
	assert.ErrorIs(t, err, os.ErrNotExist, "cluster directory %s after cleanup", c.Dir)
}
