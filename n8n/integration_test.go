package n8n_test

// Integration tests on a real n8n started by n8n/n8ntest from the
// installs of scripts/n8n-local, in three configurations: n8n 1.123.81,
// n8n 1.123.81 with its draft/publish behaviour on, and n8n 2.x. One
// instance runs at a time; the subtests share it. Besides the Report, each
// deploy case checks what n8n serves (the webhook) and records (the
// workflow, and on 2.x its publication record), read apart from the code
// under test.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/candorkit/candor/n8n"
	"github.com/candorkit/candor/n8n/n8ntest"
	"github.com/candorkit/candor/reply"
)

func TestRealN8nEdition1(t *testing.T) { realN8n(t, n8ntest.Start, n8ntest.Edition1, false) }

// TestRealN8nEdition1DraftPublish runs the deploy scenarios on n8n 1.123
// with its draft/publish behaviour switched on, where edits go to a draft
// and activation publishes.
func TestRealN8nEdition1DraftPublish(t *testing.T) { realN8n(t, n8ntest.Start, n8ntest.Edition1, true) }

func TestRealN8nEdition2(t *testing.T) { realN8n(t, n8ntest.Start, n8ntest.Edition2, false) }

// The same scenarios on the hermetic fake of each configuration: what they
// assert about n8n holds on both, so the fake stays true to n8n.
func TestFakeN8nEdition1(t *testing.T) { realN8n(t, n8ntest.StartFake, n8ntest.Edition1, false) }

func TestFakeN8nEdition1DraftPublish(t *testing.T) {
	realN8n(t, n8ntest.StartFake, n8ntest.Edition1, true)
}

func TestFakeN8nEdition2(t *testing.T) { realN8n(t, n8ntest.StartFake, n8ntest.Edition2, false) }

type env struct {
	inst *n8ntest.Instance
	c    *n8n.Client
	s    *n8n.Session
	ed   n8n.Edition
	dp   bool // n8n 1.123 with draft/publish on
}

type starter func(testing.TB, n8ntest.Edition, n8ntest.Options) *n8ntest.Instance

