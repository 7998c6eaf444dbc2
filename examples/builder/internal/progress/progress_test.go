package progress

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// stepClock advances by the given durations on each call after the first.
func stepClock(steps ...time.Duration) func() time.Time {
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	i := -1
	return func() time.Time {
		if i >= 0 && i < len(steps) {
			t = t.Add(steps[i])
		}
		i++
		return t
	}
}

func TestTextLines(t *testing.T) {
	var buf bytes.Buffer
	r := New(&buf, WithClock(stepClock(12*time.Millisecond, 0, 1500*time.Millisecond)))
	s := r.Start("pick")
	if !s.OK("idea 3 \"Order relay\"") {
		t.Fatal("first end reported false")
	}
	if s.Fail(errors.New("late")) {
		t.Fatal("a step ended twice")
	}
	err := r.Run("generate", func() (string, error) { return "", errors.New("ollama answered HTTP 404:\nmodel not found") })
	if err == nil || err.Error() != "ollama answered HTTP 404:\nmodel not found" {
		t.Fatalf("Run returned %v", err)
	}
	want := "pick           ok        12ms  idea 3 \"Order relay\"\n" +
		"generate       fail     1.50s  ollama answered HTTP 404: model not found\n"
	if buf.String() != want {
		t.Fatalf("output\n%q\nwant\n%q", buf.String(), want)
	}
}

func TestJSONLines(t *testing.T) {
	var buf bytes.Buffer
	r := New(&buf, JSON(true), WithClock(stepClock(2500*time.Microsecond)))
	r.Start("claim").OK("id=3")
	r.Start("notify").Skip("no topic")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines", len(lines))
	}
	var l Line
	dec := json.NewDecoder(strings.NewReader(lines[0]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		t.Fatal(err)
	}
	if l != (Line{Step: "claim", Status: OK, DurationMS: 2.5, Detail: "id=3"}) {
		t.Fatalf("line %+v", l)
	}
	if got := r.Lines(); len(got) != 2 || got[1].Status != Skip {
		t.Fatalf("Lines = %+v", got)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteErrorKept(t *testing.T) {
	r := New(failingWriter{})
	if !r.Start("pick").OK("") {
		t.Fatal("step not ended")
	}
	if err := r.Err(); err == nil || err.Error() != "disk full" {
		t.Fatalf("Err = %v", err)
	}
	if l := r.Lines(); len(l) != 1 || l[0].Status != OK {
		t.Fatalf("a write error changed the step: %+v", l)
	}
}

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{850 * time.Microsecond: "850µs", 12 * time.Millisecond: "12ms", 1250 * time.Millisecond: "1.25s", 123 * time.Second: "2m03s"} {
		if got := FormatDuration(d); got != want {
			t.Errorf("FormatDuration(%v) = %q; want %q", d, got, want)
		}
	}
}
