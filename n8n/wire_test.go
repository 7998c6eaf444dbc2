package n8n_test

// Unit tests on httptest servers, each reproducing a wire shape observed on
// a real n8n (see /work/shared/notes/n8n.md): 405s, numeric ids, the
// self-pointing cursor of limit=0, the empty 200 of a failed webhook.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/candorkit/candor/n8n"
	"github.com/candorkit/candor/reply"
)

const testKey = "n8n_api_0123456789abcdef-secret"

func newClient(t *testing.T, srv *httptest.Server, opts n8n.Options) *n8n.Client {
	t.Helper()
	c, err := n8n.New(srv.URL, testKey, opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestListWorkflowsRefusesALoopingCursor(t *testing.T) {
	// n8n's answer to limit=0: every workflow plus a cursor pointing to the
	// same page, forever.
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) > 10 {
			t.Error("client kept following a looping cursor")
			http.Error(w, "stop", 500)
			return
		}
		io.WriteString(w, `{"data":[{"id":"a1","name":"one","nodes":[],"connections":{}}],
			"nextCursor":"eyJsaW1pdCI6MCwib2Zmc2V0IjowfQ=="}`)
	}))
	defer srv.Close()
	got, err := newClient(t, srv, n8n.Options{}).ListWorkflows(context.Background(), n8n.ListWorkflowsOptions{})
	if !errors.Is(err, n8n.ErrCursorLoop) {
		t.Fatalf("err = %v, want ErrCursorLoop", err)
	}
	if got != nil {
		t.Fatalf("a looping list returned %d items; a partial list must not look complete", len(got))
	}
	if n := calls.Load(); n != 2 {
		t.Fatalf("made %d requests, want 2 (the page, then the repeated cursor)", n)
	}
}

func TestListWorkflowsPagesAndClampsLimit(t *testing.T) {
	cases := map[int]string{0: "100", -3: "1", 1: "1", 250: "250", 251: "250", 100000: "250"}
	for asked, sent := range cases {
		var limits []string
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			limits = append(limits, r.URL.Query().Get("limit"))
			switch r.URL.Query().Get("cursor") {
			case "":
				io.WriteString(w, `{"data":[{"id":"1","name":"a"},{"id":2,"name":"b"}],"nextCursor":"c2"}`)
			case "c2":
				io.WriteString(w, `{"data":[{"id":"3","name":"c"}],"nextCursor":"c3"}`)
			case "c3":
				io.WriteString(w, `{"data":[],"nextCursor":null}`)
			default:
				http.Error(w, "bad cursor", 400)
			}
		}))
		got, err := newClient(t, srv, n8n.Options{}).ListWorkflows(context.Background(), n8n.ListWorkflowsOptions{PageSize: asked})
		srv.Close()
		if err != nil {
			t.Fatalf("PageSize %d: %v", asked, err)
		}
		var ids []string
		for _, w := range got {
			ids = append(ids, string(w.ID))
		}
		if strings.Join(ids, ",") != "1,2,3" {
			t.Errorf("PageSize %d: ids %v, want 1,2,3 (numeric id 2 included)", asked, ids)
		}
		for _, l := range limits {
			if l != sent {
				t.Errorf("PageSize %d: sent limit=%s, want %s", asked, l, sent)
			}
		}
	}
}

