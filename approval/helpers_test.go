package approval

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
)

type testDraft struct {
	Title    string   `json:"title"`
	Quantity int      `json:"quantity"`
	Lines    []string `json:"lines,omitempty"`
}

func (d testDraft) Validate() []error {
	var errs []error
	if d.Title == "" {
		errs = append(errs, errors.New("title is empty"))
	}
	if d.Quantity <= 0 {
		errs = append(errs, errors.New("quantity must be positive"))
	}
	return errs
}

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func openTest(t testing.TB, path string, opts ...Option) *Store {
	t.Helper()
	s, err := Open(context.Background(), path, append([]Option{WithLogger(discardLogger())}, opts...)...)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	return s
}

func newStore(t testing.TB, opts ...Option) *Store {
	t.Helper()
	s := openTest(t, filepath.Join(t.TempDir(), "approval.db"), opts...)
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func writeFile(path, body string) error { return os.WriteFile(path, []byte(body), 0o600) }