func realN8n(t *testing.T, start starter, e n8ntest.Edition, draftPublish bool) {
	began := time.Now()
	var opts n8ntest.Options
	if draftPublish {
		opts.Env = map[string]string{"N8N_ENV_FEAT_WORKFLOWS_DRAFT_PUBLISH_ENABLED": "true"}
	}
	inst := start(t, e, opts)
	fake := inst.Fake != nil
	var logs bytes.Buffer
	c, err := n8n.New(inst.BaseURL, inst.APIKey,
		n8n.WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	require.NoError(t, err)
	s, err := c.Login(ctxT(t), inst.Email, inst.Password)
	require.NoError(t, err)
	en := &env{inst: inst, c: c, s: s, ed: n8n.Edition(e), dp: draftPublish}
	t.Cleanup(func() {
		assert.False(t, inst.Exited(), "n8n exited during the tests (log in %s)", inst.UserFolder)
		assert.NotContains(t, logs.String(), inst.APIKey, "the API key appeared in the client's logs")
		t.Logf("%s (draft/publish %t, fake %t): %s in total (start included)", e, draftPublish, fake, time.Since(began).Round(time.Millisecond))
	})
	t.Run("DetectEdition", en.detect)
	if !draftPublish {
		t.Run("ClientBasics", en.basics)
		t.Run("EmptyReplyAndExecutionLookup", en.emptyReply)
	}
	if !draftPublish {
		t.Run("ExportPlanApply", en.exportPlanApply)
	}
	if fake {
		t.Run("FaultInjection", en.faults)
		t.Run("RestoreFaults", en.restoreFaults)
	}
	t.Run("DeployWebhookChange", en.deployWebhookChange)
	t.Run("FirstCallAfterDeploy", en.firstCallAfterDeploy)
	t.Run("FailedTriggerActivation", en.failedTrigger)
	t.Run("PartialTriggerActivation", en.partialTrigger)
	t.Run("RestoreWhenNewEqualsPrevious", en.restoreSameDefinition)
	t.Run("ApplyCreateRefusedActivation", en.applyCreateRefused)
	t.Run("DeployInactive", en.deployInactive)
	t.Run("ExpectedVersion", en.expectedVersion)
	t.Run("WriterDuringDeploy", en.writerDuringDeploy)
	if e == n8ntest.Edition2 || draftPublish { // only these keep a draft beside the live version
		t.Run("PendingDraft", en.pendingDraft)
		t.Run("PendingDraftSameDefinition", en.pendingDraftSameDefinition)
	}
	if draftPublish {
		t.Run("DeploySavedDraft", en.deploySavedDraft)
	}
	if e == n8ntest.Edition2 {
		t.Run("UnverifiedWithoutSession", en.unverifiedWithoutSession)
	}
	if t.Failed() {
		t.Logf("n8n log tail:\n%s", inst.Log(40))
	}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// opts returns o with the session that lets Deploy read n8n 2.x's
// publication record.
func (en *env) opts(o n8n.DeployOptions) n8n.DeployOptions {
	o.Session = en.s
	return o
}

func parse(t *testing.T, doc map[string]any) *n8n.Workflow {
	t.Helper()
	b, err := json.Marshal(doc)
	require.NoError(t, err)
	wf, err := n8n.ParseWorkflow(b)
	require.NoError(t, err)
	require.Empty(t, n8n.Validate(wf), "test workflow has problems")
	return wf
}

// webhookWorkflow is Webhook (responseNode) -> Code -> Respond to Webhook,
// answering whatever the Code node returns.
func webhookWorkflow(t *testing.T, name, path, code string) *n8n.Workflow {
	t.Helper()
	return parse(t, map[string]any{
		"name":     name,
		"settings": map[string]any{"executionOrder": "v1"},
		"nodes": []any{
			map[string]any{"id": uuid.NewString(), "name": "Webhook", "type": "n8n-nodes-base.webhook", "typeVersion": 2,
				"position": []int{0, 0}, "webhookId": uuid.NewString(),
				"parameters": map[string]any{"httpMethod": "POST", "path": path, "responseMode": "responseNode", "options": map[string]any{}}},
			map[string]any{"id": uuid.NewString(), "name": "Code", "type": "n8n-nodes-base.code", "typeVersion": 2,
				"position": []int{220, 0}, "parameters": map[string]any{"jsCode": code}},
			map[string]any{"id": uuid.NewString(), "name": "Respond", "type": "n8n-nodes-base.respondToWebhook", "typeVersion": 1.1,
				"position": []int{440, 0}, "parameters": map[string]any{"respondWith": "firstIncomingItem", "options": map[string]any{}}},
		},
		"connections": map[string]any{
			"Webhook": map[string]any{"main": []any{[]any{map[string]any{"node": "Code", "type": "main", "index": 0}}}},
			"Code":    map[string]any{"main": []any{[]any{map[string]any{"node": "Respond", "type": "main", "index": 0}}}},
		},
	})
}

// badSchedule is a Schedule Trigger whose cron expression n8n cannot parse:
// n8n 1.x refuses to activate it (400), n8n 2.x accepts the publish and
// records the trigger as failed.
func badSchedule() n8n.Node {
	var n n8n.Node
	err := json.Unmarshal([]byte(`{"id":"`+uuid.NewString()+`","name":"Schedule","type":"n8n-nodes-base.scheduleTrigger",
		"typeVersion":1.2,"position":[0,300],
		"parameters":{"rule":{"interval":[{"field":"cronExpression","expression":"not a cron expression"}]}}}`), &n)
	if err != nil {
		panic(err)
	}
	return n
}

// liveWorkflow creates a webhook workflow (see webhookWorkflow), deploys it
// active and waits until its webhook answers.
func (en *env) liveWorkflow(t *testing.T, ctx context.Context, name, path, answer string) (*n8n.Workflow, n8n.ID) {
	t.Helper()
	wf := webhookWorkflow(t, name, path, answerCode(answer))
	created, err := en.c.CreateWorkflow(ctx, wf)
	require.NoError(t, err)
	on := true
	rep, err := n8n.Deploy(ctx, en.c, created.ID, wf, en.opts(n8n.DeployOptions{Active: &on}))
	require.NoError(t, err, "%s", rep)
	_, err = pollReply(ctx, en.hookURL(path), answer)
	require.NoError(t, err)
	return wf, created.ID
}

func answerCode(answer string) string {
	return fmt.Sprintf("return [{json: {answer: %q, escalate: false}}];", answer)
}

func setCode(t *testing.T, wf *n8n.Workflow, code string) {
	t.Helper()
	n, ok := wf.Node("Code")
	require.True(t, ok, "no Code node")
	var p map[string]any
	require.NoError(t, json.Unmarshal(n.Parameters, &p))
	p["jsCode"] = code
	b, err := json.Marshal(p)
	require.NoError(t, err)
	n.Parameters = b
}

func (en *env) hookURL(path string) string { return en.inst.BaseURL + "/webhook/" + path }

// failingSmoke is a Smoke whose check never passes.
func failingSmoke(url string) *n8n.Smoke {
	return &n8n.Smoke{URL: url, Header: http.Header{reply.SubjectTokenHeader: {"subject"}}, Body: map[string]string{"q": "smoke"},
		Check: func(int, []byte) error { return errors.New("not the new definition (on purpose)") }}
}

// stored reads the workflow straight from n8n's public API.
func (en *env) stored(t *testing.T, ctx context.Context, id n8n.ID) map[string]any {
	t.Helper()
	status, body, err := en.inst.Do(ctx, http.MethodGet, "/api/v1/workflows/"+string(id), nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, status, "%s", body)
	var w map[string]any
	require.NoError(t, json.Unmarshal(body, &w))
	return w
}

// publication reads n8n 2.x's publication record straight from n8n.
func (en *env) publication(t *testing.T, ctx context.Context, id n8n.ID) map[string]any {
	t.Helper()
	status, body, err := en.inst.Do(ctx, http.MethodGet, "/rest/workflows/"+string(id)+"/publication-status", nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, status, "%s", body)
	var out struct {
		Data map[string]any `json:"data"`
	}
	require.NoError(t, json.Unmarshal(body, &out))
	return out.Data
}

// logReport prints the report and its steps.
func logReport(t *testing.T, rep n8n.Report) {
	t.Helper()
	t.Logf("report: %s", rep)
	for _, st := range rep.Steps {
		t.Logf("  step %-22s version=%s err=%v %s", st.Name, st.VersionID, st.Err, st.Detail)
	}
}

func (en *env) detect(t *testing.T) {
	ed, err := en.c.DetectEdition(ctxT(t))
	require.NoError(t, err)
	assert.Equal(t, en.ed, ed)
}

func (en *env) basics(t *testing.T) {
	ctx := ctxT(t)
	c := en.c
	var ids []n8n.ID
	for i := range 3 {
		w, err := c.CreateWorkflow(ctx, webhookWorkflow(t, fmt.Sprintf("Paging %d", i), "paging-"+uuid.NewString(), answerCode("p")))
		require.NoError(t, err)
		require.NotEmpty(t, w.ID)
		require.NotEmpty(t, w.VersionID)
		require.False(t, w.Active)
		ids = append(ids, w.ID)
	}
	// name= is a case-insensitive substring: "paging" matches all three.
	got, err := c.ListWorkflows(ctx, n8n.ListWorkflowsOptions{Name: "paging", PageSize: 1})
	require.NoError(t, err)
	seen := map[n8n.ID]bool{}
	for _, w := range got {
		seen[w.ID] = true
	}
	assert.Len(t, got, 3, "paging with 1 per page")
	for _, id := range ids {
		assert.True(t, seen[id], "workflow %s missing from the list", id)
	}
	// The iterator form reads the same pages.
	n := 0
	for w, err := range c.Workflows(ctx, n8n.ListWorkflowsOptions{Name: "paging", PageSize: 2}) {
		require.NoError(t, err)
		assert.True(t, seen[w.ID])
		n++
	}
	assert.Equal(t, 3, n)
	_, err = c.GetWorkflow(ctx, "doesNotExist0000")
	assert.True(t, n8n.IsStatus(err, http.StatusNotFound), "GetWorkflow(missing) = %v", err)

	// Tags.
	name := "candor-" + uuid.NewString()[:8]
	tag, err := c.CreateTag(ctx, name)
	require.NoError(t, err)
	require.NotEmpty(t, tag.ID)
	_, err = c.CreateTag(ctx, name)
	assert.True(t, n8n.IsStatus(err, http.StatusConflict), "duplicate tag: %v", err)
	_, err = c.SetWorkflowTags(ctx, ids[0], tag.ID)
	require.NoError(t, err)
	tags, err := c.WorkflowTags(ctx, ids[0])
	require.NoError(t, err)
	require.Len(t, tags, 1)
	assert.Equal(t, name, tags[0].Name)
	all, err := c.ListTags(ctx)
	require.NoError(t, err)
	assert.NotEmpty(t, all)
	spare, err := c.CreateTag(ctx, name+"-spare")
	require.NoError(t, err)
	require.NoError(t, c.DeleteTag(ctx, spare.ID))
	assert.True(t, n8n.IsStatus(c.DeleteTag(ctx, spare.ID), http.StatusNotFound))

	// Activation by hand: n8n 1.x activate/deactivate, n8n 2.x publish and
	// unpublish of an exact version.
	var live *n8n.Workflow
	if en.ed == n8n.Edition1 {
		live, err = c.ActivateWorkflow(ctx, ids[1])
	} else {
		var w *n8n.Workflow
		w, err = c.GetWorkflow(ctx, ids[1])
		require.NoError(t, err)
		live, err = c.PublishWorkflow(ctx, ids[1], w.VersionID)
	}
	require.NoError(t, err)
	assert.True(t, live.Active)
	if en.ed == n8n.Edition2 {
		pub, err := en.s.PublicationStatus(ctx, ids[1])
		require.NoError(t, err)
		// Read while n8n activates the triggers: in flight or settled.
		assert.Contains(t, []n8n.PublicationStatus{n8n.PublicationInProgress, n8n.PublicationPublished}, pub.Status)
		_, err = c.UnpublishWorkflow(ctx, ids[1])
		require.NoError(t, err)
	} else {
		off, err := c.DeactivateWorkflow(ctx, ids[1])
		require.NoError(t, err)
		assert.False(t, off.Active)
		_, err = en.s.PublicationStatus(ctx, ids[1])
		assert.True(t, n8n.IsStatus(err, http.StatusNotFound), "n8n 1.x has no publication record: %v", err)
	}

	// Credentials: create, schema, list (session), delete.
	schema, err := c.CredentialSchema(ctx, "httpHeaderAuth")
	require.NoError(t, err)
	assert.Contains(t, string(schema), `"properties"`)
	cred, err := c.CreateCredential(ctx, "inventory header", "httpHeaderAuth", map[string]any{"name": "X-Key", "value": "s3cr3t-value"})
	require.NoError(t, err)
	_, err = c.CreateCredential(ctx, "bad", "httpHeaderAuth", map[string]any{"nonsense": true})
	var se *n8n.StatusError
	require.ErrorAs(t, err, &se, "credential off its schema")
	assert.Equal(t, http.StatusBadRequest, se.StatusCode)
	_, err = c.Login(ctx, en.inst.Email, "Wrong-password-1")
	assert.True(t, n8n.IsStatus(err, http.StatusUnauthorized), "Login with a wrong password: %v", err)
	s := en.s
	assert.NotContains(t, s.String(), "n8n-auth")
	creds, err := s.ListCredentials(ctx)
	require.NoError(t, err)
	found := false
	for _, cr := range creds {
		found = found || (cr.ID == cred.ID && cr.Type == "httpHeaderAuth")
	}
	assert.True(t, found, "ListCredentials %+v lacks %s", creds, cred.ID)
	require.NoError(t, c.DeleteCredential(ctx, cred.ID))

	// A workflow created with its tag in one request.
	tagged, err := s.CreateWorkflow(ctx, webhookWorkflow(t, "Tagged at birth", "tagged-"+uuid.NewString(), answerCode("t")), tag.ID)
	require.NoError(t, err)
	assert.False(t, tagged.Active)
	ids = append(ids, tagged.ID)
	byTag, err := c.ListWorkflows(ctx, n8n.ListWorkflowsOptions{Tags: []string{name}})
	require.NoError(t, err)
	if assert.Len(t, byTag, 2) {
		assert.True(t, byTag[0].ID == tagged.ID || byTag[1].ID == tagged.ID)
	}

	// Run a stored, inactive workflow with pinned trigger data.
	runWF := webhookWorkflow(t, "Run pinned", "run-"+uuid.NewString(),
		"return [{json: {answer: 'got ' + $input.first().json.body.q, escalate: false}}];")
	created, err := c.CreateWorkflow(ctx, runWF)
	require.NoError(t, err)
	exID, err := s.RunWorkflow(ctx, created.ID, "Webhook", []map[string]any{{"body": map[string]any{"q": "pinned-42"}}})
	var de *n8n.DecodeError
	if errors.As(err, &de) {
		t.Fatalf("%v: %s", err, de.Body)
	}
	require.NoError(t, err)
	ex, err := c.WaitExecution(ctx, exID)
	require.NoError(t, err)
	assert.Equal(t, n8n.ExecutionSuccess, ex.Status, "error %q", ex.ErrorMessage())
	assert.Contains(t, string(ex.Data), "got pinned-42")
	// The stored workflow is as before: same version, no pinned data left.
	after, err := c.GetWorkflow(ctx, created.ID)
	require.NoError(t, err)
	assert.Equal(t, created.VersionID, after.VersionID, "running changed the version")
	if pd := after.Extra["pinData"]; len(pd) > 0 {
		assert.Contains(t, []string{"null", "{}"}, string(pd), "pinned data left on the stored workflow")
	}
	_, err = s.RunWorkflow(ctx, created.ID, "NoSuchNode", nil)
	assert.Error(t, err, "RunWorkflow accepted a trigger that is not in the workflow")

	for _, id := range append(ids, created.ID) {
		require.NoError(t, c.DeleteWorkflow(ctx, id))
	}
	_, err = c.GetWorkflow(ctx, ids[0])
	assert.True(t, n8n.IsStatus(err, http.StatusNotFound), "deleted workflow still readable: %v", err)
}

func (en *env) deployWebhookChange(t *testing.T) {
	ctx := ctxT(t)
	c := en.c
	path := "deploy-" + uuid.NewString()
	url := en.hookURL(path)
	wf := webhookWorkflow(t, "Deploy me", path, answerCode("version one"))
	created, err := c.CreateWorkflow(ctx, wf)
	require.NoError(t, err)
	id := created.ID
	on := true

	// Make the first version live.
	rep, err := n8n.Deploy(ctx, c, id, wf, en.opts(n8n.DeployOptions{Active: &on}))
	require.NoError(t, err, "%s", rep)
	assert.Equal(t, n8n.StateDeployed, rep.State)
	assert.True(t, rep.After.Active)
	assert.Equal(t, en.ed, rep.Edition)
	assert.Zero(t, rep.Downtime, "the workflow was not active before")
	r, err := n8n.CallWebhook(ctx, url, "subject", map[string]string{"q": "x"})
	require.NoError(t, err, "first call right after the first deploy")
	assert.Equal(t, "version one", r.Answer)

	// Nothing to do: no write at all.
	rep, err = n8n.Deploy(ctx, c, id, wf, en.opts(n8n.DeployOptions{}))
	require.NoError(t, err, "%s", rep)
	assert.Equal(t, n8n.StateUnchanged, rep.State)
	for _, st := range rep.Steps {
		assert.Contains(t, []string{"read", "read-publication", "compare"}, st.Name, "a no-op deploy wrote")
	}

	// Change the live workflow, with a smoke check polling the webhook.
	next := wf.Clone()
	setCode(t, next, answerCode("version two"))
	rep, err = n8n.Deploy(ctx, c, id, next, en.opts(n8n.DeployOptions{Smoke: &n8n.Smoke{
		URL: url, Header: http.Header{reply.SubjectTokenHeader: {"subject"}}, Body: map[string]string{"q": "smoke"},
		Check: func(status int, body []byte) error {
			if status != 200 || !bytes.Contains(body, []byte("version two")) {
				return fmt.Errorf("status %d body %q", status, body)
			}
			return nil
		},
	}}))
	require.NoError(t, err, "%s", rep)
	assert.Equal(t, n8n.StateDeployed, rep.State)
	assert.Equal(t, n8n.LiveSmoke, rep.Live)
	assert.NotEmpty(t, rep.WrittenVersionID)
	assert.NotEqual(t, rep.Before.VersionID, rep.WrittenVersionID)
	assert.Equal(t, rep.WrittenVersionID, rep.After.VersionID)
	assert.True(t, rep.After.Active)
	assert.Equal(t, n8n.MatchNew, rep.Matches)
	assert.GreaterOrEqual(t, rep.SmokeAttempts, 1)
	if rep.After.ActiveVersionID != "" {
		assert.Equal(t, rep.WrittenVersionID, rep.After.ActiveVersionID)
	}
	// The 404 window of n8n 1.x: deactivate, update, activate.
	if en.ed == n8n.Edition1 {
		assert.Positive(t, rep.Downtime, "n8n 1.x deploys through a deactivation")
		t.Logf("n8n 1.x offline window of a deploy: %s", rep.Downtime)
	} else {
		assert.Zero(t, rep.Downtime)
	}
	r, err = n8n.CallWebhook(ctx, url, "subject", map[string]string{"q": "x"})
	require.NoError(t, err)
	assert.Equal(t, "version two", r.Answer)

	// A change that cannot activate (no trigger left): Deploy restores the
	// live definition and says so.
	broken := next.Clone()
	code, _ := broken.Node("Code")
	broken.Nodes = []n8n.Node{*code}
	broken.Connections = n8n.Connections{}
	require.Empty(t, n8n.Validate(broken), "n8n rejects it only at activation")
	rep, err = n8n.Deploy(ctx, c, id, broken, en.opts(n8n.DeployOptions{}))
	logReport(t, rep)
	var de *n8n.DeployError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, n8n.StateRestored, de.Report.State)
	assert.Equal(t, n8n.StateRestored, rep.State)
	var se *n8n.StatusError
	if assert.ErrorAs(t, err, &se, "the failing step's error is n8n's") {
		assert.Equal(t, http.StatusBadRequest, se.StatusCode)
	}
	assert.True(t, rep.After.Active)
	assert.Equal(t, n8n.MatchPrevious, rep.Matches)
	w := en.stored(t, ctx, id)
	assert.Equal(t, true, w["active"])
	assert.Len(t, w["nodes"], 3)
	_, err = pollReply(ctx, url, "version two")
	require.NoError(t, err, "webhook after the restore")

	// Invalid input: nothing is sent.
	bad := next.Clone()
	bad.Nodes[0].WebhookID = ""
	rep, err = n8n.Deploy(ctx, c, id, bad, en.opts(n8n.DeployOptions{}))
	var ve *n8n.ValidationError
	assert.ErrorAs(t, err, &ve)
	assert.Equal(t, n8n.StateUnchanged, rep.State)
	assert.Len(t, rep.Steps, 1)
	en.remove(t, ctx, id)
}

// remove deletes a workflow: n8n 2.x refuses to delete a published one
// (409) until its unpublish has finished.
func (en *env) remove(t *testing.T, ctx context.Context, id n8n.ID) {
	t.Helper()
	err := en.c.DeleteWorkflow(ctx, id)
	if en.ed == n8n.Edition2 && n8n.IsStatus(err, http.StatusConflict) {
		_, err = en.c.UnpublishWorkflow(ctx, id)
		require.NoError(t, err)
		err = pollDelete(ctx, en.c, id)
	}
	require.NoError(t, err)
}

// firstCallAfterDeploy: Deploy (with a Session, without a Smoke) returns
// only once the new version serves: the very first call reaches it.
func (en *env) firstCallAfterDeploy(t *testing.T) {
	ctx := ctxT(t)
	path := "first-" + uuid.NewString()
	wf, id := en.liveWorkflow(t, ctx, "First call", path, "v0")
	for i := 1; i <= 5; i++ {
		next := wf.Clone()
		want := fmt.Sprintf("v%d", i)
		setCode(t, next, answerCode(want))
		rep, err := n8n.Deploy(ctx, en.c, id, next, en.opts(n8n.DeployOptions{}))
		require.NoError(t, err, "%s", rep)
		if en.ed == n8n.Edition2 {
			assert.Equal(t, n8n.LivePublication, rep.Live)
			require.NotNil(t, rep.Publication)
			assert.Equal(t, n8n.PublicationPublished, rep.Publication.Status)
			pub := en.publication(t, ctx, id)
			assert.Equal(t, "published", pub["status"])
			assert.Equal(t, rep.WrittenVersionID, pub["liveVersionId"])
		} else {
			assert.Equal(t, n8n.LiveActivation, rep.Live)
		}
		r, err := n8n.CallWebhook(ctx, en.hookURL(path), "subject", map[string]string{"q": "x"})
		require.NoError(t, err, "deploy %d: the first call after Deploy", i)
		assert.Equal(t, want, r.Answer, "deploy %d: the first call after Deploy reached another version", i)
		wf = next
	}
	en.remove(t, ctx, id)
}

// failedTrigger: the only trigger cannot start. n8n 1.x refuses the
// activation; n8n 2.x accepts the publish and records it as failed. Either
// way the deploy fails, says why, and the workflow is inactive as before.
func (en *env) failedTrigger(t *testing.T) {
	ctx := ctxT(t)
	wf := parse(t, map[string]any{"name": "Bad cron", "settings": map[string]any{"executionOrder": "v1"},
		"nodes": []any{}, "connections": map[string]any{}})
	wf.Nodes = []n8n.Node{badSchedule()}
	created, err := en.c.CreateWorkflow(ctx, wf)
	require.NoError(t, err)
	on := true
	// n8n 2.x records a failed trigger after its queue's next poll (15 s).
	rep, err := n8n.Deploy(ctx, en.c, created.ID, wf, en.opts(n8n.DeployOptions{Active: &on, SettleTimeout: 2 * time.Minute}))
	logReport(t, rep)
	var de *n8n.DeployError
	require.ErrorAs(t, err, &de, "a deploy whose trigger cannot start succeeded")
	assert.Equal(t, n8n.StateRestored, rep.State, "the workflow is as created: inactive")
	assert.False(t, rep.After.Active)
	switch en.ed {
	case n8n.Edition1:
		assert.True(t, n8n.IsStatus(err, http.StatusBadRequest), "n8n 1.x refuses the activation: %v", err)
	case n8n.Edition2:
		var pe *n8n.PublicationError
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, n8n.PublicationFailed, pe.Publication.Status)
		require.NotNil(t, rep.Publication)
		assert.Equal(t, n8n.PublicationFailed, rep.Publication.Status)
		reasons := ""
		for _, tr := range rep.Publication.Triggers {
			reasons += tr.Error
		}
		assert.Contains(t, strings.ToLower(reasons), "cron", "n8n's reason is kept")
		if assert.NotNil(t, rep.RestorePublication) {
			assert.Equal(t, n8n.PublicationNotPublished, rep.RestorePublication.Status)
		}
		pub := en.publication(t, ctx, created.ID)
		assert.Equal(t, "not_published", pub["status"], "n8n still has a publication: %v", pub)
	}
	w := en.stored(t, ctx, created.ID)
	assert.Equal(t, false, w["active"], "n8n holds the workflow active")
	en.remove(t, ctx, created.ID)
}

