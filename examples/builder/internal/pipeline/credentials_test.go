package pipeline

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/candorkit/candor/approval"
	"github.com/candorkit/candor/examples/builder/internal/queue"
	"github.com/candorkit/candor/examples/builder/internal/secrets"
	"github.com/candorkit/candor/n8n"
)

func workflowWith(t *testing.T, refs map[string]string) *n8n.Workflow {
	t.Helper()
	wf := &n8n.Workflow{Name: "w"}
	for typ, name := range refs {
		wf.Nodes = append(wf.Nodes, n8n.Node{Name: "uses " + typ, Type: "n8n-nodes-base.httpRequest",
			Credentials: map[string]n8n.CredentialRef{typ: {Name: name}}})
	}
	return wf
}

func TestResolveCredentials(t *testing.T) {
	avail := []n8n.Credential{
		{ID: "1", Name: "Slack-sandbox", Type: "slackApi"},
		{ID: "2", Name: "Slack", Type: "slackApi"},
		{ID: "3", Name: "CRM-sandbox", Type: "httpHeaderAuth"},
		{ID: "4", Name: "Mail", Type: "smtp"},
		{ID: "5", Name: "Twin-sandbox", Type: "githubApi"},
		{ID: "6", Name: "Twin-sandbox", Type: "githubApi"},
		{ID: "7", Name: "Only-sandbox", Type: "airtableTokenApi"},
	}
	type want struct {
		id, name, reason string
	}
	cases := []struct {
		env  secrets.Environment
		typ  string
		ref  string
		want want
	}{
		{secrets.Sandbox, "slackApi", "Slack-sandbox", want{id: "1", name: "Slack-sandbox"}},
		{secrets.Sandbox, "slackApi", "Slack", want{reason: "refused in the sandbox"}},
		{secrets.Sandbox, "httpHeaderAuth", "Other-sandbox", want{id: "3", name: "CRM-sandbox"}}, // by type: exactly one
		{secrets.Sandbox, "slackApi", "Team-sandbox", want{reason: "2 of this type exist"}},
		{secrets.Sandbox, "smtp", "Mail-sandbox", want{reason: `the only one of this type ("Mail") is not a sandbox credential`}},
		{secrets.Sandbox, "githubApi", "Twin-sandbox", want{reason: "2 credentials of this type share the name"}},
		{secrets.Sandbox, "notionApi", "Notion-sandbox", want{reason: "no credential of this name or type"}},
		{secrets.Sandbox, "slackApi", "  ", want{reason: "no name"}},
		{secrets.Production, "slackApi", "Slack-sandbox", want{id: "2", name: "Slack"}},
		{secrets.Production, "smtp", "Mail-sandbox", want{id: "4", name: "Mail"}},
		{secrets.Production, "httpHeaderAuth", "CRM-sandbox", want{reason: `("CRM-sandbox") is not a production credential`}},
		{secrets.Production, "airtableTokenApi", "Only-sandbox", want{reason: "is not a production credential"}},
	}
	for _, c := range cases {
		wf := workflowWith(t, map[string]string{c.typ: c.ref})
		got, err := ResolveCredentials(wf, avail, c.env)
		label := string(c.env) + " " + c.typ + " " + c.ref
		if c.want.reason != "" {
			var ce *CredentialError
			if !errors.As(err, &ce) || !errors.Is(err, ErrUnresolved) || len(ce.Unresolved) != 1 || !strings.Contains(ce.Unresolved[0].Reason, c.want.reason) {
				t.Errorf("%s: %v; want unresolved %q", label, err, c.want.reason)
			}
			if got != nil {
				t.Errorf("%s: a workflow came back with the error", label)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", label, err)
			continue
		}
		ref := got.Nodes[0].Credentials[c.typ]
		if string(ref.ID) != c.want.id || ref.Name != c.want.name {
			t.Errorf("%s: bound to %+v; want id %s name %s", label, ref, c.want.id, c.want.name)
		}
		if wf.Nodes[0].Credentials[c.typ].ID != "" {
			t.Errorf("%s: the input workflow was changed", label)
		}
	}
	// Every unresolved reference is listed, not only the first.
	wf := workflowWith(t, map[string]string{"slackApi": "Slack", "notionApi": "N-sandbox", "httpHeaderAuth": "CRM-sandbox"})
	_, err := ResolveCredentials(wf, avail, secrets.Sandbox)
	var ce *CredentialError
	if !errors.As(err, &ce) || len(ce.Names()) != 2 || !strings.Contains(err.Error(), "sandbox") {
		t.Fatalf("%v; want two unresolved references", err)
	}
	if _, err := ResolveCredentials(wf, avail, "staging"); err == nil {
		t.Fatal("an unknown environment was accepted")
	}
}

func TestTriggerNode(t *testing.T) {
	wf := &n8n.Workflow{
		Nodes: []n8n.Node{
			{Name: "Hook", Type: "n8n-nodes-base.webhook"},
			{Name: "Work", Type: "n8n-nodes-base.code"},
		},
		Connections: n8n.Connections{"Hook": {"main": {{{Node: "Work", Type: "main"}}}}},
	}
	if got, err := TriggerNode(wf); err != nil || got != "Hook" {
		t.Fatalf("TriggerNode = %q, %v", got, err)
	}
	wf.Nodes = append(wf.Nodes, n8n.Node{Name: "Every hour", Type: "n8n-nodes-base.scheduleTrigger"})
	if _, err := TriggerNode(wf); !errors.Is(err, ErrNoTrigger) || !strings.Contains(err.Error(), "found 2") {
		t.Fatalf("two triggers: %v", err)
	}
	wf.Nodes = wf.Nodes[1:2]
	if _, err := TriggerNode(wf); !errors.Is(err, ErrNoTrigger) {
		t.Fatalf("no trigger: %v", err)
	}
}

func TestDraftValidate(t *testing.T) {
	if errs := (Draft{}).Validate(); len(errs) != 3 {
		t.Fatalf("empty draft: %v; want 3 problems", errs)
	}
	if ProductionTag("a") == ProductionTag("b") || len(ProductionTag("n8n-builder/automation/1/sandbox/x")) != 20 {
		t.Fatal("production tags are not distinct 20-character names")
	}
}

func TestFailureError(t *testing.T) {
	cause := errors.New("boom")
	f := &Failure{Kind: ErrLevelFailed, AutomationID: 7, Name: "Relay", Level: 3, Status: "failed", Err: cause, Cleanup: errors.New("delete refused")}
	if !errors.Is(f, ErrLevelFailed) || errors.Is(f, ErrBlocked) || !errors.Is(f, cause) {
		t.Fatal("errors.Is does not see the kind and the cause")
	}
	want := "automation 7 (Relay): a test level failed (level 3): boom; left failed; cleanup incomplete: delete refused"
	if f.Error() != want {
		t.Fatalf("Error() = %q", f.Error())
	}
}

func TestNewNeedsItsParts(t *testing.T) {
	_, err := New(Config{})
	if err == nil || !strings.Contains(err.Error(), "Queue, Approvals, Secrets") {
		t.Fatalf("New(Config{}) = %v", err)
	}
	b, err := New(Config{Queue: &queue.Store{}, Approvals: &approval.Store{}, Secrets: secrets.Env{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "Generator and Config.CaptureBase") {
		t.Fatalf("Run without a generator: %v", err)
	}
}
