package n8ntest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/candorkit/candor/internal/httpx"
)

// Edition selects an installed n8n major version.
type Edition int

const (
	// Edition1 is n8n 1.123.81 on Node 20.
	Edition1 Edition = 1
	// Edition2 is n8n 2.x on Node 24.
	Edition2 Edition = 2
)

func (e Edition) String() string { return "n8n edition " + strconv.Itoa(int(e)) }

// Bounds of the waits in Start and Stop. n8n is asynchronous: these are
// deadlines for polling, not expectations of speed.
const (
	readyTimeout = 4 * time.Minute
	stopTimeout  = 30 * time.Second
	pollEvery    = 100 * time.Millisecond
	maxBody      = 1 << 20 // bound on every bootstrap response read
)

// Options tune an instance.
type Options struct {
	// Env adds or overrides environment variables of the n8n process, for
	// instance N8N_ENV_FEAT_WORKFLOWS_DRAFT_PUBLISH_ENABLED=true.
	Env map[string]string
}

// Instance is a running n8n with an owner and an API key.
type Instance struct {
	Edition Edition
	// Version is the installed n8n version, e.g. "1.123.81".
	Version string
	// BaseURL is http://127.0.0.1:<port> without a trailing slash.
	BaseURL string
	// APIKey authenticates the public API (header X-N8N-API-KEY).
	APIKey string
	// Email and Password are the owner's credentials.
	Email, Password string
	// Cookie is the owner's session cookie, "n8n-auth=…", for /rest calls.
	Cookie string
	// UserFolder holds the SQLite database and the log file n8n.log.
	UserFolder string
	// PID is the n8n process id; the process leads its own process group.
	// 0 for a Fake.
	PID int
	// Fake is the fake behind an instance from StartFake, nil for a real n8n.
	Fake *Fake

	cmd     *exec.Cmd
	exited  chan struct{}
	mu      sync.Mutex
	waitErr error
}

// Marker is what scripts/n8n-local writes after a completed install.
type Marker struct {
	Version string
	Node    string // absolute path of the node binary
	N8N     string // absolute path of n8n's bin/n8n
	Path    string // where the marker was read from
}

// MarkerPath returns where scripts/n8n-local records a completed install of e.
func MarkerPath(e Edition) (string, error) {
	root := os.Getenv("CANDOR_CACHE")
	if root == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("n8ntest: no CANDOR_CACHE and no home directory: %w", err)
		}
		root = filepath.Join(home, ".cache", "candor")
	}
	return filepath.Join(root, "n8n", "edition-"+strconv.Itoa(int(e)), "installed.env"), nil
}

// ReadMarker reads the completed-install marker of e.
func ReadMarker(e Edition) (Marker, error) {
	p, err := MarkerPath(e)
	if err != nil {
		return Marker{}, err
	}
	f, err := os.Open(p)
	if err != nil {
		return Marker{}, err
	}
	defer f.Close()
	m := Marker{Path: p}
	sc := bufio.NewScanner(io.LimitReader(f, 64<<10))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if !ok {
			continue
		}
		switch k {
		case "version":
			m.Version = v
		case "node":
			m.Node = v
		case "n8n":
			m.N8N = v
		}
	}
	if err := sc.Err(); err != nil {
		return Marker{}, fmt.Errorf("n8ntest: reading %s: %w", p, err)
	}
	if m.Version == "" || m.Node == "" || m.N8N == "" {
		return Marker{}, fmt.Errorf("n8ntest: %s is incomplete (version, node and n8n are required)", p)
	}
	for _, f := range []string{m.Node, m.N8N} {
		if _, err := os.Stat(f); err != nil {
			return Marker{}, fmt.Errorf("n8ntest: %s names %s, which is gone: %w", p, f, err)
		}
	}
	return m, nil
}