// partialTrigger: a live webhook workflow to which the deploy adds a
// trigger that cannot start. The deploy fails and the previous version
// serves again, with every trigger running.
func (en *env) partialTrigger(t *testing.T) {
	ctx := ctxT(t)
	path := "partial-" + uuid.NewString()
	wf, id := en.liveWorkflow(t, ctx, "Partial", path, "before")
	before := en.stored(t, ctx, id)
	next := wf.Clone()
	setCode(t, next, answerCode("after"))
	next.Nodes = append(next.Nodes, badSchedule())
	rep, err := n8n.Deploy(ctx, en.c, id, next, en.opts(n8n.DeployOptions{}))
	logReport(t, rep)
	var de *n8n.DeployError
	require.ErrorAs(t, err, &de, "a deploy with a failed trigger succeeded")
	assert.Equal(t, n8n.StateRestored, rep.State)
	assert.True(t, rep.After.Active)
	assert.Equal(t, n8n.MatchPrevious, rep.Matches)
	if en.ed == n8n.Edition2 {
		var pe *n8n.PublicationError
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, n8n.PublicationPartial, pe.Publication.Status)
		pub := en.publication(t, ctx, id)
		assert.Equal(t, "published", pub["status"], "%v", pub)
		assert.Equal(t, rep.After.ActiveVersionID, pub["liveVersionId"])
		require.NotNil(t, rep.RestorePublication)
		assert.Equal(t, n8n.PublicationPublished, rep.RestorePublication.Status)
	} else {
		assert.True(t, n8n.IsStatus(err, http.StatusBadRequest), "%v", err)
		assert.Positive(t, rep.Downtime)
		t.Logf("n8n 1.x offline window of a failed and restored deploy: %s", rep.Downtime)
	}
	after := en.stored(t, ctx, id)
	assert.Equal(t, true, after["active"])
	assert.Len(t, after["nodes"], len(before["nodes"].([]any)))
	r, err := n8n.CallWebhook(ctx, en.hookURL(path), "subject", map[string]string{"q": "x"})
	require.NoError(t, err, "the first call after the restore")
	assert.Equal(t, "before", r.Answer)
	en.remove(t, ctx, id)
}

