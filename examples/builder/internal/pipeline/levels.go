package pipeline

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/candorkit/candor/n8n"
)

// level1 is the structure test: the stored workflow reads back (GET 200)
// with the generated node count, every generated node by name and type, and
// every field n8n needs (n8n.Validate on the stored definition).
func (r *run) level1(ctx context.Context, want *n8n.Workflow) (string, error) {
	got, err := r.sandbox.GetWorkflow(ctx, r.imported)
	if err != nil {
		return "", fmt.Errorf("GET sandbox workflow %s: %w", r.imported, err)
	}
	if len(got.Nodes) != len(want.Nodes) {
		return "", fmt.Errorf("the stored workflow has %d nodes; %d were generated", len(got.Nodes), len(want.Nodes))
	}
	for _, n := range want.Nodes {
		s, ok := got.Node(n.Name)
		if !ok {
			return "", fmt.Errorf("node %q is missing from the stored workflow", n.Name)
		}
		if s.Type != n.Type {
			return "", fmt.Errorf("node %q is stored as %s, generated as %s", n.Name, s.Type, n.Type)
		}
	}
	if problems := n8n.Validate(got); len(problems) > 0 {
		return "", fmt.Errorf("the stored workflow breaks %d rule(s), first %s", len(problems), problems[0])
	}
	return fmt.Sprintf("GET 200; %d nodes as generated; required fields present", len(got.Nodes)), nil
}

// level2 is the deployment test: the workflow exists, is inactive, and every
// credential link points to a credential the sandbox holds, by id, name and
// type.
func (r *run) level2(ctx context.Context, _ *n8n.Workflow) (string, error) {
	got, err := r.sandbox.GetWorkflow(ctx, r.imported)
	if err != nil {
		return "", fmt.Errorf("sandbox workflow %s: %w", r.imported, err)
	}
	if got.Active {
		return "", fmt.Errorf("sandbox workflow %s is active; it must stay inactive", r.imported)
	}
	creds, err := r.session.ListCredentials(ctx)
	if err != nil {
		return "", fmt.Errorf("listing sandbox credentials: %w", err)
	}
	byID := map[n8n.ID]n8n.Credential{}
	for _, c := range creds {
		byID[c.ID] = c
	}
	links := 0
	for _, n := range got.Nodes {
		for typ, ref := range n.Credentials {
			links++
			c, ok := byID[ref.ID]
			switch {
			case ref.ID == "":
				return "", fmt.Errorf("node %q links its %s credential %q without an id", n.Name, typ, ref.Name)
			case !ok:
				return "", fmt.Errorf("node %q links %s credential id %s, which the sandbox does not hold", n.Name, typ, ref.ID)
			case c.Type != typ || c.Name != ref.Name:
				return "", fmt.Errorf("node %q links %s credential %s %q, but that id is %s %q", n.Name, typ, ref.ID, ref.Name, c.Type, c.Name)
			}
		}
	}
	return fmt.Sprintf("exists, inactive, %d credential link(s) intact", links), nil
}

// level3 is the smoke test: the STORED definition runs, without activation,
// from its trigger with the idea's pinned trigger data, and its execution
// ends success or waiting within the smoke timeout.
func (r *run) level3(ctx context.Context, _ *n8n.Workflow) (string, error) {
	stored, err := r.sandbox.GetWorkflow(ctx, r.imported)
	if err != nil {
		return "", fmt.Errorf("sandbox workflow %s: %w", r.imported, err)
	}
	trigger, err := TriggerNode(stored)
	if err != nil {
		return "", err
	}
	items := []map[string]any{{}}
	if a, err := r.idea.Assertion(); err == nil && len(a.Trigger) > 0 {
		items = a.Trigger
	}
	r.smokeStart = time.Now().UTC().Truncate(time.Microsecond)
	exID, err := r.session.RunWorkflow(ctx, r.imported, trigger, items)
	if err != nil {
		if exID != "" {
			return "", fmt.Errorf("execution %s started, but: %w", exID, err)
		}
		return "", fmt.Errorf("running the stored workflow from %q: %w", trigger, err)
	}
	wctx, cancel := context.WithTimeout(ctx, r.b.cfg.SmokeTimeout)
	defer cancel()
	ex, err := r.sandbox.WaitExecution(wctx, exID)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return "", fmt.Errorf("execution %s did not finish within %s: %w", exID, r.b.cfg.SmokeTimeout, err)
		}
		return "", err
	}
	switch ex.Status {
	case n8n.ExecutionSuccess, n8n.ExecutionWaiting:
		return fmt.Sprintf("execution %s from %q with %d pinned item(s): %s", exID, trigger, len(items), ex.Status), nil
	case n8n.ExecutionError:
		msg := ex.ErrorMessage()
		if msg == "" {
			msg = "(the execution carries no error message)"
		}
		return "", fmt.Errorf("execution %s ended in error: %s", exID, msg)
	}
	return "", fmt.Errorf("execution %s ended %q", exID, ex.Status)
}

// level4 is the assertion test: the system state the idea's assertion spec
// describes (SQL rows, HTTP captures since the smoke run started).
func (r *run) level4(ctx context.Context, _ *n8n.Workflow) (string, error) {
	a, err := r.idea.Assertion()
	if err != nil {
		return "", err
	}
	rep, err := r.b.cfg.Queue.CheckAssertion(ctx, a, r.smokeStart)
	if err != nil {
		return "", err
	}
	if !rep.Passed() {
		return "", errors.New(rep.Failure())
	}
	checks := make([]string, len(rep.Results))
	for i, c := range rep.Results {
		checks[i] = c.Check + " " + c.Detail
	}
	return fmt.Sprintf("%d check(s) passed: %s", len(checks), strings.Join(checks, "; ")), nil
}

// ErrNoTrigger reports a workflow without exactly one trigger node.
var ErrNoTrigger = errors.New("pipeline: the workflow has no single trigger node")

// TriggerNode returns the name of the workflow's one trigger: a node no
// connection leads to whose type is a trigger (…Trigger) or a webhook.
func TriggerNode(wf *n8n.Workflow) (string, error) {
	targets := map[string]bool{}
	for _, byType := range wf.Connections {
		for _, outputs := range byType {
			for _, output := range outputs {
				for _, c := range output {
					targets[c.Node] = true
				}
			}
		}
	}
	var found []string
	for _, n := range wf.Nodes {
		t := strings.ToLower(n.Type)
		if !targets[n.Name] && !n.Disabled && (strings.HasSuffix(t, "trigger") || strings.HasSuffix(t, ".webhook")) {
			found = append(found, n.Name)
		}
	}
	sort.Strings(found)
	if len(found) != 1 {
		return "", fmt.Errorf("%w (found %d: %s)", ErrNoTrigger, len(found), strings.Join(found, ", "))
	}
	return found[0], nil
}
