package n8n

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/candorkit/candor/internal/httpx"
)

// Edition is the n8n major version Deploy adapts to.
type Edition int

const (
	// EditionAuto asks Deploy to detect the edition.
	EditionAuto Edition = iota
	// Edition1 is n8n 1.x: activation through the public API's activate and
	// deactivate, synchronous (a trigger that cannot start is a 400); a PUT
	// on an active workflow is live at once.
	Edition1
	// Edition2 is n8n 2.x: edits go to a draft; the live webhook serves the
	// published version until a version is published, and triggers are
	// activated asynchronously after the publish answers.
	Edition2
)

func (e Edition) String() string {
	switch e {
	case Edition1:
		return "n8n 1.x"
	case Edition2:
		return "n8n 2.x"
	}
	return "auto"
}

// DetectEdition tells n8n 1.x from 2.x without writing anything: only 2.x
// serves GET /api/v1/credentials (1.x answers 405). On 2.x the key needs the
// credential:list scope; with a narrower key, set DeployOptions.Edition.
// n8n 1.123 with its draft/publish flag on is Edition1, and Deploy's 1.x
// discipline was verified on it.
func (c *Client) DetectEdition(ctx context.Context) (Edition, error) {
	err := c.do(ctx, call{method: http.MethodGet, path: api("/credentials"), query: map[string][]string{"limit": {"1"}}})
	switch {
	case err == nil:
		return Edition2, nil
	case IsStatus(err, http.StatusMethodNotAllowed), IsStatus(err, http.StatusNotFound):
		return Edition1, nil
	}
	return EditionAuto, fmt.Errorf("n8n: detecting the edition: %w", err)
}

// Smoke describes a request that proves the new definition is live, for
// workflows behind a production webhook. It runs the workflow: use a request
// without side effects.
type Smoke struct {
	// URL is the production webhook URL.
	URL string
	// Method defaults to POST.
	Method string
	// Header is sent as is (for instance X-Subject-Token).
	Header http.Header
	// Body is encoded as JSON ([]byte and json.RawMessage are sent as they are).
	Body any
	// Check returns nil when the answer comes from the new definition.
	// It sees the status and up to MaxSmokeBody bytes of the body (a larger
	// body is a failed attempt).
	Check func(status int, body []byte) error
	// HTTPClient sends the request; nil means a client with a 30 s timeout.
	// Redirects are never followed (the header would go along).
	HTTPClient *http.Client
}

// MaxSmokeBody is the exact cap on a smoke answer's body.
const MaxSmokeBody = 1 << 20

// Default bounds of Deploy's waits.
const (
	// DefaultVerifyTimeout bounds the polling of a Smoke check.
	DefaultVerifyTimeout = 30 * time.Second
	// DefaultSettleTimeout bounds the wait for n8n 2.x to settle a
	// publication. n8n processes a publish at once when it can, and polls
	// its queue every 15 s otherwise.
	DefaultSettleTimeout = 60 * time.Second
)

// DeployOptions tune Deploy.
type DeployOptions struct {
	// Edition selects the discipline; EditionAuto detects it.
	Edition Edition
	// Active is the activation wanted after the deploy; nil keeps the one the
	// workflow had.
	Active *bool
	// Expect, when set, is the state the caller last read (SnapshotOf): the
	// workflow must still have this versionId, activation and live version
	// when Deploy reads it, else Deploy returns a *ConflictError and writes
	// nothing. Without it a change made by another client since the
	// caller's read is overwritten.
	Expect *Snapshot
	// Session reads n8n 2.x's publication record (the public API does not
	// expose it), so that Deploy waits until n8n has activated the
	// triggers of the published version and sees the ones that failed.
	// Without a Session (or a Smoke) a deploy that makes a workflow live on
	// n8n 2.x ends in StateUnverified; a Smoke alone proves the webhook,
	// not the workflow's other triggers. n8n 1.x does not need it.
	Session *Session
	// Smoke, when set and the workflow ends active, is polled until its
	// Check passes or VerifyTimeout runs out.
	Smoke *Smoke
	// VerifyTimeout bounds the polling of the smoke check; 0 means
	// DefaultVerifyTimeout.
	VerifyTimeout time.Duration
	// SettleTimeout bounds each wait for a publication to settle on n8n
	// 2.x; 0 means DefaultSettleTimeout.
	SettleTimeout time.Duration
}

// DeployState says what state a deploy left the workflow in.
type DeployState string

const (
	// StateDeployed: the new definition is saved, the activation is the one
	// asked for, and (when active) the live version is the one just written
	// and Report.Live says how Deploy knows it serves.
	StateDeployed DeployState = "deployed"
	// StateUnchanged: nothing was written. With a nil error the workflow was
	// already up to date; with an error Deploy failed before its first write
	// (a *ConflictError for an Expect that did not hold).
	StateUnchanged DeployState = "unchanged"
	// StateRestored: a step failed, and what was there before is back and
	// verified: the previous definition is saved, the activation is the
	// previous one, and (when it was active) the version that was live
	// before is live again (n8n 2.x: or a new version holding the same
	// definition, when no draft was pending; its publication settled).
	StateRestored DeployState = "restored"
	// StateInconsistent: a step failed and the restore failed or could not
	// be verified. Report.After and Report.Matches say what was read last.
	StateInconsistent DeployState = "inconsistent"
	// StateConflict: another writer changed the workflow during the deploy.
	// Deploy stopped and did not restore (a restore would overwrite their
	// change); Report.After says what n8n holds.
	StateConflict DeployState = "conflict"
	// StateUnverified (n8n 2.x): the written version is published, but
	// without a Session or a Smoke Deploy could not see whether n8n
	// activated its triggers. The error matches ErrUnverified.
	StateUnverified DeployState = "unverified"
)

