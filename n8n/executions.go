package n8n

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"net/http"
	"net/url"
	"strings"
)

// ExecutionStatus is the status n8n reports for an execution.
type ExecutionStatus string

// Execution statuses n8n reports.
const (
	ExecutionNew      ExecutionStatus = "new"
	ExecutionRunning  ExecutionStatus = "running"
	ExecutionSuccess  ExecutionStatus = "success"
	ExecutionError    ExecutionStatus = "error"
	ExecutionWaiting  ExecutionStatus = "waiting"
	ExecutionCanceled ExecutionStatus = "canceled"
	ExecutionCrashed  ExecutionStatus = "crashed"
)

// Execution is one run of a workflow.
type Execution struct {
	ID         ID              `json:"id"`
	WorkflowID ID              `json:"workflowId"`
	Status     ExecutionStatus `json:"status"`
	Mode       string          `json:"mode"`
	Finished   bool            `json:"finished"`
	StartedAt  string          `json:"startedAt,omitempty"`
	StoppedAt  string          `json:"stoppedAt,omitempty"`
	// RetryOf and RetrySuccessID are ids n8n sometimes sends as numbers.
	RetryOf        ID `json:"retryOf,omitempty"`
	RetrySuccessID ID `json:"retrySuccessId,omitempty"`
	// Data is the run data, present when asked for with includeData.
	Data json.RawMessage `json:"data,omitempty"`
}

// ErrorMessage returns data.resultData.error.message, the message of the
// error that stopped the run, or "" when the execution carries none (or was
// read without its data).
func (e *Execution) ErrorMessage() string {
	if len(e.Data) == 0 {
		return ""
	}
	var d struct {
		ResultData struct {
			Error *struct {
				Message string `json:"message"`
			} `json:"error"`
		} `json:"resultData"`
	}
	if json.Unmarshal(e.Data, &d) != nil || d.ResultData.Error == nil {
		return ""
	}
	return d.ResultData.Error.Message
}

// ListExecutionsOptions select the executions ListExecutions and
// Executions return; the newest come first.
type ListExecutionsOptions struct {
	WorkflowID ID
	// Status is one of the Execution… constants, or "" for all.
	Status      ExecutionStatus
	ProjectID   string
	IncludeData bool
	// PageSize is the page size sent as limit (clamped to 1..250; 0 = 100).
	PageSize int
	// Max stops after this many executions; 0 reads every page. Only
	// ListExecutions reads it: a range over Executions stops with a break.
	Max int
}

// ListExecutions returns the executions matching f, newest first. A listing
// that cannot be completed matches ErrIncompleteList and returns none.
func (c *Client) ListExecutions(ctx context.Context, f ListExecutionsOptions) ([]Execution, error) {
	return collect(c.Executions(ctx, f), f.Max)
}

// Executions is ListExecutions as an iterator, newest first; a listing that
// cannot be completed ends with a non-nil error, never silently.
func (c *Client) Executions(ctx context.Context, f ListExecutionsOptions) iter.Seq2[Execution, error] {
	q := url.Values{}
	if f.WorkflowID != "" {
		q.Set("workflowId", string(f.WorkflowID))
	}
	if f.Status != "" {
		q.Set("status", string(f.Status))
	}
	if f.ProjectID != "" {
		q.Set("projectId", f.ProjectID)
	}
	if f.IncludeData {
		q.Set("includeData", "true")
	}
	return listSeq[Execution](ctx, c, api("/executions"), q, f.PageSize)
}

// GetExecution reads one execution, with its run data when includeData.
func (c *Client) GetExecution(ctx context.Context, id ID, includeData bool) (*Execution, error) {
	if err := needID(id); err != nil {
		return nil, err
	}
	var q url.Values
	if includeData {
		q = url.Values{"includeData": {"true"}}
	}
	var out Execution
	if err := c.do(ctx, call{method: http.MethodGet, path: api("/executions/%s", id), query: q, out: &out}); err != nil {
		return nil, err
	}
	if out.ID == "" {
		return nil, &DecodeError{Method: http.MethodGet, Path: api("/executions/%s", id), StatusCode: 200,
			Err: errors.New("execution without an id")}
	}
	return &out, nil
}

// Credential is a stored credential's metadata; n8n never returns its data.
type Credential struct {
	ID        ID     `json:"id"`
	Name      string `json:"name"`
	Type      string `json:"type"`
	CreatedAt string `json:"createdAt,omitempty"`
	UpdatedAt string `json:"updatedAt,omitempty"`
}

// CreateCredential stores a credential of the given type. n8n checks data
// against the type's schema (see CredentialSchema); data goes only into the
// request body, never into logs or errors.
func (c *Client) CreateCredential(ctx context.Context, name, typ string, data map[string]any) (*Credential, error) {
	if strings.TrimSpace(name) == "" || strings.TrimSpace(typ) == "" {
		return nil, errors.New("n8n: CreateCredential needs a name and a type")
	}
	if data == nil {
		data = map[string]any{}
	}
	in := map[string]any{"name": name, "type": typ, "data": data}
	var out Credential
	if err := c.do(ctx, call{method: http.MethodPost, path: api("/credentials"), in: in, out: &out}); err != nil {
		return nil, err
	}
	if out.ID == "" {
		return nil, &DecodeError{Method: http.MethodPost, Path: api("/credentials"), StatusCode: 200,
			Err: errors.New("created credential without an id")}
	}
	return &out, nil
}

// DeleteCredential deletes a credential.
func (c *Client) DeleteCredential(ctx context.Context, id ID) error {
	if err := needID(id); err != nil {
		return err
	}
	return c.do(ctx, call{method: http.MethodDelete, path: api("/credentials/%s", id)})
}

// CredentialSchema returns the JSON schema n8n checks a credential type's
// data against.
func (c *Client) CredentialSchema(ctx context.Context, typ string) (json.RawMessage, error) {
	if strings.TrimSpace(typ) == "" {
		return nil, errors.New("n8n: CredentialSchema: blank type")
	}
	var raw []byte
	if err := c.do(ctx, call{method: http.MethodGet, path: api("/credentials/schema/%s", typ), raw: &raw}); err != nil {
		return nil, err
	}
	if !json.Valid(raw) {
		return nil, &DecodeError{Method: http.MethodGet, Path: api("/credentials/schema/%s", typ), StatusCode: 200,
			Body: cut(raw), Err: errors.New("schema is not JSON")}
	}
	return json.RawMessage(raw), nil
}