// restoreSameDefinition: an inactive workflow deployed active with its own
// definition, then a smoke check that fails: the restore must take it
// offline again, although the new definition equals the previous one.
func (en *env) restoreSameDefinition(t *testing.T) {
	ctx := ctxT(t)
	path := "same-" + uuid.NewString()
	wf := webhookWorkflow(t, "Same definition", path, answerCode("same"))
	created, err := en.c.CreateWorkflow(ctx, wf)
	require.NoError(t, err)
	on := true
	rep, err := n8n.Deploy(ctx, en.c, created.ID, wf, en.opts(n8n.DeployOptions{Active: &on, VerifyTimeout: time.Second,
		Smoke: failingSmoke(en.hookURL(path))}))
	logReport(t, rep)
	var de *n8n.DeployError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, "smoke", de.Step)
	assert.Equal(t, n8n.StateRestored, rep.State)
	assert.Equal(t, n8n.MatchBoth, rep.Matches)
	assert.False(t, rep.After.Active)
	w := en.stored(t, ctx, created.ID)
	assert.Equal(t, false, w["active"])
	_, err = n8n.CallWebhook(ctx, en.hookURL(path), "subject", map[string]string{"q": "x"})
	var se *reply.StatusError
	if assert.ErrorAs(t, err, &se, "the webhook of a restored inactive workflow answered") {
		assert.Equal(t, http.StatusNotFound, se.StatusCode)
	}
	if en.ed == n8n.Edition2 {
		assert.Equal(t, "not_published", en.publication(t, ctx, created.ID)["status"])
	}
	en.remove(t, ctx, created.ID)
}