// ErrUnverified is returned (inside a *DeployError whose state is
// StateUnverified) when Deploy published a version on n8n 2.x but could not
// tell whether it serves: give DeployOptions a Session or a Smoke.
var ErrUnverified = errors.New("n8n: published, but whether the triggers run could not be verified")

// Liveness says how Deploy knows the written version serves.
type Liveness string

const (
	// LiveNone: the workflow ends inactive (or the deploy failed).
	LiveNone Liveness = ""
	// LiveSmoke: a Smoke request was answered by the new definition.
	LiveSmoke Liveness = "smoke"
	// LivePublication (n8n 2.x): n8n's publication record says every
	// trigger of the written version is active.
	LivePublication Liveness = "publication"
	// LiveActivation (n8n 1.x): activate answered 200 (n8n 1.x starts the
	// triggers before it answers, and refuses with a 400 otherwise) and a
	// re-read shows the written version active.
	LiveActivation Liveness = "activation"
	// LiveUnverified (n8n 2.x): n8n accepted the publish; nothing showed
	// whether the triggers run.
	LiveUnverified Liveness = "unverified"
)

// Snapshot is what a read of the workflow showed.
type Snapshot struct {
	// Read is false when the workflow could not be read.
	Read            bool
	Active          bool
	VersionID       string
	ActiveVersionID string
}

// SnapshotOf returns the snapshot of a workflow as read, for
// DeployOptions.Expect.
func SnapshotOf(w *Workflow) Snapshot {
	if w == nil {
		return Snapshot{}
	}
	return Snapshot{Read: true, Active: w.Active, VersionID: w.VersionID, ActiveVersionID: w.ActiveVersionID}
}

func (s Snapshot) String() string {
	return fmt.Sprintf("active=%t version=%s live=%s", s.Active, orNone(s.VersionID), orNone(s.ActiveVersionID))
}

// Match says which definition a re-read workflow holds.
type Match string

const (
	MatchNew      Match = "new"
	MatchPrevious Match = "previous"
	// MatchBoth: the new and the previous definitions are equal, and the
	// workflow holds it.
	MatchBoth    Match = "both"
	MatchNeither Match = "neither"
	MatchUnknown Match = "unknown" // could not be read
)

// Step is one call Deploy made, in order.
type Step struct {
	// Name is a short verb: read, deactivate, update, activate, publish,
	// unpublish, settle, verify, smoke, restore-…
	Name string
	// VersionID is the versionId the step returned or checked, if any.
	VersionID string
	// Detail says what was checked or observed.
	Detail string
	// Err is the step's error; nil when it succeeded.
	Err error
}

// Report tells exactly what Deploy did and what state it left.
type Report struct {
	WorkflowID ID
	Edition    Edition
	State      DeployState
	// Before and After are the workflow as read before the first write and
	// at the end.
	Before, After Snapshot
	// WrittenVersionID is the versionId the update of the new definition
	// returned ("" when none was written).
	WrittenVersionID string
	// Matches says which definition (name, nodes, connections) the last
	// re-read holds.
	Matches Match
	// Live says how Deploy knows the written version serves (StateDeployed).
	Live Liveness
	// Publication (n8n 2.x with a Session) is n8n's publication record of
	// the written version once it settled: a failed or partial publication
	// keeps n8n's reasons in its Triggers. RestorePublication is the record
	// after a restore re-published (or unpublished).
	Publication, RestorePublication *Publication
	// Downtime (n8n 1.x) is how long the workflow was deactivated: from
	// the deactivate request to the answer of the activate that put it
	// back (the deploy's, or the restore's). Its webhooks answer 404 in
	// that window; this is an upper bound. Zero when the workflow was not
	// active before, or is not active at the end (then it is offline on
	// purpose or by failure, see State), and on n8n 2.x, which swaps the
	// published version without a gap.
	Downtime time.Duration
	// SmokeAttempts counts smoke requests sent.
	SmokeAttempts int
	Steps         []Step
}

// String summarises the report on one line.
func (r Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "workflow %s (%s): %s; before %s; after %s holds=%s", r.WorkflowID, r.Edition, r.State,
		r.Before, r.After, r.Matches)
	if r.Live != LiveNone {
		fmt.Fprintf(&b, " live-by=%s", r.Live)
	}
	if r.Publication != nil {
		fmt.Fprintf(&b, "; publication %s", r.Publication)
	}
	if r.RestorePublication != nil {
		fmt.Fprintf(&b, "; restore publication %s", r.RestorePublication)
	}
	if r.Downtime > 0 {
		fmt.Fprintf(&b, "; offline %s", r.Downtime.Round(time.Millisecond))
	}
	for _, s := range r.Steps {
		if s.Err != nil {
			fmt.Fprintf(&b, "; %s failed: %v", s.Name, s.Err)
		}
	}
	return b.String()
}

