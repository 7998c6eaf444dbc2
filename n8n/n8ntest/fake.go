package n8ntest

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/candorkit/candor/internal/canonjson"
	"github.com/candorkit/candor/internal/httpx"
)

// Fake is a hermetic stand-in for the parts of n8n that package n8n uses:
// see the package documentation for what it models. The scenario tests run
// on a Fake and on real n8n alike, which is what keeps it honest.
type Fake struct {
	edition      Edition
	draftPublish bool
	// settle is how many reads of a workflow with an in-flight
	// publication (n8n 2.x) pass before it settles.
	settle int

	mu          sync.Mutex
	apiKey      string
	email       string
	password    string
	cookie      string
	workflows   map[string]*fakeWorkflow
	versions    map[string]fakeVersion
	tags        map[string]*fakeTag
	credentials map[string]*fakeCredential
	executions  []*fakeExecution // oldest first
	faults      map[string][]fakeFault
	hooks       map[string][]func()
	log         *os.File
	seq         int
	execSeq     int
	requests    int // requests served, for publications settling with time
}

type fakeVersion struct {
	Name        string          `json:"name"`
	Nodes       json.RawMessage `json:"nodes"`
	Connections json.RawMessage `json:"connections"`
}

type fakeWorkflow struct {
	id          string
	version     fakeVersion
	settings    map[string]json.RawMessage
	staticData  json.RawMessage
	versionID   string
	activeID    string // "" is null
	active      bool
	createdAt   string
	updatedAt   string
	pub         *fakePublication // n8n 2.x
	served      string           // n8n 2.x: the version whose triggers run
	statusReads int
	tagIDs      []string
	pinData     json.RawMessage // "" is null
}

type fakePublication struct {
	began    int // f.requests when it was accepted
	status   string
	live     string
	pending  string
	triggers []map[string]any
}

type fakeFault struct {
	status  int
	message string
}

// settleRequests is how many requests of any kind pass before an in-flight
// publication (n8n 2.x) settles, if reads of it did not settle it first.
const settleRequests = 10

// FakeOp names an operation of the Fake, for FailNext and Before.
type FakeOp string

// The operations of the Fake.
const (
	OpList              FakeOp = "list"
	OpGet               FakeOp = "get"
	OpCreate            FakeOp = "create"
	OpUpdate            FakeOp = "update"
	OpDelete            FakeOp = "delete"
	OpActivate          FakeOp = "activate"
	OpDeactivate        FakeOp = "deactivate"
	OpPublish           FakeOp = "publish"
	OpUnpublish         FakeOp = "unpublish"
	OpPublicationStatus FakeOp = "publication-status"

	OpListTags         FakeOp = "list-tags"
	OpCreateTag        FakeOp = "create-tag"
	OpDeleteTag        FakeOp = "delete-tag"
	OpWorkflowTags     FakeOp = "workflow-tags"
	OpSetWorkflowTags  FakeOp = "set-workflow-tags"
	OpListCredentials  FakeOp = "list-credentials" // public API (2.x) and /rest
	OpCreateCredential FakeOp = "create-credential"
	OpDeleteCredential FakeOp = "delete-credential"
	OpCredentialSchema FakeOp = "credential-schema"
	OpListExecutions   FakeOp = "list-executions"
	OpGetExecution     FakeOp = "get-execution"
	OpLogin            FakeOp = "login"
	OpSessionCreate    FakeOp = "session-create" // POST /rest/workflows
	OpSessionGet       FakeOp = "session-get"    // GET /rest/workflows/{id}
	OpSessionPatch     FakeOp = "session-patch"  // PATCH /rest/workflows/{id}
	OpRun              FakeOp = "run"            // POST /rest/workflows/{id}/run
	OpWebhook          FakeOp = "webhook"        // a production webhook call
)

