package a2a_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"

	a2apb "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/candorkit/candor/a2a"
)

func authHeader(token string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + token}
}

// TestSendMessage10 drives the facade with an a2a-go v2 client in 1.0 mode.
func TestSendMessage10(t *testing.T) {
	hook := newHook(t, false)
	f := startWebhookFacade(t, hook.srv.URL+"/webhook/stock")
	c := newClient(t, f.URL, testToken)
	ctx := context.Background()

	res, err := c.SendMessage(ctx, userMessage("How many S10_1949 are in stock?"))
	if err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
	task, ok := res.(*a2apb.Task)
	if !ok {
		t.Fatalf("result is %T, want a task", res)
	}
	if task.Status.State != a2apb.TaskStateCompleted {
		t.Fatalf("state = %s, want completed", task.Status.State)
	}
	if len(task.Artifacts) != 1 || task.Artifacts[0].Parts[0].Text() != "7305 in stock" {
		t.Fatalf("artifacts = %+v, want one with the answer", task.Artifacts)
	}
	if m := task.Status.Message; m == nil || m.Role != a2apb.MessageRoleAgent || m.Parts[0].Text() != "7305 in stock" {
		t.Fatalf("status message = %+v, want the answer from the agent", task.Status.Message)
	}
	if v := f.seenVersions(); len(v) == 0 || v[0] != "1.0" {
		t.Fatalf("the client sent A2A-Version %q, want 1.0", v)
	}

	calls := hook.recorded()
	if len(calls) != 1 {
		t.Fatalf("webhook called %d times, want 1", len(calls))
	}
	if got := calls[0].Header.Get("X-Subject-Token"); got != testToken {
		t.Fatalf("X-Subject-Token = %q, want the caller's token", got)
	}
	if got := calls[0].Header.Get("Authorization"); got != "" {
		t.Fatalf("the webhook received Authorization %q; the token goes in X-Subject-Token only", got)
	}
	if strings.Contains(string(calls[0].Body), testToken) {
		t.Fatalf("the token is in the webhook body: %s", calls[0].Body)
	}
	var sent map[string]string
	if err := json.Unmarshal(calls[0].Body, &sent); err != nil {
		t.Fatalf("webhook body is not JSON: %v", err)
	}
	if sent["text"] != "How many S10_1949 are in stock?" || sent["taskId"] != string(task.ID) || sent["contextId"] != task.ContextID {
		t.Fatalf("webhook body = %v", sent)
	}

	got, err := c.GetTask(ctx, &a2apb.GetTaskRequest{ID: task.ID})
	if err != nil {
		t.Fatalf("GetTask: %v", err)
	}
	if got.ID != task.ID || got.ContextID != task.ContextID || got.Status.State != task.Status.State ||
		!reflect.DeepEqual(got.Artifacts, task.Artifacts) {
		t.Fatalf("GetTask = %+v, want the task SendMessage returned %+v", got, task)
	}

	if _, err := c.CancelTask(ctx, &a2apb.CancelTaskRequest{ID: task.ID}); !errors.Is(err, a2apb.ErrTaskNotCancelable) {
		t.Fatalf("CancelTask on a finished task: %v, want TaskNotCancelable", err)
	}

	list, err := c.ListTasks(ctx, &a2apb.ListTasksRequest{IncludeArtifacts: true})
	if err != nil {
		t.Fatalf("ListTasks: %v", err)
	}
	if len(list.Tasks) != 1 || list.Tasks[0].ID != task.ID {
		t.Fatalf("ListTasks = %+v, want the one task", list.Tasks)
	}

	// Another caller does not see the task.
	other := newClient(t, f.URL, "someone-else")
	if _, err := other.GetTask(ctx, &a2apb.GetTaskRequest{ID: task.ID}); !errors.Is(err, a2apb.ErrTaskNotFound) {
		t.Fatalf("GetTask by another caller: %v, want TaskNotFound", err)
	}
	if list, err := other.ListTasks(ctx, &a2apb.ListTasksRequest{}); err != nil || len(list.Tasks) != 0 {
		t.Fatalf("ListTasks by another caller = %+v, %v; want none", list, err)
	}
}

