package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/candorkit/candor/approval"
	"github.com/candorkit/candor/examples/builder/internal/generate"
	"github.com/candorkit/candor/examples/builder/internal/notify"
	"github.com/candorkit/candor/examples/builder/internal/progress"
	"github.com/candorkit/candor/examples/builder/internal/queue"
	"github.com/candorkit/candor/examples/builder/internal/secrets"
	"github.com/candorkit/candor/n8n"
	"github.com/candorkit/candor/n8n/n8ntest"
)

// ntfyServer answers POST /{topic} as ntfy documents it (200 and the
// published message as JSON) and records every message.
type ntfyServer struct {
	*httptest.Server
	mu   sync.Mutex
	msgs []notify.Message
}

func newNtfy(t *testing.T) *ntfyServer {
	n := &ntfyServer{}
	n.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		topic := strings.TrimPrefix(r.URL.Path, "/")
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if r.Method != http.MethodPost || topic == "" || err != nil {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"code":40001,"http":400,"error":"invalid request"}`)
			return
		}
		n.mu.Lock()
		n.msgs = append(n.msgs, notify.Message{Title: r.Header.Get("Title"), Body: string(body)})
		n.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": fmt.Sprintf("m%d", time.Now().UnixNano()), "time": time.Now().Unix(), "expires": time.Now().Add(12 * time.Hour).Unix(),
			"event": "message", "topic": topic, "title": r.Header.Get("Title"), "message": string(body),
		})
	}))
	t.Cleanup(n.Close)
	return n
}

// bodies returns the message bodies received so far.
func (n *ntfyServer) bodies() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]string, len(n.msgs))
	for i, m := range n.msgs {
		out[i] = m.Body
	}
	return out
}

// ollamaServer answers POST /api/generate with the documented non-streaming
// object; its "response" wraps the workflow in prose and a Markdown fence,
// as models do.
func ollamaServer(t *testing.T, workflow []byte, status int) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model  string `json:"model"`
			Prompt string `json:"prompt"`
			Stream *bool  `json:"stream"`
		}
		if r.URL.Path != "/api/generate" || json.NewDecoder(r.Body).Decode(&req) != nil || req.Stream == nil || *req.Stream {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"error":"bad request"}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if status != http.StatusOK {
			w.WriteHeader(status)
			_, _ = io.WriteString(w, `{"error":"model '`+req.Model+`' not found"}`)
			return
		}
		reply := "Here is the workflow.\n\n```json\n" + string(workflow) + "\n```\n\nIt has no stubs."
		_ = json.NewEncoder(w).Encode(map[string]any{
			"model": req.Model, "created_at": time.Now().UTC().Format(time.RFC3339Nano), "response": reply,
			"done": true, "done_reason": "stop", "context": []int{1, 2, 3},
			"total_duration": 5191566416, "load_duration": 2154458, "prompt_eval_count": 26,
			"prompt_eval_duration": 383809000, "eval_count": 298, "eval_duration": 4799921000,
		})
	}))
	t.Cleanup(srv.Close)
	return srv
}

// instance is one real n8n shared by the subtests of an edition, used as
// both sandbox and production (credentials "…-sandbox" for the sandbox,
// the same names without the suffix for production).
type instance struct {
	*n8ntest.Instance
	client *n8n.Client
}

const (
	sandboxCred    = "Orders API-sandbox"
	productionCred = "Orders API"
	ledgerCred     = "Ledger-sandbox"
)

func startInstance(t *testing.T, e n8ntest.Edition) *instance {
	inst := n8ntest.Start(t, e, n8ntest.Options{})
	c, err := n8n.New(inst.BaseURL, inst.APIKey)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{sandboxCred, productionCred} {
		if _, err := c.CreateCredential(context.Background(), name, "httpHeaderAuth", map[string]any{"name": "X-Api-Key", "value": "k-" + name}); err != nil {
			t.Fatalf("creating credential %s: %v", name, err)
		}
	}
	// A sandbox credential without a production counterpart.
	if _, err := c.CreateCredential(context.Background(), ledgerCred, "httpQueryAuth", map[string]any{"name": "key", "value": "k-ledger"}); err != nil {
		t.Fatalf("creating credential %s: %v", ledgerCred, err)
	}
	return &instance{Instance: inst, client: c}
}

func (in *instance) env(password string) secrets.Env {
	vars := map[string]string{}
	for _, env := range []secrets.Environment{secrets.Sandbox, secrets.Production} {
		u, k, e, p := secrets.VarNames(env)
		vars[u], vars[k], vars[e], vars[p] = in.BaseURL, in.APIKey, in.Email, password
	}
	return secrets.Env{Lookup: func(k string) (string, bool) { v, ok := vars[k]; return v, ok }}
}

// workflowsNamed returns the workflows of the instance with exactly this name.
func (in *instance) workflowsNamed(t *testing.T, name string) []n8n.Workflow {
	t.Helper()
	all, err := in.client.ListWorkflows(context.Background(), n8n.ListWorkflowsOptions{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	var out []n8n.Workflow
	for _, w := range all {
		if w.Name == name {
			out = append(out, w)
		}
	}
	return out
}

// sampleWorkflow is testdata's workflow renamed, with edit applied to its
// decoded JSON.
func sampleWorkflow(t *testing.T, name string, edit func(doc map[string]any)) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "order-confirmation.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	doc["name"] = name
	if edit != nil {
		edit(doc)
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// node returns the node called name of a decoded workflow.
func node(doc map[string]any, name string) map[string]any {
	for _, n := range doc["nodes"].([]any) {
		if m := n.(map[string]any); m["name"] == name {
			return m
		}
	}
	panic("no node " + name)
}

// withCredential makes "Confirm order" authenticate with header auth.
func withCredential(cred string) func(map[string]any) {
	return withCredentialOf("httpHeaderAuth", cred)
}

// withCredentialOf makes "Confirm order" authenticate with a generic
// credential of type typ.
func withCredentialOf(typ, cred string) func(map[string]any) {
	return func(doc map[string]any) {
		n := node(doc, "Confirm order")
		p := n["parameters"].(map[string]any)
		p["authentication"] = "genericCredentialType"
		p["genericAuthType"] = typ
		n["credentials"] = map[string]any{typ: map[string]any{"name": cred}}
	}
}

// harness is one builder on its own queue and approval store.
type harness struct {
	t         *testing.T
	inst      *instance
	store     *queue.Store
	approvals *approval.Store
	ntfy      *ntfyServer
	out       *strings.Builder
	w         *syncWriter // the one writer of out, shared by every builder
	capture   *CaptureServer
	name      string
	ideaID    int64
}

type harnessOpts struct {
	dsn       string // "" → a SQLite file in t.TempDir()
	workflow  []byte // written to a file for -generator file:
	generator generate.Generator
	assertion *queue.Assertion // nil → the sample's
	noSpec    bool             // store no assertion
	password  string           // "" → the instance's
	overseer  func(*Config)
}

func newHarness(t *testing.T, inst *instance, name string, o harnessOpts) (*harness, *Builder) {
	t.Helper()
	ctx := context.Background()
	dsn := o.dsn
	if dsn == "" {
		dsn = filepath.Join(t.TempDir(), "builder.db")
	}
	store, err := queue.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	if err := store.Init(ctx); err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, inst: inst, store: store, ntfy: newNtfy(t), out: &strings.Builder{}, name: name}
	h.w = &syncWriter{b: h.out}
	idea := queue.Sample()
	idea.Name = name
	switch {
	case o.noSpec:
		idea.Assertion = nil
	case o.assertion != nil:
		idea.Assertion = o.assertion
	}
	if h.ideaID, err = store.InsertIdea(ctx, idea); err != nil {
		t.Fatal(err)
	}
	if h.approvals, err = approval.Open(ctx, filepath.Join(t.TempDir(), "approvals.db"), approval.WithMaxDraftBytes(8<<20), approval.WithLogger(slog.New(slog.DiscardHandler))); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.approvals.Close() })
	if h.capture, err = StartCaptureServer(store, "127.0.0.1:0", nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.capture.Close(); err != nil {
			t.Errorf("capture server: %v", err)
		}
	})
	return h, h.builder(o)
}

func (h *harness) builder(o harnessOpts) *Builder {
	h.t.Helper()
	gen := o.generator
	if gen == nil {
		wf := o.workflow
		if wf == nil {
			wf = sampleWorkflow(h.t, h.name, nil)
		}
		p := filepath.Join(h.t.TempDir(), "workflow.json")
		if err := os.WriteFile(p, wf, 0o600); err != nil {
			h.t.Fatal(err)
		}
		gen = generate.File{Path: p}
	}
	password := o.password
	if password == "" {
		password = h.inst.Password
	}
	cfg := Config{
		Queue: h.store, Approvals: h.approvals, Secrets: h.inst.env(password), Generator: gen,
		Notifier:    notify.Ntfy{Server: h.ntfy.URL, Topic: "builder-test"},
		Progress:    progress.New(h.w),
		CaptureBase: h.capture.Base(),
	}
	if o.overseer != nil {
		o.overseer(&cfg)
	}
	b, err := New(cfg)
	if err != nil {
		h.t.Fatal(err)
	}
	return b
}

type syncWriter struct {
	mu sync.Mutex
	b  *strings.Builder
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// idea re-reads the harness's idea.
func (h *harness) idea() queue.Idea {
	h.t.Helper()
	it, err := h.store.Get(context.Background(), h.ideaID)
	if err != nil {
		h.t.Fatal(err)
	}
	return it
}

// results lists the idea's agent_test_results as "level:status".
func (h *harness) results() []string {
	h.t.Helper()
	rows, err := h.store.TestResults(context.Background(), h.ideaID)
	if err != nil {
		h.t.Fatal(err)
	}
	var out []string
	for _, r := range rows {
		out = append(out, fmt.Sprintf("%d:%s", r.Level, r.Status()))
	}
	return out
}

// expectFailure checks a failed build: the error kind, the idea's status,
// the notification and the sandbox left without the workflow.
func (h *harness) expectFailure(out Outcome, err error, kind error, status queue.BuilderStatus, results, notification string) {
	h.t.Helper()
	var f *Failure
	if !errors.As(err, &f) || !errors.Is(err, kind) {
		h.t.Fatalf("error %v; want a *Failure of kind %v\n%s", err, kind, h.out)
	}
	if f.Cleanup != nil {
		h.t.Errorf("cleanup incomplete: %v", f.Cleanup)
	}
	it := h.idea()
	if it.BuilderStatus != status || out.Status != status || f.Status != status {
		h.t.Errorf("builder_status %s (outcome %s, failure %s); want %s", it.BuilderStatus, out.Status, f.Status, status)
	}
	if it.SandboxWorkflowID != "" {
		h.t.Errorf("sandbox_workflow_id %q still recorded", it.SandboxWorkflowID)
	}
	if status == queue.Failed && it.LastError == "" {
		h.t.Error("failed without last_error")
	}
	if got := strings.Join(h.results(), ","); got != results {
		h.t.Errorf("agent_test_results %q; want %q", got, results)
	}
	bodies := h.ntfy.bodies()
	if len(bodies) == 0 || !strings.HasPrefix(bodies[len(bodies)-1], notification) {
		h.t.Errorf("notifications %q; want the last to start with %q", bodies, notification)
	}
	if out.SandboxWorkflowID != "" {
		_, gerr := h.inst.client.GetWorkflow(context.Background(), n8n.ID(out.SandboxWorkflowID))
		if !out.SandboxDeleted || !n8n.IsStatus(gerr, http.StatusNotFound) {
			h.t.Errorf("imported sandbox workflow %s: deleted=%v, GET: %v; want deleted and 404", out.SandboxWorkflowID, out.SandboxDeleted, gerr)
		}
	}
	if w := h.inst.workflowsNamed(h.t, h.name); len(w) != 0 {
		h.t.Errorf("the sandbox still holds %d workflow(s) named %q", len(w), h.name)
	}
}
