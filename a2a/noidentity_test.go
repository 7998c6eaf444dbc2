package a2a_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	a2apb "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/candorkit/candor/a2a"
)

const noIdentityText = "no identity: the request carried no bearer token"

// startCountingFacade serves a backend that answers "42" and counts its calls.
func startCountingFacade(t *testing.T, opts ...a2a.Option) (*facade, *atomic.Int64) {
	t.Helper()
	calls := new(atomic.Int64)
	f := startFacade(t, func(endpoint string) (*a2a.Server, error) {
		return a2a.NewServer(testAgent(endpoint), a2a.BackendFunc(func(context.Context, a2a.Question) a2a.Outcome {
			calls.Add(1)
			return a2a.Answer("42")
		}), append([]a2a.Option{a2a.WithVerifier(testVerifier)}, opts...)...)
	})
	return f, calls
}

const (
	send03Body = `{"jsonrpc":"2.0","id":"q-1","method":"message/send",
		"params":{"message":{"kind":"message","messageId":"m-1","role":"user","parts":[{"kind":"text","text":"How many S10_1949?"}]}}}`
	send10Body = `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"q"}]}}}`
)

// task03 is the part of a 0.3 task the tests read.
type task03 struct {
	Kind   string `json:"kind"`
	ID     string `json:"id"`
	Status struct {
		State   string `json:"state"`
		Message struct {
			Parts []struct {
				Kind string `json:"kind"`
				Text string `json:"text"`
			} `json:"parts"`
			Metadata map[string]any `json:"metadata"`
		} `json:"message"`
	} `json:"status"`
	Artifacts []json.RawMessage `json:"artifacts"`
}

func checkNoIdentity03(t *testing.T, what string, resp rpcResponse) task03 {
	t.Helper()
	if resp.Error != nil {
		t.Fatalf("%s: JSON-RPC error %+v, want a failed task", what, resp.Error)
	}
	var task task03
	if err := json.Unmarshal(resp.Result, &task); err != nil {
		t.Fatalf("%s: %v: %s", what, err, resp.Result)
	}
	m := task.Status.Message
	if task.Kind != "task" || task.ID == "" || task.Status.State != "failed" || len(m.Parts) != 1 ||
		m.Parts[0].Kind != "text" || m.Parts[0].Text != noIdentityText || m.Metadata[a2a.FailureKey] != "no_identity" ||
		len(task.Artifacts) != 0 {
		t.Fatalf("%s: 0.3 task = %s, want failed %q (no_identity)", what, resp.Result, noIdentityText)
	}
	return task
}

