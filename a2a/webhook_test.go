package a2a_test

import (
	"bytes"
	"context"
	"crypto/x509"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	a2apb "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/candorkit/candor/a2a"
)

func question() a2a.Question {
	return a2a.Question{Text: "How many?", Token: testToken, TaskID: "t-1", ContextID: "c-1"}
}

func TestQuestionRedactsToken(t *testing.T) {
	q := question()
	var logged strings.Builder
	slog.New(slog.NewTextHandler(&logged, nil)).Info("x", "q", q)
	for _, s := range []string{fmt.Sprint(q), fmt.Sprintf("%+v", q), fmt.Sprintf("%#v", q), fmt.Sprintf("%v", &q), logged.String(), q.GoString(), q.LogValue().String()} {
		assert.NotContains(t, s, testToken)
	}
}

// The webhook's secret path (n8n puts the webhook id in it) and its query
// never reach a caller: not in a task's status message, not in the raw
// JSON-RPC answer. A non-2xx body reaches the caller only as a short
// redacted excerpt, the full body goes to the server's log; an off-contract
// 2xx body stays visible, redacted.
func TestWebhookSecretsNeverReachTheCaller(t *testing.T) {
	const id = "9b1f4c2e-7d0a-secret-webhook-id"
	const query = "token=q-secret-4471"
	hook := newHook(t, false)
	var logged bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logged, nil))
	f := startFacade(t, func(endpoint string) (*a2a.Server, error) {
		return a2a.NewAdapter(a2a.Config{Agent: testAgent(endpoint), WebhookURL: hook.srv.URL + "/webhook/" + id + "?" + query},
			a2a.WithVerifier(testVerifier), a2a.WithLogger(logger))
	})
	trace := strings.Repeat("at Object.execute (/usr/lib/node_modules/n8n/dist/Workflow.js:1:1)\n", 40)
	cases := []struct {
		name, body string
		status     int
		kind       string
	}{
		{"n8n 404 naming the path", `{"code":404,"message":"The requested webhook \"POST ` + id + `\" is not registered.","hint":"The workflow must be active for a production URL to run successfully. /webhook/` + id + `?` + query + `"}`, 404, "http_status"},
		{"500 with a stack trace", `{"message":"Error in workflow","stack":"` + strings.ReplaceAll(trace, "\n", `\n`) + `"}`, 500, "http_status"},
		{"off-contract 200 naming the path", `{"data":"POST /webhook/` + id + `"}`, 200, "off_contract"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			logged.Reset()
			hook.set(tc.status, tc.body)
			_, raw := rawRPCBody(t, f.URL+"/a2a", map[string]string{"Authorization": "Bearer " + testToken, "A2A-Version": "1.0"},
				`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m-`+tc.name+`","role":"ROLE_USER","parts":[{"text":"q"}]}}}`)
			assert.NotContains(t, raw, id)
			assert.NotContains(t, raw, "secret")
			assert.Contains(t, raw, `"failure":"`+tc.kind+`"`)
			var resp struct {
				Result struct {
					Task *a2apb.Task `json:"task"`
				} `json:"result"`
			}
			require.NoError(t, jsonUnmarshal(raw, &resp))
			require.NotNil(t, resp.Result.Task)
			m := resp.Result.Task.Status.Message
			require.Len(t, m.Parts, 2, "the reason and the evidence")
			if tc.status != 200 {
				assert.Equal(t, fmt.Sprintf("the workflow answered HTTP %d %s", tc.status, http.StatusText(tc.status)), m.Parts[0].Text())
				assert.LessOrEqual(t, len(m.Parts[1].Text()), 210, "an excerpt, not the body")
				if tc.status == 404 {
					assert.Contains(t, logged.String(), "is not registered", "the log gets the body")
					assert.Contains(t, logged.String(), "[REDACTED]", "redacted")
				} else {
					assert.Contains(t, logged.String(), "Workflow.js:1:1", "the log gets the whole body")
				}
			} else {
				assert.Equal(t, `{"data":"POST [REDACTED]"}`, m.Parts[1].Text(), "drift stays visible")
			}
			assert.NotContains(t, logged.String(), id)
			assert.NotContains(t, logged.String(), "q-secret-4471")
		})
	}
	// The same holds for a webhook that cannot be reached.
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL
	down.Close()
	f2 := startWebhookFacade(t, downURL+"/webhook/"+id+"?"+query)
	_, raw := rawRPCBody(t, f2.URL+"/a2a", map[string]string{"Authorization": "Bearer " + testToken, "A2A-Version": "1.0"},
		`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"q"}]}}}`)
	assert.NotContains(t, raw, id)
	assert.Contains(t, raw, `"failure":"unreachable"`)
}

