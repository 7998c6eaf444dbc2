package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/candorkit/candor/examples/internal/clitest"
	"github.com/candorkit/candor/internal/testproc"
)

// -h and help list the OpenTelemetry variables; a bad
// OTEL_EXPORTER_OTLP_ENDPOINT is a configuration error (exit 3) that never
// echoes the value, reported after the flags are checked.
func TestTelemetryUsageAndConfig(t *testing.T) {
	bin := testproc.Build(t, ".")
	clitest.Help(t, bin, []string{"-h"}, "OTEL_EXPORTER_OTLP_ENDPOINT")
	clitest.Help(t, bin, []string{"help"}, "OTEL_EXPORTER_OTLP_ENDPOINT")
	bad := []string{"OTEL_EXPORTER_OTLP_ENDPOINT=not a url"}
	r := clitest.Exec(t, bin, bad, "-db", t.TempDir()+"/q.db", "run")
	assert.Equal(t, 3, r.Code, r.Stderr)
	assert.Contains(t, r.Stderr, "OTEL_EXPORTER_OTLP_ENDPOINT")
	assert.NotContains(t, r.Stderr, "not a url")
	r = clitest.Exec(t, bin, bad, "-nope")
	assert.Equal(t, 2, r.Code, "flags are checked first: %s", r.Stderr)
}