// DeployError is the error of a failed deploy; its Report says what state
// the workflow is in.
type DeployError struct {
	// Step is the step that failed first.
	Step   string
	Report Report
	Err    error
}

func (e *DeployError) Error() string {
	return fmt.Sprintf("n8n: deploy of workflow %s failed at %s (%s): %v", e.Report.WorkflowID, e.Step, e.Report.State, e.Err)
}

func (e *DeployError) Unwrap() error { return e.Err }

// PublicationError reports a publication that n8n 2.x accepted and then
// could not fully carry out: some or all triggers of the version failed to
// activate. Publication holds n8n's reasons.
type PublicationError struct {
	VersionID   string
	Publication Publication
}

func (e *PublicationError) Error() string {
	return fmt.Sprintf("n8n: publishing version %s: %s", e.VersionID, e.Publication.String())
}

// Deploy writes wf as the definition of workflow id and makes it live
// without trusting any single 200.
//
// It validates wf first (a *ValidationError, nothing sent), reads the
// workflow (and checks opts.Expect against it: a *ConflictError, nothing
// written), then applies the discipline of the edition:
//
//   - n8n 1.x: deactivate (when active), update, activate — re-reading after
//     every step and checking the versionId is the one the update returned;
//     the webhooks answer 404 in between (Report.Downtime);
//   - n8n 2.x: update as a draft (the published version keeps serving), then
//     publish exactly the versionId the update returned, re-read, check the
//     published version is that one, and (with opts.Session) wait until n8n
//     has settled the publication: a failed or partial one (a trigger that
//     did not start) is a *PublicationError.
//
// It never publishes a versionId the server did not just return for the
// definition it wrote. With opts.Smoke it then polls the webhook until it
// serves the new definition. On any failure it restores what was there:
// the previous definition, activation and live version (on 2.x, the
// version that was live, even when a newer draft was pending), and
// re-reads; the Report (also inside the *DeployError) says which state the
// workflow is left in. A re-read showing a version that neither the caller
// nor Deploy wrote stops the deploy without a restore (StateConflict). An
// error is returned whenever the state is not StateDeployed, except for an
// up-to-date workflow (StateUnchanged, nil).
//
// n8n's public API has no conditional write: between Deploy's read and its
// first write (one round trip) another writer's change can still be
// overwritten; every later change is detected.
func Deploy(ctx context.Context, client *Client, id ID, wf *Workflow, opts DeployOptions) (Report, error) {
	d := &deployer{c: client, id: id, wf: wf, opts: opts, rep: Report{WorkflowID: id, State: StateUnchanged, Matches: MatchUnknown}}
	if client == nil {
		return d.rep, d.run(ctx)
	}
	ctx, span := client.tel.startDeploy(ctx, id)
	start := time.Now()
	err := d.run(ctx)
	client.tel.endDeploy(ctx, span, start, d.rep, err)
	return d.rep, err
}

type deployer struct {
	c    *Client
	id   ID
	wf   *Workflow
	opts DeployOptions
	rep  Report
	prev *Workflow
	// prevPub is the publication record before the first write (2.x with
	// a Session, when the workflow was active).
	prevPub *Publication
	// wrote is true once a write reached n8n (or may have).
	wrote bool
	// known are the versionIds this deploy can explain: the ones read
	// before the first write and the ones its own writes returned.
	known map[string]bool
	// offlineSince is when the deactivate of n8n 1.x was sent.
	offlineSince time.Time
	// published is true once a publish of the written version may have
	// taken effect (n8n 2.x).
	published bool
}

// step records a step that made no request of its own, with its span.
func (d *deployer) step(ctx context.Context, name, version, detail string, err error) {
	_, st := d.begin(ctx, name)
	st.done(ctx, version, detail, err)
}

// begin starts the span of step name; the stepSpan's done records the step
// (see record) and ends the span.
func (d *deployer) begin(ctx context.Context, name string) (context.Context, *stepSpan) {
	ctx, span := d.c.tel.startStep(ctx, name)
	return ctx, &stepSpan{d: d, name: name, span: span}
}

// stepSpan is a step in progress.
type stepSpan struct {
	d    *deployer
	name string
	span trace.Span
}

// done records the step and ends its span.
func (s *stepSpan) done(ctx context.Context, version, detail string, err error) {
	s.d.record(ctx, s.name, version, detail, err)
	s.end(err)
}

// end ends the span without recording a step.
func (s *stepSpan) end(err error) { endStep(s.span, err) }

