package a2a_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/candorkit/candor/a2a"
)

// Every JSON-RPC call is authenticated by the Verifier before any task or
// backend call: a bad token is 401 invalid_token, a missing scope 403, a
// verifier that cannot check is 503, a missing token 401 with a Bearer
// challenge, in both wire versions and for every method.
func TestFacadeAuthenticatesEveryCall(t *testing.T) {
	var asked atomic.Int64
	var seen atomic.Value
	f := startFacade(t, func(endpoint string) (*a2a.Server, error) {
		return a2a.NewServer(testAgent(endpoint), a2a.BackendFunc(func(ctx context.Context, q a2a.Question) a2a.Outcome {
			asked.Add(1)
			seen.Store(q.Caller)
			return a2a.Answer("42")
		}), a2a.WithVerifier(testVerifier))
	})
	endpoint := f.URL + "/a2a"
	bodies := map[string]string{
		"1.0 SendMessage":  `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"q"}]}}}`,
		"1.0 GetTask":      `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}`,
		"1.0 ListTasks":    `{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{}}`,
		"0.3 message/send": `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"text","text":"q"}]}}}`,
		"0.3 tasks/get":    `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"x"}}`,
		"not JSON":         `{"jsonrpc":`,
	}
	cases := []struct {
		name      string
		auth      string
		status    int
		challenge string
		code      int
	}{
		{"no token", "", 401, `Bearer`, -31401},
		{"basic", "Basic dTpw", 401, `Bearer`, -31401},
		{"empty bearer", "Bearer ", 401, `Bearer error="invalid_request"`, -31401},
		{"bogus bearer", "Bearer bad-forged", 401, `Bearer error="invalid_token"`, -31401},
		{"missing scope", "Bearer noscope-x", 403, `Bearer error="insufficient_scope"`, -31403},
		{"verifier down", "Bearer down-x", 503, "", -32603},
	}
	for _, tc := range cases {
		for method, body := range bodies {
			t.Run(tc.name+"/"+method, func(t *testing.T) {
				header := map[string]string{}
				if tc.auth != "" {
					header["Authorization"] = tc.auth
				}
				if method[:3] == "1.0" {
					header["A2A-Version"] = "1.0"
				}
				status, h, resp := rawRPCHeader(t, endpoint, header, body)
				assert.Equal(t, tc.status, status)
				assert.Equal(t, tc.challenge, h.Get("WWW-Authenticate"))
				assert.Equal(t, "application/json", h.Get("Content-Type"))
				require.NotNil(t, resp.Error)
				assert.Equal(t, tc.code, resp.Error.Code)
			})
		}
	}
	assert.Zero(t, asked.Load(), "no refused call reached the backend")
	assert.Zero(t, f.srv.TaskStore().(*a2a.MemoryStore).Len(), "no refused call made a task")

	// A verified caller owns its task: the backend sees who it is, another
	// caller does not find the task.
	status, resp := rawRPC(t, endpoint, map[string]string{"Authorization": "Bearer tok-alice", "A2A-Version": "1.0"}, bodies["1.0 SendMessage"])
	require.Equal(t, 200, status)
	require.Nil(t, resp.Error)
	caller := seen.Load().(a2a.Caller)
	assert.Equal(t, testIssuer, caller.Issuer)
	assert.NotEmpty(t, caller.Subject)
	var sent struct {
		Task struct {
			ID string `json:"id"`
		} `json:"task"`
	}
	require.NoError(t, jsonUnmarshal(string(resp.Result), &sent))
	get := `{"jsonrpc":"2.0","id":2,"method":"GetTask","params":{"id":"` + sent.Task.ID + `"}}`
	_, resp = rawRPC(t, endpoint, map[string]string{"Authorization": "Bearer tok-alice", "A2A-Version": "1.0"}, get)
	assert.Nil(t, resp.Error, "the owner reads its task")
	_, resp = rawRPC(t, endpoint, map[string]string{"Authorization": "Bearer tok-bob", "A2A-Version": "1.0"}, get)
	if assert.NotNil(t, resp.Error) {
		assert.Equal(t, -32001, resp.Error.Code, "another caller does not find it")
	}
}

// A verifier that returns a caller without a subject is refused: a task
// always has an owner.
func TestVerifierWithoutSubjectIsRefused(t *testing.T) {
	f := startFacade(t, func(endpoint string) (*a2a.Server, error) {
		return a2a.NewServer(testAgent(endpoint), a2a.BackendFunc(func(context.Context, a2a.Question) a2a.Outcome { return a2a.Answer("x") }),
			a2a.WithVerifier(a2a.VerifierFunc(func(context.Context, string) (a2a.Caller, error) { return a2a.Caller{Issuer: testIssuer}, nil })))
	})
	status, h, _ := rawRPCHeader(t, f.URL+"/a2a", map[string]string{"Authorization": "Bearer t"}, `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"x"}}`)
	assert.Equal(t, 401, status)
	assert.Equal(t, `Bearer error="invalid_token"`, h.Get("WWW-Authenticate"))
}

// With the explicit opt-out, a token is taken as it is (the backend must
// prove it) and its fingerprint owns the task.
func TestUnverifiedTokens(t *testing.T) {
	f := startFacade(t, func(endpoint string) (*a2a.Server, error) {
		return a2a.NewServer(testAgent(endpoint), a2a.BackendFunc(func(ctx context.Context, q a2a.Question) a2a.Outcome {
			if q.Caller.Subject != "" || q.Caller.Issuer != "" {
				return a2a.Fail("caller set", nil)
			}
			return a2a.Answer(q.Token)
		}), a2a.WithUnverifiedTokens())
	})
	c := newClient(t, f.URL, "opaque-token-1")
	res, err := c.SendMessage(context.Background(), userMessage("q"))
	require.NoError(t, err)
	assert.Contains(t, string(mustJSON(t, res)), "opaque-token-1")
	status, _, _ := rawRPCHeader(t, f.URL+"/a2a", nil, `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"x"}}`)
	assert.Equal(t, 401, status, "a missing token is still refused")
}
