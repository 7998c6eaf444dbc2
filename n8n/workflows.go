package n8n

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// ListWorkflowsOptions filter ListWorkflows and Workflows.
type ListWorkflowsOptions struct {
	// Active, when set, keeps only active (true) or inactive (false) workflows.
	Active *bool
	// Name is n8n's filter: a case-insensitive SUBSTRING, and names are not
	// unique. Compare Name yourself and track ids.
	Name string
	// Tags keeps workflows carrying all of these tag names.
	Tags      []string
	ProjectID string
	// PageSize is the page size sent as limit (clamped to 1..250; 0 = 100).
	PageSize int
	// Max stops after this many workflows; 0 reads every page. Only
	// ListWorkflows reads it: a range over Workflows stops with a break.
	Max int
}

// ListWorkflows returns every workflow matching opts, following the paging
// cursor to the end (or to opts.Max). A listing that cannot be completed (a
// cursor that repeats, a page without data) matches ErrIncompleteList and
// returns no workflows.
func (c *Client) ListWorkflows(ctx context.Context, opts ListWorkflowsOptions) ([]Workflow, error) {
	return collect(c.Workflows(ctx, opts), opts.Max)
}

// Workflows is ListWorkflows as an iterator, one workflow at a time, reading
// a page only when the previous one is used up. A listing that cannot be
// completed ends with a non-nil error (matching ErrIncompleteList, or the
// request's error), never silently.
func (c *Client) Workflows(ctx context.Context, opts ListWorkflowsOptions) iter.Seq2[Workflow, error] {
	q := url.Values{}
	if opts.Active != nil {
		q.Set("active", strconv.FormatBool(*opts.Active))
	}
	if opts.Name != "" {
		q.Set("name", opts.Name)
	}
	if len(opts.Tags) > 0 {
		q.Set("tags", strings.Join(opts.Tags, ","))
	}
	if opts.ProjectID != "" {
		q.Set("projectId", opts.ProjectID)
	}
	return listSeq[Workflow](ctx, c, api("/workflows"), q, opts.PageSize)
}

// GetWorkflow reads one workflow. A missing one is an *APIError with status 404.
func (c *Client) GetWorkflow(ctx context.Context, id ID) (*Workflow, error) {
	if err := needID(id); err != nil {
		return nil, err
	}
	var w Workflow
	if err := c.do(ctx, call{method: http.MethodGet, path: api("/workflows/%s", id), out: &w}); err != nil {
		return nil, err
	}
	if w.ID == "" {
		return nil, &DecodeError{Method: http.MethodGet, Path: api("/workflows/%s", id), StatusCode: 200,
			Err: errors.New("workflow without an id")}
	}
	return &w, nil
}

// writeBody is exactly what n8n's public API accepts on create and update:
// it rejects active, id, tags, versionId, pinData, meta and the like.
type writeBody struct {
	Name        string          `json:"name"`
	Nodes       []Node          `json:"nodes"`
	Connections Connections     `json:"connections"`
	Settings    json.RawMessage `json:"settings"`
	StaticData  json.RawMessage `json:"staticData,omitempty"`
}

func bodyOf(wf *Workflow, withStatic bool) writeBody {
	b := writeBody{
		Name:        wf.Name,
		Nodes:       nonNilNodes(wf.Nodes),
		Connections: nonNilConnections(wf.Connections),
		Settings:    wf.Settings,
	}
	if len(bytes.TrimSpace(b.Settings)) == 0 || string(bytes.TrimSpace(b.Settings)) == "null" {
		b.Settings = json.RawMessage(`{}`)
	}
	if withStatic && len(wf.StaticData) > 0 && string(bytes.TrimSpace(wf.StaticData)) != "null" {
		b.StaticData = wf.StaticData
	}
	return b
}

// CreateWorkflow creates an inactive workflow from wf's name, nodes,
// connections, settings and staticData (other fields, Active included, are
// not sent: n8n rejects them). It returns the workflow as n8n stored it, with
// its id and versionId.
func (c *Client) CreateWorkflow(ctx context.Context, wf *Workflow) (*Workflow, error) {
	if wf == nil {
		return nil, errors.New("n8n: CreateWorkflow: nil workflow")
	}
	var out Workflow
	err := c.do(ctx, call{method: http.MethodPost, path: api("/workflows"), in: bodyOf(wf, true), out: &out})
	if err != nil {
		return nil, err
	}
	if out.ID == "" {
		return nil, &DecodeError{Method: http.MethodPost, Path: api("/workflows"), StatusCode: 200,
			Err: errors.New("created workflow without an id")}
	}
	return &out, nil
}

// UpdateWorkflowOptions tune UpdateWorkflow.
type UpdateWorkflowOptions struct {
	// KeepPublished (n8n 2.x) saves the change as a draft without
	// republishing a published workflow (?publishIfActive=false); publish it
	// with PublishWorkflow and the versionId the update returned. n8n 1.x
	// does not know the parameter.
	KeepPublished bool
}

