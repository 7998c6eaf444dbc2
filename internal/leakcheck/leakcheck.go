// Package leakcheck watches what a test logs and what its errors print for
// the secrets and tokens it used: at the end of the test, each tracked
// value found in a log line or a recorded text fails the test.
package leakcheck

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

// MinSecret is the shortest value Track accepts: a shorter one would be
// found by chance.
const MinSecret = 8

// Watch collects a test's secrets, its log output and the texts to scan.
type Watch struct {
	t testing.TB
	// Logger writes JSON at debug level into the watched log.
	Logger *slog.Logger

	logs    syncBuffer
	mu      sync.Mutex
	secrets []string
	texts   []string
}

// New returns a Watch that scans when t ends.
func New(t testing.TB) *Watch {
	w := &Watch{t: t}
	w.Logger = slog.New(slog.NewJSONHandler(&w.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	t.Cleanup(w.scan)
	return w
}

// Secret returns a new random value starting with prefix, tracked.
func (w *Watch) Secret(prefix string) string {
	b := make([]byte, 18)
	_, _ = rand.Read(b)
	s := prefix + "-" + base64.RawURLEncoding.EncodeToString(b)
	w.Track(s)
	return s
}

// Track adds values that must never be logged or printed.
func (w *Watch) Track(s ...string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.secrets = append(w.secrets, s...)
}

// Secrets returns the values tracked so far.
func (w *Watch) Secrets() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.secrets...)
}

// Note adds a text to scan.
func (w *Watch) Note(text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.texts = append(w.texts, text)
}

// Record keeps every rendering of err for the scan, logs it, and returns
// it.
func (w *Watch) Record(err error) error {
	if err != nil {
		w.Note(err.Error())
		w.Note(fmt.Sprintf("%v|%+v|%#v|%s|%q", err, err, err, err, err))
		w.Logger.Error("test observed error", slog.Any("error", err))
	}
	return err
}

// Logs returns what was logged so far.
func (w *Watch) Logs() string { return w.logs.String() }

func (w *Watch) scan() {
	haystacks := append([]string{w.logs.String()}, w.snapshot()...)
	for _, s := range w.Secrets() {
		if len(s) < MinSecret {
			w.t.Errorf("tracked secret too short to scan for: %d bytes", len(s))
			continue
		}
		for _, h := range haystacks {
			if strings.Contains(h, s) {
				w.t.Errorf("a secret (%.6s…) appears in logs or an error string: %.200q", s, h)
			}
		}
	}
}

func (w *Watch) snapshot() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.texts...)
}

// syncBuffer is a bytes.Buffer safe for concurrent writers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
