package a2a_test

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"slices"
	"testing"

	a2apb "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/candorkit/candor/a2a"
)

func getCard(t *testing.T, url, version string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	if version != "" {
		req.Header.Set("A2A-Version", version)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	require.NoError(t, err)
	return resp, body
}

// The properties the 1.0 schema allows on an Agent Card (it sets
// additionalProperties: false), and on its nested objects.
var (
	card10Keys      = []string{"capabilities", "defaultInputModes", "defaultOutputModes", "description", "documentationUrl", "iconUrl", "name", "provider", "securityRequirements", "securitySchemes", "signatures", "skills", "supportedInterfaces", "version"}
	card10Required  = []string{"name", "description", "supportedInterfaces", "version", "capabilities", "defaultInputModes", "defaultOutputModes", "skills"}
	interface10Keys = []string{"protocolBinding", "protocolVersion", "tenant", "url"}
	skill10Keys     = []string{"description", "examples", "id", "inputModes", "name", "outputModes", "securityRequirements", "tags"}
)

func keysOf(t *testing.T, raw any) []string {
	t.Helper()
	m, ok := raw.(map[string]any)
	require.True(t, ok, "%v is not an object", raw)
	return slices.Sorted(maps.Keys(m))
}

// TestAgentCard10 pins the 1.0 card: nothing of 0.3 in it, the ProtoJSON
// form of securityRequirements, served without A2A-Version and with 1.0.
func TestAgentCard10(t *testing.T) {
	hook := newHook(t, false)
	f := startWebhookFacade(t, hook.srv.URL)
	endpoint := f.URL + "/a2a"
	for _, path := range []string{"/.well-known/agent-card.json", "/a2a/.well-known/agent-card.json"} {
		for _, version := range []string{"", "1.0"} {
			resp, body := getCard(t, f.URL+path, version)
			require.Equal(t, 200, resp.StatusCode)
			assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
			assert.Equal(t, "public, max-age=300", resp.Header.Get("Cache-Control"))
			assert.Equal(t, "A2A-Version", resp.Header.Get("Vary"))
			require.NotEmpty(t, resp.Header.Get("ETag"))
			assert.NotEmpty(t, resp.Header.Get("Last-Modified"))

			var raw map[string]any
			require.NoError(t, json.Unmarshal(body, &raw))
			for _, k := range keysOf(t, raw) {
				assert.Contains(t, card10Keys, k, "a key the 1.0 schema does not allow")
			}
			for _, k := range card10Required {
				assert.Contains(t, raw, k)
			}
			assert.Equal(t, []any{map[string]any{"schemes": map[string]any{"bearer": map[string]any{"list": []any{}}}}}, raw["securityRequirements"])
			assert.Equal(t, map[string]any{"bearer": map[string]any{"httpAuthSecurityScheme": map[string]any{"scheme": "Bearer"}}}, raw["securitySchemes"])
			for _, i := range raw["supportedInterfaces"].([]any) {
				for _, k := range keysOf(t, i) {
					assert.Contains(t, interface10Keys, k)
				}
			}
			for _, s := range raw["skills"].([]any) {
				for _, k := range keysOf(t, s) {
					assert.Contains(t, skill10Keys, k)
				}
			}

			card, err := a2a.ParseCard(body)
			require.NoError(t, err)
			require.Len(t, card.Skills, 1)
			assert.Equal(t, "stock-level", card.Skills[0].ID)
			assert.Equal(t, []string{"How many 1969 Harley Davidson are in stock?"}, card.Skills[0].Examples)
			assert.Equal(t, a2apb.AgentCapabilities{}, card.Capabilities, "no optional capability is served")
			require.Len(t, card.SupportedInterfaces, 2)
			for _, i := range card.SupportedInterfaces {
				assert.Equal(t, endpoint, i.URL)
				assert.Equal(t, a2apb.TransportProtocolJSONRPC, i.ProtocolBinding)
			}
			assert.Equal(t, a2apb.SecurityRequirementsOptions{{"bearer": {}}}, card.SecurityRequirements)

			// Conditional request.
			req, _ := http.NewRequest(http.MethodGet, f.URL+path, nil)
			req.Header.Set("If-None-Match", resp.Header.Get("ETag"))
			resp2, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			resp2.Body.Close()
			assert.Equal(t, http.StatusNotModified, resp2.StatusCode)
		}
	}
	resp, err := http.Post(f.URL+"/.well-known/agent-card.json", "application/json", nil)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	resp, err = http.Get(f.URL + "/elsewhere")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
}

// TestAgentCard03 pins the 0.3 card, served for "A2A-Version: 0.3", and a
// whole exchange with a2a-go's 0.3 client resolving it.
func TestAgentCard03(t *testing.T) {
	hook := newHook(t, false)
	f := startWebhookFacade(t, hook.srv.URL)
	endpoint := f.URL + "/a2a"
	resp, body := getCard(t, f.URL+"/.well-known/agent-card.json", "0.3")
	require.Equal(t, 200, resp.StatusCode)
	resp10, _ := getCard(t, f.URL+"/.well-known/agent-card.json", "")
	assert.NotEqual(t, resp10.Header.Get("ETag"), resp.Header.Get("ETag"), "one ETag per form")

	var raw map[string]any
	require.NoError(t, json.Unmarshal(body, &raw))
	assert.Equal(t, endpoint, raw["url"])
	assert.Equal(t, "0.3", raw["protocolVersion"])
	assert.Equal(t, "JSONRPC", raw["preferredTransport"])
	assert.Equal(t, []any{map[string]any{"bearer": []any{}}}, raw["security"])
	assert.Equal(t, map[string]any{"bearer": map[string]any{"type": "http", "scheme": "bearer"}}, raw["securitySchemes"])
	assert.NotContains(t, raw, "supportedInterfaces")
	assert.NotContains(t, raw, "securityRequirements")

	ctx := context.Background()
	resolver := &agentcard.Resolver{Client: http.DefaultClient, CardParser: a2av0.NewAgentCardParser()}
	card, err := resolver.Resolve(ctx, f.URL, agentcard.WithRequestHeader("A2A-Version", "0.3"))
	require.NoError(t, err)
	hc := &http.Client{Transport: bearer{testToken, http.DefaultTransport}}
	c, err := a2aclient.NewFromCard(ctx, card, a2av0.WithJSONRPCTransport(a2av0.JSONRPCTransportConfig{Client: hc}))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Destroy() })
	res, err := c.SendMessage(ctx, userMessage("How many S10_1949?"))
	require.NoError(t, err)
	task, ok := res.(*a2apb.Task)
	require.True(t, ok, "result %T", res)
	assert.Equal(t, a2apb.TaskStateCompleted, task.Status.State)
	assert.Equal(t, []string{"0.3"}, f.seenVersions(), "a2a-go's 0.3 client says 0.3")
	got, err := c.GetTask(ctx, &a2apb.GetTaskRequest{ID: task.ID})
	require.NoError(t, err)
	assert.Equal(t, a2apb.TaskStateCompleted, got.Status.State)
}

// TestAgentCardValue checks the card value Agent.Card builds: the one
// skill, the bearer scheme and no optional capability.
func TestAgentCardValue(t *testing.T) {
	card := testAgent("https://agent.example/a2a").Card()
	require.Len(t, card.Skills, 1)
	assert.Equal(t, "stock-level", card.Skills[0].ID)
	assert.Equal(t, "Stock agent", card.Name)
	assert.False(t, card.Capabilities.Streaming)
	assert.False(t, card.Capabilities.PushNotifications)
}