func TestListWithoutDataIsAnError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"nextCursor":null}`)
	}))
	defer srv.Close()
	_, err := newClient(t, srv, n8n.Options{}).ListWorkflows(context.Background(), n8n.ListWorkflowsOptions{})
	var de *n8n.DecodeError
	if !errors.As(err, &de) {
		t.Fatalf("err = %v, want *DecodeError for a list with no data", err)
	}
}

func TestNumericIDs(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"id":134,"workflowId":"Wf1","status":"error","finished":false,"mode":"webhook",
			"retryOf":6,"retrySuccessId":null,
			"data":{"resultData":{"error":{"message":"boom"}}}}`)
	}))
	defer srv.Close()
	e, err := newClient(t, srv, n8n.Options{}).GetExecution(context.Background(), "134", true)
	if err != nil {
		t.Fatal(err)
	}
	if e.ID != "134" || e.RetryOf != "6" || e.RetrySuccessID != "" || e.WorkflowID != "Wf1" {
		t.Fatalf("ids = %q %q %q %q", e.ID, e.RetryOf, e.RetrySuccessID, e.WorkflowID)
	}
	if e.ErrorMessage() != "boom" {
		t.Fatalf("ErrorMessage = %q", e.ErrorMessage())
	}
	var id n8n.ID
	for _, bad := range []string{`1.5`, `true`, `{}`, `[]`} {
		if err := json.Unmarshal([]byte(bad), &id); err == nil {
			t.Errorf("ID accepted %s", bad)
		}
	}
}

func TestMethodNotAllowedMeansEdition1(t *testing.T) {
	// n8n 1.x answers GET /api/v1/credentials with 405.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			t.Errorf("unexpected %s %s", r.Method, r.URL.Path)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusMethodNotAllowed)
		io.WriteString(w, `{"message":"GET method not allowed"}`)
	}))
	defer srv.Close()
	c := newClient(t, srv, n8n.Options{})
	ed, err := c.DetectEdition(context.Background())
	if err != nil || ed != n8n.Edition1 {
		t.Fatalf("DetectEdition = %v, %v; want Edition1", ed, err)
	}
	// The same 405 on a call that needs it is an *APIError with the evidence.
	_, err = c.ListWorkflows(context.Background(), n8n.ListWorkflowsOptions{})
	var ae *n8n.APIError
	if !errors.As(err, &ae) || ae.Status != 405 || ae.Message != "GET method not allowed" || !n8n.IsStatus(err, 405) {
		t.Fatalf("err = %#v", err)
	}
}

func TestKeyNeverInErrorsOrLogs(t *testing.T) {
	var logs bytes.Buffer
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-N8N-API-KEY") != testKey {
			t.Errorf("key header = %q", r.Header.Get("X-N8N-API-KEY"))
		}
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"message":"unauthorized"}`)
	}))
	defer srv.Close()
	c := newClient(t, srv, n8n.Options{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	_, err := c.GetWorkflow(context.Background(), "x")
	if !n8n.IsStatus(err, 401) {
		t.Fatalf("err = %v", err)
	}
	slog.New(slog.NewTextHandler(&logs, nil)).Info("client", "c", c)
	for what, s := range map[string]string{"error": err.Error(), "logs": logs.String(), "String": c.String()} {
		if strings.Contains(s, testKey) || strings.Contains(s, "secret") {
			t.Errorf("the API key appears in the %s: %s", what, s)
		}
	}
	if !strings.Contains(logs.String(), "status=401") {
		t.Errorf("no request log: %s", logs.String())
	}
	if _, err := n8n.New(srv.URL, " ", n8n.Options{}); err == nil {
		t.Error("New accepted a blank API key")
	}
}

func TestIDsAreEscapedOnce(t *testing.T) {
	// Ids go into the path escaped exactly once, below the base URL's prefix.
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.RequestURI)
		io.WriteString(w, `{"id":"a b/c%","name":"x"}`)
	}))
	defer srv.Close()
	c, err := n8n.New(srv.URL+"/pre%20fix", testKey, n8n.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetWorkflow(context.Background(), "a b/c%"); err != nil {
		t.Fatal(err)
	}
	if want := "/pre%20fix/api/v1/workflows/a%20b%2Fc%25"; len(got) != 1 || got[0] != want {
		t.Fatalf("request URIs %q; want [%q]", got, want)
	}
}

func TestRedirectIsNotFollowed(t *testing.T) {
	var leaked atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked.Add(1)
	}))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/steal", http.StatusFound)
	}))
	defer srv.Close()
	_, err := newClient(t, srv, n8n.Options{}).GetWorkflow(context.Background(), "x")
	if !n8n.IsStatus(err, http.StatusFound) {
		t.Fatalf("err = %v, want an *APIError 302", err)
	}
	if leaked.Load() != 0 {
		t.Fatal("the request (and its API key) was replayed to the redirect target")
	}
}

func TestResponseBound(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"id":"1","name":"`+strings.Repeat("x", 4096)+`"}`)
	}))
	defer srv.Close()
	_, err := newClient(t, srv, n8n.Options{MaxResponseBytes: 1024}).GetWorkflow(context.Background(), "1")
	if !errors.Is(err, n8n.ErrResponseTooLarge) {
		t.Fatalf("err = %v, want ErrResponseTooLarge", err)
	}
	big := strings.Repeat("e", n8n.MaxErrorBody+100)
	srv2 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(500)
		io.WriteString(w, big)
	}))
	defer srv2.Close()
	_, err = newClient(t, srv2, n8n.Options{}).GetWorkflow(context.Background(), "1")
	var ae *n8n.APIError
	if !errors.As(err, &ae) || len(ae.Body) != n8n.MaxErrorBody || !ae.Truncated {
		t.Fatalf("err = %v; want an APIError with a body cut at MaxErrorBody", err)
	}
}

