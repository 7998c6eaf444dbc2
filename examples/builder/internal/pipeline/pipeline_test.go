package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/candorkit/candor/approval"
	"github.com/candorkit/candor/examples/builder/internal/generate"
	"github.com/candorkit/candor/examples/builder/internal/overseer"
	"github.com/candorkit/candor/examples/builder/internal/queue"
	"github.com/candorkit/candor/internal/pgtest"
	"github.com/candorkit/candor/n8n"
	"github.com/candorkit/candor/n8n/n8ntest"
)

// TestPipeline runs the builder playbook (docs/builder-playbook.md) against a real n8n (one instance per
// edition, one edition at a time), real SQLite files and a real PostgreSQL.
func TestPipeline(t *testing.T) {
	pg := pgtest.Start(t)
	for _, e := range []n8ntest.Edition{n8ntest.Edition1, n8ntest.Edition2} {
		t.Run(fmt.Sprintf("n8n%d", int(e)), func(t *testing.T) {
			if e == n8ntest.Edition2 && os.Getenv("CANDOR_BUILDER_N8N2") == "0" {
				t.Skip("CANDOR_BUILDER_N8N2=0: the builder's tests on n8n 2.x are switched off")
			}
			inst := startInstance(t, e)
			t.Run("happy path sqlite", func(t *testing.T) { testHappyPath(t, inst, "") })
			t.Run("happy path postgres", func(t *testing.T) { testHappyPath(t, inst, pg.NewDatabase(t)) })
			t.Run("claim race postgres", func(t *testing.T) { testClaimRace(t, inst, pg.NewDatabase(t)) })
			t.Run("reject", func(t *testing.T) { testReject(t, inst) })
			t.Run("approve refused without production credential", func(t *testing.T) { testApproveRefused(t, inst) })
			t.Run("failures", func(t *testing.T) { testFailures(t, inst) })
		})
	}
}

