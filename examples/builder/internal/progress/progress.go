package progress

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// Status of a finished step.
type Status string

const (
	OK   Status = "ok"
	Fail Status = "fail"
	Skip Status = "skip"
)

// Line is one finished step, as written in -json mode.
type Line struct {
	Step       string  `json:"step"`
	Status     Status  `json:"status"`
	DurationMS float64 `json:"duration_ms"`
	Detail     string  `json:"detail,omitempty"`
}

// Reporter writes finished steps to w. It is safe for concurrent use.
type Reporter struct {
	mu    sync.Mutex
	w     io.Writer
	json  bool
	now   func() time.Time
	err   error
	lines []Line
}

// Option configures a Reporter.
type Option func(*Reporter)

// JSON selects one JSON object per line.
func JSON(on bool) Option { return func(r *Reporter) { r.json = on } }

// WithClock replaces time.Now (tests).
func WithClock(now func() time.Time) Option { return func(r *Reporter) { r.now = now } }

// New returns a Reporter writing to w.
func New(w io.Writer, opts ...Option) *Reporter {
	r := &Reporter{w: w, now: time.Now}
	for _, o := range opts {
		o(r)
	}
	return r
}

// Step is a running step.
type Step struct {
	r     *Reporter
	name  string
	start time.Time
	once  sync.Once
}

// Start begins a step.
func (r *Reporter) Start(name string) *Step { return &Step{r: r, name: name, start: r.now()} }

// OK ends the step as passed. It reports false if the step had already ended.
func (s *Step) OK(detail string) bool { return s.end(OK, detail) }

// Fail ends the step as failed with err's text. It reports false if the step had already ended.
func (s *Step) Fail(err error) bool {
	detail := "(no error)"
	if err != nil {
		detail = err.Error()
	}
	return s.end(Fail, detail)
}

// Skip ends the step as not run. It reports false if the step had already ended.
func (s *Step) Skip(reason string) bool { return s.end(Skip, reason) }

func (s *Step) end(st Status, detail string) bool {
	ended := false
	s.once.Do(func() {
		ended = true
		d := s.r.now().Sub(s.start)
		s.r.write(Line{Step: s.name, Status: st, DurationMS: float64(d.Microseconds()) / 1000, Detail: strings.Join(strings.Fields(detail), " ")}, d)
	})
	return ended
}

// Run times fn as one step: OK with its detail, or Fail with its error, which
// Run returns.
func (r *Reporter) Run(name string, fn func() (detail string, err error)) error {
	s := r.Start(name)
	detail, err := fn()
	if err != nil {
		s.Fail(err)
		return err
	}
	s.OK(detail)
	return nil
}

func (r *Reporter) write(l Line, d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, l)
	var out []byte
	if r.json {
		b, err := json.Marshal(l)
		if err != nil {
			r.keep(err)
			return
		}
		out = append(b, '\n')
	} else {
		text := fmt.Sprintf("%-14s %-4s %9s", l.Step, l.Status, FormatDuration(d))
		if l.Detail != "" {
			text += "  " + l.Detail
		}
		out = []byte(text + "\n")
	}
	if _, err := r.w.Write(out); err != nil {
		r.keep(err)
	}
}

func (r *Reporter) keep(err error) {
	if r.err == nil {
		r.err = err
	}
}

// Err returns the first write error.
func (r *Reporter) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// Lines returns the finished steps so far.
func (r *Reporter) Lines() []Line {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Line(nil), r.lines...)
}

// FormatDuration renders d compactly: 850µs, 12ms, 1.25s, 2m03s.
func FormatDuration(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%dµs", d.Microseconds())
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.2fs", d.Seconds())
	default:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
}
