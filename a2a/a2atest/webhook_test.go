package a2atest_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/candorkit/candor/a2a"
	"github.com/candorkit/candor/a2a/a2atest"
	"github.com/candorkit/candor/reply"
)

// TestWebhookModes: each scripted reply is what package reply's client
// classifies it as, in script order, with the subject token recorded.
func TestWebhookModes(t *testing.T) {
	cases := []struct {
		name  string
		reply a2atest.Reply
		kind  reply.Kind
	}{
		{"answer", a2atest.Answer("42 in stock"), ""},
		{"escalate", a2atest.Escalate("ask a person"), ""},
		{"empty", a2atest.Empty(), reply.KindNoReply},
		{"zero", a2atest.Reply{}, reply.KindNoReply},
		{"wrong types", a2atest.WrongTypes(), reply.KindOffContract},
		{"other 2xx", a2atest.Body(http.StatusCreated, `{"answer":"x","escalate":false}`), reply.KindOffContract},
		{"extra key", a2atest.Body(http.StatusOK, `{"answer":"x","escalate":false,"more":1}`), reply.KindOffContract},
		{"not JSON", a2atest.Body(http.StatusOK, `<html>`), reply.KindOffContract},
		{"502", a2atest.Status(http.StatusBadGateway), reply.KindHTTPStatus},
		{"exactly the cap", a2atest.Oversized(reply.DefaultMaxResponseBytes), ""},
		{"one byte over", a2atest.Oversized(reply.DefaultMaxResponseBytes + 1), reply.KindTooLarge},
		{"shorter than a contract body", a2atest.Oversized(5), reply.KindOffContract},
	}
	var script []a2atest.Reply
	for _, c := range cases {
		script = append(script, c.reply)
	}
	hook := a2atest.NewWebhook(t, script...)
	client, err := reply.NewClient(hook.URL)
	require.NoError(t, err)
	var tokens []string
	for i, c := range cases {
		token := "token-" + c.name
		tokens = append(tokens, token)
		r, err := client.Call(context.Background(), token, map[string]string{"text": "q" + c.name, "taskId": "t1"})
		assert.Equal(t, c.kind, reply.Classify(err), "%d %s: %v", i, c.name, err)
		switch c.name {
		case "answer":
			assert.Equal(t, reply.Reply{Answer: "42 in stock"}, r)
		case "escalate":
			assert.Equal(t, reply.Reply{Answer: "ask a person", Escalate: true}, r)
		case "exactly the cap":
			assert.Len(t, r.Answer, int(reply.DefaultMaxResponseBytes)-30)
		}
	}
	assert.Equal(t, tokens, hook.SubjectTokens())
	got := hook.Requests()
	require.Len(t, got, len(cases))
	assert.Equal(t, "qanswer", got[0].Text)
	assert.Equal(t, "t1", got[0].TaskID)
	assert.Equal(t, "token-answer", got[0].SubjectToken)
	assert.Empty(t, got[0].ContextID)
	assert.Equal(t, http.MethodPost, got[0].Method)
	assert.True(t, strings.HasPrefix(got[0].Path, "/webhook/"))
}

// TestWebhookSlow: Hang holds the request until the caller gives up, After
// answers once released; neither needs a sleep.
func TestWebhookSlow(t *testing.T) {
	arrived := make(chan struct{})
	release := make(chan struct{})
	hook := a2atest.NewWebhook(t,
		a2atest.Func(func(a2atest.Request) a2atest.Reply { close(arrived); return a2atest.Hang() }),
		a2atest.After(release, a2atest.Answer("late")))
	client, err := reply.NewClient(hook.URL)
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { _, err := client.Call(ctx, "tok", map[string]string{"text": "q"}); errc <- err }()
	<-arrived
	cancel()
	err = <-errc
	assert.Equal(t, reply.KindCanceled, reply.Classify(err), "%v", err)

	done := make(chan reply.Reply, 1)
	go func() {
		r, err := client.Call(context.Background(), "tok", map[string]string{"text": "q"})
		assert.NoError(t, err)
		done <- r
	}()
	close(release)
	assert.Equal(t, "late", (<-done).Answer)

	// Close ends a request still waiting, with no answer at all.
	arrived = make(chan struct{})
	hook.Script(a2atest.Func(func(a2atest.Request) a2atest.Reply { close(arrived); return a2atest.Hang() }))
	go func() {
		_, err := client.Call(context.Background(), "tok", map[string]string{"text": "q"})
		errc <- err
	}()
	<-arrived
	hook.Close()
	err = <-errc
	assert.Equal(t, reply.KindUnreachable, reply.Classify(err), "%v", err)
	hook.Close() // again: a no-op
}