func testHappyPath(t *testing.T, inst *instance, dsn string) {
	ctx := context.Background()
	name := "Happy " + strings.ReplaceAll(t.Name(), "/", " ")
	wf := sampleWorkflow(t, name, withCredential(sandboxCred))
	h, b := newHarness(t, inst, name, harnessOpts{dsn: dsn})
	// The model is Ollama, reproduced by a server answering as its API does.
	b.cfg.Generator = generate.Ollama{BaseURL: ollamaServer(t, wf, http.StatusOK).URL}

	out, err := b.Run(ctx)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, h.out)
	}
	if out.Result != ResultAwaitingApproval || out.Status != queue.AwaitingApproval || out.SandboxWorkflowID == "" {
		t.Fatalf("outcome %+v", out)
	}
	it := h.idea()
	if it.BuilderStatus != queue.AwaitingApproval || it.SandboxWorkflowID != out.SandboxWorkflowID {
		t.Fatalf("idea %+v", it)
	}
	if got := strings.Join(h.results(), ","); got != "1:pass,2:pass,3:pass,4:pass" {
		t.Fatalf("agent_test_results %s\n%s", got, h.out)
	}
	// The sandbox workflow is stored inactive with its credential bound by id.
	stored, err := inst.client.GetWorkflow(ctx, n8n.ID(out.SandboxWorkflowID))
	if err != nil || stored.Active {
		t.Fatalf("sandbox workflow: %+v, %v", stored, err)
	}
	confirm, _ := stored.Node("Confirm order")
	if ref := confirm.Credentials["httpHeaderAuth"]; ref.Name != sandboxCred || ref.ID == "" {
		t.Fatalf("sandbox credential reference %+v", ref)
	}
	// The capture endpoint was really called by n8n during the smoke run.
	caps, err := h.store.Captures(ctx, "order-confirmations", it.CreatedAt.Add(-1))
	if err != nil || len(caps) != 1 || !strings.Contains(caps[0].Body, `"order_id":1001`) {
		t.Fatalf("captures %+v, %v", caps, err)
	}
	st, err := h.approvals.Read(ctx, out.OperationID)
	if err != nil || st.Status != approval.StatusWaiting {
		t.Fatalf("ticket %+v, %v", st, err)
	}
	var d Draft
	if err := json.Unmarshal(st.Draft, &d); err != nil || d.AutomationID != h.ideaID || d.SandboxWorkflowID != out.SandboxWorkflowID || len(d.Workflow) == 0 {
		t.Fatalf("draft %+v, %v", d, err)
	}
	bodies := h.ntfy.bodies()
	want := []string{
		fmt.Sprintf("[N8N Builder] Building %s (id=%d)", name, h.ideaID),
		fmt.Sprintf("[N8N Builder] READY — %s passed all tests, awaiting your approval", name),
	}
	if !slices.Equal(bodies, want) {
		t.Fatalf("notifications %q; want %q", bodies, want)
	}
	for _, step := range []string{"pick", "claim", "secrets", "credentials", "generate", "review", "import", "resolve", "level1", "level2", "level3", "level4", "approval"} {
		if !strings.Contains(h.out.String(), step) {
			t.Errorf("no progress line for %s:\n%s", step, h.out)
		}
	}
	if strings.Contains(h.out.String(), inst.APIKey) || strings.Contains(h.out.String(), inst.Password) {
		t.Fatal("a secret reached the progress output")
	}
	// Nothing else to build.
	if again, err := b.Run(ctx); err != nil || again.Result != ResultNothing {
		t.Fatalf("second run: %+v, %v", again, err)
	}

	// A crash right after n8n created the production workflow, before
	// anything else of the effect ran: nothing is committed, and the next
	// approve finds that workflow by its tag instead of importing another.
	crashes := 0
	b.afterProductionCreate = func() error {
		crashes++
		return errors.New("simulated crash right after the production create")
	}
	if _, err := b.Approve(ctx, h.ideaID, "alice", "looks right"); err == nil || crashes != 1 {
		t.Fatalf("approve crashing after the create: %v (%d crashes)", err, crashes)
	}
	b.afterProductionCreate = nil
	if it := h.idea(); it.BuilderStatus != queue.AwaitingApproval {
		t.Fatalf("idea after the crash %+v", it)
	}

	// Approve twice: one production workflow, deployed once.
	dep, err := b.Approve(ctx, h.ideaID, "alice", "looks right")
	if err != nil || dep.AlreadyDeployed || dep.ProductionWorkflowID == "" || dep.ProductionWorkflowID == out.SandboxWorkflowID {
		t.Fatalf("approve: %+v, %v\n%s", dep, err, h.out)
	}
	dep2, err := b.Approve(ctx, h.ideaID, "alice", "looks right")
	if err != nil || !dep2.AlreadyDeployed || dep2.ProductionWorkflowID != dep.ProductionWorkflowID {
		t.Fatalf("second approve: %+v, %v", dep2, err)
	}
	it = h.idea()
	if it.BuilderStatus != queue.Deployed || it.Status != queue.StatusDeployed || it.ProductionWorkflowID != dep.ProductionWorkflowID {
		t.Fatalf("idea after approve %+v", it)
	}
	ws := inst.workflowsNamed(t, name)
	if len(ws) != 2 {
		t.Fatalf("%d workflows named %q; want the sandbox one and one production one", len(ws), name)
	}
	prod, err := inst.client.GetWorkflow(ctx, n8n.ID(dep.ProductionWorkflowID))
	if err != nil || prod.Active {
		t.Fatalf("production workflow %+v, %v", prod, err)
	}
	if tags, err := inst.client.WorkflowTags(ctx, prod.ID); err != nil || len(tags) != 1 || tags[0].Name != ProductionTag(out.OperationID) {
		t.Fatalf("production workflow tags %+v, %v; want only %s", tags, err, ProductionTag(out.OperationID))
	}
	confirm, _ = prod.Node("Confirm order")
	if ref := confirm.Credentials["httpHeaderAuth"]; ref.Name != productionCred || ref.ID == "" {
		t.Fatalf("production credential reference %+v", ref)
	}
	st, err = h.approvals.Read(ctx, out.OperationID)
	if err != nil || st.Status != approval.StatusCompleted {
		t.Fatalf("ticket after approve %+v, %v", st, err)
	}
	// The effect run again (a crash between effect and commit) finds the
	// tagged import instead of importing again.
	again, err := b.deployProduction(ctx, out.OperationID, d)
	if err != nil || string(again) != dep.ProductionWorkflowID {
		t.Fatalf("effect rerun: %s, %v", again, err)
	}
	if ws := inst.workflowsNamed(t, name); len(ws) != 2 {
		t.Fatalf("%d workflows after the effect rerun", len(ws))
	}
	// The same verdict by another person (the examples' one policy,
	// docs/examples.md): accepted, nothing recorded, nothing deployed again.
	dep3, err := b.Approve(ctx, h.ideaID, "carol", "me too")
	if err != nil || dep3.ProductionWorkflowID != dep.ProductionWorkflowID {
		t.Fatalf("approve by another person: %+v, %v", dep3, err)
	}
	if st, err := h.approvals.Read(ctx, out.OperationID); err != nil || st.Decision == nil || st.Decision.DecidedBy != "alice" {
		t.Fatalf("standing decision after carol's approve: %+v, %v", st, err)
	}
	if ws := inst.workflowsNamed(t, name); len(ws) != 2 {
		t.Fatalf("%d workflows after a second person's approve", len(ws))
	}
	// A decided ticket cannot be rejected.
	if _, err := b.Reject(ctx, h.ideaID, "bob", "no"); !errors.Is(err, approval.ErrAlreadyDecided) {
		t.Fatalf("reject after approve: %v", err)
	}
}