// applyCreateRefusedActivation: ApplyDir creates a workflow from a file
// saying active: true, and n8n refuses to make it live. The workflow stays
// as created, inactive, and the Report says restored, not inconsistent.
func (en *env) applyCreateRefused(t *testing.T) {
	ctx := ctxT(t)
	wf := parse(t, map[string]any{"name": "Created, cannot activate " + uuid.NewString()[:8], "active": true,
		"settings": map[string]any{"executionOrder": "v1"}, "nodes": []any{}, "connections": map[string]any{}})
	wf.Nodes = []n8n.Node{badSchedule()}
	b, err := n8n.CanonicalExport(wf)
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "new.json"), b, 0o644))
	applied, err := n8n.ApplyDir(ctx, en.c, dir, n8n.ApplyDirOptions{Deploy: en.opts(n8n.DeployOptions{})})
	require.Error(t, err)
	require.Len(t, applied, 1)
	require.NotNil(t, applied[0].Report)
	logReport(t, *applied[0].Report)
	assert.Equal(t, n8n.StateRestored, applied[0].Report.State)
	assert.Equal(t, n8n.MatchBoth, applied[0].Report.Matches)
	w := en.stored(t, ctx, applied[0].ID)
	assert.Equal(t, false, w["active"])
	en.remove(t, ctx, applied[0].ID)
}

// expectedVersion: a caller read the workflow, someone else changed it;
// Deploy with the caller's snapshot writes nothing. ApplyPlan likewise for
// a plan read before the change.
func (en *env) expectedVersion(t *testing.T) {
	ctx := ctxT(t)
	path := "expect-" + uuid.NewString()
	wf, id := en.liveWorkflow(t, ctx, "Expect", path, "mine")
	read, err := en.c.GetWorkflow(ctx, id)
	require.NoError(t, err)
	snap := n8n.SnapshotOf(read)

	dir := t.TempDir()
	_, err = n8n.ExportDir(ctx, en.c, dir)
	require.NoError(t, err)
	file := filepath.Join(dir, string(id)+".json")
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(file, bytes.Replace(data, []byte(`\"mine\"`), []byte(`\"from the file\"`), 1), 0o644))
	plan, err := n8n.Plan(ctx, en.c, dir)
	require.NoError(t, err)

	// Another writer, through n8n's own API.
	theirs := wf.Clone()
	setCode(t, theirs, answerCode("theirs"))
	status, body, err := en.inst.Do(ctx, http.MethodPut, "/api/v1/workflows/"+string(id), map[string]any{
		"name": theirs.Name, "nodes": theirs.Nodes, "connections": theirs.Connections, "settings": map[string]any{"executionOrder": "v1"}})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, status, "%s", body)
	afterTheirs := en.stored(t, ctx, id)

	mine := wf.Clone()
	setCode(t, mine, answerCode("mine, again"))
	rep, err := n8n.Deploy(ctx, en.c, id, mine, en.opts(n8n.DeployOptions{Expect: &snap}))
	var ce *n8n.ConflictError
	require.ErrorAs(t, err, &ce, "%s", rep)
	assert.ErrorIs(t, err, n8n.ErrConflict)
	assert.False(t, ce.During)
	assert.Contains(t, ce.Expected, snap.VersionID)
	assert.Contains(t, ce.Found, fmt.Sprint(afterTheirs["versionId"]))
	assert.Equal(t, n8n.StateUnchanged, rep.State)
	for _, st := range rep.Steps {
		assert.Contains(t, []string{"read", "expect"}, st.Name, "Deploy did more than read")
	}
	now := en.stored(t, ctx, id)
	assert.Equal(t, afterTheirs["versionId"], now["versionId"], "the other writer's version was replaced")

	applied, err := n8n.ApplyPlan(ctx, en.c, plan, n8n.ApplyDirOptions{Deploy: en.opts(n8n.DeployOptions{})})
	require.ErrorIs(t, err, n8n.ErrConflict, "a plan read before the other writer's change was applied")
	require.NotEmpty(t, applied)
	now = en.stored(t, ctx, id)
	assert.Equal(t, afterTheirs["versionId"], now["versionId"], "ApplyPlan overwrote the other writer's version")
	en.remove(t, ctx, id)
}

// writerDuringDeploy: another writer saves while Deploy waits on its smoke
// check, which then fails. Deploy must not restore over their change.
func (en *env) writerDuringDeploy(t *testing.T) {
	ctx := ctxT(t)
	path := "during-" + uuid.NewString()
	wf, id := en.liveWorkflow(t, ctx, "During", path, "one")
	next := wf.Clone()
	setCode(t, next, answerCode("two"))
	theirs := wf.Clone()
	setCode(t, theirs, answerCode("theirs"))
	wrote := false
	var theirVersion any
	smoke := failingSmoke(en.hookURL(path))
	smoke.Check = func(int, []byte) error {
		if !wrote {
			wrote = true
			put := "/api/v1/workflows/" + string(id)
			if en.ed == n8n.Edition2 {
				put += "?publishIfActive=false" // a draft: the live version stays Deploy's
			}
			status, body, err := en.inst.Do(ctx, http.MethodPut, put, map[string]any{
				"name": theirs.Name, "nodes": theirs.Nodes, "connections": theirs.Connections, "settings": map[string]any{"executionOrder": "v1"}})
			if err != nil || status != http.StatusOK {
				return fmt.Errorf("the other writer failed: %d %s %v", status, body, err)
			}
			var w map[string]any
			_ = json.Unmarshal(body, &w)
			theirVersion = w["versionId"]
		}
		return errors.New("not the new definition (on purpose)")
	}
	rep, err := n8n.Deploy(ctx, en.c, id, next, en.opts(n8n.DeployOptions{VerifyTimeout: time.Second, Smoke: smoke}))
	logReport(t, rep)
	require.True(t, wrote)
	var ce *n8n.ConflictError
	require.ErrorAs(t, err, &ce, "%s", rep)
	assert.True(t, ce.During)
	assert.Equal(t, n8n.StateConflict, rep.State)
	now := en.stored(t, ctx, id)
	assert.Equal(t, theirVersion, now["versionId"], "the other writer's version was overwritten")
	assert.Contains(t, fmt.Sprint(now["nodes"]), "theirs")
	en.remove(t, ctx, id)
}

