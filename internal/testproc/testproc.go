package testproc

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// Build compiles the main package in pkgDir (a directory, relative to the
// test's working directory or absolute; "." is the package under test) and
// returns the absolute path of the executable. The executable is named after
// pkgDir's last element (plus ".exe" on Windows) and lives in a directory
// from t.TempDir. flags go to go build before -o, for example "-tags",
// "sqlite" or "-race". Any failure ends the test through t.Fatalf; see the
// package documentation.
func Build(t testing.TB, pkgDir string, flags ...string) string {
	t.Helper()
	goTool := goCommand(t)
	abs, err := filepath.Abs(pkgDir)
	if err != nil {
		t.Fatalf("testproc: package directory %q: %v", pkgDir, err)
	}
	name := filepath.Base(abs)
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	bin := filepath.Join(t.TempDir(), name)
	args := append([]string{"build"}, flags...)
	args = append(args, "-o", bin, ".")
	cmd := exec.CommandContext(t.Context(), goTool, args...)
	cmd.Dir = abs
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s (in %s): %v\n%s", strings.Join(args, " "), abs, err, out)
	}
	return bin
}

// goCommand finds the go command: on PATH first, as a developer's shell
// would, then in the Go installation that built this test binary.
func goCommand(t testing.TB) string {
	t.Helper()
	onPath, pathErr := exec.LookPath("go")
	if pathErr == nil {
		return onPath
	}
	// runtime.GOROOT is deprecated for finding the toolchain in general, but
	// for a test binary it is the installation go test used to build it.
	name := "go"
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	//lint:ignore SA1019 a test binary's GOROOT is the installation that built it (see above)
	inRoot := filepath.Join(runtime.GOROOT(), "bin", name)
	if p, err := exec.LookPath(inRoot); err == nil {
		return p
	}
	t.Fatalf("testproc: no go command: not on PATH (%v) nor at %s", pathErr, inRoot)
	return ""
}

// Buffer collects bytes from several goroutines, typically a child
// process's stdout or stderr copied by exec, while the test reads them. The
// zero value is empty and ready to use; a Buffer must not be copied after
// first use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p. It never fails.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns a copy of everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Len returns the number of bytes written so far.
func (b *Buffer) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Len()
}
