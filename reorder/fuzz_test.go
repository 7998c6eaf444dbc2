package reorder_test

import (
	"testing"
	"time"

	"github.com/candorkit/candor/reorder"
)

var fuzzZones = []string{"Europe/Paris", "America/New_York", "Asia/Tokyo", "Australia/Lord_Howe", "America/Santiago", "UTC"}

// FuzzScheduleNext checks Next's contract in zones with and without DST
// (Lord Howe shifts by 30 minutes): the run is after t, within two days, and
// shows the scheduled wall time unless that time was skipped that day, in
// which case it is moved forward by less than the gap (at most two hours).
func FuzzScheduleNext(f *testing.F) {
	f.Add(uint8(6), uint8(0), uint8(0), int64(1743296400))  // Paris, spring forward day
	f.Add(uint8(2), uint8(30), uint8(0), int64(1743206400)) // Paris, skipped 02:30
	f.Add(uint8(2), uint8(30), uint8(0), int64(1761400000)) // Paris, repeated 02:30
	f.Add(uint8(2), uint8(15), uint8(1), int64(1741478400)) // New York
	f.Add(uint8(2), uint8(10), uint8(3), int64(1759593600)) // Lord Howe
	f.Fuzz(func(t *testing.T, h, m, z uint8, unix int64) {
		hour, minute := int(h%24), int(m%60)
		s, err := reorder.NewSchedule(hour, minute, fuzzZones[int(z)%len(fuzzZones)])
		if err != nil {
			t.Fatal(err)
		}
		after := time.Unix(unix%(4e9), 0)
		next := s.Next(after)
		if !next.After(after) || next.Sub(after) > 50*time.Hour {
			t.Fatalf("%s: Next(%s) = %s", s, after, next)
		}
		if next.Hour() != hour || next.Minute() != minute {
			// Only allowed on a skipped wall time: the instant an hour or
			// less earlier shows an earlier offset.
			_, offNow := next.Zone()
			_, offBefore := next.Add(-2 * time.Hour).Zone()
			if offBefore >= offNow {
				t.Fatalf("%s: Next(%s) = %s is not the scheduled wall time and no gap precedes it", s, after, next)
			}
		}
		// The next run after this one is a later day.
		if again := s.Next(next); !again.After(next) || again.YearDay() == next.YearDay() && again.Year() == next.Year() {
			t.Fatalf("%s: two runs on the same day: %s, %s", s, next, again)
		}
	})
}

func BenchmarkScheduleNext(b *testing.B) {
	s, err := reorder.DefaultSchedule()
	if err != nil {
		b.Fatal(err)
	}
	t := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for b.Loop() {
		t = s.Next(t)
	}
}
