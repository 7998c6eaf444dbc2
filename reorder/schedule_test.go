package reorder_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	_ "time/tzdata" // CI machines may lack a zoneinfo database

	"github.com/candorkit/candor/reorder"
)

func mustSchedule(t *testing.T, h, m int, zone string) reorder.Schedule {
	t.Helper()
	s, err := reorder.NewSchedule(h, m, zone)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestScheduleDefault(t *testing.T) {
	s, err := reorder.DefaultSchedule()
	if err != nil {
		t.Fatal(err)
	}
	if s.String() != "06:00 Europe/Paris" {
		t.Fatalf("String() = %q", s)
	}
	cases := []struct{ after, want string }{
		{"2025-01-15T04:59:59Z", "2025-01-15T05:00:00Z"}, // CET, UTC+1
		{"2025-01-15T05:00:00Z", "2025-01-16T05:00:00Z"}, // strictly after
		{"2025-07-01T03:00:00Z", "2025-07-01T04:00:00Z"}, // CEST, UTC+2
		{"2025-03-29T06:00:00Z", "2025-03-30T04:00:00Z"}, // across spring forward
		{"2025-10-25T05:00:00Z", "2025-10-26T05:00:00Z"}, // across fall back
	}
	for _, c := range cases {
		got := s.Next(utc(c.after))
		if !got.Equal(utc(c.want)) {
			t.Errorf("Next(%s) = %s, want %s", c.after, got.UTC().Format(time.RFC3339), c.want)
		}
		if got.Location() != s.Location() || got.Hour() != 6 || got.Minute() != 0 {
			t.Errorf("Next(%s) = %s, not 06:00 in the schedule's zone", c.after, got)
		}
	}
	// The run before and after each change is 06:00 local, 23h and 25h apart.
	if d := s.Next(utc("2025-03-29T06:00:00Z")).Sub(s.Next(utc("2025-03-28T06:00:00Z"))); d != 23*time.Hour {
		t.Errorf("spring-forward interval %s, want 23h", d)
	}
	if d := s.Next(utc("2025-10-25T06:00:00Z")).Sub(s.Next(utc("2025-10-24T06:00:00Z"))); d != 25*time.Hour {
		t.Errorf("fall-back interval %s, want 25h", d)
	}
}

// In Europe/Paris on 2025-03-30 the clocks jump from 02:00 CET to 03:00 CEST:
// 02:30 does not exist that day.
func TestScheduleSkippedHour(t *testing.T) {
	s := mustSchedule(t, 2, 30, "Europe/Paris")
	prev := s.Next(utc("2025-03-29T00:00:00Z"))
	if !prev.Equal(utc("2025-03-29T01:30:00Z")) {
		t.Fatalf("day before: %s", prev)
	}
	got := s.Next(prev)
	if !got.Equal(utc("2025-03-30T01:30:00Z")) || got.Format("15:04 MST") != "03:30 CEST" {
		t.Fatalf("skipped hour: got %s (%s), want 03:30 CEST", got, got.UTC())
	}
	if d := got.Sub(prev); d != 24*time.Hour {
		t.Fatalf("interval %s, want 24h", d)
	}
	next := s.Next(got)
	if next.Format("2006-01-02 15:04 MST") != "2025-03-31 02:30 CEST" {
		t.Fatalf("day after: %s", next)
	}

	// Same rule in America/New_York (2025-03-09, 02:00 EST → 03:00 EDT).
	ny := mustSchedule(t, 2, 15, "America/New_York")
	got = ny.Next(utc("2025-03-09T00:00:00Z"))
	if got.Format("2006-01-02 15:04 MST") != "2025-03-09 03:15 EDT" {
		t.Fatalf("New York skipped hour: %s", got)
	}
}

// In Europe/Paris on 2025-10-26 the clocks go back from 03:00 CEST to 02:00
// CET: 02:30 happens twice; the run happens once, at the first.
func TestScheduleRepeatedHour(t *testing.T) {
	s := mustSchedule(t, 2, 30, "Europe/Paris")
	got := s.Next(utc("2025-10-25T12:00:00Z"))
	if !got.Equal(utc("2025-10-26T00:30:00Z")) || got.Format("15:04 MST") != "02:30 CEST" {
		t.Fatalf("repeated hour: got %s (%s), want the first 02:30 (CEST)", got, got.UTC())
	}
	// Asked between the two occurrences, or at the second, it moves to the
	// next day: the second 02:30 (CET, 01:30Z) is never a run time.
	for _, after := range []string{"2025-10-26T00:30:00Z", "2025-10-26T01:00:00Z", "2025-10-26T01:30:00Z"} {
		n := s.Next(utc(after))
		if n.Format("2006-01-02 15:04 MST") != "2025-10-27 02:30 CET" {
			t.Fatalf("Next(%s) = %s, want 2025-10-27 02:30 CET", after, n)
		}
	}
	// 03:00 exists once (CET) after the change.
	three := mustSchedule(t, 3, 0, "Europe/Paris")
	if got := three.Next(utc("2025-10-25T12:00:00Z")); !got.Equal(utc("2025-10-26T02:00:00Z")) {
		t.Fatalf("03:00 on fall-back day: %s", got.UTC())
	}
}

func TestScheduleNoDST(t *testing.T) {
	for _, zone := range []string{"Asia/Tokyo", "UTC"} {
		s := mustSchedule(t, 6, 0, zone)
		at := s.Next(utc("2025-01-01T00:00:00Z"))
		for i := range 366 {
			next := s.Next(at)
			if d := next.Sub(at); d != 24*time.Hour {
				t.Fatalf("%s: run %d → %d interval %s", zone, i, i+1, d)
			}
			if next.Hour() != 6 || next.Minute() != 0 {
				t.Fatalf("%s: %s is not 06:00", zone, next)
			}
			at = next
		}
	}
	tokyo := mustSchedule(t, 6, 0, "Asia/Tokyo")
	if got := tokyo.Next(utc("2025-03-30T00:00:00Z")); !got.Equal(utc("2025-03-30T21:00:00Z")) {
		t.Fatalf("Tokyo: %s", got.UTC())
	}
}

// A year of 06:00 Europe/Paris: every run is 06:00 local, one per day, and
// the intervals are 24h except 23h and 25h at the two changes.
func TestScheduleYearParis(t *testing.T) {
	s, _ := reorder.DefaultSchedule()
	at := s.Next(utc("2025-01-01T00:00:00Z"))
	counts := map[time.Duration]int{}
	for range 365 {
		next := s.Next(at)
		if next.Hour() != 6 || next.Minute() != 0 || next.YearDay() == at.YearDay() {
			t.Fatalf("bad run %s after %s", next, at)
		}
		counts[next.Sub(at)]++
		at = next
	}
	if counts[24*time.Hour] != 363 || counts[23*time.Hour] != 1 || counts[25*time.Hour] != 1 {
		t.Fatalf("intervals %v", counts)
	}
}

func TestScheduleInvalid(t *testing.T) {
	for _, c := range []struct {
		h, m int
		zone string
	}{{24, 0, "UTC"}, {-1, 0, "UTC"}, {6, 60, "UTC"}, {6, 0, "Mars/Olympus_Mons"}} {
		if _, err := reorder.NewSchedule(c.h, c.m, c.zone); !errors.Is(err, reorder.ErrSchedule) {
			t.Errorf("NewSchedule(%d, %d, %q) = %v, want ErrSchedule", c.h, c.m, c.zone, err)
		}
	}
	var zero reorder.Schedule
	if !zero.Next(time.Now()).IsZero() {
		t.Error("zero Schedule returned a run time")
	}
	err := reorder.Run(context.Background(), zero, func(context.Context, time.Time) error { return nil })
	if !errors.Is(err, reorder.ErrSchedule) {
		t.Errorf("Run(zero) = %v", err)
	}
}

// manualClock is a Clock the test moves by hand. Each WaitUntil reports its
// target on waits, so the test knows when Run is idle and until when.
type manualClock struct {
	mu      sync.Mutex
	now     time.Time
	changed chan struct{} // closed and replaced on every Set
	waits   chan time.Time
}

func newManualClock(now time.Time) *manualClock {
	return &manualClock{now: now, changed: make(chan struct{}), waits: make(chan time.Time, 16)}
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
}

func (c *manualClock) WaitUntil(ctx context.Context, t time.Time) error {
	c.waits <- t
	for {
		c.mu.Lock()
		now, ch := c.now, c.changed
		c.mu.Unlock()
		if !now.Before(t) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		}
	}
}

