package n8n

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Session is a logged-in user of n8n's internal /rest API, for what the
// public API cannot do: list credentials, run a stored workflow, create a
// workflow with its tags in one request, and read n8n 2.x's publication
// record (which Deploy needs on 2.x, see DeployOptions.Session). The
// session cookie is sent by hand (n8n may mark it Secure, which a cookie jar
// would then withhold on plain http) and never appears in logs, errors or
// String.
type Session struct {
	c      *Client
	cookie string
	email  string
}

// Login opens a session with an n8n user's email and password. A wrong
// password is an *APIError with status 401; the password is sent only in the
// request body.
func (c *Client) Login(ctx context.Context, email, password string) (*Session, error) {
	if strings.TrimSpace(email) == "" || password == "" {
		return nil, errors.New("n8n: Login needs an email and a password")
	}
	var hdr http.Header
	err := c.do(ctx, call{
		method: http.MethodPost, path: "/rest/login",
		in:   map[string]string{"emailOrLdapLoginId": email, "password": password},
		anon: true, header: &hdr,
	})
	if err != nil {
		return nil, err
	}
	for _, ck := range (&http.Response{Header: hdr}).Cookies() {
		if ck.Name == "n8n-auth" && ck.Value != "" {
			return &Session{c: c, cookie: "n8n-auth=" + ck.Value, email: email}, nil
		}
	}
	return nil, errors.New("n8n: login answered 200 without an n8n-auth cookie")
}

// String describes the session without its cookie.
func (s *Session) String() string { return "n8n.Session(" + s.email + ", cookie redacted)" }

// LogValue keeps the cookie out of structured logs.
func (s *Session) LogValue() slog.Value {
	return slog.GroupValue(slog.String("user", s.email), slog.String("cookie", "redacted"))
}

