package n8ntest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func writeMarker(t *testing.T, root string, e Edition, body string) {
	t.Helper()
	p := filepath.Join(root, "n8n", fmt.Sprintf("edition-%d", e), "installed.env")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestReadMarker(t *testing.T) {
	root := t.TempDir()
	t.Setenv("CANDOR_CACHE", root)
	if _, err := ReadMarker(Edition1); err == nil {
		t.Fatal("ReadMarker succeeded without an install")
	}
	writeMarker(t, root, Edition1, "edition=1\nversion=1.123.81\n")
	if _, err := ReadMarker(Edition1); err == nil || !strings.Contains(err.Error(), "incomplete") {
		t.Fatalf("incomplete marker: %v", err)
	}
	writeMarker(t, root, Edition1, "version=1.123.81\nnode=/nonexistent/node\nn8n=/nonexistent/n8n\n")
	if _, err := ReadMarker(Edition1); err == nil || !strings.Contains(err.Error(), "gone") {
		t.Fatalf("marker naming missing files: %v", err)
	}
	bin := filepath.Join(root, "bin")
	if err := os.WriteFile(bin, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	writeMarker(t, root, Edition2, "edition=2\nversion=2.41.1\nnode="+bin+"\nn8n="+bin+"\nrecipe=x=y\n")
	var m Marker
	m, err := ReadMarker(Edition2)
	if err != nil || m.Version != "2.41.1" || m.Node != bin || m.N8N != bin {
		t.Fatalf("ReadMarker = %+v, %v", m, err)
	}
}

// fakeTB records Fatalf and Skipf and stops the helper like testing does.
type fakeTB struct {
	testing.TB
	fatal, skip string
}

type stop struct{}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.fatal = fmt.Sprintf(format, args...)
	panic(stop{})
}
func (f *fakeTB) Skipf(format string, args ...any) {
	f.skip = fmt.Sprintf(format, args...)
	panic(stop{})
}

func runStart(tb *fakeTB) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(stop); !ok {
				panic(r)
			}
		}
	}()
	Start(tb, Edition2, Options{})
}

func TestStartFailsWhenNotInstalledAndSkipsOnlyWhenAsked(t *testing.T) {
	t.Setenv("CANDOR_CACHE", t.TempDir())
	t.Setenv("CANDOR_SKIP_N8N", "")
	tb := &fakeTB{TB: t}
	runStart(tb)
	if tb.skip != "" || !strings.Contains(tb.fatal, "scripts/n8n-local install 2") {
		t.Fatalf("not installed: fatal %q, skip %q; want a failure naming the install command", tb.fatal, tb.skip)
	}
	t.Setenv("CANDOR_SKIP_N8N", "1")
	tb = &fakeTB{TB: t}
	runStart(tb)
	if tb.fatal != "" || !strings.Contains(tb.skip, "CANDOR_SKIP_N8N=1") {
		t.Fatalf("CANDOR_SKIP_N8N=1: fatal %q, skip %q; want a skip that says why", tb.fatal, tb.skip)
	}
}

func TestOneInstanceAtATime(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir()) // a lock of its own, not the one of running instances
	p := LockPath()
	if !strings.HasPrefix(p, os.Getenv("TMPDIR")) {
		t.Fatalf("LockPath %s is not in the temporary directory", p)
	}
	release, err := acquire(p, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	held := func() bool {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
			return false
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			t.Fatal(err)
		}
		return true
	}
	if !held() {
		t.Fatal("acquire returned without holding the lock")
	}
	// A second holder gets the lock once the first releases it.
	got := make(chan func(), 1)
	go func() {
		r, err := acquire(p, t.Logf)
		if err != nil {
			t.Error(err)
			r = func() {}
		}
		got <- r
	}()
	release()
	second := <-got
	if !held() {
		t.Fatal("the second acquire returned without holding the lock")
	}
	second()
	if held() {
		t.Fatal("the lock is still held after both releases")
	}
}

func TestInstanceStringHidesSecrets(t *testing.T) {
	inst := &Instance{Edition: Edition1, Version: "1.123.81", BaseURL: "http://127.0.0.1:1", PID: 7,
		APIKey: "n8n_api_key_value", Password: "Pass-word-1", Cookie: "n8n-auth=cookie-value"}
	for _, s := range []string{fmt.Sprint(inst), fmt.Sprintf("%+v", inst), fmt.Sprintf("%#v", inst)} {
		if strings.Contains(s, "key_value") || strings.Contains(s, "Pass-word") || strings.Contains(s, "cookie-value") {
			t.Fatalf("secret in %q", s)
		}
		if !strings.Contains(s, "http://127.0.0.1:1") {
			t.Fatalf("%q does not say where the instance is", s)
		}
	}
}
