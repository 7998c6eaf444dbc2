package reorder_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
	_ "time/tzdata" // CI machines may lack a zoneinfo database

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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

// The Run tests run in a synctest bubble, whose clock starts at
// 2000-01-01 00:00 UTC (01:00 in Paris) and jumps forward whenever every
// goroutine of the bubble is blocked: Run's wait for 06:00 takes no real time.

func TestRunOneAtATime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, err := reorder.DefaultSchedule()
		require.NoError(t, err)
		require.Equal(t, utc("2000-01-01T00:00:00Z"), time.Now().UTC())
		ctx, cancel := context.WithCancel(t.Context())
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
		go func() { done <- reorder.Run(ctx, s, job) }()

		// The first run: 2000-01-01 06:00 CET, started at that instant.
		at := <-started
		assert.Equal(t, utc("2000-01-01T05:00:00Z"), at.UTC())
		assert.Equal(t, at.UTC(), time.Now().UTC())
		// While the job runs, three more run times pass. Run is inside the
		// job, not waiting, so no second job can start.
		time.Sleep(3*24*time.Hour + 30*time.Minute)
		release <- struct{}{}
		// Missed runs are skipped: the next run is the first 06:00 after
		// the job returned (2000-01-04 06:30 CET), 2000-01-05 06:00 CET.
		at = <-started
		assert.Equal(t, utc("2000-01-05T05:00:00Z"), at.UTC())
		release <- struct{}{}
		synctest.Wait() // Run waits for 2000-01-06
		cancel()
		assert.ErrorIs(t, <-done, context.Canceled)
		assert.EqualValues(t, 1, maxRunning.Load(), "max concurrent jobs")
	})
}

func TestRunStopsWhenContextEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, err := reorder.DefaultSchedule()
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		var calls atomic.Int32
		done := make(chan error, 1)
		go func() {
			done <- reorder.Run(ctx, s, func(context.Context, time.Time) error { calls.Add(1); return nil })
		}()
		synctest.Wait() // Run is waiting for 06:00
		cancel()
		assert.ErrorIs(t, <-done, context.Canceled)
		assert.Zero(t, calls.Load())
	})
}

// TestRunLogs pins that Run logs through the logger it is given, the job's
// error under the key "error".
func TestRunLogs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, err := reorder.DefaultSchedule()
		require.NoError(t, err)
		var logs bytes.Buffer
		log := slog.New(slog.NewJSONHandler(&logs, nil))
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() {
			done <- reorder.Run(ctx, s, func(context.Context, time.Time) error {
				cancel()
				return errors.New("catalog down")
			}, reorder.WithLogger(log))
		}()
		assert.ErrorIs(t, <-done, context.Canceled)
		assert.Contains(t, logs.String(), `"msg":"reorder: run failed"`)
		assert.Contains(t, logs.String(), `"error":"catalog down"`)
	})
}
