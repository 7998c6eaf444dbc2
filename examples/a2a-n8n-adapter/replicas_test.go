package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/candorkit/candor/internal/pgtest"
	"github.com/candorkit/candor/internal/testproc"
	"github.com/candorkit/candor/tokenexchange/oidctest"
)

// startReplica runs the adapter binary with env and returns its address.
func startReplica(t *testing.T, bin string, env []string) string {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), env...)
	pr, pw := io.Pipe()
	var logs testproc.Buffer
	cmd.Stderr = io.MultiWriter(pw, &logs)
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait(); pw.Close() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("replica log:\n%s", logs.String())
		}
	})
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			var line struct {
				Msg, Addr string
				TaskStore string `json:"task_store"`
			}
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "a2a adapter listening" {
				assert.Equal(t, "postgres", line.TaskStore)
				assert.NotContains(t, sc.Text(), "postgres://", "nothing of the DSN is logged")
				addr <- line.Addr
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	select {
	case a := <-addr:
		return a
	case err := <-exited:
		t.Fatalf("the adapter exited: %v\n%s", err, logs.String())
		return ""
	}
}

type rpcOut struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

type wireTask struct {
	ID     string `json:"id"`
	Status struct {
		State string `json:"state"`
	} `json:"status"`
	Artifacts []struct {
		Parts []struct {
			Text string `json:"text"`
		} `json:"parts"`
	} `json:"artifacts"`
}

func call(t *testing.T, endpoint, token, method, params string) rpcOut {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":` + params + `}`
	req, err := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	require.NoError(t, err)
	var out rpcOut
	require.NoError(t, json.Unmarshal(b, &out), "%s", b)
	return out
}

func getTask(t *testing.T, endpoint, token, id string) (wireTask, rpcOut) {
	t.Helper()
	out := call(t, endpoint, token, "GetTask", `{"id":"`+id+`"}`)
	var tk wireTask
	if out.Error == nil {
		require.NoError(t, json.Unmarshal(out.Result, &tk))
	}
	return tk, out
}