// UpdateWorkflow replaces the name, nodes and connections of workflow id and
// merges wf.Settings into its settings (n8n keeps settings keys that are not
// sent, and keeps tags and staticData). On n8n 1.x a PUT on an active
// workflow is live at once, and one that cannot activate answers 400 with the
// new nodes saved and the workflow deactivated: Deploy handles that.
func (c *Client) UpdateWorkflow(ctx context.Context, id ID, wf *Workflow, opts UpdateWorkflowOptions) (*Workflow, error) {
	if err := needID(id); err != nil {
		return nil, err
	}
	if wf == nil {
		return nil, errors.New("n8n: UpdateWorkflow: nil workflow")
	}
	var q url.Values
	if opts.KeepPublished {
		q = url.Values{"publishIfActive": {"false"}}
	}
	var out Workflow
	err := c.do(ctx, call{method: http.MethodPut, path: api("/workflows/%s", id), query: q, in: bodyOf(wf, false), out: &out})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteWorkflow deletes workflow id. n8n 1.x deletes an active workflow
// (its webhooks go at once); n8n 2.x answers 409 for a published one:
// unpublish it first.
func (c *Client) DeleteWorkflow(ctx context.Context, id ID) error {
	if err := needID(id); err != nil {
		return err
	}
	return c.do(ctx, call{method: http.MethodDelete, path: api("/workflows/%s", id)})
}

// ActivateWorkflow activates workflow id (n8n 2.x: publishes its current
// version; prefer PublishWorkflow with the versionId you just wrote). n8n
// answers 400 when the workflow cannot run: no trigger, an unknown node type,
// a webhook path already taken.
func (c *Client) ActivateWorkflow(ctx context.Context, id ID) (*Workflow, error) {
	return c.workflowAction(ctx, id, "activate", nil)
}

// activateVersion activates workflow id at versionID: n8n 1.123 with
// draft/publish on makes exactly that version live; without the flag n8n
// 1.x activates the saved version whatever the body says.
func (c *Client) activateVersion(ctx context.Context, id ID, versionID string) (*Workflow, error) {
	return c.workflowAction(ctx, id, "activate", map[string]string{"versionId": versionID})
}

// DeactivateWorkflow deactivates (unpublishes) workflow id.
func (c *Client) DeactivateWorkflow(ctx context.Context, id ID) (*Workflow, error) {
	return c.workflowAction(ctx, id, "deactivate", nil)
}

// PublishWorkflow (n8n 2.x) publishes exactly versionID of workflow id. Pass
// only a versionId n8n has just returned for the definition you wrote: an
// older existing version is accepted and silently put live.
func (c *Client) PublishWorkflow(ctx context.Context, id ID, versionID string) (*Workflow, error) {
	if strings.TrimSpace(versionID) == "" {
		return nil, errors.New("n8n: PublishWorkflow needs the versionId to publish")
	}
	return c.workflowAction(ctx, id, "publish", map[string]string{"versionId": versionID})
}

// UnpublishWorkflow (n8n 2.x) takes workflow id offline.
func (c *Client) UnpublishWorkflow(ctx context.Context, id ID) (*Workflow, error) {
	return c.workflowAction(ctx, id, "unpublish", nil)
}

func (c *Client) workflowAction(ctx context.Context, id ID, action string, in any) (*Workflow, error) {
	if err := needID(id); err != nil {
		return nil, err
	}
	var out Workflow
	if err := c.do(ctx, call{method: http.MethodPost, path: api("/workflows/%s/", id) + action, in: in, out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

// WorkflowTags returns the tags of workflow id.
func (c *Client) WorkflowTags(ctx context.Context, id ID) ([]Tag, error) {
	if err := needID(id); err != nil {
		return nil, err
	}
	var out []Tag
	if err := c.do(ctx, call{method: http.MethodGet, path: api("/workflows/%s/tags", id), out: &out}); err != nil {
		return nil, err
	}
	return out, nil
}

// SetWorkflowTags replaces the tags of workflow id and returns them.
func (c *Client) SetWorkflowTags(ctx context.Context, id ID, tagIDs ...ID) ([]Tag, error) {
	if err := needID(id); err != nil {
		return nil, err
	}
	in := make([]map[string]ID, 0, len(tagIDs))
	for _, t := range tagIDs {
		in = append(in, map[string]ID{"id": t})
	}
	var out []Tag
	if err := c.do(ctx, call{method: http.MethodPut, path: api("/workflows/%s/tags", id), in: in, out: &out}); err != nil {
		return nil, err
	}
	return out, nil
}

// ListTags returns every tag; a listing that cannot be completed matches
// ErrIncompleteList.
func (c *Client) ListTags(ctx context.Context) ([]Tag, error) {
	return collect(listSeq[Tag](ctx, c, api("/tags"), nil, 250), 0)
}

// CreateTag creates a tag; a name that exists is an *APIError with status 409.
func (c *Client) CreateTag(ctx context.Context, name string) (*Tag, error) {
	if strings.TrimSpace(name) == "" {
		return nil, errors.New("n8n: CreateTag: blank name")
	}
	var out Tag
	err := c.do(ctx, call{method: http.MethodPost, path: api("/tags"), in: map[string]string{"name": name},
		want: []int{http.StatusOK, http.StatusCreated}, out: &out})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteTag deletes a tag.
func (c *Client) DeleteTag(ctx context.Context, id ID) error {
	if err := needID(id); err != nil {
		return err
	}
	return c.do(ctx, call{method: http.MethodDelete, path: api("/tags/%s", id)})
}

func needID(id ID) error {
	if strings.TrimSpace(string(id)) == "" {
		return errors.New("n8n: empty id")
	}
	return nil
}
