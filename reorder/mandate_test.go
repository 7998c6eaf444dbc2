package reorder_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/candorkit/candor/reorder"
)

const secret = "eyJ-secret-refresh-derived-token"

func TestRunnerNoMandateReadsNothing(t *testing.T) {
	storeDown := errors.New("mandate store: database is locked")
	cases := []struct {
		name    string
		src     reorder.MandateFunc
		missing bool
	}{
		{"none granted", func(context.Context) (reorder.Mandate, error) {
			return reorder.Mandate{}, fmt.Errorf("user alice: %w", reorder.ErrNoMandate)
		}, true},
		{"empty token", func(context.Context) (reorder.Mandate, error) {
			return reorder.Mandate{Subject: "alice"}, nil
		}, true},
		{"source failed", func(context.Context) (reorder.Mandate, error) {
			return reorder.Mandate{}, storeDown
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cat := &memCatalog{items: loadFixture(t)}
			opened := 0
			r, err := reorder.NewRunner(c.src, func(context.Context, reorder.Mandate) (reorder.Catalog, error) {
				opened++
				return cat, nil
			}, reorder.Thresholds{})
			require.NoError(t, err)
			p, err := r.Run(context.Background())
			assert.Zero(t, cat.calls.Load(), "catalog read without a mandate")
			assert.Zero(t, opened, "catalog opened without a mandate")
			var he *reorder.HaltedError
			require.ErrorAs(t, err, &he)
			assert.Equal(t, c.missing, errors.Is(err, reorder.ErrNoMandate))
			if !c.missing {
				assert.ErrorIs(t, err, storeDown)
			}
			assert.False(t, p.Complete)
			assert.True(t, p.Escalate)
			assert.Zero(t, p.Scanned)
			assert.Empty(t, p.Lines)
			require.NotEmpty(t, p.Reasons)
			assert.Contains(t, p.Reasons[0], "halted before any read")
		})
	}
}

func TestRunnerWithMandate(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	src := reorder.MandateFunc(func(context.Context) (reorder.Mandate, error) {
		return reorder.Mandate{Subject: "alice", Token: secret}, nil
	})
	var gotToken string
	cat := &memCatalog{items: loadFixture(t)}
	r, err := reorder.NewRunner(src, func(_ context.Context, m reorder.Mandate) (reorder.Catalog, error) {
		gotToken = m.Token
		return cat, nil
	}, reorder.Thresholds{PageSize: 50}, reorder.WithLogger(logger))
	require.NoError(t, err)
	p, err := r.Run(context.Background())
	require.NoError(t, err)
	assert.True(t, p.Complete)
	assert.Equal(t, []reorder.Line{bsa}, p.Lines)
	assert.EqualValues(t, 3, cat.calls.Load(), "pages of 50 over 110 items")
	assert.Equal(t, secret, gotToken, "opener did not receive the mandate's token")
	assert.NotContains(t, logs.String(), secret)
	assert.Contains(t, logs.String(), `"subject":"alice"`)
}

// TestRunnerAppliesThresholds pins that the thresholds given to NewRunner
// are the ones its runs plan with (the earlier option for them was silently
// ignored by Run, and a clock option by NewRunner).
func TestRunnerAppliesThresholds(t *testing.T) {
	src := reorder.MandateFunc(func(context.Context) (reorder.Mandate, error) {
		return reorder.Mandate{Subject: "alice", Token: secret}, nil
	})
	cat := &memCatalog{items: loadFixture(t)}
	r, err := reorder.NewRunner(src, func(context.Context, reorder.Mandate) (reorder.Catalog, error) { return cat, nil },
		reorder.Thresholds{PageSize: 50, MaxPages: 1})
	require.NoError(t, err)
	p, err := r.Run(context.Background())
	require.ErrorIs(t, err, reorder.ErrPageCap)
	assert.Equal(t, 50, p.Scanned)
	assert.Equal(t, []int{50}, cat.sizes)
}

// TestNoLoggerLogsNothing pins that, without WithLogger (or with a nil
// one), neither a Runner nor Run writes to slog.Default.
func TestNoLoggerLogsNothing(t *testing.T) {
	var def bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&def, &slog.HandlerOptions{Level: slog.LevelDebug})))
	t.Cleanup(func() { slog.SetDefault(prev) })

	none := reorder.MandateFunc(func(context.Context) (reorder.Mandate, error) { return reorder.Mandate{}, reorder.ErrNoMandate })
	open := func(context.Context, reorder.Mandate) (reorder.Catalog, error) { return &memCatalog{}, nil }
	for _, opts := range [][]reorder.Option{nil, {reorder.WithLogger(nil)}} {
		r, err := reorder.NewRunner(none, open, reorder.Thresholds{}, opts...)
		require.NoError(t, err)
		_, err = r.Run(context.Background())
		require.ErrorIs(t, err, reorder.ErrNoMandate)
	}
	assert.Empty(t, def.String())
}

func TestRunnerOpenFails(t *testing.T) {
	refused := errors.New("token exchange refused: invalid_grant")
	src := reorder.MandateFunc(func(context.Context) (reorder.Mandate, error) {
		return reorder.Mandate{Subject: "alice", Token: secret}, nil
	})
	r, err := reorder.NewRunner(src, func(context.Context, reorder.Mandate) (reorder.Catalog, error) { return nil, refused }, reorder.Thresholds{})
	require.NoError(t, err)
	p, err := r.Run(context.Background())
	assert.ErrorIs(t, err, refused)
	assert.False(t, p.Complete)
	assert.True(t, p.Escalate)

	r, err = reorder.NewRunner(src, func(context.Context, reorder.Mandate) (reorder.Catalog, error) { return nil, nil }, reorder.Thresholds{})
	require.NoError(t, err)
	_, err = r.Run(context.Background())
	assert.ErrorIs(t, err, reorder.ErrNilCatalog)
}

func TestNewRunnerRejects(t *testing.T) {
	src := reorder.MandateFunc(func(context.Context) (reorder.Mandate, error) { return reorder.Mandate{}, nil })
	open := func(context.Context, reorder.Mandate) (reorder.Catalog, error) { return nil, nil }
	_, err := reorder.NewRunner(nil, open, reorder.Thresholds{})
	assert.ErrorContains(t, err, "MandateSource")
	_, err = reorder.NewRunner(src, nil, reorder.Thresholds{})
	assert.ErrorContains(t, err, "Opener")
	var te *reorder.ThresholdsError
	_, err = reorder.NewRunner(src, open, reorder.Thresholds{OrderUpTo: 10})
	require.ErrorAs(t, err, &te)
	assert.Equal(t, "OrderUpTo", te.Field)
}

func TestMandateNeverShowsToken(t *testing.T) {
	m := reorder.Mandate{Subject: "alice", Token: secret}
	var buf bytes.Buffer
	slog.New(slog.NewTextHandler(&buf, nil)).Info("x", "m", m)
	j, err := json.Marshal(m)
	require.NoError(t, err)
	assert.True(t, json.Valid(j), "invalid JSON %s", j)
	for _, s := range []string{fmt.Sprint(m), fmt.Sprintf("%v %+v %#v %s", m, m, m, m), fmt.Sprintf("%v", &m), buf.String(), string(j)} {
		assert.NotContains(t, s, secret)
		assert.Contains(t, s, "alice")
	}
}