// TestSendMessage03 sends a raw 0.3 message/send without A2A-Version.
func TestSendMessage03(t *testing.T) {
	hook := newHook(t, false)
	f := startWebhookFacade(t, hook.srv.URL)
	endpoint := f.URL + "/a2a"

	status, resp := rawRPC(t, endpoint, authHeader(testToken), `{"jsonrpc":"2.0","id":"q-1","method":"message/send",
		"params":{"message":{"kind":"message","messageId":"m-1","role":"user","parts":[{"kind":"text","text":"How many?"}]}}}`)
	if status != 200 || resp.Error != nil {
		t.Fatalf("message/send: HTTP %d, error %+v", status, resp.Error)
	}
	if string(resp.ID) != `"q-1"` {
		t.Fatalf("id = %s, want \"q-1\"", resp.ID)
	}
	var task struct {
		Kind      string `json:"kind"`
		ID        string `json:"id"`
		ContextID string `json:"contextId"`
		Status    struct {
			State   string `json:"state"`
			Message struct {
				Kind  string `json:"kind"`
				Role  string `json:"role"`
				Parts []struct {
					Kind string `json:"kind"`
					Text string `json:"text"`
				} `json:"parts"`
			} `json:"message"`
		} `json:"status"`
		Artifacts []struct {
			Parts []struct {
				Kind string `json:"kind"`
				Text string `json:"text"`
			} `json:"parts"`
		} `json:"artifacts"`
	}
	if err := json.Unmarshal(resp.Result, &task); err != nil {
		t.Fatalf("result: %v: %s", err, resp.Result)
	}
	if task.Kind != "task" || task.Status.State != "completed" || task.Status.Message.Role != "agent" ||
		len(task.Artifacts) != 1 || task.Artifacts[0].Parts[0].Kind != "text" || task.Artifacts[0].Parts[0].Text != "7305 in stock" {
		t.Fatalf("0.3 task = %s", resp.Result)
	}
	if call := hook.recorded()[0]; call.Header.Get("X-Subject-Token") != testToken || strings.Contains(string(call.Body), testToken) {
		t.Fatalf("X-Subject-Token = %q, body %s; want the token in the header only", call.Header.Get("X-Subject-Token"), call.Body)
	}

	// tasks/get in 0.3 and GetTask in 1.0 both find it.
	_, got := rawRPC(t, endpoint, authHeader(testToken), `{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"id":"`+task.ID+`"}}`)
	if got.Error != nil || !strings.Contains(string(got.Result), `"state":"completed"`) || !strings.Contains(string(got.Result), task.ID) {
		t.Fatalf("tasks/get = %s %+v", got.Result, got.Error)
	}
	c := newClient(t, f.URL, testToken)
	t10, err := c.GetTask(context.Background(), &a2apb.GetTaskRequest{ID: a2apb.TaskID(task.ID)})
	if err != nil || t10.Status.State != a2apb.TaskStateCompleted || t10.ContextID != task.ContextID {
		t.Fatalf("GetTask 1.0 of a 0.3 task = %+v, %v", t10, err)
	}

	// An explicit 0.3 header is 0.3 too.
	_, got = rawRPC(t, endpoint, map[string]string{"Authorization": "Bearer " + testToken, "A2A-Version": "0.3"},
		`{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"id":"`+task.ID+`"}}`)
	if got.Error != nil || !strings.Contains(string(got.Result), `"kind":"task"`) {
		t.Fatalf("tasks/get with A2A-Version 0.3 = %s %+v", got.Result, got.Error)
	}
}

// TestFailuresNeverComplete runs every failing reply through the facade.
func TestFailuresNeverComplete(t *testing.T) {
	hook := newHook(t, false)
	f := startWebhookFacade(t, hook.srv.URL)
	c := newClient(t, f.URL, testToken)
	cases := []struct {
		name, kind    string
		status        int
		body          string
		text, rawPart string
	}{
		{"empty 200", "no_reply", 200, "", "the workflow returned no reply", ""},
		{"empty 500", "http_status", 500, " ", "the workflow answered HTTP 500 Internal Server Error", ""},
		{"empty 204", "no_reply", 204, "", "the workflow returned no reply", ""},
		{"contract 201", "off_contract", 201, `{"answer":"x","escalate":false}`, "the workflow reply is off-contract: status 201, want 200", `{"answer":"x","escalate":false}`},
		{"escalate", "escalated", 200, `{"answer":"ask the warehouse","escalate":true}`, "ask the warehouse", ""},
		{"error status", "http_status", 500, `{"message":"Error in workflow"}`, "the workflow answered HTTP 500 Internal Server Error", `{"message":"Error in workflow"}`},
		{"off-contract", "off_contract", 200, `{"data":{"answer":"x","escalate":false}}`, `the workflow reply is off-contract: unexpected key "data"`, `{"data":{"answer":"x","escalate":false}}`},
		{"not JSON", "off_contract", 200, `Workflow was started`, "the workflow reply is off-contract: body is not JSON", `Workflow was started`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hook.set(tc.status, tc.body)
			res, err := c.SendMessage(context.Background(), userMessage("q"))
			if err != nil {
				t.Fatalf("SendMessage: %v", err)
			}
			task := res.(*a2apb.Task)
			if task.Status.State != a2apb.TaskStateFailed {
				t.Fatalf("state = %s, want failed", task.Status.State)
			}
			m := task.Status.Message
			if m == nil || m.Parts[0].Text() != tc.text {
				t.Fatalf("status message = %+v, want %q", m, tc.text)
			}
			if tc.rawPart != "" && (len(m.Parts) != 2 || m.Parts[1].Text() != tc.rawPart) {
				t.Fatalf("status message parts = %+v, want the raw body verbatim", m.Parts)
			}
			if tc.rawPart == "" && len(m.Parts) != 1 {
				t.Fatalf("status message parts = %+v, want one", m.Parts)
			}
			if m.Metadata["failure"] != tc.kind {
				t.Fatalf("failure = %v, want %s", m.Metadata["failure"], tc.kind)
			}
			if len(task.Artifacts) != 0 {
				t.Fatalf("a failed task carries artifacts %+v", task.Artifacts)
			}
		})
	}
}

