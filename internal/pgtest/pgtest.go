package pgtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // driver "pgx" for NewDatabase
)

// InstallHint is the command that installs what Start needs. Every "not
// installed" failure names it.
const InstallHint = "scripts/postgres-local install"

// DefaultUser owns throwaway clusters when the test runs as root.
const DefaultUser = "candor-pg"

// ErrNotInstalled reports that the PostgreSQL server binaries or the cluster
// owner are missing on this machine.
var ErrNotInstalled = errors.New("pgtest: PostgreSQL is not installed (run " + InstallHint + ")")

// Cluster is a throwaway PostgreSQL cluster, running unless a test stopped
// it with Stop.
type Cluster struct {
	// DSN connects as the superuser "postgres" to the database "postgres"
	// over TCP on 127.0.0.1 (sslmode=disable: loopback only).
	DSN string
	// Port is the TCP port on 127.0.0.1.
	Port int
	// Dir holds the cluster (Dir/data) and its server log (Dir/server.log).
	Dir string

	bin   string
	owner *syscall.Credential

	mu      sync.Mutex // held while pg_ctl runs; guards stopped
	stopped bool       // Stop succeeded and no Start since
}

// maxPortAttempts bounds retries when the probed free port is taken before
// the server binds it.
const maxPortAttempts = 5

// Start creates and starts a cluster, fails tb when it cannot, and stops and
// removes the cluster in tb.Cleanup. It never skips.
func Start(tb testing.TB) *Cluster {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := start(ctx)
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := c.stop(ctx); err != nil {
			tb.Errorf("pgtest: %v", err)
		}
	})
	return c
}

// BinDir returns the directory holding initdb and pg_ctl: CANDOR_PG_BIN when
// set, else the newest /usr/lib/postgresql/*/bin, else the directory of pg_ctl
// on PATH. The error wraps ErrNotInstalled.
func BinDir() (string, error) {
	if d := os.Getenv("CANDOR_PG_BIN"); d != "" {
		if hasServer(d) {
			return d, nil
		}
		return "", fmt.Errorf("%w: CANDOR_PG_BIN=%s holds no initdb, pg_ctl and postgres", ErrNotInstalled, d)
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return majorOf(dirs[i]) > majorOf(dirs[j]) })
	for _, d := range dirs {
		if hasServer(d) {
			return d, nil
		}
	}
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		if d := filepath.Dir(p); hasServer(d) {
			return d, nil
		}
	}
	return "", fmt.Errorf("%w: no initdb, pg_ctl and postgres in /usr/lib/postgresql/*/bin or on PATH", ErrNotInstalled)
}

func majorOf(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

func hasServer(dir string) bool {
	for _, name := range []string{"initdb", "pg_ctl", "postgres"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			return false
		}
	}
	return true
}

// clusterOwner returns the credential to run server programs with: nil when
// not root, the cluster user's uid/gid when root.
func clusterOwner() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	name := os.Getenv("CANDOR_PG_USER")
	if name == "" {
		name = DefaultUser
	}
	u, err := user.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("%w: running as root needs the system user %q to own the cluster: %v", ErrNotInstalled, name, err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("pgtest: user %q has a non-numeric uid/gid %q/%q", name, u.Uid, u.Gid)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}, nil
}

func start(ctx context.Context) (c *Cluster, err error) {
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	owner, err := clusterOwner()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "candor-pg-")
	if err != nil {
		return nil, fmt.Errorf("create cluster directory: %w", err)
	}
	c = &Cluster{Dir: dir, bin: bin, owner: owner}
	defer func() {
		if err != nil {
			_ = os.RemoveAll(dir)
		}
	}()
	if owner != nil {
		if err := os.Chown(dir, int(owner.Uid), int(owner.Gid)); err != nil {
			return nil, fmt.Errorf("hand %s to uid %d: %w", dir, owner.Uid, err)
		}
	}

	var raw [18]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return nil, fmt.Errorf("password: %w", err)
	}
	password := hex.EncodeToString(raw[:])
	pwfile := filepath.Join(dir, "pwfile")
	if err := os.WriteFile(pwfile, []byte(password+"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("write password file: %w", err)
	}
	if owner != nil {
		if err := os.Chown(pwfile, int(owner.Uid), int(owner.Gid)); err != nil {
			return nil, fmt.Errorf("hand password file to uid %d: %w", owner.Uid, err)
		}
	}
	out, err := c.run(ctx, "initdb", "-D", c.dataDir(), "-U", "postgres", "--pwfile="+pwfile,
		"--auth=scram-sha-256", "--encoding=UTF8", "--locale=C", "--no-sync")
	_ = os.Remove(pwfile)
	if err != nil {
		return nil, fmt.Errorf("initdb in %s: %w\n%s", dir, err, lastLines(out, 15))
	}

	for attempt := 1; ; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		err = c.startServer(ctx, port)
		if err == nil {
			c.Port = port
			break
		}
		var se *startError
		if attempt < maxPortAttempts && errors.As(err, &se) && strings.Contains(se.log, "could not bind") {
			continue
		}
		return nil, err
	}
	c.DSN = fmt.Sprintf("postgres://postgres:%s@127.0.0.1:%d/postgres?sslmode=disable", password, c.Port)
	return c, nil
}