// Two adapter processes on one PostgreSQL (ADAPTER_TASKS_DSN) behind a
// round-robin proxy: a task created through one is read, listed and seen
// final through the other; another caller sees it through neither.
func TestTwoReplicasShareTasks(t *testing.T) {
	bin := testproc.Build(t, ".")
	cluster := pgtest.Start(t)
	dsn := cluster.NewDatabase(t)

	op, err := oidctest.Start(oidctest.Options{})
	require.NoError(t, err)
	t.Cleanup(op.Close)
	require.NoError(t, errors.Join(
		op.AddUser(oidctest.User{ID: "marie", Username: "marie"}),
		op.AddUser(oidctest.User{ID: "pierre", Username: "pierre"}),
		op.AddClient(oidctest.Client{ID: "webapp", Secret: "webapp-secret", Audiences: []string{"stock-agent"}}),
	))
	marie, err := op.UserAccessToken(t.Context(), "marie", "webapp")
	require.NoError(t, err)
	pierre, err := op.UserAccessToken(t.Context(), "pierre", "webapp")
	require.NoError(t, err)

	release := make(chan struct{})
	var releaseOnce sync.Once
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var q struct{ Text string }
		_ = json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&q)
		if q.Text == "slow" {
			<-release
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"answer":"answer to `+q.Text+`","escalate":false}`)
	}))
	t.Cleanup(hook.Close)
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) }) // before hook.Close

	var mu sync.Mutex
	var targets []*httputil.ReverseProxy
	var served []int
	next := 0
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		i := next
		next = (next + 1) % len(targets)
		served = append(served, i)
		p := targets[i]
		mu.Unlock()
		p.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	last := func() int {
		mu.Lock()
		defer mu.Unlock()
		return served[len(served)-1]
	}

	env := []string{
		"ADAPTER_AGENT_NAME=Stock agent", "ADAPTER_AGENT_DESCRIPTION=Answers stock questions",
		"ADAPTER_SKILL_ID=stock-level", "ADAPTER_SKILL_NAME=Stock level", "ADAPTER_SKILL_DESCRIPTION=Units in stock",
		"ADAPTER_WEBHOOK_URL=" + hook.URL + "/webhook/stock", "ADAPTER_PUBLIC_URL=" + proxy.URL + "/a2a",
		"ADAPTER_LISTEN_ADDR=127.0.0.1:0", "ADAPTER_OIDC_ISSUER=" + op.Issuer(), "ADAPTER_OIDC_AUDIENCE=stock-agent",
		"ADAPTER_TASKS_DSN=" + dsn,
	}
	var addrs [2]string
	var wg sync.WaitGroup // both start at once: the schema is migrated once
	for i := range addrs {
		wg.Go(func() { addrs[i] = startReplica(t, bin, env) })
	}
	wg.Wait()
	for _, a := range addrs {
		u, err := url.Parse("http://" + a)
		require.NoError(t, err)
		targets = append(targets, httputil.NewSingleHostReverseProxy(u))
	}
	endpoint := proxy.URL + "/a2a"

	// Blocking: answered by A, read through B.
	out := call(t, endpoint, marie, "SendMessage", `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"quick"}]}}`)
	require.Nil(t, out.Error)
	require.Equal(t, 0, last())
	var sent struct{ Task wireTask }
	require.NoError(t, json.Unmarshal(out.Result, &sent))
	require.Equal(t, "TASK_STATE_COMPLETED", sent.Task.Status.State)
	quick := sent.Task.ID
	got, out := getTask(t, endpoint, marie, quick)
	require.Nil(t, out.Error)
	assert.Equal(t, 1, last())
	assert.Equal(t, "TASK_STATE_COMPLETED", got.Status.State)
	assert.Equal(t, "answer to quick", got.Artifacts[0].Parts[0].Text)

	// returnImmediately: created by A, read on B and listed on A while it
	// runs, finished by A, seen final by B.
	out = call(t, endpoint, marie, "SendMessage",
		`{"message":{"messageId":"m2","role":"ROLE_USER","parts":[{"text":"slow"}]},"configuration":{"returnImmediately":true}}`)
	require.Nil(t, out.Error)
	require.Equal(t, 0, last())
	require.NoError(t, json.Unmarshal(out.Result, &sent))
	require.Equal(t, "TASK_STATE_WORKING", sent.Task.Status.State)
	slow := sent.Task.ID
	got, out = getTask(t, endpoint, marie, slow)
	require.Nil(t, out.Error)
	assert.Equal(t, 1, last())
	assert.Equal(t, "TASK_STATE_WORKING", got.Status.State)
	out = call(t, endpoint, marie, "ListTasks", `{"pageSize":1}`)
	require.Nil(t, out.Error)
	assert.Equal(t, 0, last())
	var page struct {
		Tasks         []wireTask
		TotalSize     int
		NextPageToken string
	}
	require.NoError(t, json.Unmarshal(out.Result, &page))
	assert.Equal(t, 2, page.TotalSize)
	require.Len(t, page.Tasks, 1)
	assert.Equal(t, slow, page.Tasks[0].ID)
	out = call(t, endpoint, marie, "ListTasks", `{"pageSize":1,"pageToken":"`+page.NextPageToken+`"}`)
	require.Nil(t, out.Error)
	assert.Equal(t, 1, last(), "the next page from the other replica")
	require.NoError(t, json.Unmarshal(out.Result, &page))
	require.Len(t, page.Tasks, 1)
	assert.Equal(t, quick, page.Tasks[0].ID)

	releaseOnce.Do(func() { close(release) })
	b := "http://" + addrs[1] + "/a2a"
	deadline := time.Now().Add(30 * time.Second)
	for { // poll replica B until A's final write is visible there
		got, out = getTask(t, b, marie, slow)
		require.Nil(t, out.Error)
		if got.Status.State != "TASK_STATE_WORKING" {
			break
		}
		require.False(t, time.Now().After(deadline), "B never saw the final state")
		<-time.After(5 * time.Millisecond) // polling another process's state
	}
	assert.Equal(t, "TASK_STATE_COMPLETED", got.Status.State)
	assert.Equal(t, "answer to slow", got.Artifacts[len(got.Artifacts)-1].Parts[0].Text)

	// Pierre sees none of marie's tasks, through either replica.
	for range 2 {
		for _, id := range []string{quick, slow} {
			_, out := getTask(t, endpoint, pierre, id)
			require.NotNil(t, out.Error, "replica %d", last())
			assert.Equal(t, -32001, out.Error.Code, "replica %d", last())
		}
		out := call(t, endpoint, pierre, "ListTasks", `{}`)
		require.Nil(t, out.Error)
		require.NoError(t, json.Unmarshal(out.Result, &page))
		assert.Empty(t, page.Tasks, "replica %d", last())
	}
}
