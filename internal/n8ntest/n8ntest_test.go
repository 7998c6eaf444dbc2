package n8ntest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
