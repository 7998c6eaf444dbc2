package reorder

import "log/slog"

// Option configures Run and NewRunner. An option that does not apply to the
// function it is given to is ignored (WithClock means nothing to a Runner,
// WithPolicy nothing to Run).
type Option func(*config)

type config struct {
	clock  Clock
	logger *slog.Logger
	policy Policy
}

func newConfig(opts []Option) config {
	c := config{clock: SystemClock{}, logger: slog.New(slog.DiscardHandler)}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}

// WithClock sets the clock Run reads and waits on (default SystemClock).
// A nil clock is ignored.
func WithClock(c Clock) Option {
	return func(cfg *config) {
		if c != nil {
			cfg.clock = c
		}
	}
}

// WithLogger sets the logger (default: discard). Logs never hold a mandate's
// token. A nil logger is ignored.
func WithLogger(l *slog.Logger) Option {
	return func(cfg *config) {
		if l != nil {
			cfg.logger = l
		}
	}
}

// WithPolicy sets the Policy a Runner plans with (default Policy{}).
func WithPolicy(p Policy) Option {
	return func(cfg *config) { cfg.policy = p }
}
