package n8n

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"
)

// Edition is the n8n major version Deploy adapts to.
type Edition int

const (
	// EditionAuto asks Deploy to detect the edition.
	EditionAuto Edition = iota
	// Edition1 is n8n 1.x: activation through the public API's activate and
	// deactivate; a PUT on an active workflow is live at once.
	Edition1
	// Edition2 is n8n 2.x: edits go to a draft; the live webhook serves the
	// published version until a version is published.
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
	// It sees the status and up to 1 MiB of the body.
	Check func(status int, body []byte) error
	// HTTPClient sends the request; nil means a client with a 30 s timeout.
	HTTPClient *http.Client
}

// DeployOptions tune Deploy.
type DeployOptions struct {
	// Edition selects the discipline; EditionAuto detects it.
	Edition Edition
	// Active is the activation wanted after the deploy; nil keeps the one the
	// workflow had.
	Active *bool
	// Smoke, when set and the workflow ends active, is polled until its
	// Check passes or VerifyTimeout runs out.
	Smoke *Smoke
	// VerifyTimeout bounds the polling of the smoke check; 0 means 30 s.
	// Publishing on n8n 2.x takes effect 0.1–0.3 s after its 200.
	VerifyTimeout time.Duration
	// Logger receives one info record per step; nil discards.
	Logger *slog.Logger
}

// DeployState says what state a deploy left the workflow in.
type DeployState string

const (
	// StateDeployed: the new definition is saved, the activation is the one
	// asked for, and (when active) the live version is the one just written;
	// the smoke check, if any, passed.
	StateDeployed DeployState = "deployed"
	// StateUnchanged: nothing was written. With a nil error the workflow was
	// already up to date; with an error Deploy failed before its first write.
	StateUnchanged DeployState = "unchanged"
	// StateRestored: a step failed, and the previous definition and
	// activation were written back and verified, and (when it was active)
	// the live version holds what was live before. Version ids differ from
	// the ones before (n8n makes a new version); settings keys the new
	// definition added stay, because n8n merges settings.
	StateRestored DeployState = "restored"
	// StateInconsistent: a step failed and the restore failed or could not
	// be verified. Report.After and Report.Matches say what was read last.
	StateInconsistent DeployState = "inconsistent"
)

// Snapshot is what a re-read of the workflow showed.
type Snapshot struct {
	// Read is false when the workflow could not be read.
	Read            bool
	Active          bool
	VersionID       string
	ActiveVersionID string
}

// Match says which definition a re-read workflow holds.
type Match string

const (
	MatchNew      Match = "new"
	MatchPrevious Match = "previous"
	MatchNeither  Match = "neither"
	MatchUnknown  Match = "unknown" // could not be read
)

// Step is one call Deploy made, in order.
type Step struct {
	// Name is a short verb: read, deactivate, update, activate, publish,
	// unpublish, verify, smoke, restore-…
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
	// SmokeAttempts counts smoke requests sent.
	SmokeAttempts int
	Steps         []Step
}

// String summarises the report on one line.
func (r Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "workflow %s (%s): %s; before active=%t version=%s live=%s; after active=%t version=%s live=%s holds=%s",
		r.WorkflowID, r.Edition, r.State, r.Before.Active, r.Before.VersionID, r.Before.ActiveVersionID,
		r.After.Active, r.After.VersionID, r.After.ActiveVersionID, r.Matches)
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

// Deploy writes wf as the definition of workflow id and makes it live
// without trusting any single 200.
//
// It validates wf first (a *ValidationError, nothing sent), reads the
// workflow, then applies the discipline of the edition:
//
//   - n8n 1.x: deactivate (when active), update, activate — re-reading after
//     every step and checking the versionId is the one the update returned;
//   - n8n 2.x: update as a draft (the published version keeps serving), then
//     publish exactly the versionId the update returned, re-read, and check
//     the published version is that one.
//
// It never publishes a versionId the server did not just return for the
// definition it wrote. With opts.Smoke it then polls the webhook until it
// serves the new definition. On any failure it restores the previous
// definition and activation and re-reads; the Report (also inside the
// *DeployError) says which state the workflow is left in. On n8n 2.x a
// workflow can hold an unpublished draft: the restore then puts the draft
// back and re-publishes the version that was live, read before the first
// write, so production serves what it served before. An error is returned
// whenever the state is not StateDeployed, except for an up-to-date workflow
// (StateUnchanged, nil).
func Deploy(ctx context.Context, client *Client, id ID, wf *Workflow, opts DeployOptions) (Report, error) {
	d := &deployer{c: client, id: id, wf: wf, opts: opts, rep: Report{WorkflowID: id, State: StateUnchanged, Matches: MatchUnknown}}
	d.log = opts.Logger
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	err := d.run(ctx)
	return d.rep, err
}

