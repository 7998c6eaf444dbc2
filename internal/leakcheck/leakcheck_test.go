package leakcheck

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recordingTB records the errors a Watch reports at cleanup.
type recordingTB struct {
	testing.TB
	cleanups []func()
	errs     []string
}

func (r *recordingTB) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }
func (r *recordingTB) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
func (r *recordingTB) end() {
	for _, f := range r.cleanups {
		f()
	}
}

func TestFindsSecretsInLogsAndErrors(t *testing.T) {
	tb := &recordingTB{TB: t}
	w := New(tb)
	s := w.Secret("client")
	require.True(t, strings.HasPrefix(s, "client-"))
	w.Logger.Info("fine", slog.String("k", "nothing secret"))
	w.Note("a clean text")
	tb.end()
	assert.Empty(t, tb.errs, "nothing leaked")

	tb = &recordingTB{TB: t}
	w = New(tb)
	logged, printed := w.Secret("logged"), w.Secret("printed")
	w.Logger.Info("oops", slog.String("token", logged))
	require.Error(t, w.Record(errors.New("refused "+printed)))
	assert.Contains(t, w.Logs(), logged)
	tb.end()
	assert.Len(t, tb.errs, 4, "the logged secret in the log; the printed one in the log, the error text and its renderings: %q", tb.errs)
}

func TestShortSecretsAreRefused(t *testing.T) {
	tb := &recordingTB{TB: t}
	w := New(tb)
	w.Track("short")
	assert.Equal(t, []string{"short"}, w.Secrets())
	assert.Less(t, len("short"), MinSecret)
	tb.end()
	require.Len(t, tb.errs, 1)
	assert.Contains(t, tb.errs[0], "too short")
}
