package reorder_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/candorkit/candor/reorder"
)

// TestRunnerTypes pins the exported shapes a caller names when wiring a
// Runner by hand: a MandateSource, an Opener, and the *Runner NewRunner
// returns. An Opener is never called without a mandate.
func TestRunnerTypes(t *testing.T) {
	var src reorder.MandateSource = reorder.MandateFunc(func(context.Context) (reorder.Mandate, error) {
		return reorder.Mandate{}, reorder.ErrNoMandate
	})
	opened := false
	var open reorder.Opener = func(context.Context, reorder.Mandate) (reorder.Catalog, error) {
		opened = true
		return nil, nil
	}
	var r *reorder.Runner
	r, err := reorder.NewRunner(src, open, reorder.Thresholds{})
	require.NoError(t, err)
	require.NotNil(t, r)
	_, err = r.Run(context.Background())
	assert.ErrorIs(t, err, reorder.ErrNoMandate)
	assert.False(t, opened, "the catalog was opened without a mandate")
}