type deployer struct {
	c    *Client
	id   ID
	wf   *Workflow
	opts DeployOptions
	log  *slog.Logger
	rep  Report
	prev *Workflow
	// wrote is true once a write reached n8n (or may have).
	wrote bool
}

func (d *deployer) step(name, version, detail string, err error) {
	d.rep.Steps = append(d.rep.Steps, Step{Name: name, VersionID: version, Detail: detail, Err: err})
	if err != nil {
		d.log.Warn("n8n deploy step failed", "workflow", string(d.id), "step", name, "err", err)
	} else {
		d.log.Info("n8n deploy step", "workflow", string(d.id), "step", name, "version", version, "detail", detail)
	}
}

func (d *deployer) fail(ctx context.Context, step string, err error) error {
	if d.wrote {
		d.restore(ctx)
	}
	return &DeployError{Step: step, Report: d.rep, Err: err}
}

func (d *deployer) run(ctx context.Context) error {
	if d.c == nil || d.wf == nil || needID(d.id) != nil {
		return &DeployError{Step: "arguments", Report: d.rep, Err: errors.New("n8n: Deploy needs a client, an id and a workflow")}
	}
	if probs := Validate(d.wf); len(probs) > 0 {
		err := &ValidationError{Source: "workflow " + string(d.id), Problems: probs}
		d.step("validate", "", fmt.Sprintf("%d problem(s)", len(probs)), err)
		return &DeployError{Step: "validate", Report: d.rep, Err: err}
	}
	want, err := definitionOf(d.wf)
	if err != nil {
		return &DeployError{Step: "validate", Report: d.rep, Err: err}
	}
	prev, err := d.c.GetWorkflow(ctx, d.id)
	d.step("read", versionOf(prev), "definition before the deploy", err)
	if err != nil {
		return &DeployError{Step: "read", Report: d.rep, Err: err}
	}
	d.prev = prev
	d.rep.Before = snapshot(prev)
	d.rep.After = d.rep.Before
	d.rep.Matches = d.match(prev)

	ed := d.opts.Edition
	if ed == EditionAuto {
		if ed, err = d.c.DetectEdition(ctx); err != nil {
			d.step("detect", "", "", err)
			return &DeployError{Step: "detect", Report: d.rep, Err: err}
		}
	}
	d.rep.Edition = ed
	wantActive := prev.Active
	if d.opts.Active != nil {
		wantActive = *d.opts.Active
	}
	// Up to date: same definition and activation, and when active, the live
	// version is the saved one (n8n 2.x, and 1.x with its draft/publish
	// flag, can hold a saved draft that is not live; older 1.x do not report
	// a live version at all).
	liveIsSaved := !prev.Active || prev.ActiveVersionID == prev.VersionID || (ed == Edition1 && prev.ActiveVersionID == "")
	if eq, _ := sameDefinition(want, prev); eq && settingsIncluded(d.wf.Settings, prev.Settings) &&
		prev.Active == wantActive && liveIsSaved {
		d.step("compare", prev.VersionID, "already up to date; nothing written", nil)
		d.rep.Matches = MatchNew
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
	}
	d.rep.State = StateDeployed
	return nil
}

// apply1 is deactivate, update, activate with a re-read after each step.
func (d *deployer) apply1(ctx context.Context, wantActive bool) error {
	if d.prev.Active {
		if err := d.takeOffline(ctx, "deactivate", "verify-deactivated", d.c.DeactivateWorkflow); err != nil {
			return err
		}
	}
	written, err := d.write(ctx, UpdateOptions{}, "")
	if err != nil || !wantActive {
		return err
	}
	act, err := d.c.ActivateWorkflow(ctx, d.id)
	d.step("activate", versionOf(act), "", err)
	if err != nil {
		return d.fail(ctx, "activate", err)
	}
	if err := d.verifyLive(ctx, written); err != nil {
		return d.fail(ctx, "verify-active", err)
	}
	return nil
}

// apply2 saves a draft and publishes exactly the version the update returned.
func (d *deployer) apply2(ctx context.Context, wantActive bool) error {
	written, err := d.write(ctx, UpdateOptions{KeepPublished: true}, "saved as a draft (publishIfActive=false)")
	if err != nil {
		return err
	}
	if !wantActive {
		if d.rep.After.Active {
			return d.takeOffline(ctx, "unpublish", "verify-unpublished", d.c.UnpublishWorkflow)
		}
		return nil
	}
	_, err = d.c.PublishWorkflow(ctx, d.id, written)
	d.step("publish", written, "publishing the versionId the update returned", err)
	if err != nil {
		return d.fail(ctx, "publish", err)
	}
	if err := d.verifyLive(ctx, written); err != nil {
		return d.fail(ctx, "verify-published", err)
	}
	return nil
}