// TestWebhookAlwaysTLSAndStrayRequests: Always answers past the script; a
// TLS webhook is reached with its RootCAs; another path answers 404
// without taking a reply.
func TestWebhookAlwaysTLSAndStrayRequests(t *testing.T) {
	hook := a2atest.NewTLSWebhook(t)
	hook.Always(a2atest.Answer("always"))
	hook.Script(a2atest.Answer("first"))
	require.NotNil(t, hook.RootCAs())
	client, err := reply.NewClient(hook.URL, reply.WithRootCAs(hook.RootCAs()))
	require.NoError(t, err)
	for _, want := range []string{"first", "always", "always"} {
		r, err := client.Call(context.Background(), "tok", map[string]string{})
		require.NoError(t, err)
		assert.Equal(t, want, r.Answer)
	}
	stray, err := reply.NewClient(hook.Server.URL+"/webhook/other", reply.WithRootCAs(hook.RootCAs()))
	require.NoError(t, err)
	_, err = stray.Call(context.Background(), "tok", map[string]string{})
	var se *reply.StatusError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, http.StatusNotFound, se.StatusCode)
	assert.Len(t, hook.Requests(), 4)
	assert.Nil(t, a2atest.NewWebhook(t).RootCAs(), "plain http has no roots")
}

// TestWebhookBeyondScriptFailsTheTest: a request the script did not plan
// for answers 500 and marks the test failed at its end.
func TestWebhookBeyondScriptFailsTheTest(t *testing.T) {
	rec := &recordingTB{TB: t}
	hook := a2atest.NewWebhook(rec)
	client, err := reply.NewClient(hook.URL)
	require.NoError(t, err)
	_, err = client.Call(context.Background(), "tok", map[string]string{})
	var se *reply.StatusError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, http.StatusInternalServerError, se.StatusCode)
	rec.finish()
	assert.Contains(t, rec.errors, "beyond its script")
}

// TestWebhookRequestCap: a body over MaxRequestBytes answers 413.
func TestWebhookRequestCap(t *testing.T) {
	hook := a2atest.NewWebhook(t)
	client, err := reply.NewClient(hook.URL)
	require.NoError(t, err)
	_, err = client.Call(context.Background(), "tok", map[string]string{"text": strings.Repeat("x", a2atest.MaxRequestBytes)})
	var se *reply.StatusError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, http.StatusRequestEntityTooLarge, se.StatusCode)
	got := hook.Requests()
	require.Len(t, got, 1)
	assert.True(t, got[0].TooLarge)
}

// TestAskThroughTheFacade: Ask returns the final task of each outcome, and
// Send reports a refused token as an error.
func TestAskThroughTheFacade(t *testing.T) {
	hook := a2atest.NewWebhook(t,
		a2atest.Func(func(r a2atest.Request) a2atest.Reply { return a2atest.Answer("got " + r.Text) }),
		a2atest.Escalate("a person decides"),
		a2atest.WrongTypes(),
	)
	verifier := a2a.VerifierFunc(func(ctx context.Context, token string) (a2a.Caller, error) {
		if strings.HasPrefix(token, "bad") {
			return a2a.Caller{}, a2a.ErrInvalidToken
		}
		return a2a.Caller{Subject: token, Issuer: "https://op.test"}, nil
	})
	srv := a2atest.Serve(t, func(endpoint string) (*a2a.Server, error) {
		assert.True(t, strings.HasSuffix(endpoint, a2atest.EndpointPath))
		return a2a.NewAdapter(a2a.Config{
			Agent: a2a.Agent{Name: "Stock agent", Description: "Answers stock questions", URL: endpoint,
				Skill: a2a.Skill{ID: "stock", Name: "Stock", Description: "Units in stock"}},
			WebhookURL: hook.URL,
		}, a2a.WithVerifier(verifier))
	})

	task := a2atest.Ask(t, srv.URL, "alice", "S10_1949?")
	assert.Equal(t, "completed", a2atest.State(task))
	assert.Equal(t, []string{string(task.ID)}, []string{hook.Requests()[0].TaskID}, "the webhook got the task's id")
	assert.NotEmpty(t, hook.Requests()[0].ContextID)
	assert.Equal(t, "got S10_1949?", a2atest.Text(task))
	assert.Empty(t, a2atest.Failure(task))

	task = a2atest.Ask(t, srv.URL, "alice", "the Vespa?")
	assert.Equal(t, "failed", a2atest.State(task))
	assert.Equal(t, a2a.KindEscalated, a2atest.Failure(task))

	task = a2atest.Ask(t, srv.URL, "bob", "S99?")
	assert.Equal(t, "failed", a2atest.State(task))
	assert.Equal(t, a2a.KindOffContract, a2atest.Failure(task))

	ctx, cancel := context.WithTimeout(context.Background(), a2atest.AskTimeout)
	defer cancel()
	_, err := a2atest.Send(ctx, srv.URL, "bad-token", "q")
	assert.Error(t, err, "a refused token gives no task")
	assert.Equal(t, []string{"alice", "alice", "bob"}, hook.SubjectTokens(), "the refused call never reached the webhook")
	assert.Equal(t, "", a2atest.State(nil))
	assert.Equal(t, "", a2atest.Text(nil))
}

// recordingTB collects Errorf and runs cleanups on finish.
type recordingTB struct {
	testing.TB
	errors   string
	cleanups []func()
}

func (r *recordingTB) Helper()                           {}
func (r *recordingTB) Cleanup(f func())                  { r.cleanups = append(r.cleanups, f) }
func (r *recordingTB) Errorf(format string, args ...any) { r.errors += fmt.Sprintf(format, args...) }
func (r *recordingTB) finish() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}
