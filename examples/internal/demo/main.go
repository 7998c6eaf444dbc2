package demo

import (
	"context"
	"log/slog"
	"os"

	"github.com/candorkit/candor/examples/internal/cli"
)

// Main runs an example program with cli.Main: run's context ends at the
// first SIGINT or SIGTERM, a second one exits at once. Before run, the
// default slog logger, which zitadel's OP logs through (an Info line per
// route when the embedded provider starts), is set to keep warnings and
// errors only on stderr; the program's own logger is its own business.
func Main(run func(ctx context.Context) int) {
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	cli.Main(run)
}
