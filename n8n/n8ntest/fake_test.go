package n8ntest

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFakeFaultsEveryOperation: FailNext answers the next call of each
// operation with the injected status, and only that call.
func TestFakeFaultsEveryOperation(t *testing.T) {
	inst := StartFake(t, Edition2, Options{})
	var f *Fake = inst.Fake
	require.NotNil(t, f)
	ctx := context.Background()
	status, body, err := inst.Do(ctx, http.MethodPost, "/api/v1/workflows", map[string]any{
		"name": "w", "nodes": []any{}, "connections": map[string]any{}, "settings": map[string]any{}})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, status, "%s", body)
	var created struct {
		ID        string `json:"id"`
		VersionID string `json:"versionId"`
	}
	require.NoError(t, json.Unmarshal(body, &created))
	wf := "/api/v1/workflows/" + created.ID
	calls := map[FakeOp][2]string{
		OpList:              {http.MethodGet, "/api/v1/workflows"},
		OpGet:               {http.MethodGet, wf},
		OpCreate:            {http.MethodPost, "/api/v1/workflows"},
		OpUpdate:            {http.MethodPut, wf},
		OpActivate:          {http.MethodPost, wf + "/activate"},
		OpDeactivate:        {http.MethodPost, wf + "/deactivate"},
		OpPublish:           {http.MethodPost, wf + "/publish"},
		OpUnpublish:         {http.MethodPost, wf + "/unpublish"},
		OpPublicationStatus: {http.MethodGet, "/rest/workflows/" + created.ID + "/publication-status"},
		OpDelete:            {http.MethodDelete, wf},
		OpListTags:          {http.MethodGet, "/api/v1/tags"},
		OpCreateTag:         {http.MethodPost, "/api/v1/tags"},
		OpDeleteTag:         {http.MethodDelete, "/api/v1/tags/t1"},
		OpWorkflowTags:      {http.MethodGet, wf + "/tags"},
		OpSetWorkflowTags:   {http.MethodPut, wf + "/tags"},
		OpListCredentials:   {http.MethodGet, "/rest/credentials"},
		OpCreateCredential:  {http.MethodPost, "/api/v1/credentials"},
		OpDeleteCredential:  {http.MethodDelete, "/api/v1/credentials/c1"},
		OpCredentialSchema:  {http.MethodGet, "/api/v1/credentials/schema/httpHeaderAuth"},
		OpListExecutions:    {http.MethodGet, "/api/v1/executions"},
		OpGetExecution:      {http.MethodGet, "/api/v1/executions/1"},
		OpLogin:             {http.MethodPost, "/rest/login"},
		OpSessionCreate:     {http.MethodPost, "/rest/workflows"},
		OpSessionGet:        {http.MethodGet, "/rest/workflows/" + created.ID},
		OpSessionPatch:      {http.MethodPatch, "/rest/workflows/" + created.ID},
		OpRun:               {http.MethodPost, "/rest/workflows/" + created.ID + "/run"},
		OpWebhook:           {http.MethodPost, "/webhook/anything"},
	}
	for op, c := range calls {
		f.FailNext(op, http.StatusTeapot, "injected")
		status, body, err := inst.Do(ctx, c[0], c[1], nil)
		require.NoError(t, err)
		assert.Equal(t, http.StatusTeapot, status, "%s: %s", op, body)
	}
	// The faults are used up: the workflow is still there.
	status, _, err = inst.Do(ctx, http.MethodGet, wf, nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, status)
	// Edition probe and authentication as on n8n.
	status, _, err = inst.Do(ctx, http.MethodGet, "/api/v1/credentials", nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, status)
	one := StartFake(t, Edition1, Options{})
	status, _, err = one.Do(ctx, http.MethodGet, "/api/v1/credentials", nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusMethodNotAllowed, status)
	one.APIKey = "wrong"
	status, _, err = one.Do(ctx, http.MethodGet, "/api/v1/workflows", nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusUnauthorized, status)
}

