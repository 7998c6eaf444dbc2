package pipeline

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/candorkit/candor/approval"
	"github.com/candorkit/candor/examples/builder/internal/queue"
	"github.com/candorkit/candor/examples/builder/internal/secrets"
	"github.com/candorkit/candor/examples/internal/decision"
	"github.com/candorkit/candor/n8n"
)

// Draft is the approval ticket's draft: what a person approves.
type Draft struct {
	AutomationID      int64  `json:"automation_id"`
	Name              string `json:"name"`
	SandboxWorkflowID string `json:"sandbox_workflow_id"`
	// Workflow is the definition that passed the four levels, with its
	// credential references bound to sandbox credentials (Approve maps them
	// to production ones).
	Workflow json.RawMessage `json:"workflow"`
}

// Validate implements approval.Draft.
func (d Draft) Validate() []error {
	var errs []error
	if d.AutomationID <= 0 {
		errs = append(errs, fmt.Errorf("automation id %d is not positive", d.AutomationID))
	}
	if strings.TrimSpace(d.SandboxWorkflowID) == "" {
		errs = append(errs, errors.New("no sandbox workflow id"))
	}
	if problems := n8n.ValidateJSON(d.Workflow); len(problems) > 0 {
		errs = append(errs, fmt.Errorf("the workflow breaks %d rule(s), first %s", len(problems), problems[0]))
	}
	return errs
}

// OperationID is the approval operation of one tested sandbox workflow of an
// automation. A rebuild (a new sandbox workflow) is a new operation.
func OperationID(automationID int64, sandboxWorkflowID string) string {
	return fmt.Sprintf("n8n-builder/automation/%d/sandbox/%s", automationID, sandboxWorkflowID)
}

// ProductionTag is the n8n tag that marks the production workflow created
// for an operation, so an import that ran before a crash is found again
// instead of repeated. n8n keeps tag names short: this one has 20
// characters (48 bits of the operation id's SHA-256).
func ProductionTag(operationID string) string {
	sum := sha256.Sum256([]byte(operationID))
	return "builder-" + hex.EncodeToString(sum[:6])
}

// ErrNotAwaiting reports an approve or reject of an automation that has no
// ticket waiting: it was never built, failed, or was rejected.
var ErrNotAwaiting = errors.New("pipeline: the automation is not awaiting approval")

// Deployment is what Approve did.
type Deployment struct {
	AutomationID         int64
	OperationID          string
	ProductionWorkflowID string
	// AlreadyDeployed is true when an earlier approve had deployed it and
	// nothing was done now.
	AlreadyDeployed bool
}

// ticket finds the operation of an automation's tested workflow.
func (b *Builder) ticket(ctx context.Context, id int64) (queue.Idea, approval.State, error) {
	idea, err := b.cfg.Queue.Get(ctx, id)
	if err != nil {
		return idea, approval.State{}, err
	}
	if idea.SandboxWorkflowID == "" {
		return idea, approval.State{}, fmt.Errorf("%w: automation %d is %s with no tested sandbox workflow", ErrNotAwaiting, id, idea.BuilderStatus)
	}
	st, err := b.cfg.Approvals.Read(ctx, OperationID(id, idea.SandboxWorkflowID))
	if errors.Is(err, approval.ErrUnknownOperation) {
		return idea, st, fmt.Errorf("%w: automation %d (%s) has no approval ticket: %v", ErrNotAwaiting, id, idea.BuilderStatus, err)
	}
	return idea, st, err
}

