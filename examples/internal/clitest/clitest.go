// Package clitest checks, from a test, that an example program built with
// internal/testproc keeps the command-line convention of
// CONTRIBUTING.md: -h on stdout with exit 0, a usage error on stderr with
// the usage once and exit 2.
//
// # Failures
//
// Each function reports through t (Errorf for a broken convention, Fatalf
// when the program could not be run at all).
package clitest

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Result is one run of the program.
type Result struct {
	Stdout, Stderr string
	Code           int
}

// Exec runs bin with args in a clean environment: only PATH, and HOME and
// the XDG directories in a temporary directory, plus env ("K=V").
func Exec(t testing.TB, bin string, env []string, args ...string) Result {
	t.Helper()
	home := t.TempDir()
	cmd := exec.CommandContext(t.Context(), bin, args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + home,
		"XDG_CONFIG_HOME=" + home + "/.config", "XDG_CACHE_HOME=" + home + "/.cache"}, env...)
	cmd.Dir = home
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("running %s %q: %v", bin, args, err)
	}
	return Result{Stdout: out.String(), Stderr: errb.String(), Code: code}
}

// Help checks that bin args exits 0 with the usage on stdout, nothing on
// stderr, and every one of wants in the usage.
func Help(t testing.TB, bin string, args []string, wants ...string) {
	t.Helper()
	r := Exec(t, bin, nil, args...)
	if r.Code != 0 || r.Stderr != "" {
		t.Errorf("%q: exit %d, stderr %q; want exit 0 and nothing on stderr", args, r.Code, r.Stderr)
	}
	for _, w := range wants {
		if !strings.Contains(r.Stdout, w) {
			t.Errorf("%q: the usage lacks %q:\n%s", args, w, r.Stdout)
		}
	}
}

// UsageError checks that bin args, with env, exits 2 with nothing on
// stdout, and on stderr one line starting with prefix followed by the usage,
// once (marker is a line of the usage that appears once in it, such as
// "Usage:").
func UsageError(t testing.TB, bin string, env []string, args []string, prefix, marker string) {
	t.Helper()
	r := Exec(t, bin, env, args...)
	if r.Code != 2 {
		t.Errorf("%q: exit %d, want 2\nstdout:\n%s\nstderr:\n%s", args, r.Code, r.Stdout, r.Stderr)
		return
	}
	if r.Stdout != "" {
		t.Errorf("%q: a usage error wrote to stdout:\n%s", args, r.Stdout)
	}
	first, rest, _ := strings.Cut(r.Stderr, "\n")
	if !strings.HasPrefix(first, prefix) {
		t.Errorf("%q: first line %q, want a message starting with %q", args, first, prefix)
	}
	if n := strings.Count(rest, marker); n != 1 {
		t.Errorf("%q: the usage appears %d times on stderr, want once:\n%s", args, n, r.Stderr)
	}
}