func pollDelete(ctx context.Context, c *n8n.Client, id n8n.ID) error {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		err := c.DeleteWorkflow(ctx, id)
		if !n8n.IsStatus(err, http.StatusConflict) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-tick.C:
		}
	}
}

// pollReply calls the webhook until it answers want.
func pollReply(ctx context.Context, url, want string) (reply.Reply, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		r, err := n8n.CallWebhook(ctx, url, "subject", map[string]string{"q": "x"})
		if err == nil && r.Answer == want {
			return r, nil
		}
		select {
		case <-ctx.Done():
			return r, fmt.Errorf("webhook never answered %q: last %+v, %v", want, r, err)
		case <-tick.C:
		}
	}
}

func (en *env) emptyReply(t *testing.T) {
	ctx := ctxT(t)
	c := en.c
	deploy := func(name, code string) (n8n.ID, string) {
		path := "empty-" + uuid.NewString()
		wf := webhookWorkflow(t, name, path, code)
		created, err := c.CreateWorkflow(ctx, wf)
		require.NoError(t, err)
		on := true
		rep, err := n8n.Deploy(ctx, c, created.ID, wf, en.opts(n8n.DeployOptions{Active: &on}))
		require.NoError(t, err, "%s", rep)
		return created.ID, en.hookURL(path)
	}

	// A Code node that throws before Respond to Webhook.
	id, url := deploy("Throws", "throw new Error('inventory down');")
	_, err := n8n.CallWebhook(ctx, url, "subject", map[string]string{"q": "x"})
	switch en.ed {
	case n8n.Edition1: // observed: 200, application/json, zero bytes
		assert.ErrorIs(t, err, reply.ErrEmpty)
	case n8n.Edition2: // observed: 500 {"message":"Error in workflow"}
		var se *reply.StatusError
		if assert.ErrorAs(t, err, &se) {
			assert.Equal(t, 500, se.StatusCode)
		}
	}
	ex := lastExecution(t, ctx, c, id, n8n.ExecutionError)
	assert.Equal(t, n8n.ExecutionError, ex.Status)
	assert.Contains(t, ex.ErrorMessage(), "inventory down")

	// A Code node that returns no items: Respond never runs, on both editions.
	id, url = deploy("No items", "return [];")
	_, err = n8n.CallWebhook(ctx, url, "subject", map[string]string{"q": "x"})
	assert.ErrorIs(t, err, reply.ErrEmpty)
	ex = lastExecution(t, ctx, c, id, "")
	assert.Equal(t, id, ex.WorkflowID)
	n := 0
	for e, err := range c.Executions(ctx, n8n.ListExecutionsOptions{WorkflowID: id, IncludeData: true, PageSize: 1}) {
		require.NoError(t, err)
		assert.Equal(t, id, e.WorkflowID)
		assert.NotEmpty(t, e.Data, "IncludeData")
		n++
	}
	assert.Equal(t, 1, n)
	t.Logf("%s: the no-items run is recorded as %q (error %q)", en.ed, ex.Status, ex.ErrorMessage())
}

// lastExecution polls for the newest finished execution of a workflow (n8n
// writes the record asynchronously after answering the webhook).
func lastExecution(t *testing.T, ctx context.Context, c *n8n.Client, id n8n.ID, status n8n.ExecutionStatus) *n8n.Execution {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		list, err := c.ListExecutions(ctx, n8n.ListExecutionsOptions{WorkflowID: id, Status: status, Max: 1})
		require.NoError(t, err)
		if len(list) == 1 && list[0].Status != n8n.ExecutionRunning && list[0].Status != n8n.ExecutionNew {
			ex, err := c.GetExecution(ctx, list[0].ID, true)
			require.NoError(t, err)
			return ex
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no finished execution of %s with status %q: %v", id, status, ctx.Err())
		case <-tick.C:
		}
	}
}

func (en *env) exportPlanApply(t *testing.T) {
	ctx := ctxT(t)
	c := en.c
	path := "export-" + uuid.NewString()
	_, id := en.liveWorkflow(t, ctx, "Exported", path, "from the instance")

	dir := t.TempDir()
	paths, err := n8n.ExportDir(ctx, c, dir)
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	file := filepath.Join(dir, string(id)+".json")
	before, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.NotContains(t, string(before), `"versionId"`)
	assert.Contains(t, string(before), `"active": true`)
	// Exporting again changes nothing.
	_, err = n8n.ExportDir(ctx, c, dir)
	require.NoError(t, err)
	again, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, string(before), string(again), "a second export of an unchanged instance differs")
	plan, err := n8n.Plan(ctx, c, dir)
	require.NoError(t, err)
	assert.Equal(t, len(plan.Items), plan.Count(n8n.ActionUnchanged), "%s", plan)
	assert.Empty(t, plan.Untracked)

	// Edit the file as a person would, in the Code node.
	edited := bytes.Replace(before, []byte("from the instance"), []byte("from the repository"), 1)
	require.NotEqual(t, before, edited)
	require.NoError(t, os.WriteFile(file, edited, 0o644))
	plan, err = n8n.Plan(ctx, c, dir)
	require.NoError(t, err)
	assert.Equal(t, 1, plan.Count(n8n.ActionUpdate), "%s", plan)
	assert.Zero(t, plan.Count(n8n.ActionCreate), "%s", plan)
	for _, it := range plan.Items {
		if it.Action == n8n.ActionUpdate {
			assert.Equal(t, id, it.ID)
			assert.Equal(t, `node "Code" changed`, strings.Join(it.Changes, ";"))
			assert.True(t, it.Current.Active)
			assert.NotEmpty(t, it.Current.VersionID)
		}
	}
	applied, err := n8n.ApplyPlan(ctx, c, plan, n8n.ApplyDirOptions{Deploy: en.opts(n8n.DeployOptions{})})
	require.NoError(t, err)
	updated := 0
	for _, a := range applied {
		if a.Report != nil {
			updated++
			assert.Equal(t, n8n.StateDeployed, a.Report.State, "%s", a.Report)
		}
	}
	assert.Equal(t, 1, updated)
	r, err := n8n.CallWebhook(ctx, en.hookURL(path), "subject", map[string]string{"q": "x"})
	require.NoError(t, err)
	assert.Equal(t, "from the repository", r.Answer)
	dir2 := t.TempDir()
	_, err = n8n.ExportDir(ctx, c, dir2)
	require.NoError(t, err)
	after, err := os.ReadFile(filepath.Join(dir2, string(id)+".json"))
	require.NoError(t, err)
	assert.Equal(t, string(edited), string(after), "export after apply differs from the applied file")

	// A new file without an id is a create; applying records the id so a
	// second plan sees it as unchanged, not as another create.
	fresh := webhookWorkflow(t, "From a file", "file-"+uuid.NewString(), answerCode("new"))
	b, err := json.Marshal(fresh)
	require.NoError(t, err)
	newFile := filepath.Join(dir, "from-a-file.json")
	require.NoError(t, os.WriteFile(newFile, b, 0o644))
	plan, err = n8n.Plan(ctx, c, dir)
	require.NoError(t, err)
	assert.Equal(t, 1, plan.Count(n8n.ActionCreate), "%s", plan)
	_, err = n8n.ApplyDir(ctx, c, dir, n8n.ApplyDirOptions{Deploy: en.opts(n8n.DeployOptions{})})
	require.NoError(t, err)
	plan, err = n8n.Plan(ctx, c, dir)
	require.NoError(t, err)
	assert.Equal(t, len(plan.Items), plan.Count(n8n.ActionUnchanged), "%s", plan)

	// A file with problems stops the whole apply before any write.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "broken.json"), []byte(`{"name":"b","nodes":[{"name":"x"}],"connections":{}}`), 0o644))
	_, err = n8n.ApplyDir(ctx, c, dir, n8n.ApplyDirOptions{})
	var ve *n8n.ValidationError
	require.ErrorAs(t, err, &ve)
	assert.NotEmpty(t, ve.Problems)
}

