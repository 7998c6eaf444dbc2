package a2a_test

import (
	"context"
	"errors"
	"testing"
	"time"

	a2apb "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/candorkit/candor/a2a"
)

func startBackendFacade(t *testing.T, b a2a.Backend) *facade {
	return startFacade(t, func(endpoint string) (*a2a.Server, error) {
		return a2a.NewServer(testAgent(endpoint), b, a2a.WithVerifier(testVerifier))
	})
}

// A custom Backend sees the caller's text and token; malformed outcomes fail.
func TestCustomBackend(t *testing.T) {
	type asked struct{ q a2a.Question }
	seen := make(chan asked, 1)
	var out a2a.Outcome
	f := startBackendFacade(t, a2a.BackendFunc(func(ctx context.Context, q a2a.Question) a2a.Outcome {
		seen <- asked{q}
		if out.Text == "panic" {
			panic("backend bug")
		}
		return out
	}))
	c := newClient(t, f.URL, testToken)
	cases := []struct {
		name  string
		out   a2a.Outcome
		state a2apb.TaskState
		kind  string
	}{
		{"answer", a2a.Answer("42"), a2apb.TaskStateCompleted, ""},
		{"blank answer", a2a.Answer("  "), a2apb.TaskStateFailed, "invalid_outcome"},
		{"completed with error", a2a.Outcome{State: a2a.Completed, Text: "x", Err: errors.New("boom")}, a2apb.TaskStateFailed, "invalid_outcome"},
		{"zero outcome", a2a.Outcome{}, a2apb.TaskStateFailed, "invalid_outcome"},
		{"unknown state", a2a.Outcome{State: "working", Text: "x"}, a2apb.TaskStateFailed, "invalid_outcome"},
		{"failed without cause", a2a.Outcome{State: a2a.Failed, Text: "no"}, a2apb.TaskStateFailed, "invalid_outcome"},
		{"failed", a2a.Fail("stock service down", errors.New("mcp: 503")), a2apb.TaskStateFailed, "backend"},
		{"panic", a2a.Outcome{Text: "panic"}, a2apb.TaskStateFailed, "invalid_outcome"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out = tc.out
			res, err := c.SendMessage(context.Background(), &a2apb.SendMessageRequest{Message: a2apb.NewMessage(
				a2apb.MessageRoleUser, a2apb.NewTextPart("line one"), a2apb.NewTextPart("line two"))})
			if err != nil {
				t.Fatal(err)
			}
			got := <-seen
			if got.q.Text != "line one\nline two" || got.q.Token != testToken || got.q.TaskID == "" || got.q.ContextID == "" {
				t.Fatalf("question = %+v (token ok: %v)", got.q, got.q.Token == testToken)
			}
			task := res.(*a2apb.Task)
			if task.Status.State != tc.state {
				t.Fatalf("state = %s, want %s", task.Status.State, tc.state)
			}
			if tc.kind != "" && task.Status.Message.Metadata["failure"] != tc.kind {
				t.Fatalf("failure = %v, want %s", task.Status.Message.Metadata["failure"], tc.kind)
			}
		})
	}
}

// CancelTask while the question is with the backend: not cancelable, and
// the task still ends with the backend's answer.
func TestCancelWhileRunning(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	f := startBackendFacade(t, a2a.BackendFunc(func(ctx context.Context, q a2a.Question) a2a.Outcome {
		close(started)
		<-release
		return a2a.Answer("done")
	}))
	c := newClient(t, f.URL, testToken)
	ctx := context.Background()
	req := userMessage("slow question")
	req.Config = &a2apb.SendMessageConfig{ReturnImmediately: true}
	res, err := c.SendMessage(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	task := res.(*a2apb.Task)
	<-started
	if _, err := c.CancelTask(ctx, &a2apb.CancelTaskRequest{ID: task.ID}); !errors.Is(err, a2apb.ErrTaskNotCancelable) {
		t.Fatalf("CancelTask while running: %v, want TaskNotCancelable", err)
	}
	close(release)
	// The execution finishes asynchronously: poll GetTask with a deadline.
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := c.GetTask(ctx, &a2apb.GetTaskRequest{ID: task.ID})
		if err != nil {
			t.Fatal(err)
		}
		if got.Status.State == a2apb.TaskStateCompleted {
			if got.Artifacts[0].Parts[0].Text() != "done" {
				t.Fatalf("artifacts = %+v", got.Artifacts)
			}
			break
		}
		if got.Status.State.Terminal() || time.Now().After(deadline) {
			t.Fatalf("task state = %s, want completed", got.Status.State)
		}
	}
}

// Drain waits for the answer of a task sent with returnImmediately, which
// goes on after its request has ended.
func TestDrain(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	answered := make(chan struct{})
	f := startBackendFacade(t, a2a.BackendFunc(func(ctx context.Context, q a2a.Question) a2a.Outcome {
		close(started)
		<-release
		close(answered)
		return a2a.Answer("done")
	}))
	ctx := context.Background()
	if err := f.srv.Drain(ctx); err != nil {
		t.Fatalf("Drain with nothing in flight: %v", err)
	}
	req := userMessage("slow question")
	req.Config = &a2apb.SendMessageConfig{ReturnImmediately: true}
	if _, err := newClient(t, f.URL, testToken).SendMessage(ctx, req); err != nil {
		t.Fatal(err)
	}
	<-started
	stopped, cancel := context.WithCancel(ctx)
	cancel()
	if err := f.srv.Drain(stopped); !errors.Is(err, context.Canceled) {
		t.Fatalf("Drain with a question in flight and a done context: %v, want context.Canceled", err)
	}
	drained := make(chan error, 1)
	go func() { drained <- f.srv.Drain(ctx) }()
	close(release)
	if err := <-drained; err != nil {
		t.Fatalf("Drain: %v", err)
	}
	select {
	case <-answered:
	default:
		t.Fatal("Drain returned before the backend answered")
	}
}
