package reorder

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// Schedule is a daily wall-clock time in a named time zone. Build one with
// NewSchedule or DefaultSchedule; the zero Schedule is invalid (Next returns
// the zero time, Run returns ErrSchedule).
//
// Daylight-saving changes are handled by wall clock, with two rules:
//
//   - Skipped time (spring forward): when the wall time does not exist that
//     day, the run happens at the same instant it would have had without the
//     change, that is the wall time moved forward by the length of the gap
//     (02:30 on the last Sunday of March in Europe/Paris runs at 03:30 CEST,
//     24 hours after the previous day's 02:30 CET). The day is never skipped.
//   - Repeated time (fall back): when the wall time occurs twice, the run
//     happens once, at the first occurrence (02:30 CEST, not 02:30 CET).
//
// The default 06:00 Europe/Paris is never affected: the changes happen at
// 02:00 and 03:00.
type Schedule struct {
	hour, minute int
	loc          *time.Location
}

// NewSchedule returns the daily schedule at hour:minute in the IANA zone
// named zone (for instance "Europe/Paris"; "UTC" and "Local" are accepted).
// Loading a zone needs the system's time zone database or an import of
// time/tzdata in the program's main package.
func NewSchedule(hour, minute int, zone string) (Schedule, error) {
	if hour < 0 || hour > 23 || minute < 0 || minute > 59 {
		return Schedule{}, fmt.Errorf("%w: time %02d:%02d out of range", ErrSchedule, hour, minute)
	}
	loc, err := time.LoadLocation(zone)
	if err != nil {
		return Schedule{}, fmt.Errorf("%w: zone %q: %w", ErrSchedule, zone, err)
	}
	return Schedule{hour: hour, minute: minute, loc: loc}, nil
}

// DefaultSchedule returns 06:00 Europe/Paris.
func DefaultSchedule() (Schedule, error) { return NewSchedule(6, 0, "Europe/Paris") }

// Location returns the schedule's time zone (nil for the zero Schedule).
func (s Schedule) Location() *time.Location { return s.loc }

// String returns, for instance, "06:00 Europe/Paris".
func (s Schedule) String() string {
	if s.loc == nil {
		return "invalid schedule"
	}
	return fmt.Sprintf("%02d:%02d %s", s.hour, s.minute, s.loc)
}

// Next returns the first run time strictly after t, in the schedule's zone.
func (s Schedule) Next(t time.Time) time.Time {
	if s.loc == nil {
		return time.Time{}
	}
	local := t.In(s.loc)
	y, m, d := local.Date()
	// Two days always suffice; a third guards against zones that skip a
	// whole calendar day (Pacific/Apia, 2011-12-30).
	for i := range 3 {
		if run := s.on(y, m, d+i); run.After(t) {
			return run
		}
	}
	return s.on(y, m, d+3)
}

// on returns the run instant of the calendar day y-m-d (d may overflow; it
// is normalised).
func (s Schedule) on(y int, m time.Month, d int) time.Time {
	day := time.Date(y, m, d, 12, 0, 0, 0, time.UTC) // normalise the date
	y, m, d = day.Date()
	naive := time.Date(y, m, d, s.hour, s.minute, 0, 0, time.UTC)
	guess := time.Date(y, m, d, s.hour, s.minute, 0, 0, s.loc)

	// The offsets in effect around the guess: its own zone and both
	// neighbours. A wall time exists under offset o when naive−o, read in
	// the zone, shows that wall time.
	start, end := guess.ZoneBounds()
	offsets := []int{offsetAt(guess)}
	if !start.IsZero() {
		offsets = append(offsets, offsetAt(start.Add(-time.Second).In(s.loc)))
	}
	if !end.IsZero() {
		offsets = append(offsets, offsetAt(end.In(s.loc)))
	}
	var first time.Time
	for _, o := range offsets {
		inst := naive.Add(-time.Duration(o) * time.Second).In(s.loc)
		if inst.Hour() == s.hour && inst.Minute() == s.minute && sameDay(inst, y, m, d) {
			if first.IsZero() || inst.Before(first) {
				first = inst // repeated wall time: keep the first occurrence
			}
		}
	}
	if !first.IsZero() {
		return first
	}
	// Skipped wall time: use the offset in force before the gap, the
	// smaller of the two, which moves the run forward by the gap's length.
	before := offsets[0]
	for _, o := range offsets[1:] {
		before = min(before, o)
	}
	return naive.Add(-time.Duration(before) * time.Second).In(s.loc)
}

func offsetAt(t time.Time) int {
	_, o := t.Zone()
	return o
}

func sameDay(t time.Time, y int, m time.Month, d int) bool {
	ty, tm, td := t.Date()
	return ty == y && tm == m && td == d
}

// waitUntil blocks until the wall clock reads t or later (nil) or ctx ends
// (ctx's error). It sleeps in steps of at most one minute and re-reads the
// wall clock after each, so a clock step (NTP, a suspended machine) delays a
// run by at most a minute instead of by the size of the step.
func waitUntil(ctx context.Context, t time.Time) error {
	for {
		d := time.Until(t)
		if d <= 0 {
			return nil
		}
		timer := time.NewTimer(min(d, time.Minute))
		select {
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		case <-timer.C:
		}
	}
}

// Job is the work Run starts at each scheduled time; at is the scheduled
// instant (not the moment the job actually started).
type Job func(ctx context.Context, at time.Time) error

// Run starts job at every time of schedule until ctx ends, and then returns
// ctx's error. Jobs run one at a time, in Run's goroutine: a job still
// running when its successor falls due delays it, and runs missed that way
// are skipped, not queued (the next run is the first scheduled time after the
// job returns). A job's error is logged (Option WithLogger) and the loop goes
// on; a job that must stop the loop cancels ctx. Run reads the wall clock
// (time.Now) and waits in steps of at most a minute, re-reading it after
// each, so a clock step delays a run by at most a minute. Option:
// WithLogger; WithTracerProvider and WithMeterProvider are refused
// (ErrSchedule): the Runner a job calls records the spans.
func Run(ctx context.Context, schedule Schedule, job Job, opts ...Option) error {
	if schedule.loc == nil {
		return fmt.Errorf("%w: zero Schedule", ErrSchedule)
	}
	if job == nil {
		return fmt.Errorf("%w: nil job", ErrSchedule)
	}
	o := newOptions(opts)
	if o.otel {
		return fmt.Errorf("%w: Run records no telemetry (pass WithTracerProvider and WithMeterProvider to NewRunner)", ErrSchedule)
	}
	log := o.logger
	for {
		at := schedule.Next(time.Now())
		log.DebugContext(ctx, "reorder: next run", slog.Time("at", at), slog.String("schedule", schedule.String()))
		if err := waitUntil(ctx, at); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		log.InfoContext(ctx, "reorder: run starting", slog.Time("at", at))
		if err := job(ctx, at); err != nil {
			log.ErrorContext(ctx, "reorder: run failed", slog.Time("at", at), slog.Any("error", err))
		}
	}
}
