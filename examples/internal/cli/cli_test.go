package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/candorkit/candor/internal/testproc"
)

func usage(w io.Writer) { fmt.Fprintln(w, "Usage: prog [-n N]") }

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name           string
		args           []string
		code           int
		ok             bool
		stdout, stderr string
	}{
		{"ok", []string{"-n", "3"}, 0, true, "", ""},
		{"help", []string{"-h"}, ExitOK, false, "Usage: prog [-n N]\n", ""},
		{"long help", []string{"-help"}, ExitOK, false, "Usage: prog [-n N]\n", ""},
		{"unknown flag", []string{"-x"}, ExitUsage, false, "", "prog: flag provided but not defined: -x\nUsage: prog [-n N]\n"},
		{"bad value", []string{"-n", "three"}, ExitUsage, false, "", "prog: invalid value \"three\" for flag -n: parse error\nUsage: prog [-n N]\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := flag.NewFlagSet("prog", flag.ContinueOnError)
			fs.Int("n", 1, "a number")
			var out, errb bytes.Buffer
			code, ok := Parse(fs, tc.args, &out, &errb, usage)
			assert.Equal(t, tc.code, code)
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.stdout, out.String())
			assert.Equal(t, tc.stderr, errb.String(), "usage printed once, on stderr, for a usage error")
		})
	}
}

func TestUsageError(t *testing.T) {
	var errb bytes.Buffer
	assert.Equal(t, ExitUsage, UsageError(&errb, usage, "prog", "unexpected argument %q\n", "x"))
	assert.Equal(t, "prog: unexpected argument \"x\"\nUsage: prog [-n N]\n", errb.String())
}

func TestDefaults(t *testing.T) {
	fs := flag.NewFlagSet("prog", flag.ContinueOnError)
	fs.Int("n", 1, "a number")
	var b bytes.Buffer
	Defaults(&b, fs)
	assert.Contains(t, b.String(), "-n int")
	assert.Contains(t, b.String(), "(default 1)")
}

func TestNotify(t *testing.T) {
	sigs := make(chan os.Signal, 2)
	exited := make(chan int, 1)
	var errb safeBuffer
	ctx, stop := notify(context.Background(), sigs, &errb, func(code int) { exited <- code })
	defer stop()
	sigs <- os.Interrupt
	<-ctx.Done()
	assert.ErrorIs(t, ctx.Err(), context.Canceled)
	select {
	case <-exited:
		t.Fatal("the first signal exited")
	default:
	}
	sigs <- os.Interrupt
	assert.Equal(t, ExitFail, <-exited)
	assert.Contains(t, errb.String(), "second interrupt")
}

func TestNotifyStop(t *testing.T) {
	sigs := make(chan os.Signal, 2)
	ctx, stop := notify(context.Background(), sigs, io.Discard, func(int) { t.Error("exit called") })
	stop()
	stop() // a second stop is harmless
	<-ctx.Done()
}

// TestSecondSignalForcesExit runs a program whose drain never ends: the
// first SIGINT starts the drain, the second ends the process with exit 1.
func TestSecondSignalForcesExit(t *testing.T) {
	bin := testproc.Build(t, "testdata/drain")
	cmd := exec.CommandContext(t.Context(), bin)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr testproc.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	lines := make(chan string, 4)
	go func() {
		buf := make([]byte, 256)
		var acc string
		for {
			n, err := stdout.Read(buf)
			acc += string(buf[:n])
			for {
				line, rest, ok := strings.Cut(acc, "\n")
				if !ok {
					break
				}
				lines <- line
				acc = rest
			}
			if err != nil {
				close(lines)
				return
			}
		}
	}()
	require.Equal(t, "ready", <-lines)
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	require.Equal(t, "draining", <-lines)
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	for range lines {
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	require.True(t, errors.As(err, &ee), "wait: %v", err)
	assert.Equal(t, ExitFail, ee.ExitCode())
	assert.Contains(t, stderr.String(), "second interrupt: exiting without waiting")
}

type safeBuffer = testproc.Buffer