// record adds a step to the Report and logs it.
func (d *deployer) record(ctx context.Context, name, version, detail string, err error) {
	d.rep.Steps = append(d.rep.Steps, Step{Name: name, VersionID: version, Detail: detail, Err: err})
	if err != nil {
		d.c.logAttrs(ctx, slog.LevelWarn, "n8n deploy step failed", slog.String("workflow", string(d.id)),
			slog.String("step", name), slog.Any("error", err))
	} else {
		d.c.logAttrs(ctx, slog.LevelInfo, "n8n deploy step", slog.String("workflow", string(d.id)),
			slog.String("step", name), slog.String("version", version), slog.String("detail", detail))
	}
}

// fail restores (when something was written) and returns the DeployError.
// A conflict is returned as it is: nothing more is written.
func (d *deployer) fail(ctx context.Context, step string, err error) error {
	var ce *ConflictError
	if errors.As(err, &ce) {
		d.rep.State = StateConflict
		d.rep.Live = LiveNone
		return &DeployError{Step: step, Report: d.rep, Err: err}
	}
	d.rep.Live = LiveNone
	if d.wrote {
		if cerr := d.restore(ctx); cerr != nil {
			d.rep.State = StateConflict
			return &DeployError{Step: step, Report: d.rep, Err: fmt.Errorf("%w; then, restoring: %w", err, cerr)}
		}
	}
	return &DeployError{Step: step, Report: d.rep, Err: err}
}

func (d *deployer) run(ctx context.Context) error {
	if d.c == nil || d.wf == nil || needID(d.id) != nil {
		return &DeployError{Step: "arguments", Report: d.rep, Err: errors.New("n8n: Deploy needs a client, an id and a workflow")}
	}
	if probs := Validate(d.wf); len(probs) > 0 {
		err := &ValidationError{Source: "workflow " + string(d.id), Problems: probs}
		d.step(ctx, "validate", "", fmt.Sprintf("%d problem(s)", len(probs)), err)
		return &DeployError{Step: "validate", Report: d.rep, Err: err}
	}
	want, err := definitionOf(d.wf)
	if err != nil {
		return &DeployError{Step: "validate", Report: d.rep, Err: err}
	}
	sctx, st := d.begin(ctx, "read")
	prev, err := d.c.GetWorkflow(sctx, d.id)
	st.done(ctx, versionOf(prev), "definition before the deploy", err)
	if err != nil {
		return &DeployError{Step: "read", Report: d.rep, Err: err}
	}
	d.prev = prev
	d.rep.Before = SnapshotOf(prev)
	d.rep.After = d.rep.Before
	d.rep.Matches = d.match(prev)
	d.known = map[string]bool{prev.VersionID: true, prev.ActiveVersionID: true}
	if x := d.opts.Expect; x != nil {
		if x.VersionID != prev.VersionID || x.Active != prev.Active || x.ActiveVersionID != prev.ActiveVersionID {
			err := &ConflictError{WorkflowID: d.id, Expected: x.String(), Found: d.rep.Before.String()}
			d.step(ctx, "expect", prev.VersionID, "the workflow is not in the state the caller read", err)
			return &DeployError{Step: "expect", Report: d.rep, Err: err}
		}
	}

	ed := d.opts.Edition
	if ed == EditionAuto {
		sctx, st := d.begin(ctx, "detect")
		if ed, err = d.c.DetectEdition(sctx); err != nil {
			st.done(ctx, "", "", err)
			return &DeployError{Step: "detect", Report: d.rep, Err: err}
		}
		st.end(nil)
	}
	d.rep.Edition = ed
	wantActive := prev.Active
	if d.opts.Active != nil {
		wantActive = *d.opts.Active
	}
	if ed == Edition2 && prev.Active && d.opts.Session != nil {
		pub, err := d.settle(ctx, "read-publication", "")
		if err != nil {
			return &DeployError{Step: "read-publication", Report: d.rep, Err: err}
		}
		d.prevPub = pub
	}
	// Up to date: same definition and activation, and when active, the live
	// version is the saved one (n8n 2.x, and 1.x with its draft/publish
	// flag, can hold a saved draft that is not live; older 1.x do not report
	// a live version at all) and, when n8n says, every trigger runs.
	liveIsSaved := !prev.Active || prev.ActiveVersionID == prev.VersionID || (ed == Edition1 && prev.ActiveVersionID == "")
	running := d.prevPub == nil || (d.prevPub.Status == PublicationPublished && d.prevPub.LiveVersionID == prev.ActiveVersionID)
	if eq, _ := sameDefinition(want, prev); eq && settingsIncluded(d.wf.Settings, prev.Settings) &&
		prev.Active == wantActive && liveIsSaved && running {
		d.step(ctx, "compare", prev.VersionID, "already up to date; nothing written", nil)
		return nil
	}
	switch ed {
	case Edition1:
		err = d.apply1(ctx, wantActive)
	case Edition2:
		err = d.apply2(ctx, wantActive)
	default:
		err = &DeployError{Step: "detect", Report: d.rep, Err: fmt.Errorf("n8n: unknown edition %d", ed)}
	}
	if err != nil {
		return err
	}
	if wantActive && d.opts.Smoke != nil {
		if err := d.smoke(ctx); err != nil {
			return d.fail(ctx, "smoke", err)
		}
		d.rep.Live = LiveSmoke
	}
	if d.rep.Live == LiveUnverified {
		d.rep.State = StateUnverified
		d.step(ctx, "verify-serving", d.rep.WrittenVersionID, "no Session and no Smoke: the triggers' activation cannot be seen", ErrUnverified)
		return &DeployError{Step: "verify-serving", Report: d.rep, Err: ErrUnverified}
	}
	d.rep.State = StateDeployed
	return nil
}