func TestCreateSendsOnlyWritableFields(t *testing.T) {
	// n8n rejects active, id, tags, versionId, pinData, meta… on create.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]json.RawMessage
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			t.Error(err)
		}
		var keys []string
		for k := range body {
			keys = append(keys, k)
		}
		if len(body) != 4 || body["name"] == nil || body["nodes"] == nil || body["connections"] == nil || string(body["settings"]) != "{}" {
			w.WriteHeader(400)
			io.WriteString(w, `{"message":"request/body must NOT have additional properties"}`)
			t.Errorf("create body keys %v", keys)
			return
		}
		io.WriteString(w, `{"id":"new1","versionId":"v1","active":false,"name":"x","nodes":[],"connections":{}}`)
	}))
	defer srv.Close()
	wf, err := n8n.ParseWorkflow([]byte(`{"id":"old","name":"x","active":true,"nodes":[],"connections":{},
		"tags":[{"id":"t","name":"t"}],"versionId":"v0","pinData":{},"meta":{"a":1}}`))
	if err != nil {
		t.Fatal(err)
	}
	got, err := newClient(t, srv, n8n.Options{}).CreateWorkflow(context.Background(), wf)
	if err != nil || got.ID != "new1" || got.VersionID != "v1" {
		t.Fatalf("CreateWorkflow = %+v, %v", got, err)
	}
}