// With WithNoIdentityTasks a tokenless message is a failed task in both wire
// versions, the backend is never asked, and only tokenless GetTask reads it.
func TestNoIdentityTasks(t *testing.T) {
	f, calls := startCountingFacade(t, a2a.WithNoIdentityTasks())
	endpoint := f.URL + "/a2a"
	ctx := context.Background()

	// 1.0: an a2a-go client sending no Authorization header.
	anon := newClient(t, f.URL, "")
	res, err := anon.SendMessage(ctx, userMessage("How many S10_1949?"))
	if err != nil {
		t.Fatalf("1.0 SendMessage without a token: %v, want a task", err)
	}
	task, ok := res.(*a2apb.Task)
	if !ok {
		t.Fatalf("result is %T, want a task", res)
	}
	if m := task.Status.Message; task.Status.State != a2apb.TaskStateFailed || m == nil || len(m.Parts) != 1 ||
		m.Parts[0].Text() != noIdentityText || m.Metadata[a2a.FailureKey] != "no_identity" || len(task.Artifacts) != 0 {
		t.Fatalf("1.0 task = %+v (message %+v), want failed %q (no_identity)", task, task.Status.Message, noIdentityText)
	}
	if v := f.seenVersions(); len(v) == 0 || v[len(v)-1] != "1.0" {
		t.Fatalf("the client sent A2A-Version %q, want 1.0", v)
	}

	// 0.3: raw message/send, no A2A-Version, no Authorization.
	status, resp := rawRPC(t, endpoint, nil, send03Body)
	if status != 200 || string(resp.ID) != `"q-1"` {
		t.Fatalf("0.3 message/send: HTTP %d, id %s", status, resp.ID)
	}
	t03 := checkNoIdentity03(t, "0.3 message/send", resp)

	if n := calls.Load(); n != 0 {
		t.Fatalf("the backend was called %d times without a token", n)
	}

	// Tokenless GetTask reads these tasks, in both versions.
	got, err := anon.GetTask(ctx, &a2apb.GetTaskRequest{ID: task.ID})
	if err != nil || got.ID != task.ID || got.Status.State != a2apb.TaskStateFailed || got.Status.Message.Parts[0].Text() != noIdentityText {
		t.Fatalf("tokenless 1.0 GetTask = %+v, %v", got, err)
	}
	_, resp = rawRPC(t, endpoint, nil, `{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"id":"`+t03.ID+`"}}`)
	checkNoIdentity03(t, "tokenless 0.3 tasks/get", resp)

	// No caller with a token reads or lists them.
	withToken := newClient(t, f.URL, testToken)
	for _, id := range []a2apb.TaskID{task.ID, a2apb.TaskID(t03.ID)} {
		if _, err := withToken.GetTask(ctx, &a2apb.GetTaskRequest{ID: id}); !errors.Is(err, a2apb.ErrTaskNotFound) {
			t.Fatalf("GetTask of a no-identity task with a token: %v, want TaskNotFound", err)
		}
	}
	if list, err := withToken.ListTasks(ctx, &a2apb.ListTasksRequest{}); err != nil || len(list.Tasks) != 0 {
		t.Fatalf("ListTasks with a token = %+v, %v; want none", list, err)
	}
	// Nor does a read without any caller (the Store used directly): the
	// no-identity owner is a key of its own.
	if _, err := f.srv.TaskStore().Get(ctx, task.ID); !errors.Is(err, a2apb.ErrTaskNotFound) {
		t.Fatalf("Store.Get without a caller: %v, want TaskNotFound", err)
	}

	// Tokenless listing and cancelling stay refused; a malformed tokenless
	// message is still refused before any task exists.
	v10 := map[string]string{"A2A-Version": "1.0"}
	for _, tc := range []struct {
		name   string
		header map[string]string
		body   string
		code   int
	}{
		{"1.0 ListTasks", v10, `{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{}}`, -31401},
		{"1.0 CancelTask", v10, `{"jsonrpc":"2.0","id":1,"method":"CancelTask","params":{"id":"` + string(task.ID) + `"}}`, -31401},
		{"0.3 tasks/cancel", nil, `{"jsonrpc":"2.0","id":1,"method":"tasks/cancel","params":{"id":"` + t03.ID + `"}}`, -31401},
		{"1.0 blank text", v10, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":" "}]}}}`, -32602},
		{"0.3 file only", nil, `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"file","file":{"uri":"https://example.invalid/f.pdf"}}]}}}`, -32005},
	} {
		if _, resp := rawRPC(t, endpoint, tc.header, tc.body); resp.Error == nil || resp.Error.Code != tc.code {
			t.Fatalf("tokenless %s: error %+v (result %s), want %d", tc.name, resp.Error, resp.Result, tc.code)
		}
	}

	// A message sent with returnImmediately is read to its end by tokenless
	// GetTask (the execution finishes asynchronously: poll with a deadline).
	req := userMessage("later")
	req.Config = &a2apb.SendMessageConfig{ReturnImmediately: true}
	res, err = anon.SendMessage(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	later := res.(*a2apb.Task)
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := anon.GetTask(ctx, &a2apb.GetTaskRequest{ID: later.ID})
		if err != nil {
			t.Fatal(err)
		}
		if got.Status.State.Terminal() {
			if got.Status.State != a2apb.TaskStateFailed || got.Status.Message.Metadata[a2a.FailureKey] != "no_identity" {
				t.Fatalf("returnImmediately task ended %s %+v", got.Status.State, got.Status.Message)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("task still %s", got.Status.State)
		}
	}

	if n := calls.Load(); n != 0 {
		t.Fatalf("the backend was called %d times without a token", n)
	}
	// The option changes nothing for a caller with a token.
	res, err = withToken.SendMessage(ctx, userMessage("q"))
	if err != nil || res.(*a2apb.Task).Status.State != a2apb.TaskStateCompleted || calls.Load() != 1 {
		t.Fatalf("with a token: %+v, %v, %d backend calls; want completed after 1", res, err, calls.Load())
	}
}

// Without the option a tokenless message is refused with -31401 in both
// versions, and nothing is stored or asked.
func TestNoTokenRefusedByDefault(t *testing.T) {
	f, calls := startCountingFacade(t)
	endpoint := f.URL + "/a2a"

	res, err := newClient(t, f.URL, "").SendMessage(context.Background(), userMessage("How many S10_1949?"))
	if err == nil || !strings.Contains(err.Error(), "401") || res != nil {
		t.Fatalf("1.0 SendMessage without a token: %+v, %v; want HTTP 401", res, err)
	}
	status, header, resp := rawRPCHeader(t, endpoint, map[string]string{"A2A-Version": "1.0"}, send10Body)
	if status != 401 || header.Get("WWW-Authenticate") != "Bearer" || resp.Error == nil || resp.Error.Code != -31401 {
		t.Fatalf("raw 1.0 SendMessage without a token: HTTP %d %v %+v, want 401 with -31401", status, header, resp.Error)
	}
	status, _, resp = rawRPCHeader(t, endpoint, nil, send03Body)
	if status != 401 || resp.Error == nil || resp.Error.Code != -31401 || string(resp.ID) != `"q-1"` {
		t.Fatalf("0.3 message/send without a token: HTTP %d %+v (id %s), want 401 with -31401", status, resp.Error, resp.ID)
	}
	if n := calls.Load(); n != 0 {
		t.Fatalf("the backend was called %d times", n)
	}
	if n := f.srv.TaskStore().(*a2a.MemoryStore).Len(); n != 0 {
		t.Fatalf("the store holds %d tasks", n)
	}
}
