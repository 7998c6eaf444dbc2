package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/candorkit/candor/a2a"
	"github.com/candorkit/candor/internal/testproc"
)

// jsSDKVersion is the @a2a-js/sdk release testdata/jsclient/package.json
// pins.
const jsSDKVersion = "1.3.0"

// jsRequest is one HTTP request the js client sent, as its script saw it.
type jsRequest struct {
	Path       string `json:"path"`
	A2AVersion string `json:"a2aVersion"`
	Method     string `json:"method"`
	Status     int    `json:"status"`
}

// jsResult is the one JSON line testdata/jsclient/client.mjs prints.
type jsResult struct {
	Mode        string      `json:"mode"`
	Requests    []jsRequest `json:"requests"`
	WireVersion string      `json:"wireVersion"`
	TaskID      string      `json:"taskId"`
	State       string      `json:"state"`
	// The text parts of the task's status message and of its artifacts.
	StatusText   string `json:"statusText"`
	ArtifactText string `json:"artifactText"`
	Error        *struct {
		Name    string `json:"name"`
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// writeIfChanged writes data to path (through a temporary file and a
// rename, so a concurrent run never reads half a file) unless it already
// holds exactly data.
func writeIfChanged(t *testing.T, path string, data []byte) {
	t.Helper()
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	require.NoError(t, err)
	_, err = tmp.Write(data)
	require.NoError(t, err)
	require.NoError(t, tmp.Close())
	require.NoError(t, os.Rename(tmp.Name(), path))
}

// jsClient installs @a2a-js/sdk (once; later runs reuse the install) in a
// cache directory outside the repository, with the client script beside
// it, and returns that directory. node and npm are required, not optional.
func jsClient(t *testing.T) string {
	t.Helper()
	_, err := exec.LookPath("node")
	require.NoError(t, err, "the js client test needs Node.js 20 or later")
	cache, err := os.UserCacheDir()
	require.NoError(t, err)
	dir := filepath.Join(cache, "candor", "a2a-js", jsSDKVersion)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	for _, name := range []string{"package.json", "client.mjs"} {
		data, err := os.ReadFile(filepath.Join("testdata", "jsclient", name))
		require.NoError(t, err)
		writeIfChanged(t, filepath.Join(dir, name), data)
	}

	installed := func() bool {
		raw, err := os.ReadFile(filepath.Join(dir, "node_modules", "@a2a-js", "sdk", "package.json"))
		if err != nil {
			return false
		}
		var pkg struct{ Version string }
		return json.Unmarshal(raw, &pkg) == nil && pkg.Version == jsSDKVersion
	}
	if !installed() {
		npm, err := exec.LookPath("npm")
		require.NoError(t, err, "the js client test installs @a2a-js/sdk with npm")
		cmd := exec.CommandContext(t.Context(), npm, "install", "--no-audit", "--no-fund")
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "npm install in %s: %s", dir, out)
		require.True(t, installed(), "npm install did not install @a2a-js/sdk %s: %s", jsSDKVersion, out)
	}
	return dir
}

// serveForJS runs -serve -token-file as a user would, waits for the
// "serving" line, and returns the agent's base URL, its JSON-RPC path and
// the token file.
// The server is stopped, and its exit checked, when the test ends.
func serveForJS(t *testing.T) (base, rpcPath, tokenFile string) {
	t.Helper()
	tokenFile = filepath.Join(t.TempDir(), "token")
	ctx, cancel := context.WithCancel(t.Context())
	pr, pw := io.Pipe()
	var errOut testproc.Buffer
	exit := make(chan int, 1)
	go func() {
		code := run(ctx, []string{"-serve", "-token-file", tokenFile}, noEnv, pw, &errOut)
		pw.Close()
		exit <- code
	}()
	t.Cleanup(func() {
		cancel()
		_, _ = io.Copy(io.Discard, pr)
		assert.Equal(t, 0, <-exit, "stderr %s", errOut.String())
	})
	lines := bufio.NewScanner(pr)
	for lines.Scan() {
		line := lines.Text()
		if v, ok := strings.CutPrefix(line, "agent card: "); ok {
			base = strings.TrimSuffix(v, a2a.CardPath)
		}
		if v, ok := strings.CutPrefix(line, "JSON-RPC:   "); ok {
			endpoint, _, _ := strings.Cut(v, " ")
			u, err := url.Parse(endpoint)
			require.NoError(t, err)
			rpcPath = u.Path
		}
		if line == "serving until SIGINT or SIGTERM" {
			break
		}
	}
	require.NotEmpty(t, base, "no agent card URL printed; stderr %s", errOut.String())
	require.NotEmpty(t, rpcPath, "no JSON-RPC endpoint printed; stderr %s", errOut.String())
	return base, rpcPath, tokenFile
}

// askJS runs the js client script once and decodes its answer.
func askJS(t *testing.T, dir, base, tokenFile, mode, question string) jsResult {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "node", "client.mjs", base, tokenFile, mode, question)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "node client.mjs %s: %s", mode, stderr.String())
	if tokenFile != "" {
		token, err := os.ReadFile(tokenFile)
		require.NoError(t, err)
		require.NotEmpty(t, token)
		assert.NotContains(t, string(out)+stderr.String(), strings.TrimSpace(string(token)), "the js client printed the token")
	}
	t.Logf("%s: %s", mode, out)
	var res jsResult
	require.NoError(t, json.Unmarshal(out, &res), "%s", out)
	return res
}