// apply1 is deactivate, update, activate with a re-read after each step.
func (d *deployer) apply1(ctx context.Context, wantActive bool) error {
	if d.prev.Active {
		d.offlineSince = time.Now()
		if err := d.takeOffline(ctx, "deactivate", "verify-deactivated", d.c.DeactivateWorkflow); err != nil {
			return err
		}
	}
	written, err := d.write(ctx, UpdateWorkflowOptions{}, "")
	if err != nil || !wantActive {
		return err
	}
	sctx, st := d.begin(ctx, "activate")
	act, err := d.c.activateVersion(sctx, d.id, written)
	d.online()
	st.done(ctx, versionOf(act), "activating the versionId the update returned", err)
	if err != nil {
		return d.fail(ctx, "activate", err)
	}
	if err := d.verifyLive(ctx, written); err != nil {
		return d.fail(ctx, "verify-active", err)
	}
	d.rep.Live = LiveActivation
	return nil
}

// online records the end of a 1.x offline window.
func (d *deployer) online() {
	if !d.offlineSince.IsZero() {
		d.rep.Downtime = time.Since(d.offlineSince)
	}
}

// apply2 saves a draft and publishes exactly the version the update returned.
func (d *deployer) apply2(ctx context.Context, wantActive bool) error {
	written, err := d.write(ctx, UpdateWorkflowOptions{KeepPublished: true}, "saved as a draft (publishIfActive=false)")
	if err != nil {
		return err
	}
	if !wantActive {
		if d.rep.After.Active {
			if err := d.takeOffline(ctx, "unpublish", "verify-unpublished", d.c.UnpublishWorkflow); err != nil {
				return err
			}
			if d.opts.Session != nil {
				if _, err := d.settle(ctx, "settle-unpublish", ""); err != nil {
					return d.fail(ctx, "settle-unpublish", err)
				}
			}
		}
		return nil
	}
	sctx, st := d.begin(ctx, "publish")
	_, err = d.c.PublishWorkflow(sctx, d.id, written)
	// A refusal (4xx) published nothing; after a 5xx or no answer it may
	// have.
	var se *StatusError
	d.published = err == nil || !errors.As(err, &se) || se.StatusCode >= 500
	st.done(ctx, written, "publishing the versionId the update returned", err)
	if err != nil {
		return d.fail(ctx, "publish", err)
	}
	if err := d.verifyLive(ctx, written); err != nil {
		return d.fail(ctx, "verify-published", err)
	}
	if d.opts.Session == nil {
		d.rep.Live = LiveUnverified
		return nil
	}
	pub, err := d.settle(ctx, "settle", written)
	if err != nil {
		return d.fail(ctx, "settle", err)
	}
	d.rep.Publication = pub
	if pub.Status != PublicationPublished || pub.LiveVersionID != written {
		return d.fail(ctx, "settle", &PublicationError{VersionID: written, Publication: *pub})
	}
	d.rep.Live = LivePublication
	return nil
}

