package demo

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

// Main runs an example program and exits the process with the code run
// returns. run's context ends on SIGINT or SIGTERM. Before run, the default
// slog logger, which zitadel's OP logs through (an Info line per route when
// the embedded provider starts), is set to keep warnings and errors only on
// stderr; the program's own logger is its own business.
func Main(run func(ctx context.Context) int) {
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	code := run(ctx)
	stop()
	os.Exit(code)
}
