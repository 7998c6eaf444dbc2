package a2a_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// 0.3 JSON-RPC errors are application/json like every other answer
// (a2a-go's 0.3 handler writes them without a Content-Type).
func TestErrorsAreJSON03(t *testing.T) {
	hook := newHook(t, false)
	f := startWebhookFacade(t, hook.srv.URL)
	for name, body := range map[string]string{
		"unknown task":     `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"nope"}}`,
		"unknown method":   `{"jsonrpc":"2.0","id":1,"method":"tasks/nope","params":{}}`,
		"not JSON":         `{"jsonrpc":`,
		"bad id":           `{"jsonrpc":"2.0","id":{"bad":"type"},"method":"message/send","params":{}}`,
		"cancel finished?": `{"jsonrpc":"2.0","id":1,"method":"tasks/cancel","params":{"id":"nope"}}`,
	} {
		_, h, resp := rawRPCHeader(t, f.URL+"/a2a", authHeader(testToken), body)
		assert.Equal(t, "application/json", h.Get("Content-Type"), name)
		assert.NotNil(t, resp.Error, name)
	}
}

// A message to a finished task answers -32004 UnsupportedOperation (spec
// 1.0, section 3.1.1), in both versions; a task of another caller stays
// unknown.
func TestMessageToFinishedTask(t *testing.T) {
	hook := newHook(t, false)
	f := startWebhookFacade(t, hook.srv.URL)
	endpoint := f.URL + "/a2a"
	v10 := map[string]string{"Authorization": "Bearer " + testToken, "A2A-Version": "1.0"}
	_, resp := rawRPC(t, endpoint, v10, send10Body)
	require.Nil(t, resp.Error)
	var sent struct {
		Task struct {
			ID, ContextID string
		} `json:"task"`
	}
	require.NoError(t, json.Unmarshal(resp.Result, &sent))
	id := sent.Task.ID

	follow10 := `{"jsonrpc":"2.0","id":2,"method":"SendMessage","params":{"message":{"messageId":"m-2","taskId":"` + id + `","role":"ROLE_USER","parts":[{"text":"and now?"}]}}}`
	follow03 := `{"jsonrpc":"2.0","id":3,"method":"message/send","params":{"message":{"kind":"message","messageId":"m-3","taskId":"` + id + `","role":"user","parts":[{"kind":"text","text":"and now?"}]}}}`
	_, resp = rawRPC(t, endpoint, v10, follow10)
	if assert.NotNil(t, resp.Error) {
		assert.Equal(t, -32004, resp.Error.Code)
	}
	_, resp = rawRPC(t, endpoint, authHeader(testToken), follow03)
	if assert.NotNil(t, resp.Error) {
		assert.Equal(t, -32004, resp.Error.Code)
	}
	_, resp = rawRPC(t, endpoint, map[string]string{"Authorization": "Bearer tok-other", "A2A-Version": "1.0"}, follow10)
	if assert.NotNil(t, resp.Error) {
		assert.NotEqual(t, -32004, resp.Error.Code, "another caller learns nothing about the task")
	}
	assert.Len(t, hook.recorded(), 1, "the follow-ups reached no workflow")
}

