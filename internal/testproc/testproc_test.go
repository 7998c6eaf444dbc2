package testproc_test

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/candorkit/candor/internal/testproc"
)

func TestBuildRunsTheProgram(t *testing.T) {
	bin := testproc.Build(t, filepath.Join("testdata", "hello"), "-ldflags=-X main.greeting=hi")
	if !filepath.IsAbs(bin) {
		t.Errorf("path %q is not absolute", bin)
	}
	var stdout bytes.Buffer
	var stderr testproc.Buffer
	cmd := exec.CommandContext(t.Context(), bin, "one", "two")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("run %s: %v\n%s", bin, err, stderr.String())
	}
	if got := stdout.String(); got != "hi hello one two\n" {
		t.Errorf("stdout %q, want %q", got, "hi hello one two\n")
	}
	if got := stderr.String(); got != "to stderr\n" {
		t.Errorf("stderr %q, want %q", got, "to stderr\n")
	}
}

// fatalRecorder is a testing.TB whose Fatalf records the message and ends
// the goroutine, as the real one does, without failing the real test.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (f *fatalRecorder) Helper() {}

func (f *fatalRecorder) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func TestBuildFailureFailsTheTestWithTheCompilerOutput(t *testing.T) {
	rec := &fatalRecorder{TB: t}
	done := make(chan string, 1)
	go func() {
		defer func() { done <- rec.msg }()
		bin := testproc.Build(rec, filepath.Join("testdata", "broken"))
		t.Errorf("Build returned %q for a package that does not compile", bin)
	}()
	msg := <-done
	if msg == "" {
		t.Fatal("Build did not fail the test")
	}
	for _, want := range []string{"go build", "undefinedOnPurpose", "exit status"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the failure does not contain %q:\n%s", want, msg)
		}
	}
}
