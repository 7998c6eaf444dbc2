package reorder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
)

// Mandate is the standing authority a person gave the agent to act for them
// when they are not there (at 06:00 no user session exists). Token is the
// credential the catalog reads are made with; it never appears in String,
// GoString, JSON or slog output.
type Mandate struct {
	// Subject identifies the person the run acts for; it is logged.
	Subject string
	// Token is the bearer credential obtained from the mandate.
	Token string
}

// String shows the subject and hides the token.
func (m Mandate) String() string {
	return fmt.Sprintf("mandate{subject=%q token=%s}", m.Subject, redacted(m.Token))
}

// GoString hides the token from %#v too.
func (m Mandate) GoString() string { return m.String() }

// LogValue hides the token from slog.
func (m Mandate) LogValue() slog.Value {
	return slog.GroupValue(slog.String("subject", m.Subject), slog.String("token", redacted(m.Token)))
}

// MarshalJSON hides the token from encoding/json.
func (m Mandate) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Subject string `json:"subject"`
		Token   string `json:"token"`
	}{m.Subject, redacted(m.Token)})
}

func redacted(tok string) string {
	if tok == "" {
		return "<none>"
	}
	return "<redacted>"
}

// MandateSource obtains the mandate for a run. It returns an error wrapping
// ErrNoMandate when none exists; any other error means it could not tell.
type MandateSource interface {
	Mandate(ctx context.Context) (Mandate, error)
}

// MandateFunc adapts a function to MandateSource.
type MandateFunc func(ctx context.Context) (Mandate, error)

// Mandate calls f.
func (f MandateFunc) Mandate(ctx context.Context) (Mandate, error) { return f(ctx) }

// Opener opens the catalog under a mandate: the returned Catalog makes its
// reads with m.Token. It is only called once a mandate is in hand.
type Opener func(ctx context.Context, m Mandate) (Catalog, error)

// HaltedError is a run stopped before any read because the mandate could
// not be obtained. errors.Is(err, ErrNoMandate) tells a missing mandate from
// a source that failed.
type HaltedError struct {
	Err error
}

func (e *HaltedError) Error() string {
	return "reorder: halted before any read: " + e.Err.Error()
}

// Unwrap returns the source's error.
func (e *HaltedError) Unwrap() error { return e.Err }

// Runner runs Plan under a mandate: no mandate, no read.
type Runner struct {
	mandates   MandateSource
	open       Opener
	thresholds Thresholds
	logger     *slog.Logger
	tel        telemetry
}

// NewRunner returns a Runner that obtains the mandate from mandates, opens
// the catalog with open and plans with t (Thresholds{} for the defaults).
// It returns an error naming the argument when mandates or open is nil, and
// a *ThresholdsError when t is invalid. Options: WithLogger,
// WithTracerProvider, WithMeterProvider (the span reorder.run and the
// metric reorder.run.duration).
func NewRunner(mandates MandateSource, open Opener, t Thresholds, opts ...Option) (*Runner, error) {
	if mandates == nil {
		return nil, errors.New("reorder: NewRunner: nil MandateSource")
	}
	if open == nil {
		return nil, errors.New("reorder: NewRunner: nil Opener")
	}
	if err := t.Validate(); err != nil {
		return nil, err
	}
	o := newOptions(opts)
	return &Runner{mandates: mandates, open: open, thresholds: t, logger: o.logger, tel: newTelemetry(o)}, nil
}

// Run obtains the mandate, then opens the catalog under it and plans. When
// the mandate is missing (an error wrapping ErrNoMandate, or a Mandate with
// no Token) or cannot be obtained, Run returns a *HaltedError before the
// Opener is called, so nothing is read; the Proposal then says so
// (Complete false, Escalate true). A failure to open the catalog is returned
// as it is, with the same kind of Proposal. Otherwise Run returns what Plan
// returns.
func (r *Runner) Run(ctx context.Context) (Proposal, error) {
	ctx, span, start := r.tel.start(ctx, "run")
	prop, err := r.run(ctx)
	r.tel.end(ctx, span, start, "run", prop, err)
	return prop, err
}

func (r *Runner) run(ctx context.Context) (Proposal, error) {
	halted := func(reason string, err error) (Proposal, error) {
		return Proposal{Lines: []Line{}, Reasons: []string{reason}, Escalate: true}, err
	}
	m, err := r.mandates.Mandate(ctx)
	if err == nil && m.Token == "" {
		err = fmt.Errorf("%w: mandate for %q holds no token", ErrNoMandate, m.Subject)
	}
	if err != nil {
		merr := &HaltedError{Err: err}
		if errors.Is(err, ErrNoMandate) {
			r.logger.WarnContext(ctx, "no mandate: halting before any read", slog.Any("error", err))
			return halted("no mandate: halted before any read", merr)
		}
		r.logger.ErrorContext(ctx, "mandate unavailable: halting before any read", slog.Any("error", err))
		return halted("mandate unavailable: halted before any read: "+err.Error(), merr)
	}
	cat, err := r.open(ctx, m)
	if err != nil {
		err = &openError{fmt.Errorf("reorder: opening the catalog for %q: %w", m.Subject, err)}
		return halted(err.Error(), err)
	}
	if cat == nil {
		return halted("opener returned no catalog", ErrNilCatalog)
	}
	r.logger.InfoContext(ctx, "reorder: planning", slog.Any("mandate", m))
	prop, err := plan(ctx, cat, r.thresholds)
	r.logger.InfoContext(ctx, "reorder: planned",
		slog.String("subject", m.Subject),
		slog.Int("scanned", prop.Scanned), slog.Int("total", prop.Total),
		slog.Bool("complete", prop.Complete), slog.Int("lines", len(prop.Lines)),
		slog.Bool("escalate", prop.Escalate))
	return prop, err
}