// pendingDraft: a live workflow with a newer draft that was never made
// live. A deploy that fails after making its version live must put back
// what was live (not the draft); Plan must not call the workflow unchanged,
// and applying makes the draft live.
func (en *env) pendingDraft(t *testing.T) {
	ctx := ctxT(t)
	c := en.c
	path := "draft-" + uuid.NewString()
	url := en.hookURL(path)
	wf, id := en.liveWorkflow(t, ctx, "Pending draft", path, "published")
	before := en.withDraft(t, ctx, id, wf, "draft")
	served := en.serves(t, ctx, url)

	// A deploy whose smoke check never passes: it goes live, fails, restores.
	next := wf.Clone()
	setCode(t, next, answerCode("next"))
	rep, err := n8n.Deploy(ctx, c, id, next, en.opts(n8n.DeployOptions{VerifyTimeout: time.Second, Smoke: failingSmoke(url)}))
	logReport(t, rep)
	var de *n8n.DeployError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, "smoke", de.Step)
	assert.Equal(t, n8n.StateRestored, rep.State)
	assert.Equal(t, n8n.MatchPrevious, rep.Matches)
	after := en.stored(t, ctx, id)
	assert.Equal(t, true, after["active"])
	assert.Equal(t, before.ActiveVersionID, after["activeVersionId"], "the version live before is not live again")
	assert.Equal(t, served, en.serves(t, ctx, url), "the first call after the restore")

	// The export shows the draft; the plan must not call it unchanged.
	dir := t.TempDir()
	_, err = n8n.ExportDir(ctx, c, dir)
	require.NoError(t, err)
	plan, err := n8n.Plan(ctx, c, dir)
	require.NoError(t, err)
	var item *n8n.PlanItem
	for i := range plan.Items {
		if plan.Items[i].ID == id {
			item = &plan.Items[i]
		}
	}
	require.NotNil(t, item, "%s", plan)
	assert.Equal(t, n8n.ActionUpdate, item.Action, "%s", plan)
	assert.Contains(t, strings.Join(item.Changes, ";"), "not published")
	_, err = n8n.ApplyPlan(ctx, c, plan, n8n.ApplyDirOptions{Deploy: en.opts(n8n.DeployOptions{})})
	require.NoError(t, err)
	r, err := n8n.CallWebhook(ctx, url, "subject", map[string]string{"q": "x"})
	require.NoError(t, err)
	assert.Equal(t, "draft", r.Answer)
	plan, err = n8n.Plan(ctx, c, dir)
	require.NoError(t, err)
	assert.Equal(t, len(plan.Items), plan.Count(n8n.ActionUnchanged), "%s", plan)
	en.remove(t, ctx, id)
}

// withDraft saves wf answering answer as a draft over the live version of
// workflow id and returns the workflow as read.
func (en *env) withDraft(t *testing.T, ctx context.Context, id n8n.ID, wf *n8n.Workflow, answer string) *n8n.Workflow {
	t.Helper()
	draft := wf.Clone()
	setCode(t, draft, answerCode(answer))
	_, err := en.c.UpdateWorkflow(ctx, id, draft, n8n.UpdateWorkflowOptions{KeepPublished: en.ed == n8n.Edition2})
	require.NoError(t, err)
	before, err := en.c.GetWorkflow(ctx, id)
	require.NoError(t, err)
	require.True(t, before.Active)
	require.NotEmpty(t, before.ActiveVersionID)
	require.NotEqual(t, before.VersionID, before.ActiveVersionID, "setup: want a live workflow with a pending draft")
	return before
}

// pendingDraftSameDefinition: the deploy writes exactly the pending draft
// and its smoke check fails: the version live before must be live again,
// not the draft.
func (en *env) pendingDraftSameDefinition(t *testing.T) {
	ctx := ctxT(t)
	path := "samedraft-" + uuid.NewString()
	url := en.hookURL(path)
	wf, id := en.liveWorkflow(t, ctx, "Same as the draft", path, "live")
	before := en.withDraft(t, ctx, id, wf, "draft")
	served := en.serves(t, ctx, url)
	draft, err := n8n.ParseWorkflow(mustMarshal(t, before))
	require.NoError(t, err)
	rep, err := n8n.Deploy(ctx, en.c, id, draft, en.opts(n8n.DeployOptions{VerifyTimeout: time.Second, Smoke: failingSmoke(url)}))
	logReport(t, rep)
	require.Error(t, err)
	assert.Equal(t, n8n.StateRestored, rep.State)
	assert.Equal(t, n8n.MatchBoth, rep.Matches)
	after := en.stored(t, ctx, id)
	assert.Equal(t, true, after["active"], "the workflow was left inactive")
	assert.Equal(t, before.ActiveVersionID, after["activeVersionId"], "the draft was left live")
	assert.Equal(t, served, en.serves(t, ctx, url), "the first call after the restore")
	en.remove(t, ctx, id)
}