// A message without parts, with parts: [], missing a required field, or
// with a part without kind is -32602 Invalid params in both versions (not
// -32005, not -32700); a message whose parts are valid but not text stays
// -32005.
func TestMalformedMessagesAreInvalidParams(t *testing.T) {
	hook := newHook(t, false)
	f := startWebhookFacade(t, hook.srv.URL)
	endpoint := f.URL + "/a2a"
	v10 := map[string]string{"Authorization": "Bearer " + testToken, "A2A-Version": "1.0"}
	v03 := authHeader(testToken)
	send03 := func(params string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"message/send","params":` + params + `}`
	}
	send10 := func(params string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":` + params + `}`
	}
	cases := []struct {
		name   string
		header map[string]string
		body   string
		code   int
	}{
		{"0.3 only kind", v03, send03(`{"message":{"kind":"message"}}`), -32602},
		{"0.3 no parts", v03, send03(`{"message":{"kind":"message","messageId":"m","role":"user"}}`), -32602},
		{"0.3 empty parts", v03, send03(`{"message":{"kind":"message","messageId":"m","role":"user","parts":[]}}`), -32602},
		{"0.3 no messageId", v03, send03(`{"message":{"kind":"message","role":"user","parts":[{"kind":"text","text":"q"}]}}`), -32602},
		{"0.3 no role", v03, send03(`{"message":{"kind":"message","messageId":"m","parts":[{"kind":"text","text":"q"}]}}`), -32602},
		{"0.3 part without kind", v03, send03(`{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"text":"q"}]}}`), -32602},
		{"0.3 text part without text", v03, send03(`{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"text"}]}}`), -32602},
		{"0.3 no message", v03, send03(`{}`), -32602},
		{"0.3 params not a message", v03, `{"jsonrpc":"2.0","method":"message/send","params":{"":"not_a_dict"}}`, -32602},
		{"0.3 params an array", v03, send03(`[1]`), -32602},
		{"0.3 file only", v03, send03(`{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"file","file":{"uri":"https://example.invalid/f.pdf"}}]}}`), -32005},
		{"0.3 bad id stays -32600", v03, `{"jsonrpc":"2.0","method":"message/send","params":{},"id":{"bad":"type"}}`, -32600},
		{"not JSON stays -32700", v03, `{"jsonrpc":"2.0",`, -32700},
		{"1.0 no parts", v10, send10(`{"message":{"messageId":"m","role":"ROLE_USER"}}`), -32602},
		{"1.0 empty parts", v10, send10(`{"message":{"messageId":"m","role":"ROLE_USER","parts":[]}}`), -32602},
		{"1.0 no messageId", v10, send10(`{"message":{"role":"ROLE_USER","parts":[{"text":"q"}]}}`), -32602},
		{"1.0 0.3 role", v10, send10(`{"message":{"messageId":"m","role":"user","parts":[{"text":"q"}]}}`), -32602},
		{"1.0 empty part", v10, send10(`{"message":{"messageId":"m","role":"ROLE_USER","parts":[{}]}}`), -32602},
		{"0.3 negative historyLength", v03, `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"x","historyLength":-1}}`, -32602},
		{"1.0 negative historyLength", v10, `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x","historyLength":-3}}`, -32602},
		{"1.0 zero historyLength is fine", v10, `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x","historyLength":0}}`, -32001},
		{"1.0 url only", v10, send10(`{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"url":"https://example.invalid/f.pdf"}]}}`), -32005},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, resp := rawRPC(t, endpoint, tc.header, tc.body)
			require.NotNil(t, resp.Error, "result %s", resp.Result)
			assert.Equal(t, tc.code, resp.Error.Code, resp.Error.Message)
		})
	}
	assert.Empty(t, hook.recorded())
}

// A JSON-RPC request with another Content-Type is refused with HTTP 415 and
// -32005 ContentTypeNotSupported (spec 1.0, section 5.4); a charset
// parameter is fine.
func TestRequestContentType(t *testing.T) {
	hook := newHook(t, false)
	f := startWebhookFacade(t, hook.srv.URL)
	header := map[string]string{"Authorization": "Bearer " + testToken, "A2A-Version": "1.0", "Content-Type": "text/plain"}
	status, h, resp := rawRPCHeader(t, f.URL+"/a2a", header, send10Body)
	assert.Equal(t, 415, status)
	assert.Equal(t, "application/json", h.Get("Content-Type"))
	if assert.NotNil(t, resp.Error) {
		assert.Equal(t, -32005, resp.Error.Code)
	}
	header["Content-Type"] = "application/json; charset=utf-8"
	status, _, resp = rawRPCHeader(t, f.URL+"/a2a", header, send10Body)
	assert.Equal(t, 200, status)
	assert.Nil(t, resp.Error)
	assert.Len(t, hook.recorded(), 1)
}
