package kits_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"

	"github.com/candorkit/candor/a2a"
	"github.com/candorkit/candor/a2a/a2atest"
	"github.com/candorkit/candor/a2a/pgstore"
	"github.com/candorkit/candor/mcpclient"
	"github.com/candorkit/candor/mcpclient/mcptest"
	"github.com/candorkit/candor/n8n"
	"github.com/candorkit/candor/n8n/n8ntest"
	"github.com/candorkit/candor/pgtest"
	"github.com/candorkit/candor/tokenexchange"
	"github.com/candorkit/candor/tokenexchange/oidctest"
)

// TestMCPClientAgainstMCPTest: mcpclient dials both real MCP servers of
// mcptest with a bearer token and calls a tool.
func TestMCPClientAgainstMCPTest(t *testing.T) {
	for _, kind := range mcptest.Kinds() {
		t.Run(string(kind), func(t *testing.T) {
			ctx := context.Background()
			srv := mcptest.New(t, kind, mcptest.WithBearer("mcp-token"))
			c, err := mcpclient.Dial(ctx, srv.URL,
				mcpclient.WithTokenSource(oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "mcp-token"})))
			require.NoError(t, err)
			defer c.Close()
			res, err := c.Call(ctx, mcptest.ToolEcho, map[string]any{"sku": "S10_1949"})
			require.NoError(t, err)
			assert.Contains(t, res.Text(), "S10_1949")
			calls := srv.Calls("tools/call")
			require.Len(t, calls, 1)
			assert.Equal(t, "mcp-token", mcptest.BearerOf(calls[0].Authorization))
		})
	}
}

// TestTokenExchangeAgainstOIDCTest: a user logs in at the web front end,
// and the agent exchanges the user's token for one naming the inventory.
func TestTokenExchangeAgainstOIDCTest(t *testing.T) {
	ctx := context.Background()
	p := oidctest.New(t, oidctest.Options{})
	require.NoError(t, p.AddUser(oidctest.User{ID: "alice", Username: "alice"}))
	require.NoError(t, p.AddClient(oidctest.Client{ID: "webapp", Secret: "webapp-secret", Audiences: []string{"agent"}}))
	require.NoError(t, p.AddClient(oidctest.Client{ID: "agent", Secret: "agent-secret", TokenExchange: true,
		Audiences: []string{"inventory"}}))
	require.NoError(t, p.AddClient(oidctest.Client{ID: "inventory"}))

	login, err := p.Login(ctx, "alice", "webapp")
	require.NoError(t, err)
	cfg := &tokenexchange.Config{TokenURL: p.TokenURL(), ClientID: "agent", ClientSecret: "agent-secret"}
	tok, err := cfg.Exchange(ctx, login.AccessToken)
	require.NoError(t, err)
	claims, err := p.VerifyAccessToken(ctx, tok.AccessToken, "inventory")
	require.NoError(t, err)
	user, err := p.VerifyAccessToken(ctx, login.AccessToken, "agent")
	require.NoError(t, err)
	assert.Equal(t, user.Subject, claims.Subject, "the exchanged token is the same user's")
	assert.Equal(t, "agent", claims.AuthorizedParty)
	assert.EqualValues(t, 1, p.TokenRequests(), "one POST: the exchange")
}

// facade serves a2a's webhook facade in front of hook, with store when
// not nil.
func facade(t *testing.T, hook *a2atest.Webhook, opts ...a2a.Option) string {
	verifier := a2a.VerifierFunc(func(ctx context.Context, token string) (a2a.Caller, error) {
		if strings.HasPrefix(token, "bad") {
			return a2a.Caller{}, a2a.ErrInvalidToken
		}
		return a2a.Caller{Subject: token, Issuer: "https://op.test"}, nil
	})
	srv := a2atest.Serve(t, func(endpoint string) (*a2a.Server, error) {
		return a2a.NewAdapter(a2a.Config{
			Agent: a2a.Agent{Name: "Stock agent", Description: "Answers stock questions", URL: endpoint,
				Skill: a2a.Skill{ID: "stock", Name: "Stock", Description: "Units in stock"}},
			WebhookURL: hook.URL,
		}, append([]a2a.Option{a2a.WithVerifier(verifier)}, opts...)...)
	})
	return srv.URL
}

// TestA2AFacadeAgainstA2ATest: the facade's answer, its escalation and its
// refusal of an off-contract reply, each as the final task an a2a-go
// client receives; the webhook saw each caller's token.
func TestA2AFacadeAgainstA2ATest(t *testing.T) {
	hook := a2atest.NewWebhook(t, a2atest.Answer("7305 in stock"), a2atest.Escalate("ask sales"), a2atest.Empty())
	base := facade(t, hook)
	task := a2atest.Ask(t, base, "alice", "S10_1949?")
	assert.Equal(t, "completed", a2atest.State(task))
	assert.Equal(t, "7305 in stock", a2atest.Text(task))
	assert.Equal(t, a2a.KindEscalated, a2atest.Failure(a2atest.Ask(t, base, "alice", "Vespa?")))
	assert.Equal(t, a2a.KindNoReply, a2atest.Failure(a2atest.Ask(t, base, "bob", "S99?")))
	assert.Equal(t, []string{"alice", "alice", "bob"}, hook.SubjectTokens())
}

