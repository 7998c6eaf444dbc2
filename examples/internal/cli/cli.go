package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// Exit codes of every example program.
const (
	// ExitOK: the work is done.
	ExitOK = 0
	// ExitFail: the work failed or was refused (a failed or escalated task,
	// no mandate, a refused decision).
	ExitFail = 1
	// ExitUsage: a bad flag or argument; nothing was done.
	ExitUsage = 2
	// ExitConfig: the configuration (environment, a file) is missing or
	// invalid; nothing was done.
	ExitConfig = 3
)

// Parse parses args with fs, which must be flag.ContinueOnError; fs's own
// output and Usage are replaced. -h or -help writes usage to stdout and
// returns (ExitOK, false); a bad flag writes "name: error" and usage to
// stderr and returns (ExitUsage, false); otherwise it returns (0, true).
func Parse(fs *flag.FlagSet, args []string, stdout, stderr io.Writer, usage func(io.Writer)) (int, bool) {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	switch {
	case err == nil:
		return 0, true
	case errors.Is(err, flag.ErrHelp):
		usage(stdout)
		return ExitOK, false
	}
	fmt.Fprintf(stderr, "%s: %v\n", fs.Name(), err)
	usage(stderr)
	return ExitUsage, false
}

// UsageError writes one line, "name: message", then usage to stderr, and
// returns ExitUsage.
func UsageError(stderr io.Writer, usage func(io.Writer), name, format string, a ...any) int {
	msg := strings.TrimSpace(fmt.Sprintf(format, a...))
	fmt.Fprintf(stderr, "%s: %s\n", name, msg)
	usage(stderr)
	return ExitUsage
}

// Defaults writes fs's flags and their defaults to w.
func Defaults(w io.Writer, fs *flag.FlagSet) {
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}

// Main runs run and exits the process with the code it returns. run's
// context ends at the first SIGINT or SIGTERM; at a second one the process
// exits at once with ExitFail, after a line on stderr.
func Main(run func(ctx context.Context) int) {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	ctx, stop := notify(context.Background(), sigs, os.Stderr, os.Exit)
	code := run(ctx)
	stop()
	signal.Stop(sigs)
	os.Exit(code)
}

// notify returns a context that ends at the first value on sigs; at the
// second it writes a line to stderr and calls exit(ExitFail). stop ends the
// watch.
func notify(parent context.Context, sigs <-chan os.Signal, stderr io.Writer, exit func(int)) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sigs:
			cancel(fmt.Errorf("%v: %w", s, context.Canceled))
		case <-done:
			return
		}
		select {
		case s := <-sigs:
			fmt.Fprintf(stderr, "second %v: exiting without waiting for the work in flight\n", s)
			exit(ExitFail)
		case <-done:
		}
	}()
	var once bool
	return ctx, func() {
		if !once {
			once = true
			close(done)
			cancel(context.Canceled)
		}
	}
}
