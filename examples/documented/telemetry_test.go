package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/candorkit/candor/examples/internal/clitest"
	"github.com/candorkit/candor/internal/testproc"
)

// -h and help list the OpenTelemetry variables; a bad
// OTEL_EXPORTER_OTLP_ENDPOINT is a configuration error (exit 3) that never
// echoes the value.
func TestTelemetryUsageAndConfig(t *testing.T) {
	bin := testproc.Build(t, ".")
	clitest.Help(t, bin, []string{"-h"}, "OTEL_EXPORTER_OTLP_ENDPOINT")
	clitest.Help(t, bin, []string{"help"}, "OTEL_EXPORTER_OTLP_ENDPOINT")
	clitest.Help(t, bin, []string{"show", "-h"}, "OTEL_EXPORTER_OTLP_ENDPOINT")
	r := clitest.Exec(t, bin, []string{"OTEL_EXPORTER_OTLP_ENDPOINT=not a url"}, "show", "-dir", t.TempDir())
	assert.Equal(t, exitConfig, r.Code, r.Stderr)
	assert.Contains(t, r.Stderr, "OTEL_EXPORTER_OTLP_ENDPOINT")
	assert.NotContains(t, r.Stderr, "not a url")
	r = clitest.Exec(t, bin, []string{"OTEL_EXPORTER_OTLP_ENDPOINT=not a url"}, "show", "-bogus")
	assert.Equal(t, exitUsage, r.Code, "flags are checked first: %s", r.Stderr)
}