func TestRunOneAtATime(t *testing.T) {
	s, _ := reorder.DefaultSchedule()
	clock := newManualClock(utc("2025-03-28T12:00:00Z"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	var running, maxRunning atomic.Int32
	started := make(chan time.Time)
	release := make(chan struct{})
	job := func(ctx context.Context, at time.Time) error {
		n := running.Add(1)
		defer running.Add(-1)
		if n > maxRunning.Load() {
			maxRunning.Store(n)
		}
		started <- at
		<-release
		return errors.New("job failed (logged, loop goes on)")
	}
	done := make(chan error, 1)
	go func() { done <- reorder.Run(ctx, s, job, reorder.WithClock(clock)) }()

	// First wait: 2025-03-29 06:00 CET.
	if w := <-clock.waits; !w.Equal(utc("2025-03-29T05:00:00Z")) {
		t.Fatalf("first wait until %s", w.UTC())
	}
	clock.Set(utc("2025-03-29T05:00:00Z"))
	if at := <-started; !at.Equal(utc("2025-03-29T05:00:00Z")) {
		t.Fatalf("job started for %s", at.UTC())
	}
	// While the job runs, three more run times pass. Run is inside the job,
	// not waiting on the clock, so no second job can start.
	clock.Set(utc("2025-04-01T05:30:00Z"))
	select {
	case w := <-clock.waits:
		t.Fatalf("Run waited for %s while a job was running", w)
	default:
	}
	release <- struct{}{}
	// Missed runs are skipped: the next wait is the first 06:00 after now
	// (2025-04-02 06:00 CEST).
	if w := <-clock.waits; !w.Equal(utc("2025-04-02T04:00:00Z")) {
		t.Fatalf("after an overrun, wait until %s", w.UTC())
	}
	clock.Set(utc("2025-04-02T04:00:00Z"))
	if at := <-started; !at.Equal(utc("2025-04-02T04:00:00Z")) {
		t.Fatalf("second job for %s", at.UTC())
	}
	release <- struct{}{}
	<-clock.waits
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run returned %v", err)
	}
	if m := maxRunning.Load(); m != 1 {
		t.Fatalf("max concurrent jobs %d", m)
	}
}

func TestRunStopsWhenContextEnds(t *testing.T) {
	s, _ := reorder.DefaultSchedule()
	clock := newManualClock(utc("2025-01-01T00:00:00Z"))
	ctx, cancel := context.WithCancel(context.Background())
	var calls atomic.Int32
	done := make(chan error, 1)
	go func() {
		done <- reorder.Run(ctx, s, func(context.Context, time.Time) error { calls.Add(1); return nil }, reorder.WithClock(clock))
	}()
	<-clock.waits
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) || calls.Load() != 0 {
		t.Fatalf("Run = %v after %d jobs", err, calls.Load())
	}
}

func TestSystemClockWaitUntil(t *testing.T) {
	var c reorder.SystemClock
	past := c.Now().Add(-time.Hour)
	if err := c.WaitUntil(context.Background(), past); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.WaitUntil(ctx, c.Now().Add(time.Hour)); !errors.Is(err, context.Canceled) {
		t.Fatalf("WaitUntil = %v", err)
	}
}