// rest calls /rest with the session cookie and unwraps n8n's {"data": …}.
func (s *Session) rest(ctx context.Context, method, path string, in, out any) error {
	var env struct {
		Data *json.RawMessage `json:"data"`
	}
	if err := s.c.do(ctx, call{method: method, path: "/rest" + path, in: in, cookie: s.cookie, out: &env}); err != nil {
		return err
	}
	if env.Data == nil {
		return &DecodeError{Method: method, Path: "/rest" + path, StatusCode: 200, Err: errors.New(`response has no "data"`)}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(*env.Data, out); err != nil {
		return &DecodeError{Method: method, Path: "/rest" + path, StatusCode: 200, Body: cut(*env.Data), Err: err}
	}
	return nil
}

// ListCredentials lists the credentials the user can see (metadata only).
// The public API of n8n 1.x answers 405 to a credential listing.
func (s *Session) ListCredentials(ctx context.Context) ([]Credential, error) {
	var out []Credential
	if err := s.rest(ctx, http.MethodGet, "/credentials", nil, &out); err != nil {
		return nil, err
	}
	if out == nil {
		out = []Credential{}
	}
	return out, nil
}

// ErrTagsNotAttached is returned by Session.CreateWorkflow, together with
// the workflow it created, when n8n's answer lacks one of the tags asked for
// (n8n ignores tags when workflow tags are disabled on the instance).
var ErrTagsNotAttached = errors.New("n8n: the workflow was created without all of its tags")

// CreateWorkflow creates an inactive workflow that carries tagIDs from the
// moment it exists: one request to the internal API, where the public API
// rejects tags on create and needs a second call (a crash between the two
// leaves an untagged workflow). Like Client.CreateWorkflow it sends only the
// name, nodes, connections, settings and staticData of wf. n8n's answer is
// checked: when it lacks a tag, the workflow exists, and CreateWorkflow
// returns it with an error matching ErrTagsNotAttached, so the caller can
// delete it.
func (s *Session) CreateWorkflow(ctx context.Context, wf *Workflow, tagIDs ...ID) (*Workflow, error) {
	if wf == nil {
		return nil, errors.New("n8n: Session.CreateWorkflow: nil workflow")
	}
	for _, t := range tagIDs {
		if err := needID(t); err != nil {
			return nil, fmt.Errorf("n8n: Session.CreateWorkflow: tag: %w", err)
		}
	}
	body := struct {
		writeBody
		Active bool `json:"active"` // the internal API needs it (else 500)
		Tags   []ID `json:"tags"`
	}{writeBody: bodyOf(wf, true), Tags: append([]ID{}, tagIDs...)}
	var out Workflow
	if err := s.rest(ctx, http.MethodPost, "/workflows", body, &out); err != nil {
		return nil, err
	}
	if out.ID == "" {
		return nil, &DecodeError{Method: http.MethodPost, Path: "/rest/workflows", StatusCode: 200,
			Err: errors.New("created workflow without an id")}
	}
	var missing []string
	for _, want := range tagIDs {
		found := false
		for _, t := range out.Tags {
			found = found || t.ID == want
		}
		if !found {
			missing = append(missing, string(want))
		}
	}
	if len(missing) > 0 {
		return &out, fmt.Errorf("%w: workflow %s lacks tag(s) %s", ErrTagsNotAttached, out.ID, strings.Join(missing, ", "))
	}
	return &out, nil
}

// RunWorkflow runs the STORED definition of workflow id, active or not,
// starting at trigger with items pinned as the trigger's output, and returns
// the execution id at once (the run goes on in n8n: see WaitExecution).
//
// n8n 1.x runs the definition sent in the request, not the stored one, so
// RunWorkflow reads the workflow over /rest and sends it back unchanged
// except for its pinned data. n8n 2.x runs the stored workflow with its
// stored pinned data and ignores the request's, so there RunWorkflow pins
// the items on the stored workflow (which does not change its versionId),
// starts the run, and puts the previous pinned data back; if that last step
// fails, it returns the execution id together with the error. Pinned data
// only affects manual runs: production webhooks never use it.
func (s *Session) RunWorkflow(ctx context.Context, id ID, trigger string, items []map[string]any) (ID, error) {
	if err := needID(id); err != nil {
		return "", err
	}
	if strings.TrimSpace(trigger) == "" {
		return "", errors.New("n8n: RunWorkflow needs the trigger node's name")
	}
	ed, err := s.c.DetectEdition(ctx)
	if err != nil {
		return "", err
	}
	path := "/workflows/" + pathEscape(id)
	var stored map[string]json.RawMessage
	if err := s.rest(ctx, http.MethodGet, path, nil, &stored); err != nil {
		return "", err
	}
	var nodes []struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(stored["nodes"], &nodes); err != nil {
		return "", &DecodeError{Method: http.MethodGet, Path: "/rest" + path, StatusCode: 200, Err: err}
	}
	found := false
	for _, n := range nodes {
		found = found || n.Name == trigger
	}
	if !found {
		return "", fmt.Errorf("n8n: workflow %s has no node named %q", id, trigger)
	}
	pinned := make([]map[string]any, 0, len(items))
	for _, it := range items {
		if it == nil {
			it = map[string]any{}
		}
		pinned = append(pinned, map[string]any{"json": it})
	}
	pin, err := json.Marshal(map[string]any{trigger: pinned})
	if err != nil {
		return "", fmt.Errorf("n8n: RunWorkflow: encoding the trigger items: %w", err)
	}
	start := map[string]string{"name": trigger}
	if ed != Edition2 {
		stored["pinData"] = pin
		return s.run(ctx, path, map[string]any{"workflowData": stored, "triggerToStartFrom": start})
	}
	previous := stored["pinData"]
	if len(previous) == 0 {
		previous = json.RawMessage("null")
	}
	if err := s.rest(ctx, http.MethodPatch, path, map[string]json.RawMessage{"pinData": pin}, nil); err != nil {
		return "", err
	}
	exID, runErr := s.run(ctx, path, map[string]any{"triggerToStartFrom": start})
	// Put the previous pinned data back even when ctx is done.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	restoreErr := s.rest(rctx, http.MethodPatch, path, map[string]json.RawMessage{"pinData": previous}, nil)
	switch {
	case runErr != nil && restoreErr != nil:
		return "", fmt.Errorf("%w; and restoring the pinned data of workflow %s failed: %v", runErr, id, restoreErr)
	case runErr != nil:
		return "", runErr
	case restoreErr != nil:
		return exID, fmt.Errorf("n8n: execution %s started, but restoring the pinned data of workflow %s failed: %w", exID, id, restoreErr)
	}
	return exID, nil
}

func (s *Session) run(ctx context.Context, path string, in any) (ID, error) {
	var raw json.RawMessage
	if err := s.rest(ctx, http.MethodPost, path+"/run", in, &raw); err != nil {
		return "", err
	}
	var out struct {
		ExecutionID ID `json:"executionId"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || out.ExecutionID == "" {
		// {"waitingForWebhook":true} means n8n did not see the pinned data.
		return "", &DecodeError{Method: http.MethodPost, Path: "/rest" + path + "/run", StatusCode: 200,
			Body: cut(raw), Err: errors.New("no executionId in the answer")}
	}
	return out.ExecutionID, nil
}

// WaitExecution polls execution id (with its data) until it is no longer new
// or running, or ctx ends. Give ctx a deadline: n8n runs executions
// asynchronously.
func (c *Client) WaitExecution(ctx context.Context, id ID) (*Execution, error) {
	const every = 100 * time.Millisecond
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		e, err := c.GetExecution(ctx, id, true)
		switch {
		case err != nil && !IsStatus(err, http.StatusNotFound):
			return nil, err
		case err == nil && e.Status != ExecutionNew && e.Status != ExecutionRunning && e.Status != "":
			return e, nil
		}
		select {
		case <-ctx.Done():
			if err != nil {
				return nil, fmt.Errorf("n8n: waiting for execution %s: %w (last: %v)", id, ctx.Err(), err)
			}
			return nil, fmt.Errorf("n8n: waiting for execution %s (status %q): %w", id, e.Status, ctx.Err())
		case <-t.C:
		}
	}
}

func pathEscape(id ID) string { return url.PathEscape(string(id)) }

// Publication is n8n 2.x's record of a workflow's publication, as
// GET /rest/workflows/{id}/publication-status reports it. n8n accepts a
// publish at once and activates the triggers of the published version
// afterwards; this record is the only place that says whether they did.
type Publication struct {
	// Status is one of the Publication… constants.
	Status PublicationStatus `json:"status"`
	// LiveVersionID is the version whose triggers are active, "" when none is.
	LiveVersionID string `json:"liveVersionId"`
	// PendingVersionID is the version being published, "" when none is.
	PendingVersionID string `json:"pendingVersionId"`
	// Triggers are the trigger nodes of the last settled publication.
	Triggers []TriggerStatus `json:"triggers"`
}

// PublicationStatus is the state of a workflow's publication on n8n 2.x.
type PublicationStatus string

// Publication states n8n 2.x reports.
const (
	// PublicationInProgress: a publish or unpublish was accepted and n8n is
	// still (de)activating triggers.
	PublicationInProgress PublicationStatus = "in_progress"
	// PublicationPublished: every trigger of the live version is active.
	PublicationPublished PublicationStatus = "published"
	// PublicationPartial: some triggers of the live version failed to
	// activate (their Error says why); the others run.
	PublicationPartial PublicationStatus = "partial"
	// PublicationFailed: no trigger of the published version is active; the
	// workflow does not run although n8n reports it active.
	PublicationFailed PublicationStatus = "failed"
	// PublicationNotPublished: no trigger is registered (unpublished).
	PublicationNotPublished PublicationStatus = "not_published"
)

// TriggerStatus is one trigger node in a Publication.
type TriggerStatus struct {
	NodeID string `json:"nodeId"`
	// Status is "activated" or "failed".
	Status string `json:"status"`
	// Error is n8n's reason for a failed trigger.
	Error string `json:"errorMessage"`
}

// settled reports whether no publication is in flight.
func (p *Publication) settled() bool {
	return p.Status != PublicationInProgress && p.PendingVersionID == ""
}

// String summarises the record on one line, failed triggers with reasons.
func (p *Publication) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (live %s)", p.Status, orNone(p.LiveVersionID))
	for _, t := range p.Triggers {
		if t.Status != "activated" {
			fmt.Fprintf(&b, "; trigger %s %s: %s", t.NodeID, t.Status, t.Error)
		}
	}
	return b.String()
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// PublicationStatus reads n8n 2.x's publication record of workflow id (the
// public API does not expose it). n8n 1.x has no such record: 404.
func (s *Session) PublicationStatus(ctx context.Context, id ID) (*Publication, error) {
	if err := needID(id); err != nil {
		return nil, err
	}
	var out Publication
	if err := s.rest(ctx, http.MethodGet, "/workflows/"+pathEscape(id)+"/publication-status", nil, &out); err != nil {
		return nil, err
	}
	if out.Status == "" {
		return nil, &DecodeError{Method: http.MethodGet, Path: "/rest/workflows/" + pathEscape(id) + "/publication-status",
			StatusCode: 200, Err: errors.New("publication record without a status")}
	}
	return &out, nil
}