func (c *Cluster) dataDir() string { return filepath.Join(c.Dir, "data") }
func (c *Cluster) logFile() string { return filepath.Join(c.Dir, "server.log") }

// startError is a failed pg_ctl start; log is the tail of the server log.
type startError struct {
	port int
	err  error
	out  string
	log  string
}

func (e *startError) Error() string {
	return fmt.Sprintf("pg_ctl start on port %d: %v\n%s\nserver log:\n%s", e.port, e.err, e.out, e.log)
}

func (e *startError) Unwrap() error { return e.err }

// startServer starts the server of an initialised cluster on port, with the
// settings every start uses, and waits until it accepts connections.
func (c *Cluster) startServer(ctx context.Context, port int) error {
	opts := fmt.Sprintf("-c listen_addresses=127.0.0.1 -p %d -c unix_socket_directories=%s -c fsync=off -c max_connections=50", port, c.Dir)
	out, err := c.run(ctx, "pg_ctl", "-D", c.dataDir(), "-l", c.logFile(), "-w", "-t", "60", "-o", opts, "start")
	if err != nil {
		logTail, _ := os.ReadFile(c.logFile())
		return &startError{port: port, err: err, out: lastLines(out, 10), log: lastLines(logTail, 15)}
	}
	return nil
}

// stopServer stops the server in mode ("fast" or "immediate") and waits
// until it has exited.
func (c *Cluster) stopServer(ctx context.Context, mode string) error {
	out, err := c.run(ctx, "pg_ctl", "-D", c.dataDir(), "-m", mode, "-w", "-t", "60", "stop")
	if err != nil {
		return fmt.Errorf("pg_ctl stop -m %s (cluster left in %s): %w\n%s", mode, c.Dir, err, lastLines(out, 10))
	}
	return nil
}

// stop stops the server, unless a test left it stopped, and removes its
// directory.
func (c *Cluster) stop(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.stopped {
		if err := c.stopServer(ctx, "fast"); err != nil {
			return err
		}
		c.stopped = true
	}
	if err := os.RemoveAll(c.Dir); err != nil {
		return fmt.Errorf("remove %s: %w", c.Dir, err)
	}
	return nil
}

// StopOptions says how Stop ends the server. The zero value is a fast
// shutdown.
type StopOptions struct {
	// Immediate ends the server as a crash would (pg_ctl -m immediate):
	// sessions are cut without a checkpoint, and the next Start replays the
	// write-ahead log. Otherwise the server ends every session, rolling back
	// their open transactions, and checkpoints (pg_ctl -m fast).
	Immediate bool
}

// Stop stops the cluster's server and waits until it has exited, leaving
// the cluster's files in place: connections break, and new ones are
// refused, until Start. It fails tb when the server is already stopped or
// pg_ctl fails. A cluster left stopped is still removed when the test
// ends.
func (c *Cluster) Stop(tb testing.TB, opts StopOptions) {
	tb.Helper()
	mode := "fast"
	if opts.Immediate {
		mode = "immediate"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		tb.Fatalf("pgtest: Stop: the server on port %d is already stopped", c.Port)
	}
	if err := c.stopServer(ctx, mode); err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	c.stopped = true
}

// Start starts a server that Stop stopped, on the same port with the same
// settings and password, so that c.DSN and the DSNs NewDatabase returned
// connect again, and waits until it accepts connections. After an
// immediate stop the server first recovers from its write-ahead log. It
// fails tb when the server is running or does not start (with the last
// lines of the server log), for instance because another process took the
// port while it was stopped.
func (c *Cluster) Start(tb testing.TB) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.stopped {
		tb.Fatalf("pgtest: Start: the server on port %d is running (Start follows Stop)", c.Port)
	}
	if err := c.startServer(ctx, c.Port); err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	c.stopped = false
}

// run runs a PostgreSQL program as the cluster owner. pg_ctl start is given
// -l, so the server it leaves running does not hold our output pipe open.
func (c *Cluster) run(ctx context.Context, prog string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(c.bin, prog), args...)
	cmd.Dir = c.Dir
	cmd.Env = serverEnv()
	if c.owner != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.owner}
	}
	return cmd.CombinedOutput()
}

// serverEnv is the caller's environment without PG* variables (which would
// redirect initdb or pg_ctl) and with the C locale.
func serverEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "PG") || strings.HasPrefix(kv, "LC_") || strings.HasPrefix(kv, "LANG=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "LC_ALL=C", "LANG=C")
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("probe a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// NewDatabase creates a fresh, empty database in the cluster and returns a DSN
// for it, so tests sharing one cluster do not see each other's tables.
func (c *Cluster) NewDatabase(tb testing.TB) string {
	tb.Helper()
	db, err := sql.Open("pgx", c.DSN)
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	defer db.Close()
	var raw [6]byte
	if _, err := rand.Read(raw[:]); err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	name := "t_" + hex.EncodeToString(raw[:])
	if _, err := db.Exec("CREATE DATABASE " + name); err != nil {
		tb.Fatalf("pgtest: create database %s: %v", name, err)
	}
	u, err := url.Parse(c.DSN)
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	u.Path = "/" + name
	return u.String()
}