// Approve records a person's approval of an automation awaiting approval and
// deploys it: in one approval.Apply it imports the approved workflow into
// production (inactive) with production credentials — each "-sandbox"
// reference mapped to the name without the suffix; a reference that does
// not resolve refuses the deploy — and marks the idea deployed
// (builder_status and status). Running it again after success deploys
// nothing (Deployment.AlreadyDeployed).
//
// The queue may live in PostgreSQL while the approval store is SQLite, so
// the idea's row is not written through Apply's transaction: MarkDeployed is
// a conditional UPDATE, and the production workflow is created with its
// ProductionTag in one request and found again by it, so an effect that ran
// before a crash, at any point, is safe to run again.
func (b *Builder) Approve(ctx context.Context, id int64, decidedBy, comment string) (Deployment, error) {
	var (
		idea  queue.Idea
		state approval.State
		dep   = Deployment{AutomationID: id}
	)
	if err := b.rep.Run("ticket", func() (string, error) {
		var err error
		idea, state, err = b.ticket(ctx, id)
		if err != nil {
			return "", err
		}
		dep.OperationID = state.OperationID
		if idea.BuilderStatus != queue.AwaitingApproval && idea.BuilderStatus != queue.Deployed {
			return "", fmt.Errorf("%w: automation %d is %s", ErrNotAwaiting, id, idea.BuilderStatus)
		}
		return fmt.Sprintf("%s is %s; automation %d is %s", state.OperationID, state.Status, id, idea.BuilderStatus), nil
	}); err != nil {
		return dep, err
	}
	if err := b.rep.Run("decide", func() (string, error) {
		if state.Status != approval.StatusWaiting {
			if state.Decision == nil || state.Decision.Verdict != approval.Approve {
				return "", fmt.Errorf("%w: ticket %s is %s", ErrNotAwaiting, state.OperationID, state.Status)
			}
			return decision.Outcome{Standing: *state.Decision, Repeated: true}.String(), nil
		}
		// The examples' one policy for a decided ticket (package decision).
		out, err := decision.Record(ctx, b.cfg.Approvals, approval.Decision{OperationID: state.OperationID, Verdict: approval.Approve, DecidedBy: decidedBy, Comment: comment})
		if err != nil {
			return "", err
		}
		if !out.Repeated {
			state = out.State
		}
		return out.String(), nil
	}); err != nil {
		return dep, err
	}
	ran := false
	if err := b.rep.Run("deploy", func() (string, error) {
		st, err := b.cfg.Approvals.Apply(ctx, state.OperationID, func(ctx context.Context, _ *sql.Tx, item approval.Item) error {
			ran = true
			var d Draft
			if err := json.Unmarshal(item.Draft, &d); err != nil {
				return fmt.Errorf("the approved draft does not decode: %w", err)
			}
			if d.AutomationID != id {
				return fmt.Errorf("the approved draft is for automation %d, not %d", d.AutomationID, id)
			}
			prodID, err := b.deployProduction(ctx, item.OperationID, d)
			if err != nil {
				return err
			}
			dep.ProductionWorkflowID = string(prodID)
			return b.markDeployed(ctx, id, string(prodID))
		})
		if err != nil {
			return "", err
		}
		if !ran {
			dep.AlreadyDeployed = true
			cur, err := b.cfg.Queue.Get(ctx, id)
			if err != nil {
				return "", err
			}
			if cur.BuilderStatus != queue.Deployed {
				return "", fmt.Errorf("ticket %s is %s but automation %d is %s", st.OperationID, st.Status, id, cur.BuilderStatus)
			}
			dep.ProductionWorkflowID = cur.ProductionWorkflowID
			return "already deployed as production workflow " + cur.ProductionWorkflowID + "; nothing done", nil
		}
		return "production workflow " + dep.ProductionWorkflowID + " (inactive); builder_status and status deployed", nil
	}); err != nil {
		return dep, err
	}
	return dep, nil
}

// markDeployed moves the idea to deployed; finding it already deployed with
// the same production workflow (an effect run again after a crash) is fine.
func (b *Builder) markDeployed(ctx context.Context, id int64, prodID string) error {
	err := b.cfg.Queue.MarkDeployed(ctx, id, prodID)
	var te *queue.TransitionError
	if errors.As(err, &te) && te.Actual == queue.Deployed {
		cur, gerr := b.cfg.Queue.Get(ctx, id)
		if gerr == nil && cur.ProductionWorkflowID == prodID {
			return nil
		}
	}
	return err
}