// FailNext makes the next call of op answer status with n8n's error shape
// {"message": message}, without doing anything.
func (f *Fake) FailNext(op FakeOp, status int, message string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults[string(op)] = append(f.faults[string(op)], fakeFault{status, message})
}

// Before runs fn once, just before the next call of op is handled (for
// instance to act as another writer in the middle of a deploy). fn runs
// without the Fake's lock, so it may call the Fake over HTTP.
func (f *Fake) Before(op FakeOp, fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hooks[string(op)] = append(f.hooks[string(op)], fn)
}

// StartFake starts a Fake of edition e on a loopback httptest server and
// returns it as an Instance (Fake set, PID 0), bootstrapped like Start's:
// an owner, an API key and a session cookie. opts.Env honours
// N8N_ENV_FEAT_WORKFLOWS_DRAFT_PUBLISH_ENABLED=true on edition 1. The
// server stops at the end of the test.
func StartFake(t testing.TB, e Edition, opts Options) *Instance {
	t.Helper()
	dir := t.TempDir()
	logf, err := os.Create(filepath.Join(dir, "n8n.log"))
	if err != nil {
		t.Fatal(err)
	}
	f := &Fake{
		edition:      e,
		draftPublish: e == Edition1 && opts.Env["N8N_ENV_FEAT_WORKFLOWS_DRAFT_PUBLISH_ENABLED"] == "true",
		settle:       1,
		apiKey:       "n8n_fake_" + randomHex(16),
		email:        "owner@candor.test",
		password:     "Candor-test-1",
		cookie:       "n8n-auth=" + randomHex(16),
		workflows:    map[string]*fakeWorkflow{},
		versions:     map[string]fakeVersion{},
		tags:         map[string]*fakeTag{},
		credentials:  map[string]*fakeCredential{},
		faults:       map[string][]fakeFault{},
		hooks:        map[string][]func(){},
		log:          logf,
	}
	srv := httptest.NewServer(f)
	exited := make(chan struct{})
	t.Cleanup(func() {
		srv.Close()
		logf.Close()
	})
	version := "1.123.81"
	if e == Edition2 {
		version = "2.41.1"
	}
	return &Instance{Edition: e, Version: "fake " + version, BaseURL: srv.URL, APIKey: f.apiKey,
		Email: f.email, Password: f.password, Cookie: f.cookie, UserFolder: dir, Fake: f, exited: exited}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func (f *Fake) newID() string {
	f.seq++
	return fmt.Sprintf("fake%012d", f.seq)
}

func newVersionID() string {
	b := randomHex(16)
	return b[:8] + "-" + b[8:12] + "-" + b[12:16] + "-" + b[16:20] + "-" + b[20:32]
}

var (
	workflowPath = regexp.MustCompile(`^/api/v1/workflows/([^/]+)(?:/(activate|deactivate|publish|unpublish))?$`)
	statusPath   = regexp.MustCompile(`^/rest/workflows/([^/]+)/publication-status$`)
)

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func fail(w http.ResponseWriter, status int, message string) {
	writeJSON(w, status, map[string]any{"message": message})
}

// ServeHTTP answers one request.
func (f *Fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := httpx.ReadAll(r.Body, 16<<20)
	if err != nil {
		fail(w, http.StatusRequestEntityTooLarge, "request entity too large")
		return
	}
	op, id := f.route(r)
	f.mu.Lock()
	hooks := f.hooks[string(op)]
	delete(f.hooks, string(op))
	f.mu.Unlock()
	for _, h := range hooks {
		h()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	fmt.Fprintf(f.log, "%s %s %s\n", time.Now().UTC().Format(time.RFC3339Nano), r.Method, r.URL.Path)
	f.requests++
	for _, wf := range f.workflows {
		// n8n 2.x settles a publication shortly after its 200, whatever is
		// read meanwhile: here after settleRequests requests of any kind.
		if wf.pub != nil && wf.pub.status == "in_progress" && f.requests-wf.pub.began > settleRequests {
			f.settlePending(wf)
		}
	}
	if q := f.faults[string(op)]; op != "" && len(q) > 0 {
		f.faults[string(op)] = q[1:]
		fail(w, q[0].status, q[0].message)
		return
	}
	switch {
	case strings.HasPrefix(r.URL.Path, "/webhook/"):
		f.webhook(w, r, body)
		return
	case op == OpLogin:
		var in struct {
			Email    string `json:"emailOrLdapLoginId"`
			Password string `json:"password"`
		}
		if json.Unmarshal(body, &in) != nil || in.Email != f.email || in.Password != f.password {
			fail(w, http.StatusUnauthorized, "Wrong username or password. Do you have caps lock on?")
			return
		}
		http.SetCookie(w, &http.Cookie{Name: "n8n-auth", Value: strings.TrimPrefix(f.cookie, "n8n-auth="), HttpOnly: true})
		writeJSON(w, http.StatusOK, map[string]any{"data": map[string]any{"email": f.email}})
		return
	case strings.HasPrefix(r.URL.Path, "/rest/"):
		if r.Header.Get("Cookie") != f.cookie {
			fail(w, http.StatusUnauthorized, "Unauthorized")
			return
		}
		switch op {
		case OpPublicationStatus:
			if f.edition == Edition2 {
				f.publicationStatus(w, id)
				return
			}
		case OpListCredentials:
			writeJSON(w, http.StatusOK, map[string]any{"data": f.credentialList()})
			return
		case OpSessionCreate:
			f.sessionCreate(w, body)
			return
		case OpSessionGet, OpSessionPatch, OpRun:
			wf := f.workflows[id]
			if wf == nil {
				fail(w, http.StatusNotFound, "Could not find workflow")
				return
			}
			switch op {
			case OpSessionGet:
				writeJSON(w, http.StatusOK, map[string]any{"data": f.sessionView(wf)})
			case OpSessionPatch:
				f.sessionPatch(w, wf, body)
			default:
				f.run(w, wf, body)
			}
			return
		}
		fail(w, http.StatusNotFound, "Not Found")
		return
	case strings.HasPrefix(r.URL.Path, "/api/v1/"):
		if r.Header.Get("X-N8N-API-KEY") != f.apiKey {
			fail(w, http.StatusUnauthorized, "unauthorized")
			return
		}
	default:
		fail(w, http.StatusNotFound, "Not Found")
		return
	}
	if f.serveMore(w, r, op, id, body) {
		return
	}
	switch op {
	case OpList:
		f.list(w, r)
	case OpCreate:
		f.create(w, body)
	case "":
		fail(w, http.StatusNotFound, "Not Found")
	default:
		wf := f.workflows[id]
		if wf == nil {
			fail(w, http.StatusNotFound, "Not Found")
			return
		}
		f.workflowOp(w, r, op, wf, body)
	}
}

func (f *Fake) route(r *http.Request) (FakeOp, string) {
	if m := statusPath.FindStringSubmatch(r.URL.Path); m != nil && r.Method == http.MethodGet {
		return OpPublicationStatus, m[1]
	}
	if op, id, ok := routeMore(r); ok {
		return op, id
	}
	if r.URL.Path == "/api/v1/workflows" {
		switch r.Method {
		case http.MethodGet:
			return OpList, ""
		case http.MethodPost:
			return OpCreate, ""
		}
		return "", ""
	}
	m := workflowPath.FindStringSubmatch(r.URL.Path)
	if m == nil {
		return "", ""
	}
	switch {
	case m[2] != "" && r.Method == http.MethodPost:
		return FakeOp(m[2]), m[1]
	case m[2] != "":
		return "", ""
	case r.Method == http.MethodGet:
		return OpGet, m[1]
	case r.Method == http.MethodPut:
		return OpUpdate, m[1]
	case r.Method == http.MethodDelete:
		return OpDelete, m[1]
	}
	return "", ""
}

// writeBody checks a create or update body as n8n's public API does.
func writeBody(body []byte) (map[string]json.RawMessage, string) {
	if _, err := canonjson.Canonicalize(body); err != nil {
		return nil, "request/body is not valid JSON"
	}
	var in map[string]json.RawMessage
	if err := json.Unmarshal(body, &in); err != nil || in == nil {
		return nil, "request/body must be object"
	}
	for k := range in {
		switch k {
		case "name", "nodes", "connections", "settings", "staticData":
		case "active", "id", "tags":
			return nil, "request/body/" + k + " is read-only"
		default:
			return nil, "request/body must NOT have additional properties"
		}
	}
	for _, k := range []string{"name", "nodes", "connections", "settings"} {
		if _, ok := in[k]; !ok {
			return nil, "request/body must have required property '" + k + "'"
		}
	}
	return in, ""
}

func (f *Fake) create(w http.ResponseWriter, body []byte) {
	in, msg := writeBody(body)
	if msg != "" {
		fail(w, http.StatusBadRequest, msg)
		return
	}
	now := time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	wf := &fakeWorkflow{id: f.newID(), settings: map[string]json.RawMessage{}, createdAt: now, updatedAt: now}
	var name string
	_ = json.Unmarshal(in["name"], &name)
	wf.version = fakeVersion{Name: name, Nodes: in["nodes"], Connections: in["connections"]}
	_ = json.Unmarshal(in["settings"], &wf.settings)
	wf.staticData = in["staticData"]
	wf.versionID = newVersionID()
	f.versions[wf.versionID] = wf.version
	f.workflows[wf.id] = wf
	writeJSON(w, http.StatusOK, f.view(wf))
}

func (f *Fake) view(wf *fakeWorkflow) map[string]any {
	var active any
	if wf.activeID != "" {
		active = wf.activeID
	}
	static := wf.staticData
	if len(static) == 0 {
		static = json.RawMessage("null")
	}
	return map[string]any{
		"id": wf.id, "name": wf.version.Name, "active": wf.active, "nodes": wf.version.Nodes,
		"connections": wf.version.Connections, "settings": wf.settings, "staticData": static,
		"versionId": wf.versionID, "activeVersionId": active, "createdAt": wf.createdAt,
		"updatedAt": wf.updatedAt, "tags": f.tagsOf(wf), "isArchived": false,
	}
}

func (f *Fake) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit, err := strconv.Atoi(q.Get("limit"))
	if q.Get("limit") == "" {
		limit = 100
	} else if err != nil || limit < 0 || limit > 250 {
		fail(w, http.StatusBadRequest, "request/query/limit must be <= 250")
		return
	}
	offset := 0
	if c := q.Get("cursor"); c != "" {
		raw, err := base64.StdEncoding.DecodeString(c)
		var cur struct{ Offset int }
		if err != nil || json.Unmarshal(raw, &cur) != nil {
			fail(w, http.StatusBadRequest, "An invalid cursor was provided")
			return
		}
		offset = cur.Offset
	}
	ids := make([]string, 0, len(f.workflows))
	for id, wf := range f.workflows {
		if n := q.Get("name"); n != "" && !strings.Contains(strings.ToLower(wf.version.Name), strings.ToLower(n)) {
			continue
		}
		if a := q.Get("active"); a != "" && a != strconv.FormatBool(wf.active) {
			continue
		}
		if t := q.Get("tags"); t != "" && !f.hasTags(wf, strings.Split(t, ",")) {
			continue
		}
		if q.Get("projectId") != "" {
			continue // the Fake has no projects: the filter matches nothing
		}
		ids = append(ids, id)
	}
	sort.Strings(ids)
	page := []any{}
	end := len(ids)
	if limit > 0 && offset+limit < end {
		end = offset + limit
	}
	for _, id := range ids[min(offset, len(ids)):end] {
		page = append(page, f.view(f.workflows[id]))
	}
	var next any
	if end < len(ids) || limit == 0 {
		// n8n's limit=0 answers a cursor that points to its own page.
		b, _ := json.Marshal(map[string]int{"limit": limit, "offset": end * btoi(limit > 0)})
		next = base64.StdEncoding.EncodeToString(b)
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": page, "nextCursor": next})
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (f *Fake) workflowOp(w http.ResponseWriter, r *http.Request, op FakeOp, wf *fakeWorkflow, body []byte) {
	if op == OpGet || op == OpDelete {
		f.tick(wf)
	}
	switch op {
	case OpGet:
		writeJSON(w, http.StatusOK, f.view(wf))
	case OpDelete:
		if f.edition == Edition2 && (wf.active || (wf.pub != nil && wf.pub.status == "in_progress")) {
			fail(w, http.StatusConflict, "Workflow is published; unpublish it first")
			return
		}
		delete(f.workflows, wf.id)
		writeJSON(w, http.StatusOK, f.view(wf))
	case OpUpdate:
		f.update(w, r, wf, body)
	case OpActivate, OpPublish:
		var in struct {
			VersionID string `json:"versionId"`
		}
		_ = json.Unmarshal(body, &in)
		if f.edition == Edition1 {
			if op == OpPublish {
				fail(w, http.StatusNotFound, "Not Found")
				return
			}
			f.activate1(w, wf, in.VersionID)
			return
		}
		v := in.VersionID
		if v == "" {
			v = wf.versionID
		}
		f.publish2(w, wf, v)
	case OpDeactivate, OpUnpublish:
		if f.edition == Edition1 && op == OpUnpublish {
			fail(w, http.StatusNotFound, "Not Found")
			return
		}
		wf.active, wf.activeID = false, ""
		if f.edition == Edition2 {
			f.settlePending(wf)
			wf.pub = &fakePublication{status: "in_progress", pending: "", began: f.requests}
			wf.statusReads = 0
		}
		writeJSON(w, http.StatusOK, f.view(wf))
	}
}

func (f *Fake) update(w http.ResponseWriter, r *http.Request, wf *fakeWorkflow, body []byte) {
	in, msg := writeBody(body)
	if msg != "" {
		fail(w, http.StatusBadRequest, msg)
		return
	}
	var name string
	_ = json.Unmarshal(in["name"], &name)
	next := fakeVersion{Name: name, Nodes: in["nodes"], Connections: in["connections"]}
	var settings map[string]json.RawMessage
	_ = json.Unmarshal(in["settings"], &settings)
	for k, v := range settings {
		wf.settings[k] = v // n8n merges settings
	}
	if !sameVersion(wf.version, next) {
		wf.version = next
		wf.versionID = newVersionID()
		f.versions[wf.versionID] = next
	}
	wf.updatedAt = time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	switch {
	case !wf.active:
	case f.edition == Edition1 && !f.draftPublish && wf.activeID != wf.versionID:
		// Live at once; a version that cannot activate is saved, and the
		// workflow deactivated.
		if reason := activationError(next); reason != "" {
			wf.active, wf.activeID = false, ""
			fail(w, http.StatusBadRequest, reason)
			return
		}
		wf.activeID = wf.versionID
	case f.edition == Edition2 && r.URL.Query().Get("publishIfActive") != "false" && wf.activeID != wf.versionID:
		f.publish2(w, wf, wf.versionID)
		return
	}
	writeJSON(w, http.StatusOK, f.view(wf))
}

func sameVersion(a, b fakeVersion) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	eq, err := canonjson.Equal(x, y)
	return err == nil && eq
}

// fakeNode is what the Fake reads of a node.
type fakeNode struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	Type       string `json:"type"`
	Parameters struct {
		Path       string `json:"path"`
		HTTPMethod string `json:"httpMethod"`
		JSCode     string `json:"jsCode"`
		Rule       struct {
			Interval []struct {
				Field      string `json:"field"`
				Expression string `json:"expression"`
			} `json:"interval"`
		} `json:"rule"`
	} `json:"parameters"`
}

func nodesOf(v fakeVersion) []fakeNode {
	var ns []fakeNode
	_ = json.Unmarshal(v.Nodes, &ns)
	return ns
}

func isTrigger(n fakeNode) bool {
	t := strings.ToLower(n.Type)
	return strings.HasSuffix(t, ".webhook") || strings.HasSuffix(t, "trigger")
}

// triggerError is why n8n cannot start a trigger node, "" when it can.
func triggerError(n fakeNode) string {
	for _, iv := range n.Parameters.Rule.Interval {
		if iv.Field == "cronExpression" {
			if k := len(strings.Fields(iv.Expression)); k < 5 || k > 6 {
				return `There was a problem activating the workflow: "Invalid cron expression"`
			}
		}
	}
	return ""
}

// activationError is why n8n 1.x refuses to activate v, "" when it does not.
func activationError(v fakeVersion) string {
	found := false
	for _, n := range nodesOf(v) {
		if !isTrigger(n) {
			continue
		}
		found = true
		if e := triggerError(n); e != "" {
			return e
		}
	}
	if !found {
		return "Workflow has no node to start the workflow - at least one trigger, poller or webhook node is required"
	}
	return ""
}

func (f *Fake) activate1(w http.ResponseWriter, wf *fakeWorkflow, requested string) {
	v := wf.versionID
	if f.draftPublish && requested != "" {
		v = requested
	}
	version, ok := f.versions[v]
	if !ok {
		fail(w, http.StatusNotFound, "Version not found")
		return
	}
	if wf.active && wf.activeID == v {
		writeJSON(w, http.StatusOK, f.view(wf))
		return
	}
	if reason := activationError(version); reason != "" {
		fail(w, http.StatusBadRequest, reason)
		return
	}
	wf.active, wf.activeID = true, v
	writeJSON(w, http.StatusOK, f.view(wf))
}

func (f *Fake) publish2(w http.ResponseWriter, wf *fakeWorkflow, v string) {
	version, ok := f.versions[v]
	if !ok {
		fail(w, http.StatusNotFound, "Version not found")
		return
	}
	hasTrigger := false
	for _, n := range nodesOf(version) {
		hasTrigger = hasTrigger || isTrigger(n)
	}
	if !hasTrigger {
		fail(w, http.StatusBadRequest, "Workflow cannot be activated because it has no trigger node. At least one trigger, webhook, or polling node is required.")
		return
	}
	f.settlePending(wf)
	wf.active, wf.activeID = true, v
	wf.pub = &fakePublication{status: "in_progress", pending: v, began: f.requests}
	wf.statusReads = 0
	writeJSON(w, http.StatusOK, f.view(wf))
}

// tick counts a read of an in-flight publication and settles it after
// f.settle reads: n8n 2.x carries a publication out shortly after its 200.
func (f *Fake) tick(wf *fakeWorkflow) {
	if wf.pub == nil || wf.pub.status != "in_progress" {
		return
	}
	wf.statusReads++
	if wf.statusReads > f.settle {
		f.settlePending(wf)
	}
}

// settlePending carries out an in-flight publication (n8n 2.x).
func (f *Fake) settlePending(wf *fakeWorkflow) {
	p := wf.pub
	if p == nil || p.status != "in_progress" {
		return
	}
	if p.pending == "" { // an unpublish
		wf.pub = &fakePublication{status: "not_published"}
		wf.served = ""
		return
	}
	var triggers []map[string]any
	ok, failed := 0, 0
	for _, n := range nodesOf(f.versions[p.pending]) {
		if !isTrigger(n) {
			continue
		}
		if e := triggerError(n); e != "" {
			failed++
			triggers = append(triggers, map[string]any{"nodeId": n.ID, "status": "failed", "errorMessage": e})
			continue
		}
		ok++
		triggers = append(triggers, map[string]any{"nodeId": n.ID, "status": "activated", "errorMessage": nil})
	}
	switch {
	case failed == 0:
		wf.pub = &fakePublication{status: "published", live: p.pending, triggers: triggers}
		wf.served = p.pending
	case ok > 0:
		wf.pub = &fakePublication{status: "partial", live: p.pending, triggers: triggers}
		wf.served = p.pending
	default:
		wf.pub = &fakePublication{status: "failed", triggers: triggers}
		wf.served = ""
	}
}

func (f *Fake) publicationStatus(w http.ResponseWriter, id string) {
	wf := f.workflows[id]
	if wf == nil {
		fail(w, http.StatusNotFound, "Not Found")
		return
	}
	f.tick(wf)
	p := wf.pub
	if p == nil {
		p = &fakePublication{status: "not_published"}
	}
	null := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	triggers := p.triggers
	if triggers == nil {
		triggers = []map[string]any{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": map[string]any{"status": p.status,
		"liveVersionId": null(p.live), "pendingVersionId": null(p.pending), "triggers": triggers}})
}