// TestPgstoreAgainstPGTest: the facade keeps its tasks in PostgreSQL
// (a2a/pgstore) in a throwaway cluster.
func TestPgstoreAgainstPGTest(t *testing.T) {
	ctx := context.Background()
	cluster := pgtest.Start(t)
	db, err := sql.Open("pgx", cluster.NewDatabase(t))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	store, err := pgstore.OpenDB(ctx, db)
	require.NoError(t, err)
	t.Cleanup(func() { store.Close() })
	hook := a2atest.NewWebhook(t, a2atest.Answer("kept in PostgreSQL"))
	task := a2atest.Ask(t, facade(t, hook, a2a.WithTaskStore(store)), "alice", "q")
	assert.Equal(t, "completed", a2atest.State(task))
	var n int
	require.NoError(t, db.QueryRowContext(ctx,
		`SELECT count(*) FROM information_schema.tables WHERE table_schema = $1`, pgstore.DefaultSchema).Scan(&n))
	assert.Positive(t, n, "the store's schema is in the cluster")
}

// TestN8nDeployAgainstTheFake: Deploy puts a webhook workflow live on the
// hermetic fake of n8n 2.x, and a publish refused mid-deploy is restored.
func TestN8nDeployAgainstTheFake(t *testing.T) {
	ctx := context.Background()
	inst := n8ntest.StartFake(t, n8ntest.Edition2, n8ntest.Options{})
	c, err := n8n.New(inst.BaseURL, inst.APIKey)
	require.NoError(t, err)
	s, err := c.Login(ctx, inst.Email, inst.Password)
	require.NoError(t, err)

	wf := webhookWorkflow(t, "stock", "return [{json: {answer: 'got ' + $input.first().json.body.text, escalate: false}}];")
	created, err := c.CreateWorkflow(ctx, wf)
	require.NoError(t, err)
	on := true
	rep, err := n8n.Deploy(ctx, c, created.ID, wf, n8n.DeployOptions{Active: &on, Session: s})
	require.NoError(t, err, "%s", rep)
	assert.Equal(t, n8n.StateDeployed, rep.State)
	r, err := n8n.CallWebhook(ctx, inst.BaseURL+"/webhook/stock", "subject-token", map[string]string{"text": "S10_1949"})
	require.NoError(t, err)
	assert.Equal(t, "got S10_1949", r.Answer)

	next := wf.Clone()
	next.Name = "stock v2"
	inst.Fake.FailNext(n8ntest.OpPublish, http.StatusBadRequest, "refused")
	rep, err = n8n.Deploy(ctx, c, created.ID, next, n8n.DeployOptions{Session: s})
	var de *n8n.DeployError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, n8n.StateRestored, rep.State, "%s", rep)
}

func webhookWorkflow(t *testing.T, path, code string) *n8n.Workflow {
	t.Helper()
	b, err := json.Marshal(map[string]any{
		"name":     "Stock",
		"settings": map[string]any{"executionOrder": "v1"},
		"nodes": []any{
			map[string]any{"id": "0b6f4d2e-5a51-4c3e-9a0e-1f2d3c4b5a61", "name": "Webhook", "type": "n8n-nodes-base.webhook", "typeVersion": 2,
				"position": []int{0, 0}, "webhookId": "0b6f4d2e-5a51-4c3e-9a0e-1f2d3c4b5a64",
				"parameters": map[string]any{"httpMethod": "POST", "path": path, "responseMode": "responseNode"}},
			map[string]any{"id": "0b6f4d2e-5a51-4c3e-9a0e-1f2d3c4b5a62", "name": "Code", "type": "n8n-nodes-base.code", "typeVersion": 2,
				"position": []int{220, 0}, "parameters": map[string]any{"jsCode": code}},
			map[string]any{"id": "0b6f4d2e-5a51-4c3e-9a0e-1f2d3c4b5a63", "name": "Respond", "type": "n8n-nodes-base.respondToWebhook", "typeVersion": 1.1,
				"position": []int{440, 0}, "parameters": map[string]any{"respondWith": "firstIncomingItem"}},
		},
		"connections": map[string]any{
			"Webhook": map[string]any{"main": []any{[]any{map[string]any{"node": "Code", "type": "main", "index": 0}}}},
			"Code":    map[string]any{"main": []any{[]any{map[string]any{"node": "Respond", "type": "main", "index": 0}}}},
		},
	})
	require.NoError(t, err)
	wf, err := n8n.ParseWorkflow(b)
	require.NoError(t, err)
	require.Empty(t, n8n.Validate(wf))
	return wf
}