// TestFakeTagsCredentialsExecutionsAndRuns: the parts of n8n beside the
// deploy path, on both editions, as docs/n8n.md records them.
func TestFakeTagsCredentialsExecutionsAndRuns(t *testing.T) {
	for _, e := range []Edition{Edition1, Edition2} {
		t.Run(e.String(), func(t *testing.T) {
			inst := StartFake(t, e, Options{})
			ctx := context.Background()
			do := func(method, path string, in any, want int) []byte {
				t.Helper()
				status, body, err := inst.Do(ctx, method, path, in)
				require.NoError(t, err)
				require.Equal(t, want, status, "%s %s: %s", method, path, body)
				return body
			}
			// Tags: 201 on create, 409 for a taken name, 404 for an unknown one.
			var tag struct{ ID string }
			require.NoError(t, json.Unmarshal(do(http.MethodPost, "/api/v1/tags", map[string]string{"name": "ops"}, http.StatusCreated), &tag))
			do(http.MethodPost, "/api/v1/tags", map[string]string{"name": "ops"}, http.StatusConflict)
			do(http.MethodPost, "/api/v1/tags", map[string]string{}, http.StatusBadRequest)
			var wf struct{ ID string }
			require.NoError(t, json.Unmarshal(do(http.MethodPost, "/rest/workflows", map[string]any{
				"name": "tagged", "nodes": []any{}, "connections": map[string]any{}, "active": false,
				"tags": []string{tag.ID, "unknown"}}, http.StatusOK), &struct{ Data any }{&wf}))
			assert.Contains(t, string(do(http.MethodGet, "/api/v1/workflows/"+wf.ID+"/tags", nil, http.StatusOK)), `"ops"`)
			do(http.MethodPut, "/api/v1/workflows/"+wf.ID+"/tags", []map[string]string{{"id": "nope"}}, http.StatusNotFound)
			assert.Contains(t, string(do(http.MethodGet, "/api/v1/workflows?tags=ops", nil, http.StatusOK)), wf.ID)
			assert.NotContains(t, string(do(http.MethodGet, "/api/v1/workflows?active=true", nil, http.StatusOK)), wf.ID)
			assert.NotContains(t, string(do(http.MethodGet, "/api/v1/workflows?projectId=p1", nil, http.StatusOK)), wf.ID)
			assert.JSONEq(t, `{"data":[],"nextCursor":null}`, string(do(http.MethodGet, "/api/v1/executions?projectId=p1", nil, http.StatusOK)))
			do(http.MethodPost, "/rest/workflows", map[string]any{"name": "no active flag"}, http.StatusInternalServerError)
			do(http.MethodDelete, "/api/v1/tags/"+tag.ID, nil, http.StatusOK)
			do(http.MethodDelete, "/api/v1/tags/"+tag.ID, nil, http.StatusNotFound)

			// Credentials: checked against the type's schema; listed without data.
			do(http.MethodGet, "/api/v1/credentials/schema/nope", nil, http.StatusNotFound)
			do(http.MethodPost, "/api/v1/credentials", map[string]any{"name": "x", "type": "httpHeaderAuth",
				"data": map[string]any{"name": "X-Key"}}, http.StatusBadRequest)
			do(http.MethodPost, "/api/v1/credentials", map[string]any{"name": "x", "type": "nope"}, http.StatusBadRequest)
			do(http.MethodPost, "/api/v1/credentials", map[string]any{"type": "nope"}, http.StatusBadRequest)
			var cred struct{ ID string }
			require.NoError(t, json.Unmarshal(do(http.MethodPost, "/api/v1/credentials", map[string]any{"name": "x",
				"type": "httpBasicAuth", "data": map[string]any{"user": "u", "password": "secret-pass"}}, http.StatusOK), &cred))
			listed := do(http.MethodGet, "/rest/credentials", nil, http.StatusOK)
			assert.Contains(t, string(listed), cred.ID)
			assert.NotContains(t, string(listed), "secret-pass")
			do(http.MethodDelete, "/api/v1/credentials/"+cred.ID, nil, http.StatusOK)
			do(http.MethodDelete, "/api/v1/credentials/"+cred.ID, nil, http.StatusNotFound)

			// A manual run without pinned items waits for a webhook; with
			// them it is recorded, running on its first read.
			nodes := []any{
				map[string]any{"id": "1", "name": "Webhook", "type": "n8n-nodes-base.webhook", "parameters": map[string]any{"path": "p"}},
				map[string]any{"id": "2", "name": "Code", "type": "n8n-nodes-base.code",
					"parameters": map[string]any{"jsCode": `return [{json: {answer: "n=" + $input.first().json.n + ", " + $input.first().json.obj, escalate: true}}];`}},
			}
			require.NoError(t, json.Unmarshal(do(http.MethodPost, "/rest/workflows", map[string]any{"name": "run", "nodes": nodes,
				"connections": map[string]any{}, "active": false}, http.StatusOK), &struct{ Data any }{&wf}))
			run := "/rest/workflows/" + wf.ID + "/run"
			body := map[string]any{"triggerToStartFrom": map[string]string{"name": "Webhook"}}
			if e == Edition1 {
				body["workflowData"] = map[string]any{"nodes": nodes}
			}
			assert.Contains(t, string(do(http.MethodPost, run, body, http.StatusOK)), "waitingForWebhook")
			pin := map[string]any{"Webhook": []any{map[string]any{"json": map[string]any{"n": 7, "obj": map[string]any{}}}}}
			if e == Edition1 {
				body["workflowData"] = map[string]any{"nodes": nodes, "pinData": pin}
			} else {
				do(http.MethodPatch, "/rest/workflows/"+wf.ID, map[string]any{"pinData": pin}, http.StatusOK)
				do(http.MethodPatch, "/rest/workflows/"+wf.ID, map[string]any{"name": "x"}, http.StatusBadRequest)
			}
			var started struct {
				Data struct{ ExecutionID string }
			}
			require.NoError(t, json.Unmarshal(do(http.MethodPost, run, body, http.StatusOK), &started))
			exec := "/api/v1/executions/" + started.Data.ExecutionID + "?includeData=true"
			assert.Contains(t, string(do(http.MethodGet, exec, nil, http.StatusOK)), `"status":"running"`)
			final := string(do(http.MethodGet, exec, nil, http.StatusOK))
			assert.Contains(t, final, `"status":"success"`)
			assert.Contains(t, final, `n=7, [object Object]`)
			assert.Contains(t, final, `"escalate":true`)
			assert.Contains(t, string(do(http.MethodGet, "/api/v1/executions?workflowId="+wf.ID+"&status=success", nil, http.StatusOK)),
				`"id":`+started.Data.ExecutionID+`,`)
			do(http.MethodGet, "/api/v1/executions/999", nil, http.StatusNotFound)
			do(http.MethodPost, run, map[string]any{"triggerToStartFrom": map[string]string{"name": "Nope"},
				"workflowData": map[string]any{"nodes": nodes}}, http.StatusBadRequest)
			do(http.MethodGet, "/rest/workflows/unknown", nil, http.StatusNotFound)
			do(http.MethodGet, "/api/v1/workflows?limit=300", nil, http.StatusBadRequest)
			do(http.MethodGet, "/api/v1/tags?cursor=%25", nil, http.StatusBadRequest)
		})
	}
}