// TestJSClient: the official @a2a-js/sdk client resolves the served card
// and gets the question answered with a completed task, both in its
// default mode (A2A 1.0) and with its 0.3 compatibility enabled: reading
// the card as it does (the 1.0 card, then 1.0 on the wire) and reading the
// 0.3 card (A2A-Version: 0.3, then 0.3 on the wire). Without a token the
// agent refuses it with 401 and it gets no task.
func TestJSClient(t *testing.T) {
	dir := jsClient(t)
	base, rpcPath, tokenFile := serveForJS(t)
	const question = "Peut-on promettre S10_1949 ?"

	modes := []struct {
		mode   string
		wire   string // the A2A-Version of the card request and the question
		method string
	}{
		{"default", "1.0", "SendMessage"},
		{"legacy", "1.0", "SendMessage"},
		{"legacy03", "0.3", "message/send"},
	}
	for _, m := range modes {
		t.Run(m.mode, func(t *testing.T) {
			res := askJS(t, dir, base, tokenFile, m.mode, question)
			require.Nil(t, res.Error, "the js client failed")
			assert.Equal(t, m.wire, res.WireVersion)
			assert.Equal(t, "TASK_STATE_COMPLETED", res.State)
			assert.NotEmpty(t, res.TaskID)
			assert.Contains(t, res.ArtifactText, "S10_1949")
			assert.Equal(t, yesText, res.ArtifactText)
			assert.Equal(t, yesText, res.StatusText)
			require.Len(t, res.Requests, 2, "one card read, one question")
			assert.Equal(t, jsRequest{Path: a2a.CardPath, A2AVersion: m.wire, Status: 200}, res.Requests[0])
			assert.Equal(t, jsRequest{Path: rpcPath, A2AVersion: m.wire, Method: m.method, Status: 200}, res.Requests[1])
		})
		t.Run(m.mode+" without a token", func(t *testing.T) {
			res := askJS(t, dir, base, "", m.mode, question)
			require.NotNil(t, res.Error, "the js client got an answer without a token")
			// The SDK reports the JSON-RPC error the 401 body carries.
			assert.Equal(t, "JsonRpcTransportError", res.Error.Name)
			assert.Equal(t, -31401, res.Error.Code)
			assert.Contains(t, res.Error.Message, "Bearer token is required")
			assert.Empty(t, res.TaskID)
			assert.Empty(t, res.State)
			require.Len(t, res.Requests, 2)
			assert.Equal(t, 200, res.Requests[0].Status, "the card is public")
			assert.Equal(t, jsRequest{Path: rpcPath, A2AVersion: m.wire, Method: m.method, Status: 401}, res.Requests[1])
		})
	}
}
