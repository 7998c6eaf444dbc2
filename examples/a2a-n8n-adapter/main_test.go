package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/candorkit/candor/internal/testproc"
	"github.com/candorkit/candor/tokenexchange/oidctest"
)

// startOP starts a real OpenID provider and mints a user's access token for
// the agent's audience.
func startOP(t *testing.T) (*oidctest.Provider, string) {
	t.Helper()
	p, err := oidctest.Start(oidctest.Options{})
	require.NoError(t, err)
	t.Cleanup(p.Close)
	require.NoError(t, errors.Join(
		p.AddUser(oidctest.User{ID: "marie", Username: "marie"}),
		p.AddClient(oidctest.Client{ID: "webapp", Secret: "webapp-secret", Audiences: []string{"stock-agent"}}),
	))
	tok, err := p.UserAccessToken(t.Context(), "marie", "webapp")
	require.NoError(t, err)
	return p, tok
}

func noEnv(string) (string, bool) { return "", false }

func TestHelpDocumentsEveryVariable(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run(t.Context(), func() {}, []string{"-h"}, noEnv, &out, &errOut)
	require.Equal(t, 0, code, errOut.String())
	assert.Empty(t, errOut.String())
	for _, v := range envVars() {
		assert.Contains(t, out.String(), v.Name)
		assert.Contains(t, out.String(), v.Description)
	}
	assert.Contains(t, out.String(), "Exit codes")
}

func TestUsageError(t *testing.T) {
	for _, args := range [][]string{{"-nope"}, {"serve"}} {
		var out, errOut bytes.Buffer
		code := run(t.Context(), func() {}, args, noEnv, &out, &errOut)
		assert.Equal(t, 2, code, args)
		assert.Empty(t, out.String())
		assert.Equal(t, 1, strings.Count(errOut.String(), "Usage:"), "the usage once")
		assert.True(t, strings.HasPrefix(errOut.String(), "a2a-n8n-adapter: "), "one line first: %q", errOut.String())
	}
}

// A configuration error is one readable line naming every bad variable, then
// "see -h", exit 3 — not a JSON log record.
func TestBadConfigurationNamesEveryVariable(t *testing.T) {
	var out, errOut bytes.Buffer
	env := map[string]string{"ADAPTER_WEBHOOK_URL": "not a url/secret-path", "ADAPTER_TASK_TTL": "later"}
	code := run(t.Context(), func() {}, nil, func(k string) (string, bool) { v, ok := env[k]; return v, ok }, &out, &errOut)
	assert.Equal(t, 3, code)
	line := errOut.String()
	for _, name := range []string{"ADAPTER_AGENT_NAME", "ADAPTER_PUBLIC_URL", "ADAPTER_WEBHOOK_URL", "ADAPTER_TASK_TTL", "ADAPTER_OIDC_ISSUER"} {
		assert.Contains(t, line, name)
	}
	assert.Equal(t, 1, strings.Count(line, "\n"), "one line: %q", line)
	assert.True(t, strings.HasSuffix(line, "; see -h\n"), line)
	assert.False(t, strings.HasPrefix(line, "{"), "not a JSON record")
	assert.NotContains(t, line, "secret-path")
}

