package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/candorkit/candor/internal/testproc"
)

// A first SIGTERM drains; a second one, while a question is still with the
// webhook, ends the process at once.
func TestSecondSignalForcesExit(t *testing.T) {
	bin := testproc.Build(t, ".")
	op, token := startOP(t)
	arrived := make(chan struct{}, 1)
	hold := make(chan struct{})
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select {
		case <-hold:
		case <-r.Context().Done():
		}
	}))
	defer hook.Close()
	defer close(hold)

	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(),
		"ADAPTER_AGENT_NAME=Stock agent", "ADAPTER_AGENT_DESCRIPTION=Answers stock questions",
		"ADAPTER_SKILL_ID=stock-level", "ADAPTER_SKILL_NAME=Stock level", "ADAPTER_SKILL_DESCRIPTION=Units in stock",
		"ADAPTER_WEBHOOK_URL="+hook.URL+"/webhook/stock", "ADAPTER_PUBLIC_URL=http://127.0.0.1:1/a2a",
		"ADAPTER_LISTEN_ADDR=127.0.0.1:0", "ADAPTER_OIDC_ISSUER="+op.Issuer(), "ADAPTER_OIDC_AUDIENCE=stock-agent",
		"ADAPTER_WEBHOOK_TIMEOUT=10m")
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	defer func() { _ = cmd.Process.Kill() }()
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	waitFor := func(msg string) map[string]any {
		t.Helper()
		for line := range lines {
			var rec map[string]any
			if json.Unmarshal([]byte(line), &rec) == nil && strings.HasPrefix(rec["msg"].(string), msg) {
				return rec
			}
		}
		t.Fatalf("the adapter ended before logging %q", msg)
		return nil
	}
	endpoint := "http://" + waitFor("a2a adapter listening")["addr"].(string) + "/a2a"
	go func() {
		body := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"slow"}]}}}`
		req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(body))
		req.Header.Set("A2A-Version", "1.0")
		req.Header.Set("Authorization", "Bearer "+token)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	<-arrived
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	waitFor("shutting down")
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	go func() {
		for range lines { // keep the pipe drained
		}
	}()
	err = cmd.Wait()
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit), "wait: %v", err)
	status, ok := exit.Sys().(syscall.WaitStatus)
	require.True(t, ok)
	assert.True(t, status.Signaled(), "ended by the second signal, not by draining: %v", err)
	assert.Equal(t, syscall.SIGTERM, status.Signal())
}
