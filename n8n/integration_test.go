package n8n_test

// Integration tests on a real n8n started by internal/n8ntest from the
// installs of scripts/n8n-local: n8n 1.123.81 (default mode) and n8n 2.x.
// One instance runs at a time; the subtests share it.

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

	"github.com/candorkit/candor/internal/n8ntest"
	"github.com/candorkit/candor/n8n"
)

func TestRealN8nEdition1(t *testing.T) { realN8n(t, n8ntest.Edition1) }

func TestRealN8nEdition2(t *testing.T) { realN8n(t, n8ntest.Edition2) }

// TestRealN8nEdition1DraftPublish runs the deploy scenarios on n8n 1.123
// with its draft/publish behaviour switched on, where edits go to a draft
// and activation publishes.
func TestRealN8nEdition1DraftPublish(t *testing.T) {
	inst := n8ntest.Start(t, n8ntest.Edition1, n8ntest.Options{
		Env: map[string]string{"N8N_ENV_FEAT_WORKFLOWS_DRAFT_PUBLISH_ENABLED": "true"},
	})
	c, err := n8n.New(inst.BaseURL, inst.APIKey, n8n.Options{})
	if err != nil {
		t.Fatal(err)
	}
	en := &env{inst: inst, c: c, ed: n8n.Edition1}
	t.Run("DeployWebhookChange", en.deployWebhookChange)
	t.Run("DeploySavedDraft", en.deploySavedDraft)
	if t.Failed() {
		t.Logf("n8n log tail:\n%s", inst.Log(30))
	}
}

type env struct {
	inst *n8ntest.Instance
	c    *n8n.Client
	ed   n8n.Edition
}

