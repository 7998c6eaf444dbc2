package a2atest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	a2apb "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"github.com/candorkit/candor/a2a"
)

// EndpointPath is the path of the JSON-RPC endpoint Serve gives build.
const EndpointPath = "/a2a"

// Serve serves the a2a.Server that build returns on a loopback httptest
// server whose address is known before build runs: build receives the
// endpoint URL (the server's URL + EndpointPath) for a2a.Agent.URL. The
// server is closed at the end of the test; its URL is the base Ask and
// Send resolve the card from.
func Serve(tb testing.TB, build func(endpoint string) (*a2a.Server, error)) *httptest.Server {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("a2atest: %v", err)
	}
	srv, err := build("http://" + ln.Addr().String() + EndpointPath)
	if err != nil {
		ln.Close()
		tb.Fatalf("a2atest: building the server: %v", err)
	}
	ts := httptest.NewUnstartedServer(srv)
	ts.Listener.Close()
	ts.Listener = ln
	ts.Start()
	tb.Cleanup(ts.Close)
	return ts
}

// AskTimeout bounds Ask: the facade's default answer bound and a margin.
const AskTimeout = a2a.DefaultAnswerTimeout + 30*time.Second

// Ask sends text as a user message to the agent whose card is served at
// base, with an a2a-go v2 client speaking A2A 1.0 JSON-RPC and carrying
// token as its bearer token ("" sends none), and returns the final task.
// It fails tb when no task comes back (a refused token, say: use Send to
// see the error).
func Ask(tb testing.TB, base, token, text string) *a2apb.Task {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), AskTimeout)
	defer cancel()
	task, err := Send(ctx, base, token, text)
	if err != nil {
		tb.Fatalf("a2atest: asking %q: %v", text, err)
	}
	return task
}

// Send is Ask with the caller's context, returning the error instead of
// failing a test. The card is resolved with a2a.ParseCard. A task the
// agent returns before it is final is read again with GetTask until it is.
func Send(ctx context.Context, base, token, text string) (*a2apb.Task, error) {
	hc := &http.Client{Transport: bearer{token: token, next: http.DefaultTransport}}
	resolver := &agentcard.Resolver{Client: hc, CardParser: a2a.ParseCard}
	card, err := resolver.Resolve(ctx, base)
	if err != nil {
		return nil, fmt.Errorf("resolving the agent card at %s: %w", base, err)
	}
	client, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithJSONRPCTransport(hc))
	if err != nil {
		return nil, fmt.Errorf("a2a client: %w", err)
	}
	defer func() { _ = client.Destroy() }()
	res, err := client.SendMessage(ctx, &a2apb.SendMessageRequest{
		Message: a2apb.NewMessage(a2apb.MessageRoleUser, a2apb.NewTextPart(text)),
	})
	if err != nil {
		return nil, err
	}
	task, ok := res.(*a2apb.Task)
	if !ok || task == nil {
		return nil, fmt.Errorf("the agent answered %T, not a task", res)
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !task.Status.State.Terminal() {
		select {
		case <-ctx.Done():
			return task, fmt.Errorf("task %s still %s: %w", task.ID, State(task), ctx.Err())
		case <-tick.C:
		}
		next, err := client.GetTask(ctx, &a2apb.GetTaskRequest{ID: task.ID})
		if err != nil {
			return task, fmt.Errorf("reading task %s: %w", task.ID, err)
		}
		if next == nil {
			return task, errors.New("reading task " + string(task.ID) + ": no task")
		}
		task = next
	}
	return task, nil
}

// bearer adds the token to every request; an empty token adds nothing.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	if b.token == "" {
		return b.next.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// State is the task's state without its prefix, in lower case:
// "completed", "failed", "canceled".
func State(task *a2apb.Task) string {
	if task == nil {
		return ""
	}
	return strings.ToLower(strings.TrimPrefix(string(task.Status.State), "TASK_STATE_"))
}

// Text is the text of the task's status message: the answer of a
// completed task, the reason of a failed one.
func Text(task *a2apb.Task) string {
	if task == nil || task.Status.Message == nil {
		return ""
	}
	var texts []string
	for _, p := range task.Status.Message.Parts {
		if p != nil {
			if t := p.Text(); t != "" {
				texts = append(texts, t)
			}
		}
	}
	return strings.Join(texts, "\n")
}

// Failure is why a failed task failed: the status message's a2a.FailureKey
// metadata ("escalated", "off_contract", "timeout", …), "" when none.
func Failure(task *a2apb.Task) a2a.Kind {
	if task == nil || task.Status.Message == nil {
		return ""
	}
	f, _ := task.Status.Message.Metadata[a2a.FailureKey].(string)
	return a2a.Kind(f)
}