func testClaimRace(t *testing.T, inst *instance, dsn string) {
	ctx := context.Background()
	name := "Race " + strings.ReplaceAll(t.Name(), "/", " ")
	h, b1 := newHarness(t, inst, name, harnessOpts{dsn: dsn})
	b2 := h.builder(harnessOpts{workflow: sampleWorkflow(t, name, nil)})
	// Both builders pick the same idea before either claims it.
	var picked sync.WaitGroup
	picked.Add(2)
	barrier := func() { picked.Done(); picked.Wait() }
	b1.afterPick, b2.afterPick = barrier, barrier
	outs := make([]Outcome, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, b := range []*Builder{b1, b2} {
		wg.Add(1)
		go func() { defer wg.Done(); outs[i], errs[i] = b.Run(ctx) }()
	}
	wg.Wait()
	var results []string
	for i := range outs {
		if errs[i] != nil {
			t.Fatalf("builder %d: %v\n%s", i, errs[i], h.out)
		}
		results = append(results, string(outs[i].Result))
	}
	slices.Sort(results)
	if want := []string{string(ResultAwaitingApproval), string(ResultSkipped)}; !slices.Equal(results, want) {
		t.Fatalf("results %v; want exactly one build and one skip", results)
	}
	if ws := inst.workflowsNamed(t, name); len(ws) != 1 {
		t.Fatalf("%d sandbox workflows; want 1", len(ws))
	}
	if got := strings.Join(h.results(), ","); got != "1:pass,2:pass,3:pass,4:pass" {
		t.Fatalf("agent_test_results %s (one builder's levels only)", got)
	}
	var skipped int
	for _, body := range h.ntfy.bodies() {
		if strings.Contains(body, "SKIPPED") {
			skipped++
		}
	}
	if skipped != 1 {
		t.Fatalf("notifications %q; want one SKIPPED", h.ntfy.bodies())
	}
}

func testReject(t *testing.T, inst *instance) {
	ctx := context.Background()
	name := "Reject " + strings.ReplaceAll(t.Name(), "/", " ")
	h, b := newHarness(t, inst, name, harnessOpts{})
	out, err := b.Run(ctx)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, h.out)
	}
	for range 2 { // rejecting twice is harmless
		rej, err := b.Reject(ctx, h.ideaID, "bob", "not now")
		if err != nil || !rej.SandboxDeleted || rej.OperationID != out.OperationID {
			t.Fatalf("reject: %+v, %v", rej, err)
		}
	}
	it := h.idea()
	if it.BuilderStatus != queue.Failed || !strings.Contains(it.LastError, "rejected by bob: not now") {
		t.Fatalf("idea after reject %+v", it)
	}
	if ws := inst.workflowsNamed(t, name); len(ws) != 0 {
		t.Fatalf("%d workflows left after reject", len(ws))
	}
	if _, err := b.Approve(ctx, h.ideaID, "alice", ""); !errors.Is(err, ErrNotAwaiting) {
		t.Fatalf("approve after reject: %v", err)
	}
}

func testApproveRefused(t *testing.T, inst *instance) {
	ctx := context.Background()
	name := "Refused " + strings.ReplaceAll(t.Name(), "/", " ")
	h, b := newHarness(t, inst, name, harnessOpts{workflow: sampleWorkflow(t, name, withCredentialOf("httpQueryAuth", ledgerCred))})
	out, err := b.Run(ctx)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, h.out)
	}
	for range 2 { // refused every time, and retried every time
		_, err = b.Approve(ctx, h.ideaID, "alice", "")
		var ce *CredentialError
		if !errors.Is(err, approval.ErrEffectFailed) || !errors.As(err, &ce) || ce.Env != "production" || ce.Unresolved[0].Name != "Ledger" {
			t.Fatalf("approve: %v; want the effect refused with the unresolved production credential Ledger", err)
		}
	}
	if it := h.idea(); it.BuilderStatus != queue.AwaitingApproval || it.ProductionWorkflowID != "" {
		t.Fatalf("idea after a refused deploy %+v", it)
	}
	if st, err := h.approvals.Read(ctx, out.OperationID); err != nil || st.Status != approval.StatusApproved {
		t.Fatalf("ticket %+v, %v; want approved, not completed", st, err)
	}
	if ws := inst.workflowsNamed(t, name); len(ws) != 1 {
		t.Fatalf("%d workflows; want only the sandbox one", len(ws))
	}
}