// TestFakeCodeModel: what the Fake makes of a Code node's jsCode.
func TestFakeCodeModel(t *testing.T) {
	item := map[string]any{"body": map[string]any{"q": "S10", "n": 2.5, "ok": true, "list": []any{1}}}
	cases := []struct {
		code string
		out  map[string]any
		err  string
	}{
		{`return [{json: {answer: "a \"quoted\"\n", escalate: false}}];`, map[string]any{"answer": "a \"quoted\"\n", "escalate": false}, ""},
		{`return [{json: {answer: 'got ' + $input.first().json.body.q + '/' + $input.first().json.body.n + '/' +
			$input.first().json.body.ok + '/' + $input.first().json.body.list, escalate: true}}];`,
			map[string]any{"answer": "got S10/2.5/true/[array]", "escalate": true}, ""},
		{`return [{json: {answer: $input.first().json.nope.q}}];`, nil, "Cannot read properties of undefined (reading 'q')"},
		{`return [{json: {answer: $input.first().json.nope}}];`, map[string]any{"answer": "undefined", "escalate": false}, ""},
		{`return [{json: {answer: 'unterminated}}];`, map[string]any{"answer": "", "escalate": false}, ""},
		{`return [{json: {escalate: true}}];`, map[string]any{"answer": "", "escalate": true}, ""},
		{`throw new Error('inventory down');`, nil, "inventory down"},
		{`throw new Error("it's \"down\"");`, nil, `it's "down"`},
		{`throw err;`, nil, "Error"},
		{`return [];`, nil, ""},
	}
	for _, c := range cases {
		nodes, err := json.Marshal([]any{map[string]any{"name": "Code", "type": "n8n-nodes-base.code",
			"parameters": map[string]any{"jsCode": c.code}}})
		require.NoError(t, err)
		res := runCode(fakeVersion{Nodes: nodes}, item)
		assert.Equal(t, c.out, res.out, c.code)
		assert.Equal(t, c.err, res.err, c.code)
		assert.Equal(t, "Code", res.node)
	}
}
