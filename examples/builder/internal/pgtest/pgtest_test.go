package pgtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib"
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
			if st := fi.Sys().(*syscall.Stat_t); st.Uid == 0 {
				t.Fatalf("cluster directory %s is owned by root; want the cluster user", c.Dir)
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
	rec := &fatalRecorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Start(rec)
	}()
	<-done
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if !strings.Contains(rec.msg, InstallHint) {
		t.Fatalf("Start without PostgreSQL reported %q; want a failure naming %q", rec.msg, InstallHint)
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