// write updates the workflow with the new definition, then checks by a
// re-read that n8n stored it at the versionId the update returned, which it
// returns. On failure it has already restored (see fail).
func (d *deployer) write(ctx context.Context, opts UpdateOptions, detail string) (string, error) {
	d.wrote = true
	upd, err := d.c.UpdateWorkflow(ctx, d.id, d.wf, opts)
	d.step("update", versionOf(upd), detail, err)
	if err != nil {
		return "", d.fail(ctx, "update", err)
	}
	if upd.VersionID == "" {
		return "", d.fail(ctx, "update", errors.New("n8n: the update returned no versionId"))
	}
	d.rep.WrittenVersionID = upd.VersionID
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
	w, err := call(ctx, d.id)
	d.step(name, versionOf(w), "", err)
	if err != nil {
		return d.fail(ctx, name, err)
	}
	cur, err := d.reread(ctx, verify)
	if err != nil {
		return d.fail(ctx, verify, err)
	}
	if cur.Active {
		return d.fail(ctx, verify, fmt.Errorf("n8n: %s answered 200 but the workflow is still active", name))
	}
	return nil
}

// reread reads the workflow back and records it.
func (d *deployer) reread(ctx context.Context, name string) (*Workflow, error) {
	cur, err := d.c.GetWorkflow(ctx, d.id)
	if err != nil {
		d.rep.After = Snapshot{}
		d.rep.Matches = MatchUnknown
		d.step(name, "", "re-read failed", err)
		return nil, err
	}
	d.rep.After = snapshot(cur)
	d.rep.Matches = d.match(cur)
	d.step(name, cur.VersionID, fmt.Sprintf("active=%t live=%s holds=%s", cur.Active, cur.ActiveVersionID, d.rep.Matches), nil)
	return cur, nil
}

// verifyWritten checks the stored definition is the new one at version v.
func (d *deployer) verifyWritten(ctx context.Context, v string) error {
	cur, err := d.reread(ctx, "verify-update")
	if err != nil {
		return err
	}
	if cur.VersionID != v {
		return fmt.Errorf("n8n: the update returned versionId %s but a re-read shows %s", v, cur.VersionID)
	}
	if d.rep.Matches != MatchNew {
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
	switch {
	case !cur.Active:
		return errors.New("n8n: activation answered 200 but the workflow is not active")
	case cur.VersionID != v:
		return fmt.Errorf("n8n: the stored version is %s, not the one written (%s)", cur.VersionID, v)
	case cur.ActiveVersionID != "" && cur.ActiveVersionID != v:
		return fmt.Errorf("n8n: the live version is %s, not the one written (%s)", cur.ActiveVersionID, v)
	case d.rep.Edition == Edition2 && cur.ActiveVersionID == "":
		return errors.New("n8n: the workflow reports no published version")
	case d.rep.Matches != MatchNew:
		return fmt.Errorf("n8n: the active workflow holds the %s definition", d.rep.Matches)
	}
	return nil
}

func (d *deployer) smoke(ctx context.Context) error {
	s := d.opts.Smoke
	if s.URL == "" || s.Check == nil {
		return errors.New("n8n: Smoke needs a URL and a Check")
	}
	timeout := d.opts.VerifyTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	payload, err := encodeBody(s.Body)
	if err != nil {
		return err
	}
	hc := &http.Client{Timeout: 30 * time.Second}
	if s.HTTPClient != nil {
		copied := *s.HTTPClient
		hc = &copied
	}
	// Smoke headers may carry a token: never replay them to a redirect target.
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
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
			d.step("smoke", d.rep.WrittenVersionID, fmt.Sprintf("webhook serves the new definition (attempt %d)", d.rep.SmokeAttempts), nil)
			return nil
		}
		select {
		case <-ctx.Done():
			err := fmt.Errorf("n8n: the webhook did not serve the new definition within %s after %d attempts: %w",
				timeout, d.rep.SmokeAttempts, last)
			d.step("smoke", d.rep.WrittenVersionID, "", err)
			return err
		case <-tick.C:
		}
	}
}

