package progress_test

import (
	"os"
	"time"

	"github.com/candorkit/candor/examples/builder/internal/progress"
)

func Example() {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	calls := 0
	clock := func() time.Time { calls++; return t0.Add(time.Duration(calls) * 40 * time.Millisecond) }

	text := progress.New(os.Stdout, progress.WithClock(clock))
	text.Start("pick").OK("idea 1 \"Order confirmation relay\"")

	lines := progress.New(os.Stdout, progress.JSON(true), progress.WithClock(clock))
	lines.Start("claim").OK("builder_status=queued")
	// Output:
	// pick           ok        40ms  idea 1 "Order confirmation relay"
	// {"step":"claim","status":"ok","duration_ms":40,"detail":"builder_status=queued"}
}
