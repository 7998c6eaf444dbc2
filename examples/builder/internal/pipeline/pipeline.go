package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/candorkit/candor/approval"
	"github.com/candorkit/candor/examples/builder/internal/generate"
	"github.com/candorkit/candor/examples/builder/internal/notify"
	"github.com/candorkit/candor/examples/builder/internal/overseer"
	"github.com/candorkit/candor/examples/builder/internal/progress"
	"github.com/candorkit/candor/examples/builder/internal/queue"
	"github.com/candorkit/candor/examples/builder/internal/secrets"
	"github.com/candorkit/candor/n8n"
)

// Defaults.
const (
	// DefaultSmokeTimeout bounds the wait for the level-3 execution.
	DefaultSmokeTimeout = 60 * time.Second
	// cleanupTimeout bounds the cleanup after a failure, which runs even
	// when the run's context is done.
	cleanupTimeout = 30 * time.Second
)

// Config is what a Builder works with. Queue, Approvals and Secrets are
// always required; Run also needs Generator and CaptureBase.
type Config struct {
	Queue     *queue.Store
	Approvals *approval.Store
	// Secrets gives the sandbox connection for Run and Reject, the
	// production connection for Approve.
	Secrets   secrets.Source
	Generator generate.Generator
	// Overseer reviews every generated workflow; nil means
	// overseer.NewRules().
	Overseer overseer.Overseer
	// Notifier delivers the messages of docs/builder-playbook.md (rule 13);
	// nil logs them.
	Notifier notify.Notifier
	// Progress receives one line per step; nil discards them.
	Progress *progress.Reporter
	// Logger; nil discards.
	Logger *slog.Logger
	// CaptureBase is the base URL at which n8n reaches the capture endpoint
	// (see CaptureServer). It replaces queue.CaptureBasePlaceholder in the
	// idea's infrastructure text and in the generated workflow.
	CaptureBase string
	// SmokeTimeout bounds the level-3 execution; 0 means DefaultSmokeTimeout.
	SmokeTimeout time.Duration
	// HTTPClient is used for n8n; nil means the n8n package's default.
	HTTPClient *http.Client
}

// Builder runs the builder playbook (docs/builder-playbook.md). It is safe to run several Builders (in one or
// several processes) on one queue: the claim decides which builds an idea.
type Builder struct {
	cfg Config
	log *slog.Logger
	rep *progress.Reporter

	// afterPick, when set (tests), runs between pick and claim.
	afterPick func()
	// afterProductionCreate, when set (tests), runs right after n8n created
	// the production workflow; an error stands for a crash at that point:
	// nothing else of the effect runs.
	afterProductionCreate func() error
}

// New checks cfg and returns a Builder.
func New(cfg Config) (*Builder, error) {
	var missing []string
	if cfg.Queue == nil {
		missing = append(missing, "Queue")
	}
	if cfg.Approvals == nil {
		missing = append(missing, "Approvals")
	}
	if cfg.Secrets == nil {
		missing = append(missing, "Secrets")
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("pipeline: Config lacks %s", strings.Join(missing, ", "))
	}
	b := &Builder{cfg: cfg, log: cfg.Logger, rep: cfg.Progress}
	if b.log == nil {
		b.log = slog.New(slog.DiscardHandler)
	}
	if b.rep == nil {
		b.rep = progress.New(io.Discard)
	}
	if b.cfg.Overseer == nil {
		b.cfg.Overseer = overseer.NewRules()
	}
	if b.cfg.Notifier == nil {
		b.cfg.Notifier = notify.Log{Logger: b.log}
	}
	if b.cfg.SmokeTimeout <= 0 {
		b.cfg.SmokeTimeout = DefaultSmokeTimeout
	}
	return b, nil
}

// Result says how a Run ended.
type Result string

const (
	// ResultNothing: no idea was ready to build.
	ResultNothing Result = "nothing_to_build"
	// ResultSkipped: another builder claimed the idea first.
	ResultSkipped Result = "claimed_elsewhere"
	// ResultAwaitingApproval: every level passed; a person must approve.
	ResultAwaitingApproval Result = "awaiting_approval"
	// ResultReleased: an error before generation; the claim was released.
	ResultReleased Result = "released"
	// ResultFailed: the idea is failed, for manual review.
	ResultFailed Result = "failed"
)

