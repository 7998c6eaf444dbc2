package n8n_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/candorkit/candor/n8n"
)

// exported is shaped like a GET /api/v1/workflows/{id} answer of n8n 2.x,
// with fields the Workflow type has no Go field for.
const exported = `{
  "id": "KqL0xTKw0Hc3Vt2r", "name": "availability", "active": true, "isArchived": false,
  "versionId": "7b6a1a53-1e5c-4c1b-8f44-9a9d8c2b2d10", "activeVersionId": "7b6a1a53-1e5c-4c1b-8f44-9a9d8c2b2d10",
  "versionCounter": 3, "triggerCount": 1, "createdAt": "2026-01-02T03:04:05.000Z", "updatedAt": "2026-01-02T03:04:06.000Z",
  "settings": {"executionOrder": "v1", "callerPolicy": "workflowsFromSameOwner"},
  "staticData": null, "meta": {"templateCredsSetupCompleted": true}, "pinData": {},
  "tags": [], "shared": [{"role": "workflow:owner", "projectId": "p1"}],
  "nodes": [
    {"id": "0f5c2f7e-8f0a-4d55-9a43-2f5b8e3c1a01", "name": "Webhook", "type": "n8n-nodes-base.webhook",
     "typeVersion": 2.1, "position": [0, 0], "webhookId": "5d4a1d6e-3f1f-4c4d-9a4e-1f2b3c4d5e6f",
     "parameters": {"httpMethod": "POST", "path": "availability", "responseMode": "responseNode", "options": {}},
     "notesInFlow": true, "notes": "entry"},
    {"id": "1a2b3c4d-5e6f-4a1b-8c2d-3e4f5a6b7c8d", "name": "Code", "type": "n8n-nodes-base.code",
     "typeVersion": 2, "position": [220, 0], "parameters": {"jsCode": "return [{json: {answer: 'x' + 1e21, big: 12345678901234567890}}];"},
     "credentials": {"httpHeaderAuth": {"id": "17", "name": "inventory"}}, "disabled": false, "retryOnFail": true}
  ],
  "connections": {"Webhook": {"main": [[{"node": "Code", "type": "main", "index": 0}]]}, "Code": {"main": [[]]}}
}`