// TestAdapterTLS: a webhook behind TLS works with Config.RootCAs, fails as
// unreachable without, and WithHTTPClient composes with RootCAs.
func TestAdapterTLS(t *testing.T) {
	hook := newHook(t, true)
	hook.srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes
	pool := x509.NewCertPool()
	pool.AddCert(hook.srv.Certificate())
	var used bool
	tracing := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		used = true
		return http.DefaultTransport.RoundTrip(r)
	})}
	cases := []struct {
		name  string
		roots *x509.CertPool
		opts  []a2a.Option
		want  a2apb.TaskState
	}{
		{"roots", pool, nil, a2apb.TaskStateCompleted},
		{"no roots", nil, nil, a2apb.TaskStateFailed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := startFacade(t, func(endpoint string) (*a2a.Server, error) {
				return a2a.NewAdapter(a2a.Config{Agent: testAgent(endpoint), WebhookURL: hook.srv.URL + "/webhook/stock", RootCAs: tc.roots},
					append([]a2a.Option{a2a.WithVerifier(testVerifier)}, tc.opts...)...)
			})
			c := newClient(t, f.URL, testToken)
			res, err := c.SendMessage(context.Background(), userMessage("How many?"))
			require.NoError(t, err)
			task := res.(*a2apb.Task)
			assert.Equal(t, tc.want, task.Status.State)
			if tc.want == a2apb.TaskStateFailed {
				assert.Equal(t, "unreachable", task.Status.Message.Metadata["failure"])
			}
		})
	}
	// A non-*http.Transport cannot take roots: NewAdapter says so.
	_, err := a2a.NewAdapter(a2a.Config{Agent: testAgent("http://127.0.0.1:1/a2a"), WebhookURL: hook.srv.URL, RootCAs: pool},
		a2a.WithVerifier(testVerifier), a2a.WithHTTPClient(tracing))
	assert.Error(t, err)
	assert.False(t, used)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestConstructorsRefuseBadOptions(t *testing.T) {
	agent := testAgent("http://127.0.0.1:1/a2a")
	backend := a2a.BackendFunc(func(context.Context, a2a.Question) a2a.Outcome { return a2a.Answer("x") })
	bad := map[string][]a2a.Option{
		"no verifier":           nil,
		"verifier and opt-out":  {a2a.WithVerifier(testVerifier), a2a.WithUnverifiedTokens()},
		"nil verifier":          {a2a.WithVerifier(nil)},
		"adapter-only option":   {a2a.WithVerifier(testVerifier), a2a.WithHTTPClient(http.DefaultClient)},
		"zero request cap":      {a2a.WithVerifier(testVerifier), a2a.WithMaxRequestBytes(0)},
		"negative timeout":      {a2a.WithVerifier(testVerifier), a2a.WithAnswerTimeout(-1)},
		"nil store":             {a2a.WithVerifier(testVerifier), a2a.WithTaskStore(nil)},
		"nil option in the mix": {a2a.WithVerifier(testVerifier), nil},
	}
	for name, opts := range bad {
		_, err := a2a.NewServer(agent, backend, opts...)
		assert.Error(t, err, name)
	}
	_, err := a2a.NewServer(agent, backend, a2a.WithUnverifiedTokens())
	assert.NoError(t, err, "the explicit opt-out builds")

	store, err := a2a.NewMemoryStore(10, 60e9)
	require.NoError(t, err)
	for name, cfg := range map[string]a2a.Config{
		"no webhook":           {Agent: agent},
		"webhook with secrets": {Agent: agent, WebhookURL: "https://user:pw@hooks.example/x"},
		"store and bounds":     {Agent: agent, WebhookURL: "https://hooks.example/x", MaxTasks: 5},
		"negative timeout":     {Agent: agent, WebhookURL: "https://hooks.example/x", WebhookTimeout: -1},
	} {
		_, err := a2a.NewAdapter(cfg, a2a.WithVerifier(testVerifier), a2a.WithTaskStore(store))
		if assert.Error(t, err, name) {
			assert.NotContains(t, err.Error(), "pw", name)
		}
	}
	_, err = a2a.NewAdapter(a2a.Config{Agent: agent, WebhookURL: "https://hooks.example/x"})
	assert.Error(t, err, "NewAdapter needs a verifier too")
	_, err = a2a.NewAdapter(a2a.Config{Agent: agent, WebhookURL: "https://hooks.example/x"},
		a2a.WithVerifier(testVerifier), a2a.WithHTTPClient(http.DefaultClient))
	assert.NoError(t, err)
	for _, n := range []int{0, -1} {
		_, err := a2a.NewMemoryStore(n, 60e9)
		assert.Error(t, err)
		_, err = a2a.NewMemoryStore(10, time.Duration(n))
		assert.Error(t, err)
	}
}