// Outcome is what one Run did.
type Outcome struct {
	Result       Result
	AutomationID int64
	Name         string
	// Status is the idea's builder_status at the end.
	Status            queue.BuilderStatus
	SandboxWorkflowID string
	// SandboxDeleted is true when a failed build deleted the workflow it had
	// imported into the sandbox (SandboxWorkflowID names it).
	SandboxDeleted bool
	// OperationID is the approval ticket of an idea awaiting approval.
	OperationID string
}

// run is the state of one build.
type run struct {
	b        *Builder
	idea     queue.Idea
	building bool // generation started: failures leave the idea failed
	conn     secrets.N8N
	sandbox  *n8n.Client
	session  *n8n.Session
	creds    []n8n.Credential
	imported n8n.ID
	// smokeStart is when level 3 started the run; level 4 reads the
	// captures recorded from then on.
	smokeStart time.Time
}

// Run builds the next idea of the queue, one automation per call. It returns
// a nil error for ResultNothing, ResultSkipped and ResultAwaitingApproval,
// and a *Failure for every build that did not reach awaiting_approval (its
// Outcome says what state the idea was left in). An error reading the queue
// before any claim is returned as it is: nothing was claimed.
func (b *Builder) Run(ctx context.Context) (Outcome, error) {
	if b.cfg.Generator == nil || strings.TrimSpace(b.cfg.CaptureBase) == "" {
		return Outcome{}, errors.New("pipeline: Run needs Config.Generator and Config.CaptureBase")
	}
	st := b.rep.Start("pick")
	idea, err := b.cfg.Queue.Pick(ctx)
	if errors.Is(err, queue.ErrNoIdea) {
		st.Skip("no n8n_automation idea is ready_to_build and not_started")
		return Outcome{Result: ResultNothing}, nil
	}
	if err != nil {
		st.Fail(err)
		return Outcome{}, err
	}
	st.OK(fmt.Sprintf("idea %d %q", idea.ID, idea.Name))
	if b.afterPick != nil {
		b.afterPick()
	}
	r := &run{b: b, idea: idea}
	out := Outcome{AutomationID: idea.ID, Name: idea.Name}

	st = b.rep.Start("claim")
	if err := b.cfg.Queue.Claim(ctx, idea.ID); err != nil {
		if errors.Is(err, queue.ErrClaimed) {
			st.Skip(err.Error())
			r.notify(ctx, notify.Skipped(idea.Name, idea.ID))
			out.Result = ResultSkipped
			var te *queue.TransitionError
			if errors.As(err, &te) {
				out.Status = te.Actual
			}
			return out, nil
		}
		st.Fail(err)
		return Outcome{}, err
	}
	st.OK("builder_status queued")
	r.notify(ctx, notify.Building(idea.Name, idea.ID))
	return r.build(ctx)
}

