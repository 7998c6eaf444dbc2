package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// -h (of every command) and help list the OpenTelemetry variables; a bad
// OTEL_EXPORTER_OTLP_ENDPOINT is a configuration error (exit 3), checked
// after the flags.
func TestTelemetryUsageAndConfig(t *testing.T) {
	h := newHarness(t)
	for _, args := range [][]string{{"-h"}, {"approve", "-h"}, {"help"}} {
		r := h.run(args...).must(t, exitOK)
		assert.Contains(t, r.stdout, "OTEL_EXPORTER_OTLP_ENDPOINT", args)
	}
	h.env["OTEL_EXPORTER_OTLP_ENDPOINT"] = "not a url"
	r := h.run("-once", "-bogus-flag").must(t, exitUsage)
	assert.NotContains(t, r.stderr, "configuration:", "flags are checked first")
	r = h.run("show", "some-id").must(t, exitConfig)
	assert.Contains(t, r.stderr, "OTEL_EXPORTER_OTLP_ENDPOINT")
	assert.NotContains(t, r.stderr, "not a url", "the value is never echoed")
}