// settle polls n8n 2.x's publication record until no publication is in
// flight, and (when version is set) the record is about that version: its
// triggers are live, or it failed. It needs opts.Session.
func (d *deployer) settle(ctx context.Context, name, version string) (*Publication, error) {
	ctx, st := d.begin(ctx, name)
	timeout := d.opts.SettleTimeout
	if timeout <= 0 {
		timeout = DefaultSettleTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	polls := 0
	var last *Publication
	for {
		polls++
		pub, err := d.opts.Session.PublicationStatus(ctx, d.id)
		if err != nil && ctx.Err() == nil {
			st.done(ctx, version, "reading the publication record", err)
			return nil, err
		}
		if err == nil {
			last = pub
			if pub.settled() && (version == "" || pub.LiveVersionID == version || pub.Status == PublicationFailed) {
				st.done(ctx, pub.LiveVersionID, fmt.Sprintf("%s after %d poll(s)", pub, polls), nil)
				return pub, nil
			}
		}
		select {
		case <-ctx.Done():
			err := fmt.Errorf("n8n: the publication did not settle within %s (last record: %v)", timeout, last)
			st.done(ctx, version, "", err)
			return nil, err
		case <-tick.C:
		}
	}
}

// write updates the workflow with the new definition, then checks by a
// re-read that n8n stored it at the versionId the update returned, which it
// returns. On failure it has already restored (see fail).
func (d *deployer) write(ctx context.Context, opts UpdateWorkflowOptions, detail string) (string, error) {
	d.wrote = true
	sctx, st := d.begin(ctx, "update")
	upd, err := d.c.UpdateWorkflow(sctx, d.id, d.wf, opts)
	st.done(ctx, versionOf(upd), detail, err)
	if err != nil {
		return "", d.fail(ctx, "update", err)
	}
	if upd.VersionID == "" {
		return "", d.fail(ctx, "update", errors.New("n8n: the update returned no versionId"))
	}
	d.rep.WrittenVersionID = upd.VersionID
	d.known[upd.VersionID] = true
	if err := d.verifyWritten(ctx, upd.VersionID); err != nil {
		return "", d.fail(ctx, "verify-update", err)
	}
	return upd.VersionID, nil
}

// takeOffline deactivates (1.x) or unpublishes (2.x) the workflow with call,
// then checks by a re-read that it is inactive. On failure it has already
// restored (see fail).
func (d *deployer) takeOffline(ctx context.Context, name, verify string, call func(context.Context, ID) (*Workflow, error)) error {
	d.wrote = true
	sctx, st := d.begin(ctx, name)
	w, err := call(sctx, d.id)
	st.done(ctx, versionOf(w), "", err)
	if err != nil {
		return d.fail(ctx, name, err)
	}
	cur, err := d.reread(ctx, verify)
	if err != nil {
		return d.fail(ctx, verify, err)
	}
	if err := d.foreign(cur); err != nil {
		return d.fail(ctx, verify, err)
	}
	if cur.Active {
		return d.fail(ctx, verify, fmt.Errorf("n8n: %s answered 200 but the workflow is still active", name))
	}
	return nil
}

// foreign returns a *ConflictError when w holds a version this deploy
// cannot explain: another writer saved or published since Deploy's read.
func (d *deployer) foreign(w *Workflow) error {
	for _, v := range []string{w.VersionID, w.ActiveVersionID} {
		if v != "" && !d.known[v] {
			return &ConflictError{WorkflowID: d.id, Expected: d.knownList(), Found: v, During: true}
		}
	}
	return nil
}

func (d *deployer) knownList() string {
	var vs []string
	for _, v := range []string{d.prev.VersionID, d.prev.ActiveVersionID, d.rep.WrittenVersionID} {
		if v != "" && !strings.Contains(strings.Join(vs, " "), v) {
			vs = append(vs, v)
		}
	}
	return "one of " + strings.Join(vs, ", ")
}

// reread reads the workflow back and records it.
func (d *deployer) reread(ctx context.Context, name string) (*Workflow, error) {
	sctx, st := d.begin(ctx, name)
	cur, err := d.c.GetWorkflow(sctx, d.id)
	if err != nil {
		d.rep.After = Snapshot{}
		d.rep.Matches = MatchUnknown
		st.done(ctx, "", "re-read failed", err)
		return nil, err
	}
	d.rep.After = SnapshotOf(cur)
	d.rep.Matches = d.match(cur)
	st.done(ctx, cur.VersionID, fmt.Sprintf("%s holds=%s", d.rep.After, d.rep.Matches), nil)
	return cur, nil
}

// verifyWritten checks the stored definition is the new one at version v.
func (d *deployer) verifyWritten(ctx context.Context, v string) error {
	cur, err := d.reread(ctx, "verify-update")
	if err != nil {
		return err
	}
	if cur.VersionID != v {
		return &ConflictError{WorkflowID: d.id, Expected: v, Found: cur.VersionID, During: true}
	}
	if err := d.foreign(cur); err != nil {
		return err
	}
	if !holdsNew(d.rep.Matches) {
		return fmt.Errorf("n8n: after the update the stored definition is not the one sent (holds %s)", d.rep.Matches)
	}
	if !settingsIncluded(d.wf.Settings, cur.Settings) {
		return errors.New("n8n: after the update the stored settings differ from the ones sent")
	}
	return nil
}

// verifyLive checks the workflow is active and its live version is v.
func (d *deployer) verifyLive(ctx context.Context, v string) error {
	cur, err := d.reread(ctx, "verify-live")
	if err != nil {
		return err
	}
	if err := d.foreign(cur); err != nil {
		return err
	}
	switch {
	case !cur.Active:
		return errors.New("n8n: activation answered 200 but the workflow is not active")
	case cur.VersionID != v:
		return &ConflictError{WorkflowID: d.id, Expected: v, Found: cur.VersionID, During: true}
	case cur.ActiveVersionID != "" && cur.ActiveVersionID != v:
		return fmt.Errorf("n8n: the live version is %s, not the one written (%s)", cur.ActiveVersionID, v)
	case d.rep.Edition == Edition2 && cur.ActiveVersionID == "":
		return errors.New("n8n: the workflow reports no published version")
	case !holdsNew(d.rep.Matches):
		return fmt.Errorf("n8n: the active workflow holds the %s definition", d.rep.Matches)
	}
	return nil
}

func (d *deployer) smoke(ctx context.Context) error {
	s := d.opts.Smoke
	if s.URL == "" || s.Check == nil {
		err := errors.New("n8n: Smoke needs a URL and a Check")
		d.step(ctx, "smoke", d.rep.WrittenVersionID, "", err)
		return err
	}
	ctx, st := d.begin(ctx, "smoke")
	timeout := d.opts.VerifyTimeout
	if timeout <= 0 {
		timeout = DefaultVerifyTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	payload, err := encodeBody(s.Body)
	if err != nil {
		st.done(ctx, d.rep.WrittenVersionID, "", err)
		return err
	}
	base := s.HTTPClient
	if base == nil {
		base = &http.Client{Timeout: 30 * time.Second}
	}
	// Smoke headers may carry a token: never replay them to a redirect target.
	hc := httpx.NoRedirectClient(base)
	method := s.Method
	if method == "" {
		method = http.MethodPost
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		d.rep.SmokeAttempts++
		last = smokeOnce(ctx, hc, method, s, payload)
		if last == nil {
			st.done(ctx, d.rep.WrittenVersionID, fmt.Sprintf("webhook serves the new definition (attempt %d)", d.rep.SmokeAttempts), nil)
			return nil
		}
		select {
		case <-ctx.Done():
			err := fmt.Errorf("n8n: the webhook did not serve the new definition within %s after %d attempts: %w",
				timeout, d.rep.SmokeAttempts, last)
			st.done(ctx, d.rep.WrittenVersionID, "", err)
			return err
		case <-tick.C:
		}
	}
}

func smokeOnce(ctx context.Context, hc *http.Client, method string, s *Smoke, payload []byte) error {
	req, err := http.NewRequestWithContext(ctx, method, s.URL, bytes.NewReader(payload))
	if err != nil {
		return httpx.StripURL(err)
	}
	for k, vs := range s.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := hc.Do(req)
	if err != nil {
		return httpx.StripURL(err)
	}
	defer resp.Body.Close()
	body, err := httpx.ReadAll(resp.Body, MaxSmokeBody)
	if err != nil {
		return fmt.Errorf("n8n: smoke answer (HTTP %d): %w", resp.StatusCode, httpx.StripURL(err))
	}
	return s.Check(resp.StatusCode, body)
}

func encodeBody(body any) ([]byte, error) {
	var b []byte
	switch v := body.(type) {
	case []byte:
		b = v
	case json.RawMessage:
		b = v
	default:
		var err error
		if b, err = json.Marshal(body); err != nil {
			return nil, fmt.Errorf("n8n: encoding the smoke body: %w", err)
		}
		return b, nil
	}
	if !json.Valid(b) {
		return nil, errors.New("n8n: the smoke body is not JSON")
	}
	return b, nil
}

// restore writes the previous definition, activation and live version back
// and re-reads. It returns a *ConflictError (and writes nothing more) when
// a re-read shows another writer's version; every other failure leaves
// StateInconsistent in the Report.
func (d *deployer) restore(ctx context.Context) (err error) {
	d.rep.State = StateInconsistent
	// A cancelled ctx must not stop the restore.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	ctx, span := d.c.tel.startStep(ctx, "restore")
	defer func() { endRestore(span, d.rep.State, err) }()
	prev := d.prev
	ed2 := d.rep.Edition == Edition2
	cur, err := d.reread(ctx, "restore-read")
	if err != nil {
		return nil
	}
	if err := d.foreign(cur); err != nil {
		return err
	}
	if !holdsPrevious(d.rep.Matches) {
		if !ed2 && cur.Active {
			sctx, st := d.begin(ctx, "restore-deactivate")
			w, err := d.c.DeactivateWorkflow(sctx, d.id)
			st.done(ctx, versionOf(w), "", err)
			if err != nil {
				return nil
			}
		}
		sctx, st := d.begin(ctx, "restore-update")
		upd, err := d.c.UpdateWorkflow(sctx, d.id, prev, UpdateWorkflowOptions{KeepPublished: ed2})
		st.done(ctx, versionOf(upd), "previous definition", err)
		if err != nil {
			return nil
		}
		d.known[upd.VersionID] = true
		if cur, err = d.reread(ctx, "restore-verify-update"); err != nil {
			return nil
		}
		if err := d.foreign(cur); err != nil {
			return err
		}
		if !holdsPrevious(d.rep.Matches) || cur.VersionID != upd.VersionID {
			d.step(ctx, "restore-verify-update", cur.VersionID, "", errors.New("n8n: the previous definition did not come back"))
			return nil
		}
	}
	// What must be live: when a draft was pending (n8n 2.x, or 1.x with
	// draft/publish on) the version that was live, since the draft never
	// was; else the saved version holding the previous definition, so that
	// draft and live agree as before.
	target := cur.VersionID
	if pendingDraft(prev) {
		target = prev.ActiveVersionID
	}
	// n8n 2.x: a deploy that failed before anything of its own went live
	// (the publish refused, or never sent) leaves the exact version that
	// was live in place.
	liveUntouched := ed2 && prev.Active && !d.published && cur.Active && cur.ActiveVersionID == prev.ActiveVersionID
	switch {
	case !ed2 && prev.Active && (!cur.Active || (cur.ActiveVersionID != "" && cur.ActiveVersionID != target)):
		sctx, st := d.begin(ctx, "restore-activate")
		_, err := d.c.activateVersion(sctx, d.id, target)
		d.online()
		st.done(ctx, target, "the version that was live before the deploy", err)
		if err != nil {
			return nil
		}
	case !ed2 && !prev.Active && cur.Active:
		sctx, st := d.begin(ctx, "restore-deactivate")
		w, err := d.c.DeactivateWorkflow(sctx, d.id)
		st.done(ctx, versionOf(w), "", err)
		if err != nil {
			return nil
		}
	case ed2 && prev.Active && !liveUntouched && (!cur.Active || cur.ActiveVersionID != target || d.published):
		detail := "the version holding the previous definition"
		if pendingDraft(prev) {
			detail = "the version that was live before the deploy (a newer draft was pending)"
		}
		sctx, st := d.begin(ctx, "restore-publish")
		_, err := d.c.PublishWorkflow(sctx, d.id, target)
		st.done(ctx, target, detail, err)
		if err != nil {
			return nil
		}
		if d.opts.Session != nil {
			pub, err := d.settle(ctx, "restore-settle", target)
			if err != nil {
				return nil
			}
			d.rep.RestorePublication = pub
		}
	case ed2 && !prev.Active && cur.Active:
		sctx, st := d.begin(ctx, "restore-unpublish")
		w, err := d.c.UnpublishWorkflow(sctx, d.id)
		st.done(ctx, versionOf(w), "", err)
		if err != nil {
			return nil
		}
		if d.opts.Session != nil {
			pub, err := d.settle(ctx, "restore-settle", "")
			if err != nil {
				return nil
			}
			d.rep.RestorePublication = pub
		}
	}
	final, err := d.reread(ctx, "restore-verify")
	if err != nil {
		return nil
	}
	if err := d.foreign(final); err != nil {
		return err
	}
	ok := holdsPrevious(d.rep.Matches) && final.Active == prev.Active
	switch {
	case !ok:
	case prev.Active && (ed2 || final.ActiveVersionID != ""):
		ok = final.ActiveVersionID == target || (liveUntouched && final.ActiveVersionID == prev.ActiveVersionID)
		if p := d.rep.RestorePublication; ok && p != nil {
			// Running as before: every trigger live, or in the same state
			// as before the deploy.
			ok = (p.Status == PublicationPublished && p.LiveVersionID == target) ||
				(d.prevPub != nil && p.Status == d.prevPub.Status)
		}
	case !prev.Active && ed2 && d.rep.RestorePublication != nil:
		ok = d.rep.RestorePublication.Status == PublicationNotPublished
	}
	if !prev.Active || !final.Active {
		d.rep.Downtime = 0
	}
	if ok {
		d.rep.State = StateRestored
	}
	return nil
}

func holdsNew(m Match) bool      { return m == MatchNew || m == MatchBoth }
func holdsPrevious(m Match) bool { return m == MatchPrevious || m == MatchBoth }

// match compares w's definition with the new one and the previous one; it
// considers both, so a deploy of the definition already there (new equals
// previous) can still restore.
func (d *deployer) match(w *Workflow) Match {
	if w == nil {
		return MatchUnknown
	}
	want, err := definitionOf(d.wf)
	if err != nil {
		return MatchUnknown
	}
	isNew, _ := sameDefinition(want, w)
	isPrev := false
	if d.prev != nil {
		if old, err := definitionOf(d.prev); err == nil {
			isPrev, _ = sameDefinition(old, w)
		}
	}
	switch {
	case isNew && isPrev:
		return MatchBoth
	case isNew:
		return MatchNew
	case isPrev:
		return MatchPrevious
	}
	return MatchNeither
}

// pendingDraft reports a workflow whose saved definition (the draft) is not
// the version that is live: n8n 2.x after an edit that was not published.
func pendingDraft(w *Workflow) bool {
	return w.Active && w.ActiveVersionID != "" && w.ActiveVersionID != w.VersionID
}

func versionOf(w *Workflow) string {
	if w == nil {
		return ""
	}
	return w.VersionID
}

// definitionOf is the canonical JSON of what a deploy writes and compares:
// name, nodes and connections.
func definitionOf(w *Workflow) ([]byte, error) {
	b, err := json.Marshal(struct {
		Name        string      `json:"name"`
		Nodes       []Node      `json:"nodes"`
		Connections Connections `json:"connections"`
	}{w.Name, nonNilNodes(w.Nodes), nonNilConnections(w.Connections)})
	if err != nil {
		return nil, err
	}
	return canonicalJSON(b)
}

func sameDefinition(want []byte, w *Workflow) (bool, error) {
	got, err := definitionOf(w)
	if err != nil {
		return false, err
	}
	return bytes.Equal(want, got), nil
}

// settingsIncluded reports whether every key of want has the same value in
// got (n8n merges settings on update, so got may hold more).
func settingsIncluded(want, got json.RawMessage) bool {
	var w, g map[string]json.RawMessage
	if len(bytes.TrimSpace(want)) == 0 || string(bytes.TrimSpace(want)) == "null" {
		return true
	}
	if json.Unmarshal(want, &w) != nil {
		return false
	}
	if len(bytes.TrimSpace(got)) > 0 && json.Unmarshal(got, &g) != nil {
		return false
	}
	for k, v := range w {
		a, err1 := canonicalJSON(v)
		b, err2 := canonicalJSON(g[k])
		if g[k] == nil || err1 != nil || err2 != nil || !bytes.Equal(a, b) {
			return false
		}
	}
	return true
}