// TestServeAndGracefulShutdown runs the real binary: it answers, and SIGTERM
// lets the questions in flight finish before the process exits 0: one whose
// request is still open, and one sent with returnImmediately, whose request
// has already been answered with the working task.
func TestServeAndGracefulShutdown(t *testing.T) {
	bin := testproc.Build(t, ".")
	op, token := startOP(t)

	type call struct {
		header http.Header
		text   string
	}
	arrived := make(chan call, 4)
	releases := map[string]chan struct{}{"slow-open": make(chan struct{}), "slow-immediate": make(chan struct{})}
	var releaseOnce sync.Map
	release := func(text string) {
		if _, done := releaseOnce.LoadOrStore(text, true); !done {
			close(releases[text])
		}
	}
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var q struct{ Text string }
		_ = json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&q)
		arrived <- call{r.Header.Clone(), q.Text}
		if ch, ok := releases[q.Text]; ok {
			<-ch
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"answer":"7305 in stock","escalate":false}`)
	}))
	defer hook.Close()
	defer func() { // before hook.Close, which waits for its handlers
		for text := range releases {
			release(text)
		}
	}()

	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(),
		"ADAPTER_AGENT_NAME=Stock agent", "ADAPTER_AGENT_DESCRIPTION=Answers stock questions",
		"ADAPTER_SKILL_ID=stock-level", "ADAPTER_SKILL_NAME=Stock level", "ADAPTER_SKILL_DESCRIPTION=Units in stock",
		"ADAPTER_WEBHOOK_URL="+hook.URL+"/webhook/stock", "ADAPTER_PUBLIC_URL=http://127.0.0.1:1/a2a",
		"ADAPTER_LISTEN_ADDR=127.0.0.1:0", "ADAPTER_OIDC_ISSUER="+op.Issuer(), "ADAPTER_OIDC_AUDIENCE=stock-agent")
	pr, pw := io.Pipe()
	var logs testproc.Buffer // the child's stderr, read while it runs
	cmd.Stderr = io.MultiWriter(pw, &logs)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
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
	var endpoint string
	select {
	case a := <-addr:
		endpoint = "http://" + a + "/a2a"
	case err := <-exited:
		t.Fatalf("the adapter exited: %v\n%s", err, logs.String())
	}

	var sendAs func(token, text string, immediate bool) (string, error)
	send := func(text string, immediate bool) (string, error) {
		return sendAs(token, text, immediate)
	}
	sendAs = func(token, text string, immediate bool) (string, error) {
		config := ""
		if immediate {
			config = `,"configuration":{"returnImmediately":true}`
		}
		body := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m-` + text +
			`","role":"ROLE_USER","parts":[{"text":"` + text + `"}]}` + config + `}}`
		req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(body))
		req.Header.Set("A2A-Version", "1.0")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return string(b), err
	}
	// waitLog polls the child's log output until it holds s; the process
	// must not exit first.
	waitLog := func(s string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !strings.Contains(logs.String(), s) {
			if time.Now().After(deadline) {
				t.Fatalf("no %q in the logs: %s", s, logs.String())
			}
			select {
			case err := <-exited:
				t.Fatalf("exited (%v) before logging %q, with a question in flight: %s", err, s, logs.String())
			case <-time.After(10 * time.Millisecond): // polling the child's log output
			}
		}
	}

	// A forged token is refused before the webhook is called.
	out, err := sendAs(token[:len(token)-4]+"AAAA", "forged", false)
	require.NoError(t, err)
	assert.Contains(t, out, `"code":-31401`)
	out, err = sendAs("not-a-jwt", "opaque", false)
	require.NoError(t, err)
	assert.Contains(t, out, `"code":-31401`)

	out, err = send("fast", false)
	if err != nil || !strings.Contains(out, `"state":"TASK_STATE_COMPLETED"`) || !strings.Contains(out, "7305 in stock") {
		t.Fatalf("SendMessage = %s, %v", out, err)
	}
	if c := <-arrived; c.header.Get("X-Subject-Token") != token {
		t.Fatalf("X-Subject-Token = %q", c.header.Get("X-Subject-Token"))
	}

	// Two questions in flight when SIGTERM arrives: one whose request is
	// open, one whose request already got the working task back.
	answered := make(chan string, 1)
	go func() {
		out, err := send("slow-open", false)
		if err != nil {
			out = "error: " + err.Error()
		}
		answered <- out
	}()
	<-arrived
	if out, err := send("slow-immediate", true); err != nil || !strings.Contains(out, `"state":"TASK_STATE_WORKING"`) {
		t.Fatalf("returnImmediately SendMessage = %s, %v", out, err)
	}
	<-arrived
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitLog("shutting down")
	release("slow-open")
	if out := <-answered; !strings.Contains(out, `"state":"TASK_STATE_COMPLETED"`) {
		t.Fatalf("the question in flight got %s", out)
	}
	// The open request is done; the returnImmediately task is still with the
	// webhook, and the adapter waits for it.
	waitLog("waiting for the tasks still being answered")
	release("slow-immediate")
	if err := <-exited; err != nil {
		t.Fatalf("exit: %v\n%s", err, logs.String())
	}
	if got := strings.Count(logs.String(), `"msg":"a2a task completed"`); got != 3 {
		t.Fatalf("%d tasks completed, want 3: %s", got, logs.String())
	}
	if !strings.Contains(logs.String(), `"msg":"stopped"`) {
		t.Fatalf("logs: %s", logs.String())
	}
	if strings.Contains(logs.String(), token) {
		t.Fatalf("the token is in the logs: %s", logs.String())
	}
}