func realN8n(t *testing.T, e n8ntest.Edition) {
	began := time.Now()
	inst := n8ntest.Start(t, e, n8ntest.Options{})
	var logs bytes.Buffer
	c, err := n8n.New(inst.BaseURL, inst.APIKey, n8n.Options{
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatal(err)
	}
	en := &env{inst: inst, c: c, ed: n8n.Edition(e)}
	t.Cleanup(func() {
		if strings.Contains(logs.String(), inst.APIKey) {
			t.Error("the API key appeared in the client's logs")
		}
		t.Logf("%s: %s in total (start included)", e, time.Since(began).Round(time.Millisecond))
	})
	t.Run("DetectEdition", en.detect)
	t.Run("ClientBasics", en.basics)
	t.Run("DeployWebhookChange", en.deployWebhookChange)
	t.Run("EmptyReplyAndExecutionLookup", en.emptyReply)
	t.Run("ExportPlanApply", en.exportPlanApply)
	if e == n8ntest.Edition2 { // only n8n 2.x keeps a draft beside the published version
		t.Run("PendingDraft", en.pendingDraft)
	}
	if t.Failed() {
		t.Logf("n8n log tail:\n%s", inst.Log(30))
	}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// webhookWorkflow is Webhook (responseNode) -> Code -> Respond to Webhook,
// answering whatever the Code node returns.
func webhookWorkflow(t *testing.T, name, path, code string) *n8n.Workflow {
	t.Helper()
	doc := map[string]any{
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
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	wf, err := n8n.ParseWorkflow(b)
	if err != nil {
		t.Fatal(err)
	}
	if p := n8n.Validate(wf); len(p) > 0 {
		t.Fatalf("test workflow has problems: %v", p)
	}
	return wf
}

// liveWorkflow creates a webhook workflow (see webhookWorkflow) and deploys
// it active.
func (en *env) liveWorkflow(t *testing.T, ctx context.Context, name, path, code string) (*n8n.Workflow, n8n.ID) {
	t.Helper()
	wf := webhookWorkflow(t, name, path, code)
	created, err := en.c.CreateWorkflow(ctx, wf)
	if err != nil {
		t.Fatal(err)
	}
	on := true
	if rep, err := n8n.Deploy(ctx, en.c, created.ID, wf, n8n.DeployOptions{Active: &on}); err != nil {
		t.Fatalf("%v\n%s", err, rep)
	}
	return wf, created.ID
}

func answerCode(answer string) string {
	return fmt.Sprintf("return [{json: {answer: %q, escalate: false}}];", answer)
}

func setCode(t *testing.T, wf *n8n.Workflow, code string) {
	t.Helper()
	n, ok := wf.Node("Code")
	if !ok {
		t.Fatal("no Code node")
	}
	var p map[string]any
	if err := json.Unmarshal(n.Parameters, &p); err != nil {
		t.Fatal(err)
	}
	p["jsCode"] = code
	b, _ := json.Marshal(p)
	n.Parameters = b
}

func (en *env) hookURL(path string) string { return en.inst.BaseURL + "/webhook/" + path }

func (en *env) detect(t *testing.T) {
	ed, err := en.c.DetectEdition(ctxT(t))
	if err != nil || ed != en.ed {
		t.Fatalf("DetectEdition = %v, %v; want %v", ed, err, en.ed)
	}
}

func (en *env) basics(t *testing.T) {
	ctx := ctxT(t)
	c := en.c
	var ids []n8n.ID
	for i := range 3 {
		w, err := c.CreateWorkflow(ctx, webhookWorkflow(t, fmt.Sprintf("Paging %d", i), "paging-"+uuid.NewString(), answerCode("p")))
		if err != nil {
			t.Fatal(err)
		}
		if w.ID == "" || w.VersionID == "" || w.Active {
			t.Fatalf("created %+v", w)
		}
		ids = append(ids, w.ID)
	}
	// name= is a case-insensitive substring: "paging" matches all three.
	got, err := c.ListWorkflows(ctx, n8n.ListWorkflowsOptions{Name: "paging", PageSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("paging with 1 per page found %d workflows, want 3", len(got))
	}
	seen := map[n8n.ID]bool{}
	for _, w := range got {
		seen[w.ID] = true
	}
	for _, id := range ids {
		if !seen[id] {
			t.Fatalf("workflow %s missing from the list", id)
		}
	}
	if _, err := c.GetWorkflow(ctx, "doesNotExist0000"); !n8n.IsStatus(err, http.StatusNotFound) {
		t.Fatalf("GetWorkflow(missing) = %v, want 404", err)
	}

	// Tags.
	name := "candor-" + uuid.NewString()[:8]
	tag, err := c.CreateTag(ctx, name)
	if err != nil || tag.ID == "" {
		t.Fatalf("CreateTag = %+v, %v", tag, err)
	}
	if _, err := c.CreateTag(ctx, name); !n8n.IsStatus(err, http.StatusConflict) {
		t.Fatalf("duplicate tag: %v, want 409", err)
	}
	if _, err := c.SetWorkflowTags(ctx, ids[0], tag.ID); err != nil {
		t.Fatal(err)
	}
	tags, err := c.WorkflowTags(ctx, ids[0])
	if err != nil || len(tags) != 1 || tags[0].Name != name {
		t.Fatalf("WorkflowTags = %+v, %v", tags, err)
	}
	all, err := c.ListTags(ctx)
	if err != nil || len(all) == 0 {
		t.Fatalf("ListTags = %v, %v", all, err)
	}

	// Credentials: create, schema, list (session), delete.
	schema, err := c.CredentialSchema(ctx, "httpHeaderAuth")
	if err != nil || !bytes.Contains(schema, []byte(`"properties"`)) {
		t.Fatalf("CredentialSchema = %s, %v", schema, err)
	}
	cred, err := c.CreateCredential(ctx, "inventory header", "httpHeaderAuth", map[string]any{"name": "X-Key", "value": "s3cr3t-value"})
	if err != nil || cred.ID == "" {
		t.Fatalf("CreateCredential = %+v, %v", cred, err)
	}
	_, err = c.CreateCredential(ctx, "bad", "httpHeaderAuth", map[string]any{"nonsense": true})
	var ae *n8n.APIError
	if !errors.As(err, &ae) || ae.Status != http.StatusBadRequest {
		t.Fatalf("credential off its schema: %v, want a 400 APIError", err)
	}
	if _, err := c.Login(ctx, en.inst.Email, "Wrong-password-1"); !n8n.IsStatus(err, http.StatusUnauthorized) {
		t.Fatalf("Login with a wrong password: %v, want 401", err)
	}
	s, err := c.Login(ctx, en.inst.Email, en.inst.Password)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(s.String(), "n8n-auth") {
		t.Fatalf("Session.String leaks the cookie: %s", s)
	}
	creds, err := s.ListCredentials(ctx)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, cr := range creds {
		found = found || (cr.ID == cred.ID && cr.Type == "httpHeaderAuth")
	}
	if !found {
		t.Fatalf("ListCredentials %+v lacks %s", creds, cred.ID)
	}
	if err := c.DeleteCredential(ctx, cred.ID); err != nil {
		t.Fatal(err)
	}

	// A workflow created with its tag in one request.
	tagged, err := s.CreateWorkflow(ctx, webhookWorkflow(t, "Tagged at birth", "tagged-"+uuid.NewString(), answerCode("t")), tag.ID)
	if err != nil || tagged.ID == "" || tagged.Active {
		t.Fatalf("Session.CreateWorkflow = %+v, %v", tagged, err)
	}
	ids = append(ids, tagged.ID)
	byTag, err := c.ListWorkflows(ctx, n8n.ListWorkflowsOptions{Tags: []string{name}})
	if err != nil {
		t.Fatal(err)
	}
	if len(byTag) != 2 || (byTag[0].ID != tagged.ID && byTag[1].ID != tagged.ID) {
		t.Fatalf("workflows tagged %s: %d, want the one tagged by hand and the one created with it", name, len(byTag))
	}

	// Run a stored, inactive workflow with pinned trigger data.
	runWF := webhookWorkflow(t, "Run pinned", "run-"+uuid.NewString(),
		"return [{json: {answer: 'got ' + $input.first().json.body.q, escalate: false}}];")
	created, err := c.CreateWorkflow(ctx, runWF)
	if err != nil {
		t.Fatal(err)
	}
	exID, err := s.RunWorkflow(ctx, created.ID, "Webhook", []map[string]any{{"body": map[string]any{"q": "pinned-42"}}})
	if err != nil {
		var de *n8n.DecodeError
		if errors.As(err, &de) {
			t.Fatalf("%v: %s", err, de.Body)
		}
		t.Fatal(err)
	}
	ex, err := c.WaitExecution(ctx, exID)
	if err != nil {
		t.Fatal(err)
	}
	if ex.Status != n8n.StatusSuccess || !bytes.Contains(ex.Data, []byte("got pinned-42")) {
		t.Fatalf("pinned run: status %s, error %q, data has the answer: %t", ex.Status, ex.ErrorMessage(), bytes.Contains(ex.Data, []byte("got pinned-42")))
	}
	// The stored workflow is as before: same version, no pinned data left.
	after, err := c.GetWorkflow(ctx, created.ID)
	if err != nil {
		t.Fatal(err)
	}
	if after.VersionID != created.VersionID {
		t.Fatalf("running changed the version: %s -> %s", created.VersionID, after.VersionID)
	}
	if pd := after.Extra["pinData"]; len(pd) > 0 && string(pd) != "null" && string(pd) != "{}" {
		t.Fatalf("pinned data left on the stored workflow: %s", pd)
	}
	if _, err := s.RunWorkflow(ctx, created.ID, "NoSuchNode", nil); err == nil {
		t.Fatal("RunWorkflow accepted a trigger that is not in the workflow")
	}

	for _, id := range append(ids, created.ID) {
		if err := c.DeleteWorkflow(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.GetWorkflow(ctx, ids[0]); !n8n.IsStatus(err, http.StatusNotFound) {
		t.Fatalf("deleted workflow still readable: %v", err)
	}
}

func (en *env) deployWebhookChange(t *testing.T) {
	ctx := ctxT(t)
	c := en.c
	path := "deploy-" + uuid.NewString()
	url := en.hookURL(path)
	wf := webhookWorkflow(t, "Deploy me", path, answerCode("version one"))
	created, err := c.CreateWorkflow(ctx, wf)
	if err != nil {
		t.Fatal(err)
	}
	id := created.ID
	on := true

	// Make the first version live.
	rep, err := n8n.Deploy(ctx, c, id, wf, n8n.DeployOptions{Active: &on})
	if err != nil || rep.State != n8n.StateDeployed || !rep.After.Active || rep.Edition != en.ed {
		t.Fatalf("first deploy: %v\n%s", err, rep)
	}
	// Without a Smoke, Deploy does not wait for n8n 2.x to register the
	// published webhook (0.1–0.3 s after the publish answers 200): poll.
	if r, err := pollReply(ctx, url, "version one"); err != nil {
		t.Fatalf("webhook after the first deploy: %+v, %v", r, err)
	}

	// Nothing to do: no write at all.
	rep, err = n8n.Deploy(ctx, c, id, wf, n8n.DeployOptions{})
	if err != nil || rep.State != n8n.StateUnchanged || len(rep.Steps) != 2 {
		t.Fatalf("no-op deploy: %v\n%s %+v", err, rep, rep.Steps)
	}

	// Change the live workflow, with a smoke check polling the webhook.
	next := wf.Clone()
	setCode(t, next, answerCode("version two"))
	rep, err = n8n.Deploy(ctx, c, id, next, n8n.DeployOptions{Smoke: &n8n.Smoke{
		URL: url, Header: http.Header{"X-Subject-Token": {"subject"}}, Body: map[string]string{"q": "smoke"},
		Check: func(status int, body []byte) error {
			if status != 200 || !bytes.Contains(body, []byte("version two")) {
				return fmt.Errorf("status %d body %q", status, body)
			}
			return nil
		},
	}})
	if err != nil || rep.State != n8n.StateDeployed {
		t.Fatalf("deploying a change: %v\n%s", err, rep)
	}
	if rep.WrittenVersionID == "" || rep.WrittenVersionID == rep.Before.VersionID ||
		rep.After.VersionID != rep.WrittenVersionID || !rep.After.Active || rep.Matches != n8n.MatchNew || rep.SmokeAttempts < 1 {
		t.Fatalf("report does not show the new version live: %s", rep)
	}
	if rep.After.ActiveVersionID != "" && rep.After.ActiveVersionID != rep.WrittenVersionID {
		t.Fatalf("live version %s, written %s", rep.After.ActiveVersionID, rep.WrittenVersionID)
	}
	// The smoke check passed, so the very next call serves the new version.
	r, err := n8n.CallWebhook(ctx, url, "subject", map[string]string{"q": "x"})
	if err != nil || r.Answer != "version two" {
		t.Fatalf("webhook after the change: %+v, %v", r, err)
	}

	// A change that cannot activate (no trigger left): Deploy restores the
	// live definition and says so.
	broken := next.Clone()
	code, _ := broken.Node("Code")
	broken.Nodes = []n8n.Node{*code}
	broken.Connections = n8n.Connections{}
	if p := n8n.Validate(broken); len(p) > 0 {
		t.Fatalf("broken workflow should pass Validate (n8n rejects it only at activation): %v", p)
	}
	rep, err = n8n.Deploy(ctx, c, id, broken, n8n.DeployOptions{})
	var de *n8n.DeployError
	if !errors.As(err, &de) || de.Report.State != n8n.StateRestored || rep.State != n8n.StateRestored {
		t.Fatalf("deploying a change that cannot activate: %v\n%s\n%+v", err, rep, rep.Steps)
	}
	var ae *n8n.APIError
	if !errors.As(err, &ae) || ae.Status != http.StatusBadRequest {
		t.Fatalf("the failing step's error is not n8n's 400: %v", err)
	}
	if !rep.After.Active || rep.Matches != n8n.MatchPrevious {
		t.Fatalf("report after restore: %s", rep)
	}
	t.Logf("restore report: %s", rep)
	for _, st := range rep.Steps {
		t.Logf("  step %-22s version=%s err=%v %s", st.Name, st.VersionID, st.Err, st.Detail)
	}
	cur, err := c.GetWorkflow(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if !cur.Active || len(cur.Nodes) != 3 {
		t.Fatalf("after restore: active=%t nodes=%d", cur.Active, len(cur.Nodes))
	}
	r, err = pollReply(ctx, url, "version two")
	if err != nil {
		t.Fatalf("webhook after the restore: %+v, %v", r, err)
	}

	// Invalid input: nothing is sent.
	bad := next.Clone()
	bad.Nodes[0].WebhookID = ""
	rep, err = n8n.Deploy(ctx, c, id, bad, n8n.DeployOptions{})
	var ve *n8n.ValidationError
	if !errors.As(err, &ve) || rep.State != n8n.StateUnchanged || len(rep.Steps) != 1 {
		t.Fatalf("invalid workflow: %v %s", err, rep)
	}
	// n8n 2.x refuses to delete a published workflow (409); 1.x deletes an
	// active one and drops its webhook at once.
	err = c.DeleteWorkflow(ctx, id)
	if en.ed == n8n.Edition2 {
		if !n8n.IsStatus(err, http.StatusConflict) {
			t.Fatalf("deleting a published workflow on 2.x: %v, want 409", err)
		}
		if _, err := c.UnpublishWorkflow(ctx, id); err != nil {
			t.Fatal(err)
		}
		// Unpublishing finishes asynchronously: until then DELETE answers
		// 409 "Workflow is still being unpublished".
		err = pollDelete(ctx, c, id)
	}
	if err != nil {
		t.Fatal(err)
	}
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

// pollReply calls the webhook until it answers want: the webhook
// registration of n8n 2.x changes 0.1–0.3 s after a publish answers 200.
func pollReply(ctx context.Context, url, want string) (n8n.Reply, error) {
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
		_, id := en.liveWorkflow(t, ctx, name, path, code)
		return id, en.hookURL(path)
	}

	// A Code node that throws before Respond to Webhook.
	id, url := deploy("Throws", "throw new Error('inventory down');")
	_, err := pollCall(ctx, url)
	switch en.ed {
	case n8n.Edition1: // observed: 200, application/json, zero bytes
		if !errors.Is(err, n8n.ErrEmptyReply) {
			t.Fatalf("throwing workflow on 1.x: %v, want ErrEmptyReply", err)
		}
	case n8n.Edition2: // observed: 500 {"message":"Error in workflow"}
		var ce *n8n.ContractError
		if !errors.As(err, &ce) || ce.Status != 500 {
			t.Fatalf("throwing workflow on 2.x: %v, want a 500 ContractError", err)
		}
	}
	ex := lastExecution(t, ctx, c, id, n8n.StatusError)
	if ex.Status != n8n.StatusError || !strings.Contains(ex.ErrorMessage(), "inventory down") {
		t.Fatalf("execution: status %s, error %q", ex.Status, ex.ErrorMessage())
	}

	// A Code node that returns no items: Respond never runs, on both editions.
	id, url = deploy("No items", "return [];")
	_, err = pollCall(ctx, url)
	if !errors.Is(err, n8n.ErrEmptyReply) {
		t.Fatalf("workflow returning no items: %v, want ErrEmptyReply", err)
	}
	ex = lastExecution(t, ctx, c, id, "")
	if ex.WorkflowID != id {
		t.Fatalf("execution %+v is not of workflow %s", ex, id)
	}
	t.Logf("%s: the no-items run is recorded as %q (error %q)", en.ed, ex.Status, ex.ErrorMessage())
}

// pollCall calls the webhook until it is registered (not a 404).
func pollCall(ctx context.Context, url string) (n8n.Reply, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		r, err := n8n.CallWebhook(ctx, url, "subject", map[string]string{"q": "x"})
		var ce *n8n.ContractError
		if !errors.As(err, &ce) || ce.Status != http.StatusNotFound {
			return r, err
		}
		select {
		case <-ctx.Done():
			return r, err
		case <-tick.C:
		}
	}
}

// lastExecution polls for the newest finished execution of a workflow (n8n
// writes the record asynchronously after answering the webhook).
func lastExecution(t *testing.T, ctx context.Context, c *n8n.Client, id n8n.ID, status string) *n8n.Execution {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		list, err := c.ListExecutions(ctx, n8n.ExecutionFilter{WorkflowID: id, Status: status, Max: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(list) == 1 && list[0].Status != n8n.StatusRunning && list[0].Status != "new" {
			ex, err := c.GetExecution(ctx, list[0].ID, true)
			if err != nil {
				t.Fatal(err)
			}
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
	// Start from an instance holding exactly one tracked workflow family.
	path := "export-" + uuid.NewString()
	_, id := en.liveWorkflow(t, ctx, "Exported", path, answerCode("from the instance"))

	dir := t.TempDir()
	paths, err := n8n.ExportDir(ctx, c, dir)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, string(id)+".json")
	if len(paths) == 0 {
		t.Fatal("nothing exported")
	}
	before, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(before, []byte(`"versionId"`)) || !bytes.Contains(before, []byte(`"active": true`)) {
		t.Fatalf("export is not the canonical form:\n%s", before)
	}
	// Exporting again changes nothing.
	if _, err := n8n.ExportDir(ctx, c, dir); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(file); !bytes.Equal(again, before) {
		t.Fatal("a second export of an unchanged instance differs")
	}
	plan, err := n8n.Plan(ctx, c, dir)
	if err != nil {
		t.Fatal(err)
	}
	if plan.Count(n8n.ActionUnchanged) != len(plan.Items) || len(plan.Untracked) != 0 {
		t.Fatalf("fresh export does not plan as unchanged:\n%s", plan)
	}

	// Edit the file as a person would, in the Code node.
	edited := bytes.Replace(before, []byte("from the instance"), []byte("from the repository"), 1)
	if bytes.Equal(edited, before) {
		t.Fatal("edit did not apply")
	}
	if err := os.WriteFile(file, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	plan, err = n8n.Plan(ctx, c, dir)
	if err != nil {
		t.Fatal(err)
	}
	if plan.Count(n8n.ActionUpdate) != 1 || plan.Count(n8n.ActionCreate) != 0 {
		t.Fatalf("plan after one edit:\n%s", plan)
	}
	for _, it := range plan.Items {
		if it.Action == n8n.ActionUpdate && (it.ID != id || strings.Join(it.Changes, ";") != `node "Code" changed`) {
			t.Fatalf("update item %s", it)
		}
	}
	applied, err := n8n.ApplyDir(ctx, c, dir, n8n.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	updated := 0
	for _, a := range applied {
		if a.Report != nil {
			updated++
			if a.Report.State != n8n.StateDeployed {
				t.Fatalf("apply report: %s", a.Report)
			}
		}
	}
	if updated != 1 {
		t.Fatalf("applied %d deploys, want 1", updated)
	}
	if _, err := pollReply(ctx, en.hookURL(path), "from the repository"); err != nil {
		t.Fatal(err)
	}
	dir2 := t.TempDir()
	if _, err := n8n.ExportDir(ctx, c, dir2); err != nil {
		t.Fatal(err)
	}
	after, err := os.ReadFile(filepath.Join(dir2, string(id)+".json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(after, edited) {
		t.Fatalf("export after apply differs from the applied file:\n--- file\n%s\n--- export\n%s", edited, after)
	}

	// A new file without an id is a create; applying records the id so a
	// second plan sees it as unchanged, not as another create.
	fresh := webhookWorkflow(t, "From a file", "file-"+uuid.NewString(), answerCode("new"))
	b, err := json.Marshal(fresh)
	if err != nil {
		t.Fatal(err)
	}
	newFile := filepath.Join(dir, "from-a-file.json")
	if err := os.WriteFile(newFile, b, 0o644); err != nil {
		t.Fatal(err)
	}
	plan, err = n8n.Plan(ctx, c, dir)
	if err != nil || plan.Count(n8n.ActionCreate) != 1 {
		t.Fatalf("plan with a new file: %v\n%s", err, plan)
	}
	if _, err := n8n.ApplyDir(ctx, c, dir, n8n.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	plan, err = n8n.Plan(ctx, c, dir)
	if err != nil || plan.Count(n8n.ActionUnchanged) != len(plan.Items) {
		t.Fatalf("plan after applying the create: %v\n%s", err, plan)
	}

	// A file with problems stops the whole apply before any write.
	if err := os.WriteFile(filepath.Join(dir, "broken.json"), []byte(`{"name":"b","nodes":[{"name":"x"}],"connections":{}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = n8n.ApplyDir(ctx, c, dir, n8n.ApplyOptions{})
	var ve *n8n.ValidationError
	if !errors.As(err, &ve) || len(ve.Problems) == 0 {
		t.Fatalf("apply with a broken file: %v", err)
	}
}

// pendingDraft: a published workflow with a newer draft that was never
// published. A deploy that fails after publishing must put back what was
// live (not publish the draft); Plan must not call the workflow unchanged,
// and applying publishes the draft.
func (en *env) pendingDraft(t *testing.T) {
	ctx := ctxT(t)
	c := en.c
	path := "draft-" + uuid.NewString()
	url := en.hookURL(path)
	wf, id := en.liveWorkflow(t, ctx, "Pending draft", path, answerCode("published"))
	if _, err := pollReply(ctx, url, "published"); err != nil {
		t.Fatal(err)
	}
	draft := wf.Clone()
	setCode(t, draft, answerCode("draft"))
	if _, err := c.UpdateWorkflow(ctx, id, draft, n8n.UpdateOptions{KeepPublished: true}); err != nil {
		t.Fatal(err)
	}
	before, err := c.GetWorkflow(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if !before.Active || before.ActiveVersionID == "" || before.ActiveVersionID == before.VersionID {
		t.Fatalf("setup: want a published workflow with a pending draft; active=%t live=%s saved=%s",
			before.Active, before.ActiveVersionID, before.VersionID)
	}

	// A deploy whose smoke check never passes: it publishes, fails, restores.
	next := wf.Clone()
	setCode(t, next, answerCode("next"))
	rep, err := n8n.Deploy(ctx, c, id, next, n8n.DeployOptions{VerifyTimeout: time.Second, Smoke: &n8n.Smoke{
		URL: url, Body: map[string]string{"q": "smoke"},
		Check: func(int, []byte) error { return errors.New("not the new definition (on purpose)") },
	}})
	var de *n8n.DeployError
	if !errors.As(err, &de) || de.Step != "smoke" || rep.State != n8n.StateRestored || rep.Matches != n8n.MatchPrevious {
		t.Fatalf("failed deploy over a pending draft: %v\n%s\n%+v", err, rep, rep.Steps)
	}
	after, err := c.GetWorkflow(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if !after.Active || after.ActiveVersionID != before.ActiveVersionID {
		t.Fatalf("after the restore the live version is %s (active=%t); want the one live before, %s\n%s",
			after.ActiveVersionID, after.Active, before.ActiveVersionID, rep)
	}
	if _, err := pollReply(ctx, url, "published"); err != nil {
		t.Fatalf("webhook after the restore: %v", err)
	}

	// The export shows the draft; the plan must not call it unchanged.
	dir := t.TempDir()
	if _, err := n8n.ExportDir(ctx, c, dir); err != nil {
		t.Fatal(err)
	}
	plan, err := n8n.Plan(ctx, c, dir)
	if err != nil {
		t.Fatal(err)
	}
	var item *n8n.PlanItem
	for i := range plan.Items {
		if plan.Items[i].ID == id {
			item = &plan.Items[i]
		}
	}
	if item == nil || item.Action != n8n.ActionUpdate || !strings.Contains(strings.Join(item.Changes, ";"), "not published") {
		t.Fatalf("plan for a workflow with an unpublished draft:\n%s", plan)
	}
	if plan.Count(n8n.ActionUpdate) != 1 {
		t.Fatalf("plan:\n%s", plan)
	}
	if _, err := n8n.ApplyDir(ctx, c, dir, n8n.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := pollReply(ctx, url, "draft"); err != nil {
		t.Fatalf("webhook after applying: %v", err)
	}
	if plan, err = n8n.Plan(ctx, c, dir); err != nil || plan.Count(n8n.ActionUnchanged) != len(plan.Items) {
		t.Fatalf("plan after applying: %v\n%s", err, plan)
	}
}

// deploySavedDraft (n8n 1.123 with draft/publish on): a PUT on an active
// workflow saves a version that is not the live one. Deploying that same
// definition is not "unchanged": Deploy makes the saved version live.
func (en *env) deploySavedDraft(t *testing.T) {
	ctx := ctxT(t)
	c := en.c
	path := "saved-" + uuid.NewString()
	wf, id := en.liveWorkflow(t, ctx, "Saved draft", path, answerCode("one"))
	next := wf.Clone()
	setCode(t, next, answerCode("two"))
	saved, err := c.UpdateWorkflow(ctx, id, next, n8n.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !saved.Active || saved.ActiveVersionID == "" || saved.ActiveVersionID == saved.VersionID {
		t.Fatalf("setup: want the PUT saved but not live; active=%t live=%s saved=%s", saved.Active, saved.ActiveVersionID, saved.VersionID)
	}
	rep, err := n8n.Deploy(ctx, c, id, next, n8n.DeployOptions{})
	if err != nil || rep.State != n8n.StateDeployed || rep.After.ActiveVersionID != rep.After.VersionID || rep.After.VersionID != saved.VersionID {
		t.Fatalf("deploying the saved definition: %v\n%s", err, rep)
	}
	if _, err := pollReply(ctx, en.hookURL(path), "two"); err != nil {
		t.Fatal(err)
	}
}