func testFailures(t *testing.T, inst *instance) {
	ctx := context.Background()
	base := func(t *testing.T) string { return "Fail " + strings.ReplaceAll(t.Name(), "/", " ") }

	t.Run("overseer command FAIL", func(t *testing.T) {
		name := base(t)
		dir := t.TempDir()
		script := filepath.Join(dir, "review.sh")
		if err := os.WriteFile(script, []byte("#!/bin/sh\ncat > /dev/null\necho 'FAIL: the workflow never checks the order email.'\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		cmd, err := overseer.NewCommand(script, 0)
		if err != nil {
			t.Fatal(err)
		}
		h, b := newHarness(t, inst, name, harnessOpts{overseer: func(c *Config) { c.Overseer = cmd }})
		out, err := b.Run(ctx)
		h.expectFailure(out, err, ErrOverseerRejected, queue.Failed, "",
			"[N8N Builder] FAIL — Overseer rejected "+name+": the workflow never checks the order email.")
	})

	t.Run("rules overseer FAIL", func(t *testing.T) {
		name := base(t)
		wf := sampleWorkflow(t, name, func(doc map[string]any) { delete(node(doc, "Order received"), "webhookId") })
		h, b := newHarness(t, inst, name, harnessOpts{workflow: wf})
		out, err := b.Run(ctx)
		h.expectFailure(out, err, ErrOverseerRejected, queue.Failed, "",
			"[N8N Builder] FAIL — Overseer rejected "+name+": Check 1 (structure) failed: $.nodes[0].webhookId")
	})

	t.Run("import failure", func(t *testing.T) {
		name := base(t)
		// Valid by every rule the builder checks, refused by n8n: its
		// settings schema is strict.
		wf := sampleWorkflow(t, name, func(doc map[string]any) { doc["settings"] = map[string]any{"executionOrder": "v1", "colour": "blue"} })
		h, b := newHarness(t, inst, name, harnessOpts{workflow: wf})
		out, err := b.Run(ctx)
		h.expectFailure(out, err, ErrImportFailed, queue.Failed, "", "[N8N Builder] FAIL — "+name+" failed N8N import: ")
	})

	t.Run("blocked credentials", func(t *testing.T) {
		name := base(t)
		// "Orders API" exists in the instance (it is the production one),
		// so the overseer accepts it; the sandbox refuses it.
		wf := sampleWorkflow(t, name, withCredential(productionCred))
		h, b := newHarness(t, inst, name, harnessOpts{workflow: wf})
		out, err := b.Run(ctx)
		h.expectFailure(out, err, ErrBlocked, queue.Failed, "", "[N8N Builder] BLOCKED — "+name+" needs credentials: Orders API (httpHeaderAuth")
		if out.SandboxWorkflowID == "" {
			t.Fatal("the outcome names no imported sandbox workflow")
		}
	})

	t.Run("level 3 failure", func(t *testing.T) {
		name := base(t)
		// The capture endpoint answers 404 to this path: the HTTP node fails.
		wf := sampleWorkflow(t, name, func(doc map[string]any) {
			node(doc, "Confirm order")["parameters"].(map[string]any)["url"] = "{capture_base}/missing/order-confirmations"
		})
		h, b := newHarness(t, inst, name, harnessOpts{workflow: wf})
		out, err := b.Run(ctx)
		h.expectFailure(out, err, ErrLevelFailed, queue.Failed, "1:pass,2:pass,3:fail", "[N8N Builder] FAIL — "+name+" failed Level 3: execution ")
		if out.SandboxWorkflowID == "" {
			t.Fatal("the outcome names no imported sandbox workflow")
		}
		var f *Failure
		if errors.As(err, &f) && f.Level != 3 {
			t.Fatalf("failure level %d", f.Level)
		}
	})

	t.Run("level 4 without assertion", func(t *testing.T) {
		name := base(t)
		// Without a spec there is no pinned trigger data either: the trigger
		// emits one empty item, which this workflow does not read.
		wf := sampleWorkflow(t, name, func(doc map[string]any) {
			node(doc, "Confirm order")["parameters"].(map[string]any)["jsonBody"] = `={{ JSON.stringify({ status: 'confirmed' }) }}`
		})
		h, b := newHarness(t, inst, name, harnessOpts{noSpec: true, workflow: wf})
		out, err := b.Run(ctx)
		h.expectFailure(out, err, ErrLevelFailed, queue.Failed, "1:pass,2:pass,3:pass,4:fail",
			"[N8N Builder] FAIL — "+name+" failed Level 4: no assertion defined")
		if out.SandboxWorkflowID == "" {
			t.Fatal("the outcome names no imported sandbox workflow")
		}
	})

	t.Run("level 4 state not reached", func(t *testing.T) {
		name := base(t)
		a := *queue.Sample().Assertion
		a.HTTP = []queue.HTTPCheck{{Capture: "order-confirmations", Method: "POST", BodyContains: "shipped"}}
		h, b := newHarness(t, inst, name, harnessOpts{assertion: &a})
		out, err := b.Run(ctx)
		h.expectFailure(out, err, ErrLevelFailed, queue.Failed, "1:pass,2:pass,3:pass,4:fail",
			"[N8N Builder] FAIL — "+name+" failed Level 4: http[0]: POST order-confirmations: not called since")
		if out.SandboxWorkflowID == "" {
			t.Fatal("the outcome names no imported sandbox workflow")
		}
	})

	t.Run("error before generation", func(t *testing.T) {
		name := base(t)
		h, b := newHarness(t, inst, name, harnessOpts{password: "Wrong-password-1"})
		out, err := b.Run(ctx)
		h.expectFailure(out, err, ErrUnhandled, queue.NotStarted, "0:fail", "[N8N Builder] ERROR — "+name+": sandbox n8n login: ")
		if out.Result != ResultReleased {
			t.Fatalf("result %s; want released", out.Result)
		}
		// Released: the next run picks it again.
		if it, err := h.store.Pick(ctx); err != nil || it.ID != h.ideaID {
			t.Fatalf("pick after release: %+v, %v", it, err)
		}
	})

	t.Run("error during generation", func(t *testing.T) {
		name := base(t)
		h, b := newHarness(t, inst, name, harnessOpts{})
		b.cfg.Generator = generate.Ollama{BaseURL: ollamaServer(t, nil, http.StatusNotFound).URL}
		out, err := b.Run(ctx)
		h.expectFailure(out, err, ErrUnhandled, queue.Failed, "0:fail", "[N8N Builder] ERROR — "+name+": generate: ollama answered HTTP 404: model 'llama3.1:8b' not found")
	})

	t.Run("panic during generation", func(t *testing.T) {
		name := base(t)
		h, b := newHarness(t, inst, name, harnessOpts{generator: panicking{}})
		out, err := b.Run(ctx)
		h.expectFailure(out, err, ErrUnhandled, queue.Failed, "0:fail", "[N8N Builder] ERROR — "+name+": panic: generator bug")
	})

	t.Run("error after import", func(t *testing.T) {
		name := base(t)
		h, b := newHarness(t, inst, name, harnessOpts{})
		h.approvals.Close() // the ticket cannot be registered
		out, err := b.Run(ctx)
		h.expectFailure(out, err, ErrUnhandled, queue.Failed, "1:pass,2:pass,3:pass,4:pass,0:fail", "[N8N Builder] ERROR — "+name+": approval: store closed")
		if out.SandboxWorkflowID == "" {
			t.Fatal("the outcome names no imported sandbox workflow")
		}
	})

	t.Run("undeliverable notification changes nothing", func(t *testing.T) {
		name := base(t)
		h, b := newHarness(t, inst, name, harnessOpts{noSpec: true})
		h.ntfy.Close()
		out, err := b.Run(ctx)
		if !errors.Is(err, ErrLevelFailed) || out.Status != queue.Failed || h.idea().BuilderStatus != queue.Failed {
			t.Fatalf("outcome %+v, %v", out, err)
		}
		if !strings.Contains(h.out.String(), "not delivered") {
			t.Fatalf("the failed delivery is not shown:\n%s", h.out)
		}
	})
}

// panicking is a Generator with a bug.
type panicking struct{}

func (panicking) Generate(context.Context, string) (json.RawMessage, error) { panic("generator bug") }
func (panicking) Describe() string                                          { return "a generator that panics" }