// deployProduction imports d's workflow into production once per operation.
// The workflow is created carrying the operation's ProductionTag in the same
// request (Session.CreateWorkflow), and an earlier import is looked up by
// that tag before anything is created, so an effect run again after a crash
// at any point finds the first import instead of making a second.
func (b *Builder) deployProduction(ctx context.Context, opID string, d Draft) (n8n.ID, error) {
	conn, err := b.cfg.Secrets.N8N(ctx, secrets.Production)
	if err != nil {
		return "", err
	}
	client, session, err := b.connect(ctx, conn)
	if err != nil {
		return "", err
	}
	tag := ProductionTag(opID)
	existing, err := client.ListWorkflows(ctx, n8n.ListWorkflowsOptions{Tags: []string{tag}})
	if err != nil {
		return "", fmt.Errorf("looking for an earlier import tagged %s: %w", tag, err)
	}
	switch len(existing) {
	case 0:
	case 1:
		return existing[0].ID, nil
	default:
		return "", fmt.Errorf("%d production workflows carry tag %s; expected at most one", len(existing), tag)
	}
	wf, err := n8n.ParseWorkflow(d.Workflow)
	if err != nil {
		return "", fmt.Errorf("the approved workflow does not parse: %w", err)
	}
	creds, err := session.ListCredentials(ctx)
	if err != nil {
		return "", fmt.Errorf("listing production credentials: %w", err)
	}
	prod, err := ResolveCredentials(wf, creds, secrets.Production)
	if err != nil {
		return "", err
	}
	tagID, err := ensureTag(ctx, client, tag)
	if err != nil {
		return "", fmt.Errorf("production tag %s: %w", tag, err)
	}
	created, err := session.CreateWorkflow(ctx, prod, tagID)
	if errors.Is(err, n8n.ErrTagsNotAttached) && created != nil {
		// Untagged, a retry could not find it: undo the import.
		if derr := client.DeleteWorkflow(context.WithoutCancel(ctx), created.ID); derr != nil {
			return "", fmt.Errorf("production import: %w; and deleting the untagged workflow %s failed: %v", err, created.ID, derr)
		}
		return "", fmt.Errorf("production import (deleted again): %w", err)
	}
	if err != nil {
		return "", fmt.Errorf("production import: %w", err)
	}
	if b.afterProductionCreate != nil {
		if err := b.afterProductionCreate(); err != nil {
			return "", err
		}
	}
	return created.ID, nil
}

// ensureTag returns the id of the tag called name, creating it if needed.
func ensureTag(ctx context.Context, client *n8n.Client, name string) (n8n.ID, error) {
	tag, err := client.CreateTag(ctx, name)
	if n8n.IsStatus(err, http.StatusConflict) {
		tags, lerr := client.ListTags(ctx)
		if lerr != nil {
			return "", lerr
		}
		for i := range tags {
			if tags[i].Name == name {
				tag, err = &tags[i], nil
			}
		}
	}
	if err != nil {
		return "", err
	}
	if tag == nil || tag.ID == "" {
		return "", fmt.Errorf("tag %s has no id", name)
	}
	return tag.ID, nil
}

// Rejection is what Reject did.
type Rejection struct {
	AutomationID int64
	OperationID  string
	// SandboxDeleted is true when the tested sandbox workflow is gone.
	SandboxDeleted bool
}

// Reject records a person's rejection. The idea becomes failed (with the
// decider and comment in last_error) and its sandbox workflow is deleted.
// Rejecting again is harmless; a ticket already approved is not rejected.
func (b *Builder) Reject(ctx context.Context, id int64, decidedBy, comment string) (Rejection, error) {
	var (
		idea  queue.Idea
		state approval.State
		rej   = Rejection{AutomationID: id}
	)
	if err := b.rep.Run("ticket", func() (string, error) {
		var err error
		idea, state, err = b.ticket(ctx, id)
		if err != nil {
			return "", err
		}
		rej.OperationID = state.OperationID
		return fmt.Sprintf("%s is %s; automation %d is %s", state.OperationID, state.Status, id, idea.BuilderStatus), nil
	}); err != nil {
		return rej, err
	}
	if err := b.rep.Run("decide", func() (string, error) {
		out, err := decision.Record(ctx, b.cfg.Approvals, approval.Decision{OperationID: state.OperationID, Verdict: approval.Reject, DecidedBy: decidedBy, Comment: comment})
		if err != nil {
			return "", err
		}
		if out.Repeated {
			return out.String(), nil
		}
		reason := "rejected by " + decidedBy
		if c := strings.TrimSpace(comment); c != "" {
			reason += ": " + c
		}
		err = b.cfg.Queue.Fail(ctx, id, reason)
		var te *queue.TransitionError
		if errors.As(err, &te) && te.Actual == queue.Failed {
			err = nil
		}
		if err != nil {
			return "", err
		}
		return reason + "; builder_status failed", nil
	}); err != nil {
		return rej, err
	}
	err := b.rep.Run("cleanup", func() (string, error) {
		conn, err := b.cfg.Secrets.N8N(ctx, secrets.Sandbox)
		if err != nil {
			return "", err
		}
		client, err := n8n.New(conn.BaseURL, conn.APIKey.Reveal(), b.n8nOptions()...)
		if err != nil {
			return "", err
		}
		err = client.DeleteWorkflow(ctx, n8n.ID(idea.SandboxWorkflowID))
		if err != nil && !n8n.IsStatus(err, http.StatusNotFound) {
			return "", fmt.Errorf("deleting sandbox workflow %s: %w", idea.SandboxWorkflowID, err)
		}
		rej.SandboxDeleted = true
		return "sandbox workflow " + idea.SandboxWorkflowID + " deleted", nil
	})
	return rej, err
}