func smokeOnce(ctx context.Context, hc *http.Client, method string, s *Smoke, payload []byte) error {
	req, err := http.NewRequestWithContext(ctx, method, s.URL, bytes.NewReader(payload))
	if err != nil {
		return err
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
		return stripURL(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	return s.Check(resp.StatusCode, body)
}

// restore writes the previous definition and activation back and re-reads.
func (d *deployer) restore(ctx context.Context) {
	d.rep.State = StateInconsistent
	// A cancelled ctx must not stop the restore.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	prev := d.prev
	cur, err := d.reread(ctx, "restore-read")
	if err != nil {
		return
	}
	if d.rep.Matches != MatchPrevious {
		if d.rep.Edition == Edition1 && cur.Active {
			w, err := d.c.DeactivateWorkflow(ctx, d.id)
			d.step("restore-deactivate", versionOf(w), "", err)
			if err != nil {
				return
			}
		}
		upd, err := d.c.UpdateWorkflow(ctx, d.id, prev, UpdateOptions{KeepPublished: d.rep.Edition == Edition2})
		d.step("restore-update", versionOf(upd), "previous definition", err)
		if err != nil {
			return
		}
		if cur, err = d.reread(ctx, "restore-verify-update"); err != nil {
			return
		}
		if d.rep.Matches != MatchPrevious || cur.VersionID != upd.VersionID {
			d.step("restore-verify-update", cur.VersionID, "", errors.New("n8n: the previous definition did not come back"))
			return
		}
	}
	switch {
	case d.rep.Edition == Edition1 && prev.Active && !cur.Active:
		w, err := d.c.ActivateWorkflow(ctx, d.id)
		d.step("restore-activate", versionOf(w), "", err)
		if err != nil {
			return
		}
	case d.rep.Edition == Edition1 && !prev.Active && cur.Active:
		w, err := d.c.DeactivateWorkflow(ctx, d.id)
		d.step("restore-deactivate", versionOf(w), "", err)
		if err != nil {
			return
		}
	case d.rep.Edition == Edition2 && prev.Active && (!cur.Active || cur.ActiveVersionID != prev.ActiveVersionID):
		// The old published version is no longer live. Without a pending
		// draft before the deploy, publish the version the restore just
		// wrote (its content is the previous definition, so live and draft
		// agree again). With one, the previous definition (the draft) was
		// never live: publish the version that was, as read before the
		// first write.
		v, detail := cur.VersionID, "the version holding the previous definition"
		if pendingDraft(prev) {
			v, detail = prev.ActiveVersionID, "the version that was live before the deploy (a newer draft was pending)"
		}
		_, err := d.c.PublishWorkflow(ctx, d.id, v)
		d.step("restore-publish", v, detail, err)
		if err != nil {
			return
		}
	case d.rep.Edition == Edition2 && !prev.Active && cur.Active:
		w, err := d.c.UnpublishWorkflow(ctx, d.id)
		d.step("restore-unpublish", versionOf(w), "", err)
		if err != nil {
			return
		}
	}
	final, err := d.reread(ctx, "restore-verify")
	if err != nil {
		return
	}
	ok := d.rep.Matches == MatchPrevious && final.Active == prev.Active
	if ok && prev.Active && d.rep.Edition == Edition2 {
		// Live is the old published version, or (when the previous draft
		// was the live version) the version the restore wrote and published.
		ok = final.ActiveVersionID == prev.ActiveVersionID ||
			(!pendingDraft(prev) && final.ActiveVersionID == final.VersionID)
	}
	if ok && prev.Active && d.rep.Edition == Edition1 && final.ActiveVersionID != "" {
		ok = final.ActiveVersionID == final.VersionID
	}
	if ok {
		d.rep.State = StateRestored
	}
}

func (d *deployer) match(w *Workflow) Match {
	if w == nil {
		return MatchUnknown
	}
	want, err := definitionOf(d.wf)
	if err != nil {
		return MatchUnknown
	}
	if eq, err := sameDefinition(want, w); err == nil && eq {
		return MatchNew
	}
	if d.prev != nil {
		old, err := definitionOf(d.prev)
		if err == nil {
			if eq, err := sameDefinition(old, w); err == nil && eq {
				return MatchPrevious
			}
		}
	}
	return MatchNeither
}

// pendingDraft reports a workflow whose saved definition (the draft) is not
// the version that is live: n8n 2.x after an edit that was not published.
func pendingDraft(w *Workflow) bool {
	return w.Active && w.ActiveVersionID != "" && w.ActiveVersionID != w.VersionID
}

func snapshot(w *Workflow) Snapshot {
	return Snapshot{Read: true, Active: w.Active, VersionID: w.VersionID, ActiveVersionID: w.ActiveVersionID}
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