// Start starts edition e and bootstraps it. It fails t when the edition is not
// installed, and skips t only when CANDOR_SKIP_N8N=1.
func Start(t testing.TB, e Edition, opts Options) *Instance {
	t.Helper()
	if os.Getenv("CANDOR_SKIP_N8N") == "1" {
		t.Skipf("CANDOR_SKIP_N8N=1: skipping the tests that need a real %s", e)
	}
	m, err := ReadMarker(e)
	if err != nil {
		t.Fatalf("%s is not installed (%v): run `scripts/n8n-local install %d` "+
			"(or set CANDOR_SKIP_N8N=1 to skip the real-n8n tests)", e, err, int(e))
	}
	// Registered before start's cleanup, so it runs after the instance stopped.
	release, err := acquire(LockPath(), t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	inst, err := start(t, e, m, opts)
	if err != nil {
		t.Fatal(err)
	}
	return inst
}

// LockPath is the file whose exclusive lock Start holds from before an
// instance starts until it has stopped: one instance at a time on the
// machine, whichever test process starts it.
func LockPath() string { return filepath.Join(os.TempDir(), "candor-n8ntest.lock") }

// acquire takes the exclusive lock on path, waiting for its holder (and
// saying so through logf), and returns its release.
func acquire(path string, logf func(format string, args ...any)) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return nil, fmt.Errorf("n8ntest: instance lock: %w", err)
	}
	fd := int(f.Fd())
	err = syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		logf("n8ntest: another n8n test instance is running; waiting for it to stop (lock %s)", path)
		began := time.Now()
		for {
			if err = syscall.Flock(fd, syscall.LOCK_EX); !errors.Is(err, syscall.EINTR) {
				break
			}
		}
		logf("n8ntest: got the instance lock after %s", time.Since(began).Round(time.Millisecond))
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("n8ntest: instance lock %s: %w", path, err)
	}
	return func() { f.Close() }, nil // closing the file releases the lock
}

func start(t testing.TB, e Edition, m Marker, opts Options) (*Instance, error) {
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	dir := t.TempDir()
	logPath := filepath.Join(dir, "n8n.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	base := "http://127.0.0.1:" + strconv.Itoa(ports[0])
	env := map[string]string{
		"PATH":                                  filepath.Dir(m.Node) + ":/usr/local/bin:/usr/bin:/bin",
		"HOME":                                  dir,
		"TZ":                                    "UTC",
		"GENERIC_TIMEZONE":                      "UTC",
		"N8N_USER_FOLDER":                       dir,
		"N8N_LISTEN_ADDRESS":                    "127.0.0.1",
		"N8N_HOST":                              "127.0.0.1",
		"N8N_PORT":                              strconv.Itoa(ports[0]),
		"N8N_PROTOCOL":                          "http",
		"WEBHOOK_URL":                           base + "/",
		"N8N_RUNNERS_BROKER_PORT":               strconv.Itoa(ports[1]),
		"N8N_RUNNERS_BROKER_LISTEN_ADDRESS":     "127.0.0.1",
		"N8N_SECURE_COOKIE":                     "false",
		"N8N_DISABLE_UI":                        "true",
		"N8N_DIAGNOSTICS_ENABLED":               "false",
		"N8N_VERSION_NOTIFICATIONS_ENABLED":     "false",
		"N8N_TEMPLATES_ENABLED":                 "false",
		"N8N_PERSONALIZATION_ENABLED":           "false",
		"N8N_COMMUNITY_PACKAGES_ENABLED":        "false",
		"N8N_LICENSE_AUTO_RENEW_ENABLED":        "false",
		"N8N_AI_ENABLED":                        "false",
		"N8N_HIRING_BANNER_ENABLED":             "false",
		"N8N_PUBLIC_API_SWAGGERUI_DISABLED":     "true",
		"N8N_ENFORCE_SETTINGS_FILE_PERMISSIONS": "false",
		"N8N_LOG_LEVEL":                         "info",
		"N8N_LOG_OUTPUT":                        "console",
	}
	if e == Edition2 {
		env["N8N_DISABLED_MODULES"] = "mcp-registry"
	}
	for k, v := range opts.Env {
		env[k] = v
	}
	cmd := exec.Command(m.Node, m.N8N, "start")
	cmd.Dir = dir // no stray .env
	cmd.Env = make([]string, 0, len(env))
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	// Its own process group, so Stop reaches the task runner too; and killed
	// if the test binary dies without running its cleanups.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("n8ntest: starting %s: %w", m.N8N, err)
	}
	inst := &Instance{
		Edition:    e,
		Version:    m.Version,
		BaseURL:    base,
		UserFolder: dir,
		PID:        cmd.Process.Pid,
		cmd:        cmd,
		exited:     make(chan struct{}),
	}
	go func() {
		err := cmd.Wait()
		inst.mu.Lock()
		inst.waitErr = err
		inst.mu.Unlock()
		logFile.Close()
		close(inst.exited)
	}()
	t.Cleanup(func() {
		if err := inst.stop(); err != nil {
			t.Errorf("stopping %s (pid %d): %v", e, inst.PID, err)
		}
	})
	t.Logf("%s (n8n %s) starting on %s, pid %d, log %s", e, m.Version, base, inst.PID, logPath)
	began := time.Now()
	if err := inst.waitReady(); err != nil {
		return nil, fmt.Errorf("%w\n--- tail of %s ---\n%s", err, logPath, tail(logPath, 40))
	}
	t.Logf("%s ready after %s", e, time.Since(began).Round(10*time.Millisecond))
	if err := inst.bootstrap(); err != nil {
		return nil, fmt.Errorf("%w\n--- tail of %s ---\n%s", err, logPath, tail(logPath, 40))
	}
	return inst, nil
}