func canonical(t *testing.T, b []byte) string {
	t.Helper()
	var v any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func TestWorkflowRoundTripKeepsUnknownFields(t *testing.T) {
	wf, err := n8n.ParseWorkflow([]byte(exported))
	if err != nil {
		t.Fatal(err)
	}
	if wf.ID != "KqL0xTKw0Hc3Vt2r" || !wf.Active || len(wf.Nodes) != 2 || wf.Nodes[0].WebhookID == "" ||
		wf.Nodes[1].Credentials["httpHeaderAuth"].ID != "17" || wf.ActiveVersionID != wf.VersionID {
		t.Fatalf("decoded %+v", wf)
	}
	for _, k := range []string{"isArchived", "versionCounter", "triggerCount", "meta", "pinData", "shared"} {
		if _, ok := wf.Extra[k]; !ok {
			t.Errorf("unknown field %q not kept", k)
		}
	}
	if _, ok := wf.Nodes[1].Extra["retryOnFail"]; !ok {
		t.Error("unknown node field retryOnFail not kept")
	}
	assert.Equal(t, []float64{220, 0}, wf.Nodes[1].Position)
	assert.Equal(t, 2.1, wf.Nodes[0].TypeVersion)
	assert.JSONEq(t, `{"executionOrder": "v1", "callerPolicy": "workflowsFromSameOwner"}`, string(wf.Settings))
	assert.Equal(t, "null", string(wf.StaticData))
	assert.Equal(t, "2026-01-02T03:04:06.000Z", wf.UpdatedAt)
	assert.Equal(t, []n8n.Connection{{Node: "Code", Type: "main", Index: 0}}, wf.Connections["Webhook"]["main"][0])
	assert.Equal(t, []n8n.Tag{}, wf.Tags)
	out, err := json.Marshal(wf)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := canonical(t, out), canonical(t, []byte(exported)); got != want {
		t.Fatalf("round trip changed the document:\n got %s\nwant %s", got, want)
	}
	// Numbers inside parameters stay verbatim (no float64 detour).
	if !strings.Contains(string(out), "12345678901234567890") {
		t.Error("a large integer in parameters lost precision")
	}
}

func TestWorkflowRoundTripKeepsAbsentFieldsAbsent(t *testing.T) {
	in := `{"name":"n","nodes":[{"name":"a","type":"x.y","typeVersion":1,"parameters":{}}],"connections":{}}`
	wf, err := n8n.ParseWorkflow([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(wf)
	if got, want := canonical(t, out), canonical(t, []byte(in)); got != want {
		t.Fatalf("got %s want %s", got, want)
	}
}

func TestParseWorkflowRejectsWrongShapes(t *testing.T) {
	for _, in := range []string{`[]`, `"x"`, `null`, `{"nodes":{}}`, `{"nodes":[1]}`, `{"active":"yes"}`, `{"id":{}}`} {
		if _, err := n8n.ParseWorkflow([]byte(in)); err == nil {
			t.Errorf("ParseWorkflow(%s) succeeded", in)
		}
	}
}

func TestValidateRules(t *testing.T) {
	good := `{"name":"ok","settings":{},
	  "nodes":[
	    {"id":"0f5c2f7e-8f0a-4d55-9a43-2f5b8e3c1a01","name":"Hook","type":"n8n-nodes-base.webhook","typeVersion":2,
	     "position":[0,0],"parameters":{},"webhookId":"5d4a1d6e-3f1f-4c4d-9a4e-1f2b3c4d5e6f"},
	    {"id":"1a2b3c4d-5e6f-4a1b-8c2d-3e4f5a6b7c8d","name":"Code","type":"n8n-nodes-base.code","typeVersion":2,
	     "position":[200,0],"parameters":{},"credentials":{"api":{"name":"inventory"}}}],
	  "connections":{"Hook":{"main":[[{"node":"Code","type":"main","index":0}]]},"Code":{"main":[null,[]]}}}`
	if p := n8n.ValidateJSON([]byte(good)); len(p) != 0 {
		t.Fatalf("valid workflow has problems: %v", p)
	}
	cases := []struct {
		edit string // replace old with new in good
		old  string
		path string
		msg  string
	}{
		{"", `"name":"ok",`, "$.name", "required"},
		{`"nodes":{},"x":[`, `"nodes":[`, "$.nodes", "must be an array"},
		{`"connections":[],"y":{`, `"connections":{`, "$.connections", "must be an object"},
		{`"settings":[]`, `"settings":{}`, "$.settings", "must be an object"},
		{`"id":"nope"`, `"id":"1a2b3c4d-5e6f-4a1b-8c2d-3e4f5a6b7c8d"`, "$.nodes[1].id", "not a UUID"},
		{`"id":"0f5c2f7e-8f0a-4d55-9a43-2f5b8e3c1a01"`, `"id":"1a2b3c4d-5e6f-4a1b-8c2d-3e4f5a6b7c8d"`, "$.nodes[1].id", "duplicates"},
		{`"name":"Hook","type":"n8n-nodes-base.code"`, `"name":"Code","type":"n8n-nodes-base.code"`, "$.nodes[1].name", "unique"},
		{`"type":"code"`, `"type":"n8n-nodes-base.code"`, "$.nodes[1].type", "not a node type"},
		{`"type":"n8n-nodes-base.code","typeVersion":0`, `"type":"n8n-nodes-base.code","typeVersion":2`, "$.nodes[1].typeVersion", "positive"},
		{`"position":[200]`, `"position":[200,0]`, "$.nodes[1].position", "[x, y]"},
		{`"position":[200,"0"]`, `"position":[200,0]`, "$.nodes[1].position[1]", "finite number"},
		{`"parameters":[],"credentials"`, `"parameters":{},"credentials"`, "$.nodes[1].parameters", "object"},
		{`,"webhookIdX":"5`, `,"webhookId":"5`, "$.nodes[0].webhookId", "needs a webhookId"},
		{`{"name":""}`, `{"name":"inventory"}`, `$.nodes[1].credentials["api"].name`, "non-blank name"},
		{`{"name":"inventory","id":""}`, `{"name":"inventory"}`, `$.nodes[1].credentials["api"].id`, "non-blank id"},
		{`{"node":"Ghost"`, `{"node":"Code"`, `$.connections["Hook"]["main"][0][0].node`, `"Ghost" does not exist`},
		{`"Gone":{"main"`, `"Hook":{"main"`, `$.connections["Gone"]`, "source node"},
		{`"index":-1`, `"index":0`, `$.connections["Hook"]["main"][0][0].index`, "non-negative"},
		{`"main":{}`, `"main":[null,[]]`, `$.connections["Code"]["main"]`, "array of outputs"},
	}
	for _, c := range cases {
		doc := strings.Replace(good, c.old, c.edit, 1)
		if doc == good {
			t.Fatalf("edit %q did not apply", c.old)
		}
		probs := n8n.ValidateJSON([]byte(doc))
		found := false
		for _, p := range probs {
			found = found || (p.Path == c.path && strings.Contains(p.Message, c.msg))
		}
		if !found {
			t.Errorf("%s -> %s: want %s %q, got %v", c.old, c.edit, c.path, c.msg, probs)
		}
	}
	for _, bad := range []string{``, `[`, `[]`, `{} {}`} {
		if p := n8n.ValidateJSON([]byte(bad)); len(p) == 0 || p[0].Path != "$" {
			t.Errorf("ValidateJSON(%q) = %v", bad, p)
		}
	}
	if p := n8n.Validate(nil); len(p) != 1 {
		t.Errorf("Validate(nil) = %v", p)
	}
}

func TestCanonicalExportIsStable(t *testing.T) {
	wf, err := n8n.ParseWorkflow([]byte(exported))
	if err != nil {
		t.Fatal(err)
	}
	a, err := n8n.CanonicalExport(wf)
	if err != nil {
		t.Fatal(err)
	}
	again, err := n8n.ParseWorkflow(a)
	if err != nil {
		t.Fatal(err)
	}
	b, err := n8n.CanonicalExport(again)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatalf("canonical export is not a fixed point:\n%s\n%s", a, b)
	}
	for _, gone := range []string{"versionId", "activeVersionId", "createdAt", "updatedAt", "versionCounter", "meta", "pinData", "shared", "tags", "staticData", "isArchived", "triggerCount"} {
		if bytes.Contains(a, []byte(`"`+gone+`"`)) {
			t.Errorf("instance-only field %q kept in the export", gone)
		}
	}
	if !bytes.HasSuffix(a, []byte("}\n")) || !bytes.Contains(a, []byte("\n  \"active\": true,\n")) {
		t.Errorf("export not in canonical layout:\n%s", a)
	}
	if !bytes.Contains(a, []byte(`'x' + 1e21`)) {
		t.Error("code was HTML-escaped or altered")
	}
}

func FuzzWorkflowJSON(f *testing.F) {
	f.Add([]byte(exported))
	f.Add([]byte(`{"name":"x","nodes":[],"connections":{}}`))
	f.Add([]byte(`{"nodes":[{"position":[1e400,0],"typeVersion":-1}],"connections":{"a":{"main":[[{"index":1.5}]]}}}`))
	f.Add([]byte(`{"id":12,"nodes":[{"credentials":{"x":{"id":3}}}],"connections":{"":{"":[null]}}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		probs := n8n.ValidateJSON(data)
		for _, p := range probs {
			if !strings.HasPrefix(p.Path, "$") || p.Message == "" {
				t.Fatalf("malformed problem %+v", p)
			}
		}
		wf, err := n8n.ParseWorkflow(data)
		if err != nil {
			return
		}
		out, err := json.Marshal(wf)
		if err != nil {
			t.Fatalf("decoded workflow does not encode: %v", err)
		}
		wf2, err := n8n.ParseWorkflow(out)
		if err != nil {
			t.Fatalf("re-decoding %s: %v", out, err)
		}
		out2, err := json.Marshal(wf2)
		if err != nil || !bytes.Equal(out, out2) {
			t.Fatalf("encoding is not stable:\n%s\n%s", out, out2)
		}
		_ = n8n.Validate(wf)
		if _, err := n8n.CanonicalExport(wf); err != nil {
			t.Fatalf("CanonicalExport of a document ParseWorkflow accepted: %v", err)
		}
	})
}

func BenchmarkValidate(b *testing.B) {
	wf, err := n8n.ParseWorkflow([]byte(exported))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if p := n8n.Validate(wf); len(p) != 0 {
			b.Fatal(p)
		}
	}
}

func BenchmarkCanonicalExport(b *testing.B) {
	wf, err := n8n.ParseWorkflow([]byte(exported))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := n8n.CanonicalExport(wf); err != nil {
			b.Fatal(err)
		}
	}
}