// build runs rules 3–11 of docs/builder-playbook.md on a claimed idea. A
// panic in a step (a Generator, an Overseer or a Notifier is the caller's
// code) is an unhandled
// error like any other: the idea is failed or released, a level 0 row and
// an ERROR notification are written, and the stack goes to the log.
func (r *run) build(ctx context.Context) (out Outcome, err error) {
	defer func() {
		if p := recover(); p != nil {
			r.b.log.Error("builder step panicked", "automation", r.idea.ID, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			out, err = r.fail(ctx, ErrUnhandled, 0, fmt.Errorf("panic: %v", p))
		}
	}()
	return r.steps(ctx)
}

// step runs fn as one progress step.
func (r *run) step(name string, fn func() (string, error)) error { return r.b.rep.Run(name, fn) }

func (r *run) steps(ctx context.Context) (Outcome, error) {
	b, id := r.b, r.idea.ID
	if err := r.step("secrets", func() (string, error) {
		conn, err := b.cfg.Secrets.N8N(ctx, secrets.Sandbox)
		if err != nil {
			return "", err
		}
		if conn.Email == "" || conn.Password.IsZero() {
			return "", fmt.Errorf("%w for the sandbox: n8n 1.x lists credentials and runs a stored workflow only in a session", ErrNoLogin)
		}
		r.conn = conn
		return "sandbox n8n at " + conn.BaseURL + " (API key and login loaded, kept in memory)", nil
	}); err != nil {
		return r.fail(ctx, ErrUnhandled, 0, err)
	}
	if err := r.step("credentials", func() (string, error) {
		var err error
		r.sandbox, r.session, err = b.connect(ctx, r.conn)
		if err != nil {
			return "", err
		}
		ed, err := r.sandbox.DetectEdition(ctx)
		if err != nil {
			return "", err
		}
		if r.creds, err = r.session.ListCredentials(ctx); err != nil {
			return "", err
		}
		detail := fmt.Sprintf("%s sandbox; %d credential(s)", ed, len(r.creds))
		if len(r.creds) > 0 {
			detail += ": " + strings.Join(credentialNames(r.creds), ", ")
		}
		return detail, nil
	}); err != nil {
		return r.fail(ctx, ErrUnhandled, 0, err)
	}

	// From here on a failure leaves the idea failed.
	if err := b.cfg.Queue.StartBuilding(ctx, id); err != nil {
		return r.fail(ctx, ErrUnhandled, 0, err)
	}
	r.building = true

	var (
		raw json.RawMessage
		wf  *n8n.Workflow
	)
	if err := r.step("generate", func() (string, error) {
		prompt := generate.BuildPrompt(generate.PromptInput{
			Name:           r.idea.Name,
			Spec:           r.idea.Spec,
			Infrastructure: queue.ExpandInfrastructure(r.idea.Infrastructure, b.cfg.CaptureBase),
			Credentials:    promptCredentials(r.creds),
		})
		out, err := b.cfg.Generator.Generate(ctx, prompt)
		if err != nil {
			return "", err
		}
		raw = json.RawMessage(bytes.ReplaceAll(out, []byte(queue.CaptureBasePlaceholder), []byte(strings.TrimRight(b.cfg.CaptureBase, "/"))))
		if wf, err = n8n.ParseWorkflow(raw); err != nil {
			return "", fmt.Errorf("the generated workflow does not parse: %w", err)
		}
		return fmt.Sprintf("%d nodes from %s", len(wf.Nodes), b.cfg.Generator.Describe()), nil
	}); err != nil {
		return r.fail(ctx, ErrUnhandled, 0, err)
	}

	var verdict overseer.Verdict
	if err := r.step("review", func() (string, error) {
		var err error
		verdict, err = b.cfg.Overseer.Review(ctx, overseer.Review{
			AutomationID: id, Name: r.idea.Name, Spec: r.idea.Spec, Workflow: raw,
			Credentials: credentialNames(r.creds),
		})
		if err != nil {
			return "", err
		}
		if !verdict.Pass {
			return "", errors.New(verdict.String())
		}
		detail := verdict.String() + " (" + verdict.By + ")"
		if len(verdict.NotPerformed) > 0 {
			detail += "; not performed: " + strings.Join(verdict.NotPerformed, "; ")
		}
		return detail, nil
	}); err != nil {
		if verdict.Reason != "" && !verdict.Pass {
			return r.fail(ctx, ErrOverseerRejected, 0, errors.New(verdict.Reason))
		}
		return r.fail(ctx, ErrUnhandled, 0, err)
	}

	var importErr error
	if err := r.step("import", func() (string, error) {
		created, err := r.sandbox.CreateWorkflow(ctx, wf)
		if err != nil {
			importErr = err
			return "", err
		}
		r.imported = created.ID
		if created.Active {
			return "", fmt.Errorf("sandbox workflow %s was created active", created.ID)
		}
		if err := b.cfg.Queue.SetSandboxWorkflow(ctx, id, string(created.ID)); err != nil {
			return "", err
		}
		return "sandbox workflow " + string(created.ID) + " (inactive)", nil
	}); err != nil {
		if importErr != nil {
			return r.fail(ctx, ErrImportFailed, 0, importErr)
		}
		return r.fail(ctx, ErrUnhandled, 0, err)
	}

	var resolved *n8n.Workflow
	var blocked *CredentialError
	if err := r.step("resolve", func() (string, error) {
		var err error
		resolved, err = ResolveCredentials(wf, r.creds, secrets.Sandbox)
		if errors.As(err, &blocked) {
			return "", err
		}
		if err != nil {
			return "", err
		}
		refs := countRefs(resolved)
		if refs == 0 {
			return "no credential references", nil
		}
		if _, err := r.sandbox.UpdateWorkflow(ctx, r.imported, resolved, n8n.UpdateWorkflowOptions{}); err != nil {
			return "", fmt.Errorf("binding the credentials of sandbox workflow %s: %w", r.imported, err)
		}
		return fmt.Sprintf("%d reference(s) bound to sandbox credential ids", refs), nil
	}); err != nil {
		if blocked != nil {
			return r.fail(ctx, ErrBlocked, 0, blocked)
		}
		return r.fail(ctx, ErrUnhandled, 0, err)
	}

	levels := []func(context.Context, *n8n.Workflow) (string, error){r.level1, r.level2, r.level3, r.level4}
	for i, level := range levels {
		n := i + 1
		var failed error
		err := r.step(fmt.Sprintf("level%d", n), func() (string, error) {
			detail, err := level(ctx, resolved)
			res := queue.TestResult{AutomationID: id, Level: n, Passed: err == nil, Detail: detail}
			if err != nil {
				failed = err
				res.Detail = oneLine(err)
			}
			if _, werr := b.cfg.Queue.AddTestResult(ctx, res); werr != nil {
				failed = nil // not a level failure: the row could not be written
				return "", werr
			}
			return detail, err
		})
		if failed != nil && ctx.Err() == nil {
			return r.fail(ctx, ErrLevelFailed, n, failed)
		}
		if err != nil {
			return r.fail(ctx, ErrUnhandled, 0, err)
		}
	}

	var opID string
	if err := r.step("approval", func() (string, error) {
		body, err := json.Marshal(resolved)
		if err != nil {
			return "", err
		}
		d := Draft{AutomationID: id, Name: r.idea.Name, SandboxWorkflowID: string(r.imported), Workflow: body}
		opID = OperationID(id, string(r.imported))
		if _, err := b.cfg.Approvals.Register(ctx, approval.Ticket{OperationID: opID, Draft: d}); err != nil {
			return "", err
		}
		if err := b.cfg.Queue.AwaitApproval(ctx, id); err != nil {
			return "", err
		}
		return "ticket " + opID + "; builder_status awaiting_approval", nil
	}); err != nil {
		return r.fail(ctx, ErrUnhandled, 0, err)
	}
	r.notify(ctx, notify.Ready(r.idea.Name))
	return Outcome{Result: ResultAwaitingApproval, AutomationID: id, Name: r.idea.Name,
		Status: queue.AwaitingApproval, SandboxWorkflowID: string(r.imported), OperationID: opID}, nil
}

// n8nOptions are the n8n client options of the configuration.
func (b *Builder) n8nOptions() []n8n.Option {
	opts := []n8n.Option{n8n.WithLogger(b.log)}
	if b.cfg.HTTPClient != nil {
		opts = append(opts, n8n.WithHTTPClient(b.cfg.HTTPClient))
	}
	return opts
}

// connect opens a client and a session on one n8n.
func (b *Builder) connect(ctx context.Context, conn secrets.N8N) (*n8n.Client, *n8n.Session, error) {
	client, err := n8n.New(conn.BaseURL, conn.APIKey.Reveal(), b.n8nOptions()...)
	if err != nil {
		return nil, nil, err
	}
	if conn.Email == "" || conn.Password.IsZero() {
		return nil, nil, fmt.Errorf("%w for %s", ErrNoLogin, conn.Env)
	}
	sess, err := client.Login(ctx, conn.Email, conn.Password.Reveal())
	if err != nil {
		return nil, nil, fmt.Errorf("%s n8n login: %w", conn.Env, err)
	}
	return client, sess, nil
}

// fail ends a build per rule 12 of docs/builder-playbook.md and returns its
// outcome.
func (r *run) fail(ctx context.Context, kind error, level int, cause error) (Outcome, error) {
	b, id := r.b, r.idea.ID
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	var cleanup []error
	deleted := false
	reason := oneLine(cause)
	if r.imported != "" {
		st := b.rep.Start("cleanup")
		err := r.sandbox.DeleteWorkflow(cctx, r.imported)
		if err != nil && !n8n.IsStatus(err, http.StatusNotFound) {
			err = fmt.Errorf("sandbox workflow %s not deleted: %w", r.imported, err)
			cleanup = append(cleanup, err)
			reason += "; " + oneLine(err)
			st.Fail(err)
		} else if err := b.cfg.Queue.SetSandboxWorkflow(cctx, id, ""); err != nil {
			cleanup = append(cleanup, err)
			st.Fail(err)
		} else {
			deleted = true
			st.OK("sandbox workflow " + string(r.imported) + " deleted")
		}
	}
	if kind == ErrUnhandled {
		if _, err := b.cfg.Queue.AddTestResult(cctx, queue.TestResult{AutomationID: id, Level: 0, Detail: reason}); err != nil {
			cleanup = append(cleanup, err)
		}
	}
	out := Outcome{AutomationID: id, Name: r.idea.Name, SandboxWorkflowID: string(r.imported), SandboxDeleted: deleted}
	if r.building {
		out.Result, out.Status = ResultFailed, queue.Failed
		if err := b.cfg.Queue.Fail(cctx, id, reason); err != nil {
			cleanup = append(cleanup, err)
		}
	} else {
		out.Result, out.Status = ResultReleased, queue.NotStarted
		if err := b.cfg.Queue.Release(cctx, id); err != nil {
			cleanup = append(cleanup, err)
		}
	}
	if cur, err := b.cfg.Queue.Get(cctx, id); err == nil {
		out.Status = cur.BuilderStatus
	}
	var m notify.Message
	switch kind {
	case ErrOverseerRejected:
		m = notify.OverseerRejected(r.idea.Name, reason)
	case ErrImportFailed:
		m = notify.ImportFailed(r.idea.Name, cause)
	case ErrBlocked:
		var ce *CredentialError
		names := []string{reason}
		if errors.As(cause, &ce) {
			names = ce.Names()
		}
		m = notify.Blocked(r.idea.Name, names)
	case ErrLevelFailed:
		m = notify.LevelFailed(r.idea.Name, level, cause)
	default:
		m = notify.Errored(r.idea.Name, cause)
	}
	r.notify(ctx, m)
	return out, &Failure{Kind: kind, AutomationID: id, Name: r.idea.Name, Level: level, Status: out.Status,
		Err: cause, Cleanup: errors.Join(cleanup...)}
}

// notify delivers m; a failed delivery is logged and shown as a failed
// progress line, and changes nothing else.
func (r *run) notify(ctx context.Context, m notify.Message) { r.b.notify(ctx, m) }

func (b *Builder) notify(ctx context.Context, m notify.Message) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	st := b.rep.Start("notify")
	if err := notify.Deliver(cctx, b.cfg.Notifier, b.log, m); err != nil {
		st.Fail(fmt.Errorf("not delivered (%w): %s", err, m.Body))
		return
	}
	st.OK(m.Body)
}

func promptCredentials(creds []n8n.Credential) []generate.Credential {
	out := make([]generate.Credential, 0, len(creds))
	for _, c := range creds {
		if strings.HasSuffix(c.Name, SandboxSuffix) {
			out = append(out, generate.Credential{Name: c.Name, Type: c.Type})
		}
	}
	return out
}

func countRefs(wf *n8n.Workflow) int {
	n := 0
	for _, node := range wf.Nodes {
		n += len(node.Credentials)
	}
	return n
}