func TestVersionNegotiation(t *testing.T) {
	hook := newHook(t, false)
	f := startWebhookFacade(t, hook.srv.URL)
	endpoint := f.URL + "/a2a"
	for _, v := range []string{"2.0", "1", "0.2", "1.0.1"} {
		status, resp := rawRPC(t, endpoint, map[string]string{"Authorization": "Bearer x", "A2A-Version": v},
			`{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":{}}`)
		if status != 200 || resp.Error == nil || resp.Error.Code != -32009 || string(resp.ID) != "7" {
			t.Fatalf("A2A-Version %q: HTTP %d %+v id %s, want -32009 with id 7", v, status, resp.Error, resp.ID)
		}
	}
	// The query parameter counts when there is no header.
	_, resp := rawRPC(t, endpoint+"?A2A-Version=9.9", authHeader("x"), `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"x"}}`)
	if resp.Error == nil || resp.Error.Code != -32009 {
		t.Fatalf("query A2A-Version 9.9: %+v", resp.Error)
	}
	// A 1.0 method without the 1.0 header is a 0.3 call: method not found.
	_, resp = rawRPC(t, endpoint, authHeader("x"), `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}`)
	if resp.Error == nil || resp.Error.Code != -32601 {
		t.Fatalf("GetTask as 0.3: %+v, want -32601", resp.Error)
	}
	if n := len(hook.recorded()); n != 0 {
		t.Fatalf("the webhook was called %d times", n)
	}
}

func TestUndeclaredCapabilities(t *testing.T) {
	hook := newHook(t, false)
	f := startWebhookFacade(t, hook.srv.URL)
	endpoint := f.URL + "/a2a"
	v10 := map[string]string{"Authorization": "Bearer " + testToken, "A2A-Version": "1.0"}
	v03 := authHeader(testToken)
	cases := []struct {
		name   string
		header map[string]string
		body   string
		code   int
	}{
		{"1.0 streaming", v10, `{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"q"}]}}}`, -32004},
		{"1.0 subscribe", v10, `{"jsonrpc":"2.0","id":1,"method":"SubscribeToTask","params":{"id":"x"}}`, -32004},
		{"1.0 streaming, trailing data", v10, `{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"q"}]}}} x`, -32004},
		{"0.3 streaming", v03, `{"jsonrpc":"2.0","id":1,"method":"message/stream","params":{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"text","text":"q"}]}}}`, -32004},
		{"0.3 resubscribe", v03, `{"jsonrpc":"2.0","id":1,"method":"tasks/resubscribe","params":{"id":"x"}}`, -32004},
		{"1.0 push config", v10, `{"jsonrpc":"2.0","id":1,"method":"CreateTaskPushNotificationConfig","params":{"taskId":"x","url":"https://example.invalid/p"}}`, -32003},
		{"0.3 push config", v03, `{"jsonrpc":"2.0","id":1,"method":"tasks/pushNotificationConfig/set","params":{"taskId":"x","pushNotificationConfig":{"url":"https://example.invalid/p"}}}`, -32003},
		{"1.0 send with push", v10, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"q"}]},"configuration":{"taskPushNotificationConfig":{"url":"https://example.invalid/p"}}}}`, -32003},
		{"1.0 extended card", v10, `{"jsonrpc":"2.0","id":1,"method":"GetExtendedAgentCard","params":{}}`, -32004},
		{"1.0 file only", v10, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"url":"https://example.invalid/f.pdf"}]}}}`, -32005},
		{"1.0 blank text", v10, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"  "}]}}}`, -32602},
		{"no token", map[string]string{"A2A-Version": "1.0"}, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"q"}]}}}`, -31401},
		{"basic auth", map[string]string{"Authorization": "Basic dTpw"}, `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"text","text":"q"}]}}}`, -31401},
		{"unknown task", v10, `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"nope"}}`, -32001},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, resp := rawRPC(t, endpoint, tc.header, tc.body)
			if resp.Error == nil || resp.Error.Code != tc.code {
				t.Fatalf("error = %+v (result %s), want code %d", resp.Error, resp.Result, tc.code)
			}
		})
	}
	if n := len(hook.recorded()); n != 0 {
		t.Fatalf("the webhook was called %d times by refused requests", n)
	}
}

func TestRequestBound(t *testing.T) {
	hook := newHook(t, false)
	f := startWebhookFacade(t, hook.srv.URL, a2a.WithMaxRequestBytes(512))
	big := `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"text","text":"` +
		strings.Repeat("x", 600) + `"}]}}}`
	status, resp := rawRPC(t, f.URL+"/a2a", authHeader(testToken), big)
	if status != http.StatusRequestEntityTooLarge || resp.Error == nil || resp.Error.Code != -32600 {
		t.Fatalf("HTTP %d %+v, want 413 with -32600", status, resp.Error)
	}
	if len(hook.recorded()) != 0 {
		t.Fatal("the webhook was called")
	}
}