// webhook serves POST /webhook/<path> from the version whose trigger is
// registered: n8n 1.x the live version (its nodes, or with draft/publish
// the saved nodes after it), n8n 2.x the version whose publication
// settled. Each call that reaches a workflow is recorded as an execution.
func (f *Fake) webhook(w http.ResponseWriter, r *http.Request, body []byte) {
	path := strings.TrimPrefix(r.URL.Path, "/webhook/")
	for _, wf := range f.workflows {
		f.tick(wf) // the first call after a publish reaches the previous version
	}
	for _, wf := range f.workflows {
		var registered string
		switch {
		case f.edition == Edition2:
			registered = wf.served
		case wf.active:
			registered = wf.activeID
		}
		if registered == "" {
			continue
		}
		for _, n := range nodesOf(f.versions[registered]) {
			if strings.HasSuffix(strings.ToLower(n.Type), ".webhook") && n.Parameters.Path == path &&
				strings.EqualFold(cmpOr(n.Parameters.HTTPMethod, "GET"), r.Method) {
				runs := f.versions[registered]
				if f.draftPublish {
					runs = wf.version // the saved nodes after the live trigger
				}
				f.answer(w, wf, runs, webhookItem(r, body))
				return
			}
		}
	}
	writeJSON(w, http.StatusNotFound, map[string]any{"code": 404,
		"message": fmt.Sprintf("The requested webhook \"%s %s\" is not registered.", r.Method, path)})
}

// webhookItem is the item n8n's Webhook node outputs for a request.
func webhookItem(r *http.Request, body []byte) map[string]any {
	headers := map[string]any{}
	for k := range r.Header {
		headers[strings.ToLower(k)] = r.Header.Get(k)
	}
	query := map[string]any{}
	for k := range r.URL.Query() {
		query[k] = r.URL.Query().Get(k)
	}
	var parsed any = map[string]any{}
	if len(bytes.TrimSpace(body)) > 0 {
		_ = json.Unmarshal(body, &parsed)
	}
	return map[string]any{"headers": headers, "params": map[string]any{}, "query": query, "body": parsed}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// answer runs v's Code node on the webhook's item, records the execution
// and answers as Respond to Webhook would.
func (f *Fake) answer(w http.ResponseWriter, wf *fakeWorkflow, v fakeVersion, item map[string]any) {
	res := runCode(v, item)
	f.record(wf.id, "webhook", res)
	switch {
	case res.err != "":
		if f.edition == Edition2 {
			fail(w, http.StatusInternalServerError, "Error in workflow")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
	case res.out == nil:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
	default:
		var b bytes.Buffer
		_ = json.NewEncoder(&b).Encode(res.out)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = io.Copy(w, &b)
	}
}