func TestCallWebhookWireShapes(t *testing.T) {
	const token = "subject-token-value"
	type answer struct {
		status int
		body   string
	}
	var next atomic.Value
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.Header.Get("X-Subject-Token") != token {
			t.Errorf("X-Subject-Token = %q", r.Header.Get("X-Subject-Token"))
		}
		if b, _ := io.ReadAll(r.Body); string(b) != `{"q":"stock 7305?"}` {
			t.Errorf("body = %s", b)
		}
		a := next.Load().(answer)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(a.status)
		io.WriteString(w, a.body)
	}))
	defer srv.Close()
	call := func(a answer) (n8n.Reply, error) {
		next.Store(a)
		return n8n.CallWebhook(context.Background(), srv.URL+"/webhook/x", token, map[string]string{"q": "stock 7305?"})
	}

	r, err := call(answer{200, `{"answer":"12 in stock","escalate":false}`})
	if err != nil || r != (n8n.Reply{Answer: "12 in stock"}) {
		t.Fatalf("contract body: %+v, %v", r, err)
	}
	// n8n 1.x: a node throws before Respond to Webhook.
	_, err = call(answer{200, ``})
	if !errors.Is(err, n8n.ErrEmptyReply) || !errors.Is(err, reply.ErrEmpty) {
		t.Fatalf("empty 200: %v, want ErrEmptyReply", err)
	}
	// n8n 2.x (and lastNode mode): a Code node throws.
	_, err = call(answer{500, `{"message":"Error in workflow"}`})
	var ce *n8n.ContractError
	var rce *reply.ContractError
	if !errors.As(err, &ce) || ce.Status != 500 || string(ce.Raw) != `{"message":"Error in workflow"}` ||
		!strings.Contains(ce.Reason, "Error in workflow") || !errors.As(err, &rce) {
		t.Fatalf("500: %v", err)
	}
	// A 200 that is not exactly the contract.
	_, err = call(answer{200, `{"answer":"ok","escalate":false,"debug":1}`})
	if !errors.As(err, &ce) || ce.Status != 200 || !strings.Contains(ce.Reason, `"debug"`) {
		t.Fatalf("off-contract 200: %v", err)
	}
	// An inactive workflow's webhook.
	_, err = call(answer{404, `{"code":404,"message":"The requested webhook \"POST x\" is not registered."}`})
	if !errors.As(err, &ce) || ce.Status != 404 {
		t.Fatalf("404: %v", err)
	}
	// The contract with a non-200 status is still off contract.
	_, err = call(answer{202, `{"answer":"ok","escalate":false}`})
	if !errors.As(err, &ce) || ce.Status != 202 {
		t.Fatalf("202: %v", err)
	}
	before := calls.Load()
	if _, err := n8n.CallWebhook(context.Background(), srv.URL, "", nil); !errors.Is(err, n8n.ErrNoSubjectToken) {
		t.Fatalf("no token: %v", err)
	}
	if calls.Load() != before {
		t.Fatal("a call without a subject token reached the webhook")
	}
}

func TestCallWebhookBound(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"answer":"`+strings.Repeat("a", reply.MaxBytes)+`","escalate":false}`)
	}))
	defer srv.Close()
	_, err := n8n.CallWebhook(context.Background(), srv.URL, "t", json.RawMessage(`{}`))
	var ce *n8n.ContractError
	if !errors.As(err, &ce) || len(ce.Raw) != reply.MaxBytes || !strings.Contains(ce.Reason, strconv.Itoa(reply.MaxBytes)) {
		t.Fatalf("err = %v, want a ContractError for a body over reply.MaxBytes", err)
	}
	if _, err := n8n.CallWebhook(context.Background(), srv.URL, "t", []byte(`not json`)); err == nil {
		t.Fatal("sent a body that is not JSON")
	}
}

func TestSessionCreateWorkflowChecksItsTags(t *testing.T) {
	// n8n with workflow tags disabled creates the workflow and drops the tags.
	var sent map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/rest/login":
			http.SetCookie(w, &http.Cookie{Name: "n8n-auth", Value: "session-cookie-value"})
			io.WriteString(w, `{"data":{"id":"u1"}}`)
		case "/rest/workflows":
			if r.Header.Get("Cookie") != "n8n-auth=session-cookie-value" || r.Header.Get("X-N8N-API-KEY") != "" {
				t.Errorf("create sent cookie %q, key %q", r.Header.Get("Cookie"), r.Header.Get("X-N8N-API-KEY"))
			}
			json.NewDecoder(r.Body).Decode(&sent)
			io.WriteString(w, `{"data":{"id":"W1","name":"t","active":false,"nodes":[],"connections":{},"versionId":"v1","tags":[]}}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	c := newClient(t, srv, n8n.Options{})
	s, err := c.Login(context.Background(), "owner@example.test", "Password-1")
	if err != nil {
		t.Fatal(err)
	}
	wf, err := s.CreateWorkflow(context.Background(), &n8n.Workflow{Name: "t", Active: true}, "T1")
	if !errors.Is(err, n8n.ErrTagsNotAttached) || wf == nil || wf.ID != "W1" {
		t.Fatalf("CreateWorkflow = %+v, %v; want the created workflow and ErrTagsNotAttached", wf, err)
	}
	if sent["active"] != false || fmt.Sprint(sent["tags"]) != "[T1]" || sent["versionId"] != nil {
		t.Fatalf("request body %v: want active false, tags [T1], nothing read-only", sent)
	}
}
