package main

import (
	"bytes"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/candorkit/candor/examples/internal/demo"
)

// TestExitCodeRules pins both rules: -ask exits 0 only for a completed
// task; the demo exits 0 when every question reached a decision of the
// agent (completed or escalated) and 1 when any failed for a technical
// reason or got no task.
func TestExitCodeRules(t *testing.T) {
	completed := answer{State: "completed"}
	escalated := answer{State: "failed", Failure: "escalated"}
	for _, tc := range []struct {
		name    string
		answers []answer
		ask     int // the exit code of -ask with the first answer
		demo    int
		stderr  string // the demo's stderr line, "" when it exits 0
	}{
		{"completed", []answer{completed}, 0, 0, ""},
		{"escalated", []answer{escalated, completed, escalated}, 1, 0, ""},
		{"failed backend", []answer{{State: "failed", Failure: "backend"}, completed, escalated}, 1, 1, "1 of 3 demo question(s) failed for a technical reason (failed (backend))"},
		{"no identity", []answer{{State: "failed", Failure: "no_identity"}}, 1, 1, "(failed (no_identity))"},
		{"no reply", []answer{completed, {State: "failed", Failure: "no_reply"}}, 0, 1, "(failed (no_reply))"},
		{"off contract", []answer{{State: "failed", Failure: "off_contract"}}, 1, 1, "(failed (off_contract))"},
		{"failed without a kind", []answer{{State: "failed"}}, 1, 1, "(failed)"},
		{"no task", []answer{{Err: errors.New("HTTP 401")}, escalated}, 1, 1, "1 of 2 demo question(s) failed for a technical reason (no task)"},
		{"input required", []answer{{State: "input_required"}}, 1, 1, "(input_required)"},
		{"escalation of a completed state is not one", []answer{{State: "completed", Failure: "escalated"}}, 0, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var askErr bytes.Buffer
			assert.Equal(t, tc.ask, askExitCode(tc.answers[0], &askErr))
			assert.Equal(t, tc.ask != 0, askErr.Len() > 0, "-ask stderr %q", askErr.String())

			var out, errb bytes.Buffer
			assert.Equal(t, tc.demo, demoExitCode(tc.answers, &out, &errb))
			if tc.stderr == "" {
				assert.Empty(t, errb.String())
				assert.Contains(t, out.String(), "demo: every question reached the agent's decision")
			} else {
				assert.Contains(t, errb.String(), tc.stderr)
				assert.Empty(t, out.String())
			}
		})
	}
}

// deadURL is an MCP URL on loopback where nothing listens.
func deadURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return "http://" + addr + "/mcp"
}

// TestRunDemoExitCodes runs the demo (no -ask) against services it did not
// start, through the public flags: with a working catalog it exits 0 (one
// completed, two escalations by design); with the catalog down the two
// questions that need it fail "backend" and it exits 1; with a caller
// token the agent refuses, no question gets a task and it exits 1. -ask
// against the dead catalog exits 1 too.
func TestRunDemoExitCodes(t *testing.T) {
	emb, err := startEmbedded(t.Context(), discard, demo.WithCallLog())
	require.NoError(t, err)
	t.Cleanup(emb.Close)
	userToken, err := emb.UserToken(t.Context())
	require.NoError(t, err)
	real := func(mcpURL string) []string {
		return []string{"-mcp", mcpURL, "-issuer", emb.OP.Issuer(), "-client-id", agentClient, "-audience", mcpAudience}
	}
	env := map[string]string{envClientSecret: emb.AgentSecret, envUserToken: userToken}

	var out, errOut bytes.Buffer
	assert.Equal(t, 0, run(t.Context(), real(emb.MCPURL), envOf(env), &out, &errOut), errOut.String())
	assert.Empty(t, errOut.String())
	assert.Contains(t, out.String(), "  completed: "+yesText+"\n")
	assert.Contains(t, out.String(), "\ndemo: every question reached the agent's decision: 1 completed, 2 escalated to a person\n")

	dead := deadURL(t)
	out.Reset()
	errOut.Reset()
	assert.Equal(t, 1, run(t.Context(), real(dead), envOf(env), &out, &errOut))
	assert.Equal(t, "availability: 2 of 3 demo question(s) failed for a technical reason (failed (backend), failed (backend))\n", errOut.String())
	assert.Contains(t, out.String(), "> Peut-on promettre la Vespa ?\n  failed (escalated): "+vespaText+"\n")
	assert.Equal(t, 2, strings.Count(out.String(), "  failed (backend): "), out.String())
	assert.NotContains(t, out.String(), "demo: every question")

	out.Reset()
	errOut.Reset()
	assert.Equal(t, 1, run(t.Context(), append(real(dead), "-ask", "Peut-on promettre S10_1949 ?"), envOf(env), &out, &errOut))
	assert.Equal(t, "availability: the question did not complete (failed (backend))\n", errOut.String())

	// A caller token for another audience: the facade refuses every
	// question with 401, so none gets a task.
	foreign := map[string]string{envClientSecret: emb.AgentSecret, envUserToken: userToken}
	out.Reset()
	errOut.Reset()
	args := append(real(emb.MCPURL), "-agent-audience", "another-agent")
	assert.Equal(t, 1, run(t.Context(), args, envOf(foreign), &out, &errOut))
	assert.Equal(t, "availability: 3 of 3 demo question(s) failed for a technical reason (no task, no task, no task)\n", errOut.String())
	assert.Equal(t, 3, strings.Count(out.String(), "  error (no task): "), out.String())
}