// stop terminates the process group and waits for n8n to exit; the task
// runner shares the group and is killed with it.
func (inst *Instance) stop() error {
	pgid := inst.PID
	select {
	case <-inst.exited:
		_ = syscall.Kill(-pgid, syscall.SIGKILL) // stragglers of the group
		return nil
	default:
	}
	if err := syscall.Kill(-pgid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	timer := time.NewTimer(stopTimeout)
	defer timer.Stop()
	select {
	case <-inst.exited:
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		return nil
	case <-timer.C:
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-inst.exited
		return fmt.Errorf("n8n did not stop within %s of SIGTERM; killed", stopTimeout)
	}
}

// String describes the instance without its API key, password or cookie.
func (inst *Instance) String() string {
	return fmt.Sprintf("%s (n8n %s) at %s, pid %d", inst.Edition, inst.Version, inst.BaseURL, inst.PID)
}

// GoString is String, so %#v does not print the secrets either.
func (inst *Instance) GoString() string { return "n8ntest.Instance(" + inst.String() + ")" }

// Exited reports whether the n8n process has exited.
func (inst *Instance) Exited() bool {
	select {
	case <-inst.exited:
		return true
	default:
		return false
	}
}

func (inst *Instance) waitReady() error {
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	ticker := time.NewTicker(pollEvery)
	defer ticker.Stop()
	client := &http.Client{Timeout: 5 * time.Second}
	var last string
	for {
		ok, what := inst.readyOnce(ctx, client)
		if ok {
			return nil
		}
		last = what
		select {
		case <-inst.exited:
			inst.mu.Lock()
			err := inst.waitErr
			inst.mu.Unlock()
			return fmt.Errorf("n8ntest: %s exited before it was ready: %v", inst.Edition, err)
		case <-ctx.Done():
			return fmt.Errorf("n8ntest: %s not ready within %s (last answer to GET /rest/login: %s)",
				inst.Edition, readyTimeout, last)
		case <-ticker.C:
		}
	}
}

// readyOnce: ready means GET /rest/login answers 401 with a JSON body.
func (inst *Instance) readyOnce(ctx context.Context, client *http.Client) (bool, string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, inst.BaseURL+"/rest/login", nil)
	if err != nil {
		return false, err.Error()
	}
	resp, err := client.Do(req)
	if err != nil {
		return false, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode == http.StatusUnauthorized &&
		strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") && json.Valid(body) {
		return true, ""
	}
	return false, fmt.Sprintf("%d %q", resp.StatusCode, truncate(body, 80))
}

