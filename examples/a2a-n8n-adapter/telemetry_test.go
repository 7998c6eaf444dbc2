package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/candorkit/candor/internal/testproc"
)

// TestServeExportsTelemetryAndProbes runs the binary with
// OTEL_EXPORTER_OTLP_ENDPOINT set: its probes answer, and on shutdown the
// request, task and webhook spans reach the collector under
// OTEL_SERVICE_NAME, in the caller's trace, without the caller's token or
// the webhook's path.
func TestServeExportsTelemetryAndProbes(t *testing.T) {
	bin := testproc.Build(t, ".")
	op, token := startOP(t)
	hookHeaders := make(chan http.Header, 1)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case hookHeaders <- r.Header.Clone():
		default:
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"answer":"7305 in stock","escalate":false}`)
	}))
	defer hook.Close()
	var mu sync.Mutex
	exported := map[string][]byte{}
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		exported[r.URL.Path] = append(exported[r.URL.Path], b...)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer collector.Close()

	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(),
		"ADAPTER_AGENT_NAME=Stock agent", "ADAPTER_AGENT_DESCRIPTION=Answers stock questions",
		"ADAPTER_SKILL_ID=stock-level", "ADAPTER_SKILL_NAME=Stock level", "ADAPTER_SKILL_DESCRIPTION=Units in stock",
		"ADAPTER_WEBHOOK_URL="+hook.URL+"/webhook/telemetry-secret-path", "ADAPTER_PUBLIC_URL=http://127.0.0.1:1/a2a",
		"ADAPTER_LISTEN_ADDR=127.0.0.1:0", "ADAPTER_OIDC_ISSUER="+op.Issuer(), "ADAPTER_OIDC_AUDIENCE=stock-agent",
		"OTEL_EXPORTER_OTLP_ENDPOINT="+collector.URL, "OTEL_SERVICE_NAME=stock-adapter-test")
	pr, pw := io.Pipe()
	var logs testproc.Buffer
	cmd.Stderr = io.MultiWriter(pw, &logs)
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait(); pw.Close() }()
	defer func() { _ = cmd.Process.Kill() }()
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			var line struct{ Msg, Addr string }
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "a2a adapter listening" {
				addr <- line.Addr
			}
		}
	}()
	var base string
	select {
	case a := <-addr:
		base = "http://" + a
	case err := <-exited:
		t.Fatalf("the adapter exited: %v\n%s", err, logs.String())
	}

	for _, p := range []string{"/healthz", "/readyz"} {
		resp, err := http.Get(base + p)
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		assert.Equal(t, 200, resp.StatusCode, "%s: %s", p, b)
	}

	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	body := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"How many?"}]}}}`
	req, _ := http.NewRequest(http.MethodPost, base+"/a2a", strings.NewReader(body))
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Traceparent", "00-"+traceID+"-00f067aa0ba902b7-01")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	out, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	require.Contains(t, string(out), "TASK_STATE_COMPLETED")
	assert.Contains(t, (<-hookHeaders).Get("Traceparent"), traceID, "the webhook got the caller's trace")

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, <-exited, logs.String())
	mu.Lock()
	defer mu.Unlock()
	traces := exported["/v1/traces"]
	for _, want := range []string{"SendMessage", "a2a.task", "POST", "stock-adapter-test"} {
		assert.True(t, bytes.Contains(traces, []byte(want)), "%q exported", want)
	}
	tid := []byte{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36}
	assert.True(t, bytes.Contains(traces, tid), "the spans are in the caller's trace")
	assert.True(t, bytes.Contains(exported["/v1/metrics"], []byte("candor.a2a.tasks")), "the task counter exported")
	for _, secret := range []string{token, "telemetry-secret-path"} {
		assert.False(t, bytes.Contains(traces, []byte(secret)) || bytes.Contains(exported["/v1/metrics"], []byte(secret)), "a secret was exported")
	}
}