// serves is the webhook's answer now. With a pending draft, n8n 2.x
// answers from the published version; n8n 1.123 with draft/publish on
// keeps the published trigger registration but runs the saved nodes
// after it (so the draft's Code node answers).
func (en *env) serves(t *testing.T, ctx context.Context, url string) string {
	t.Helper()
	r, err := n8n.CallWebhook(ctx, url, "subject", map[string]string{"q": "x"})
	require.NoError(t, err)
	want := "published"
	if en.dp {
		want = "draft"
	}
	if strings.HasPrefix(url, en.hookURL("samedraft-")) {
		want = map[bool]string{false: "live", true: "draft"}[en.dp]
	}
	assert.Equal(t, want, r.Answer, "what %s serves with a pending draft (draft/publish %t)", en.ed, en.dp)
	return r.Answer
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// deploySavedDraft (n8n 1.123 with draft/publish on): a PUT on an active
// workflow saves a version that is not the live one. Deploying that same
// definition is not "unchanged": Deploy makes the saved version live.
func (en *env) deploySavedDraft(t *testing.T) {
	ctx := ctxT(t)
	path := "saved-" + uuid.NewString()
	wf, id := en.liveWorkflow(t, ctx, "Saved draft", path, "one")
	saved := en.withDraft(t, ctx, id, wf, "two")
	next, err := n8n.ParseWorkflow(mustMarshal(t, saved))
	require.NoError(t, err)
	rep, err := n8n.Deploy(ctx, en.c, id, next, en.opts(n8n.DeployOptions{}))
	require.NoError(t, err, "%s", rep)
	assert.Equal(t, n8n.StateDeployed, rep.State)
	assert.Equal(t, rep.After.VersionID, rep.After.ActiveVersionID)
	r, err := n8n.CallWebhook(ctx, en.hookURL(path), "subject", map[string]string{"q": "x"})
	require.NoError(t, err)
	assert.Equal(t, "two", r.Answer)
	en.remove(t, ctx, id)
}

// unverifiedWithoutSession (n8n 2.x): without a Session or a Smoke, Deploy
// cannot see n8n's publication record and says so.
func (en *env) unverifiedWithoutSession(t *testing.T) {
	ctx := ctxT(t)
	path := "unverified-" + uuid.NewString()
	wf := webhookWorkflow(t, "Unverified", path, answerCode("u"))
	created, err := en.c.CreateWorkflow(ctx, wf)
	require.NoError(t, err)
	on := true
	rep, err := n8n.Deploy(ctx, en.c, created.ID, wf, n8n.DeployOptions{Active: &on})
	require.ErrorIs(t, err, n8n.ErrUnverified)
	assert.Equal(t, n8n.StateUnverified, rep.State)
	assert.Equal(t, n8n.LiveUnverified, rep.Live)
	assert.True(t, rep.After.Active)
	en.remove(t, ctx, created.ID)
}

// faults (the fake only): a fault injected at each step of a deploy, and in
// the restore itself. Whatever happens, the Report's final state is what
// n8n holds and serves.
func (en *env) faults(t *testing.T) {
	f := en.inst.Fake
	ed1 := en.ed == n8n.Edition1
	cases := []struct {
		name   string
		inject func()
		want   n8n.DeployState
		step   string
	}{
		{"first read", func() { f.FailNext(n8ntest.OpGet, 500, "boom") }, n8n.StateUnchanged, "read"},
		{"update", func() { f.FailNext(n8ntest.OpUpdate, 500, "boom") }, n8n.StateRestored, "update"},
		{"re-read after the update", func() {
			f.Before(n8ntest.OpUpdate, func() { f.FailNext(n8ntest.OpGet, 503, "busy") })
		}, n8n.StateRestored, "verify-update"},
	}
	if ed1 {
		cases = append(cases,
			struct {
				name   string
				inject func()
				want   n8n.DeployState
				step   string
			}{"deactivate", func() { f.FailNext(n8ntest.OpDeactivate, 500, "boom") }, n8n.StateRestored, "deactivate"},
			struct {
				name   string
				inject func()
				want   n8n.DeployState
				step   string
			}{"activate", func() { f.FailNext(n8ntest.OpActivate, 400, "refused") }, n8n.StateRestored, "activate"},
			struct {
				name   string
				inject func()
				want   n8n.DeployState
				step   string
			}{"activate and the restore's activate", func() {
				f.FailNext(n8ntest.OpActivate, 400, "refused")
				f.FailNext(n8ntest.OpActivate, 500, "down")
			}, n8n.StateInconsistent, "activate"})
	} else {
		cases = append(cases,
			struct {
				name   string
				inject func()
				want   n8n.DeployState
				step   string
			}{"publish refused", func() { f.FailNext(n8ntest.OpPublish, 400, "refused") }, n8n.StateRestored, "publish"},
			struct {
				name   string
				inject func()
				want   n8n.DeployState
				step   string
			}{"publish 500", func() { f.FailNext(n8ntest.OpPublish, 500, "down") }, n8n.StateRestored, "publish"},
			struct {
				name   string
				inject func()
				want   n8n.DeployState
				step   string
			}{"publication record", func() {
				f.Before(n8ntest.OpPublish, func() { f.FailNext(n8ntest.OpPublicationStatus, 500, "down") })
			}, n8n.StateRestored, "settle"},
			struct {
				name   string
				inject func()
				want   n8n.DeployState
				step   string
			}{"publish and the restore's publish", func() {
				f.Before(n8ntest.OpPublish, func() { f.FailNext(n8ntest.OpPublicationStatus, 500, "down") })
				f.Before(n8ntest.OpUpdate, func() {
					f.Before(n8ntest.OpUpdate, func() { f.FailNext(n8ntest.OpPublish, 500, "down") })
				})
			}, n8n.StateInconsistent, "settle"})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := ctxT(t)
			path := "fault-" + uuid.NewString()
			wf, id := en.liveWorkflow(t, ctx, "Fault", path, "before")
			next := wf.Clone()
			setCode(t, next, answerCode("after"))
			tc.inject()
			rep, err := n8n.Deploy(ctx, en.c, id, next, en.opts(n8n.DeployOptions{}))
			logReport(t, rep)
			var de *n8n.DeployError
			require.ErrorAs(t, err, &de)
			assert.Equal(t, tc.step, de.Step)
			assert.Equal(t, tc.want, rep.State)
			if w := en.stored(t, ctx, id); rep.After.Read {
				assert.Equal(t, rep.After.Active, w["active"], "the Report's activation is not n8n's")
				assert.Equal(t, rep.After.VersionID, w["versionId"], "the Report's version is not n8n's")
			}
			_, err = n8n.CallWebhook(ctx, en.hookURL(path), "subject", map[string]string{"q": "x"}) // lets a publication settle
			r, err2 := n8n.CallWebhook(ctx, en.hookURL(path), "subject", map[string]string{"q": "x"})
			switch rep.State {
			case n8n.StateRestored, n8n.StateUnchanged:
				require.NoError(t, err2)
				assert.Equal(t, "before", r.Answer, "restored, but n8n serves another version")
			case n8n.StateInconsistent:
				assert.True(t, err != nil || err2 != nil || r.Answer != "before" || !rep.After.Active,
					"inconsistent, yet n8n serves the previous version as before")
			}
			en.remove(t, ctx, id)
		})
	}
}

// deployInactive: a live workflow deployed with Active false is saved and
// taken offline, and n8n stops serving it.
func (en *env) deployInactive(t *testing.T) {
	ctx := ctxT(t)
	path := "offline-" + uuid.NewString()
	wf, id := en.liveWorkflow(t, ctx, "Offline", path, "on")
	next := wf.Clone()
	setCode(t, next, answerCode("off"))
	off := false
	rep, err := n8n.Deploy(ctx, en.c, id, next, en.opts(n8n.DeployOptions{Active: &off}))
	logReport(t, rep)
	require.NoError(t, err)
	assert.Equal(t, n8n.StateDeployed, rep.State)
	assert.Equal(t, n8n.LiveNone, rep.Live)
	assert.False(t, rep.After.Active)
	assert.Zero(t, rep.Downtime, "offline on purpose is not downtime")
	w := en.stored(t, ctx, id)
	assert.Equal(t, false, w["active"])
	assert.Equal(t, rep.WrittenVersionID, w["versionId"])
	_, err = n8n.CallWebhook(ctx, en.hookURL(path), "subject", map[string]string{"q": "x"})
	var se *reply.StatusError
	if assert.ErrorAs(t, err, &se, "an inactive workflow's webhook answered") {
		assert.Equal(t, http.StatusNotFound, se.StatusCode)
	}
	if en.ed == n8n.Edition2 {
		assert.Equal(t, "not_published", en.publication(t, ctx, id)["status"])
	}
	en.remove(t, ctx, id)
}