func (inst *Instance) bootstrap() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	inst.Email = "owner@candor.test"
	inst.Password = "Candor-test-1"
	status, hdr, body, err := inst.rest(ctx, http.MethodPost, "/rest/owner/setup", map[string]string{
		"email": inst.Email, "firstName": "Candor", "lastName": "Tests", "password": inst.Password,
	})
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return fmt.Errorf("n8ntest: POST /rest/owner/setup: %d %s", status, truncate(body, 300))
	}
	for _, c := range (&http.Response{Header: hdr}).Cookies() {
		if c.Name == "n8n-auth" {
			inst.Cookie = "n8n-auth=" + c.Value
		}
	}
	if inst.Cookie == "" {
		return errors.New("n8ntest: owner setup set no n8n-auth cookie")
	}
	status, _, body, err = inst.rest(ctx, http.MethodGet, "/rest/api-keys/scopes", nil)
	if err != nil {
		return err
	}
	var scopes struct {
		Data []string `json:"data"`
	}
	if status != http.StatusOK || json.Unmarshal(body, &scopes) != nil || len(scopes.Data) == 0 {
		return fmt.Errorf("n8ntest: GET /rest/api-keys/scopes: %d %s", status, truncate(body, 300))
	}
	status, _, body, err = inst.rest(ctx, http.MethodPost, "/rest/api-keys", map[string]any{
		"label":     fmt.Sprintf("candor-test-%d", time.Now().UnixNano()),
		"scopes":    scopes.Data,
		"expiresAt": nil,
	})
	if err != nil {
		return err
	}
	var key struct {
		Data struct {
			RawAPIKey string `json:"rawApiKey"`
		} `json:"data"`
	}
	if status != http.StatusOK || json.Unmarshal(body, &key) != nil || key.Data.RawAPIKey == "" {
		// The body holds the key on success only; on failure it is an error message.
		return fmt.Errorf("n8ntest: POST /rest/api-keys: status %d, no rawApiKey", status)
	}
	inst.APIKey = key.Data.RawAPIKey
	return nil
}

// Do sends one request to the instance as its owner, for tests that check
// what n8n itself serves and records, apart from the code under test: a
// path under /api/ carries the API key, any other path the session cookie.
// It returns the status and up to 1 MiB of the body.
func (inst *Instance) Do(ctx context.Context, method, path string, in any) (int, []byte, error) {
	status, _, body, err := inst.rest(ctx, method, path, in)
	return status, body, err
}

func (inst *Instance) rest(ctx context.Context, method, path string, in any) (int, http.Header, []byte, error) {
	var rd io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return 0, nil, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, inst.BaseURL+path, rd)
	if err != nil {
		return 0, nil, nil, err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	switch {
	case strings.HasPrefix(path, "/api/") && inst.APIKey != "":
		req.Header.Set("X-N8N-API-KEY", inst.APIKey)
	case inst.Cookie != "":
		req.Header.Set("Cookie", inst.Cookie)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("n8ntest: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	body, err := httpx.ReadAll(resp.Body, maxBody)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("n8ntest: %s %s: reading body: %w", method, path, err)
	}
	return resp.StatusCode, resp.Header, body, nil
}

// Log returns the last lines of the instance's log, for failure messages.
func (inst *Instance) Log(lines int) string {
	return tail(filepath.Join(inst.UserFolder, "n8n.log"), lines)
}

func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("n8ntest: finding a free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func tail(path string, lines int) string {
	f, err := os.Open(path)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	const window = 16 << 10
	if st, err := f.Stat(); err == nil && st.Size() > window {
		_, _ = f.Seek(st.Size()-window, io.SeekStart)
	}
	b, _ := io.ReadAll(io.LimitReader(f, window))
	all := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}
