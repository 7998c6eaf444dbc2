package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/candorkit/candor/a2a/pgstore"
	"github.com/candorkit/candor/internal/pgtest"
)

// tasksRPC sends one JSON-RPC call to the agent and returns its result, or
// fails the test on an error response.
func tasksRPC(t *testing.T, endpoint, token, method string, params any) map[string]any {
	t.Helper()
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "r-1", "method": method, "params": params})
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, endpoint, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	require.NoError(t, err)
	var env struct {
		Result map[string]any `json:"result"`
		Error  map[string]any `json:"error"`
	}
	require.NoError(t, json.Unmarshal(raw, &env), "%s", raw)
	require.Nil(t, env.Error, "%s: %s", method, raw)
	return env.Result
}

// TestServeTasksOnPostgres serves the agent with -tasks DSN: a task it
// creates is in PostgreSQL and readable through tasks/get.
func TestServeTasksOnPostgres(t *testing.T) {
	cluster := pgtest.Start(t)
	dsn := cluster.NewDatabase(t)
	st, err := start(t.Context(), &options{serve: true, listen: "127.0.0.1:0", tasks: dsn}, discard)
	require.NoError(t, err)
	t.Cleanup(st.Close)

	task := tasksRPC(t, st.agent.Endpoint, st.userToken, "message/send", map[string]any{"message": map[string]any{
		"kind": "message", "messageId": "m-1", "role": "user",
		"parts": []any{map[string]any{"kind": "text", "text": "Peut-on promettre S10_1949 ?"}},
	}})
	id, _ := task["id"].(string)
	require.NotEmpty(t, id, "message/send result %v", task)
	got := tasksRPC(t, st.agent.Endpoint, st.userToken, "tasks/get", map[string]any{"id": id})
	assert.Equal(t, id, got["id"])
	status, _ := got["status"].(map[string]any)
	assert.Equal(t, "completed", status["state"], "task %v", got)

	db, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	defer db.Close()
	var n int
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM `+pgstore.DefaultSchema+`.tasks`).Scan(&n))
	assert.Equal(t, 1, n, "tasks in PostgreSQL")
}

// TestTasksDSNErrors pins that a malformed -tasks is a usage error (exit
// 2) and an unreachable database a failure (exit 1), neither printing the
// password.
func TestTasksDSNErrors(t *testing.T) {
	const password = "s3cret-Pa55word"
	for _, c := range []struct{ value, want string }{
		{"postgres://candor:" + password + "@127.0.0.1:notaport/db", "-tasks: not a valid PostgreSQL connection string"},
		{"tasks.db", "-tasks: want a postgres:// or postgresql:// DSN"},
	} {
		var out, errOut bytes.Buffer
		code := run(t.Context(), []string{"-serve", "-tasks", c.value}, noEnv, &out, &errOut)
		assert.Equal(t, 2, code, errOut.String())
		assert.Contains(t, errOut.String(), c.want)
		assert.NotContains(t, out.String()+errOut.String(), password)
	}

	cluster := pgtest.Start(t)
	u, err := url.Parse(cluster.DSN)
	require.NoError(t, err)
	pw, _ := u.User.Password()
	require.NotEmpty(t, pw)
	cluster.Stop(t, pgtest.StopOptions{})
	var out, errOut bytes.Buffer
	code := run(t.Context(), []string{"-serve", "-tasks", cluster.DSN}, noEnv, &out, &errOut)
	assert.Equal(t, 1, code, errOut.String())
	assert.Contains(t, errOut.String(), "-tasks: PostgreSQL postgres://postgres@")
	assert.Contains(t, errOut.String(), "unreachable")
	assert.NotContains(t, out.String()+errOut.String(), pw)
}
