package n8ntest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// What the Fake keeps beside workflows: tags, credentials and executions.

type fakeTag struct {
	id, name, createdAt, updatedAt string
}

func (t *fakeTag) view() map[string]any {
	return map[string]any{"id": t.id, "name": t.name, "createdAt": t.createdAt, "updatedAt": t.updatedAt}
}

type fakeCredential struct {
	id, name, typ, createdAt, updatedAt string
}

func (c *fakeCredential) view() map[string]any {
	return map[string]any{"id": c.id, "name": c.name, "type": c.typ, "createdAt": c.createdAt, "updatedAt": c.updatedAt}
}

type fakeExecution struct {
	id         int
	workflowID string
	mode       string
	status     string
	startedAt  string
	stoppedAt  string
	data       map[string]any
	// pending is how many reads still see a manual run as running: n8n
	// runs it after answering the request that started it.
	pending int
}

// fakeCredentialTypes are the credential types the Fake knows, with the
// string properties their data requires (and allows).
var fakeCredentialTypes = map[string][]string{
	"httpHeaderAuth": {"name", "value"},
	"httpBasicAuth":  {"user", "password"},
	"httpBearerAuth": {"token"},
}

var (
	restWorkflowPath  = regexp.MustCompile(`^/rest/workflows/([^/]+)(/run)?$`)
	tagPath           = regexp.MustCompile(`^/api/v1/tags/([^/]+)$`)
	workflowTagsPath  = regexp.MustCompile(`^/api/v1/workflows/([^/]+)/tags$`)
	credentialPath    = regexp.MustCompile(`^/api/v1/credentials/([^/]+)$`)
	credentialSchemaP = regexp.MustCompile(`^/api/v1/credentials/schema/([^/]+)$`)
	executionPath     = regexp.MustCompile(`^/api/v1/executions/([^/]+)$`)
	throwRE           = regexp.MustCompile(`throw\s+new\s+Error\(\s*(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)")`)
	escalateRE        = regexp.MustCompile(`escalate:\s*(true|false)`)
)

func now() string { return time.Now().UTC().Format("2006-01-02T15:04:05.000Z") }

// routeMore names the operations beyond the deploy path.
func routeMore(r *http.Request) (FakeOp, string, bool) {
	p, m := r.URL.Path, r.Method
	get, post := m == http.MethodGet, m == http.MethodPost
	switch {
	case strings.HasPrefix(p, "/webhook/"):
		return OpWebhook, "", true
	case p == "/rest/login" && post:
		return OpLogin, "", true
	case p == "/rest/credentials" && get:
		return OpListCredentials, "", true
	case p == "/rest/workflows" && post:
		return OpSessionCreate, "", true
	case p == "/api/v1/tags" && get:
		return OpListTags, "", true
	case p == "/api/v1/tags" && post:
		return OpCreateTag, "", true
	case p == "/api/v1/credentials" && get:
		return OpListCredentials, "", true
	case p == "/api/v1/credentials" && post:
		return OpCreateCredential, "", true
	case p == "/api/v1/executions" && get:
		return OpListExecutions, "", true
	}
	if x := restWorkflowPath.FindStringSubmatch(p); x != nil {
		switch {
		case x[2] == "/run" && post:
			return OpRun, x[1], true
		case x[2] == "" && get:
			return OpSessionGet, x[1], true
		case x[2] == "" && m == http.MethodPatch:
			return OpSessionPatch, x[1], true
		}
		return "", "", true
	}
	if x := workflowTagsPath.FindStringSubmatch(p); x != nil {
		switch m {
		case http.MethodGet:
			return OpWorkflowTags, x[1], true
		case http.MethodPut:
			return OpSetWorkflowTags, x[1], true
		}
		return "", "", true
	}
	if x := credentialSchemaP.FindStringSubmatch(p); x != nil && get {
		return OpCredentialSchema, x[1], true
	}
	for _, c := range []struct {
		re     *regexp.Regexp
		method string
		op     FakeOp
	}{
		{tagPath, http.MethodDelete, OpDeleteTag},
		{credentialPath, http.MethodDelete, OpDeleteCredential},
		{executionPath, http.MethodGet, OpGetExecution},
	} {
		if x := c.re.FindStringSubmatch(p); x != nil {
			if m == c.method {
				return c.op, x[1], true
			}
			return "", "", true
		}
	}
	return "", "", false
}

// serveMore answers the public API's tags, credentials and executions; it
// reports false for any other operation.
func (f *Fake) serveMore(w http.ResponseWriter, r *http.Request, op FakeOp, id string, body []byte) bool {
	switch op {
	case OpListTags:
		ids := make([]string, 0, len(f.tags))
		for id := range f.tags {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		items := make([]any, 0, len(ids))
		for _, id := range ids {
			items = append(items, f.tags[id].view())
		}
		paged(w, r.URL.Query(), items)
	case OpCreateTag:
		var in struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(body, &in) != nil || strings.TrimSpace(in.Name) == "" {
			fail(w, http.StatusBadRequest, "request/body must have required property 'name'")
			return true
		}
		for _, t := range f.tags {
			if t.name == in.Name {
				fail(w, http.StatusConflict, "Tag already exists")
				return true
			}
		}
		t := &fakeTag{id: f.newID(), name: in.Name, createdAt: now(), updatedAt: now()}
		f.tags[t.id] = t
		writeJSON(w, http.StatusCreated, t.view())
	case OpDeleteTag:
		t := f.tags[id]
		if t == nil {
			fail(w, http.StatusNotFound, "Not Found")
			return true
		}
		delete(f.tags, id)
		writeJSON(w, http.StatusOK, t.view())
	case OpWorkflowTags, OpSetWorkflowTags:
		wf := f.workflows[id]
		if wf == nil {
			fail(w, http.StatusNotFound, "Not Found")
			return true
		}
		if op == OpSetWorkflowTags {
			var in []struct {
				ID string `json:"id"`
			}
			if json.Unmarshal(body, &in) != nil {
				fail(w, http.StatusBadRequest, "request/body must be array")
				return true
			}
			ids := make([]string, 0, len(in))
			for _, t := range in {
				if f.tags[t.ID] == nil {
					fail(w, http.StatusNotFound, "Some tags not found")
					return true
				}
				ids = append(ids, t.ID)
			}
			wf.tagIDs = ids
		}
		writeJSON(w, http.StatusOK, f.tagsOf(wf))
	case OpListCredentials:
		if f.edition == Edition1 {
			fail(w, http.StatusMethodNotAllowed, "GET method not allowed")
			return true
		}
		paged(w, r.URL.Query(), f.credentialList())
	case OpCreateCredential:
		f.createCredential(w, body)
	case OpDeleteCredential:
		c := f.credentials[id]
		if c == nil {
			fail(w, http.StatusNotFound, "Not Found")
			return true
		}
		delete(f.credentials, id)
		writeJSON(w, http.StatusOK, c.view())
	case OpCredentialSchema:
		props, ok := fakeCredentialTypes[id]
		if !ok {
			fail(w, http.StatusNotFound, "Not Found")
			return true
		}
		properties := map[string]any{}
		for _, p := range props {
			properties[p] = map[string]any{"type": "string"}
		}
		writeJSON(w, http.StatusOK, map[string]any{"additionalProperties": false, "type": "object",
			"properties": properties, "required": props})
	case OpListExecutions:
		q := r.URL.Query()
		items := []any{}
		for i := len(f.executions) - 1; i >= 0; i-- { // newest first
			e := f.executions[i]
			if v := q.Get("workflowId"); v != "" && v != e.workflowID {
				continue
			}
			if v := q.Get("status"); v != "" && v != e.reported() {
				continue
			}
			if q.Get("projectId") != "" {
				continue // the Fake has no projects
			}
			items = append(items, e.view(q.Get("includeData") == "true"))
		}
		paged(w, q, items)
	case OpGetExecution:
		for _, e := range f.executions {
			if strconv.Itoa(e.id) == id {
				writeJSON(w, http.StatusOK, e.view(r.URL.Query().Get("includeData") == "true"))
				return true
			}
		}
		fail(w, http.StatusNotFound, "Not Found")
	default:
		return false
	}
	return true
}

// paged answers items one page at a time, with the limit and cursor rules
// of n8n's public API (see list).
func paged(w http.ResponseWriter, q url.Values, items []any) {
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
	end := len(items)
	if limit > 0 && offset+limit < end {
		end = offset + limit
	}
	page := append([]any{}, items[min(offset, len(items)):end]...)
	var next any
	if end < len(items) || limit == 0 {
		b, _ := json.Marshal(map[string]int{"limit": limit, "offset": end * btoi(limit > 0)})
		next = base64.StdEncoding.EncodeToString(b)
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": page, "nextCursor": next})
}

func (f *Fake) tagsOf(wf *fakeWorkflow) []any {
	out := []any{}
	for _, id := range wf.tagIDs {
		if t := f.tags[id]; t != nil {
			out = append(out, t.view())
		}
	}
	return out
}

// hasTags reports whether wf carries a tag of each name.
func (f *Fake) hasTags(wf *fakeWorkflow, names []string) bool {
	for _, n := range names {
		found := false
		for _, id := range wf.tagIDs {
			found = found || (f.tags[id] != nil && f.tags[id].name == n)
		}
		if !found {
			return false
		}
	}
	return true
}

func (f *Fake) credentialList() []any {
	ids := make([]string, 0, len(f.credentials))
	for id := range f.credentials {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := make([]any, 0, len(ids))
	for _, id := range ids {
		out = append(out, f.credentials[id].view())
	}
	return out
}

// createCredential checks the data against its type's schema as n8n does
// (every property required, a string, no other) and keeps the metadata
// only: the Fake, like n8n, never returns a credential's data.
func (f *Fake) createCredential(w http.ResponseWriter, body []byte) {
	var in struct {
		Name string                     `json:"name"`
		Type string                     `json:"type"`
		Data map[string]json.RawMessage `json:"data"`
	}
	if json.Unmarshal(body, &in) != nil {
		fail(w, http.StatusBadRequest, "request/body must be object")
		return
	}
	for _, k := range []struct{ name, v string }{{"name", in.Name}, {"type", in.Type}} {
		if k.v == "" {
			fail(w, http.StatusBadRequest, "request/body must have required property '"+k.name+"'")
			return
		}
	}
	props, ok := fakeCredentialTypes[in.Type]
	if !ok {
		fail(w, http.StatusBadRequest, "req.body.type is not a known type")
		return
	}
	for k := range in.Data {
		allowed := false
		for _, p := range props {
			allowed = allowed || p == k
		}
		if !allowed {
			fail(w, http.StatusBadRequest, fmt.Sprintf("request.body.data is not allowed to have the additional property %q", k))
			return
		}
	}
	for _, p := range props {
		var s string
		if v, ok := in.Data[p]; !ok || json.Unmarshal(v, &s) != nil {
			fail(w, http.StatusBadRequest, fmt.Sprintf("request.body.data requires property %q", p))
			return
		}
	}
	c := &fakeCredential{id: f.newID(), name: in.Name, typ: in.Type, createdAt: now(), updatedAt: now()}
	f.credentials[c.id] = c
	writeJSON(w, http.StatusOK, c.view())
}

// sessionCreate is POST /rest/workflows: a workflow created with its tags
// (tag ids the instance does not know are ignored, as n8n ignores them
// when workflow tags are disabled). The internal API needs "active".
func (f *Fake) sessionCreate(w http.ResponseWriter, body []byte) {
	var in map[string]json.RawMessage
	if json.Unmarshal(body, &in) != nil || in == nil {
		fail(w, http.StatusBadRequest, "request body must be an object")
		return
	}
	if _, ok := in["active"]; !ok {
		fail(w, http.StatusInternalServerError, `null value in column "active" violates not-null constraint`)
		return
	}
	var name string
	if json.Unmarshal(in["name"], &name) != nil || name == "" {
		fail(w, http.StatusBadRequest, "Workflow name is required")
		return
	}
	wf := &fakeWorkflow{id: f.newID(), settings: map[string]json.RawMessage{}, createdAt: now(), updatedAt: now()}
	wf.version = fakeVersion{Name: name, Nodes: orJSON(in["nodes"], "[]"), Connections: orJSON(in["connections"], "{}")}
	_ = json.Unmarshal(in["settings"], &wf.settings)
	if wf.settings == nil {
		wf.settings = map[string]json.RawMessage{}
	}
	wf.staticData = in["staticData"]
	var tags []string
	_ = json.Unmarshal(in["tags"], &tags)
	for _, t := range tags {
		if f.tags[t] != nil {
			wf.tagIDs = append(wf.tagIDs, t)
		}
	}
	wf.versionID = newVersionID()
	f.versions[wf.versionID] = wf.version
	f.workflows[wf.id] = wf
	writeJSON(w, http.StatusOK, map[string]any{"data": f.view(wf)})
}

func orJSON(raw json.RawMessage, def string) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage(def)
	}
	return raw
}

// sessionView is the internal API's workflow: the public view with its
// pinned data.
func (f *Fake) sessionView(wf *fakeWorkflow) map[string]any {
	v := f.view(wf)
	v["pinData"] = orJSON(wf.pinData, "null")
	return v
}

// sessionPatch is PATCH /rest/workflows/{id}; the Fake supports pinData
// only, which does not change the versionId.
func (f *Fake) sessionPatch(w http.ResponseWriter, wf *fakeWorkflow, body []byte) {
	var in map[string]json.RawMessage
	if json.Unmarshal(body, &in) != nil || in == nil {
		fail(w, http.StatusBadRequest, "request body must be an object")
		return
	}
	for k := range in {
		if k != "pinData" {
			fail(w, http.StatusBadRequest, "n8ntest: the Fake patches pinData only, not "+k)
			return
		}
	}
	if string(in["pinData"]) == "null" {
		wf.pinData = nil
	} else {
		wf.pinData = in["pinData"]
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": f.sessionView(wf)})
}

// run is POST /rest/workflows/{id}/run, a manual run from a trigger with
// its pinned items: n8n 1.x runs the definition and pinned data of the
// request, n8n 2.x the stored ones. Without pinned items for the trigger
// n8n waits for a real call of it.
func (f *Fake) run(w http.ResponseWriter, wf *fakeWorkflow, body []byte) {
	var in struct {
		WorkflowData *struct {
			Nodes   json.RawMessage `json:"nodes"`
			PinData json.RawMessage `json:"pinData"`
		} `json:"workflowData"`
		Start struct {
			Name string `json:"name"`
		} `json:"triggerToStartFrom"`
	}
	if json.Unmarshal(body, &in) != nil {
		fail(w, http.StatusBadRequest, "request body must be an object")
		return
	}
	version, pin := wf.version, wf.pinData
	if f.edition == Edition1 {
		if in.WorkflowData == nil {
			fail(w, http.StatusBadRequest, "workflowData is required")
			return
		}
		version = fakeVersion{Name: wf.version.Name, Nodes: in.WorkflowData.Nodes, Connections: wf.version.Connections}
		pin = in.WorkflowData.PinData
	}
	found := false
	for _, n := range nodesOf(version) {
		found = found || n.Name == in.Start.Name
	}
	if !found {
		fail(w, http.StatusBadRequest, fmt.Sprintf("The node %q does not exist in the workflow", in.Start.Name))
		return
	}
	var pinned map[string][]struct {
		JSON map[string]any `json:"json"`
	}
	_ = json.Unmarshal(pin, &pinned)
	items := pinned[in.Start.Name]
	if len(items) == 0 {
		writeJSON(w, http.StatusOK, map[string]any{"data": map[string]any{"waitingForWebhook": true}})
		return
	}
	e := f.record(wf.id, "manual", runCode(version, items[0].JSON))
	e.pending = 1
	writeJSON(w, http.StatusOK, map[string]any{"data": map[string]any{"executionId": strconv.Itoa(e.id)}})
}

// codeResult is what the Fake's model of a Code node produced.
type codeResult struct {
	node string         // the Code node's name
	in   map[string]any // the item it was given
	out  map[string]any // its one output item; nil for none
	err  string         // the error it threw
}

// runCode models v's Code node on one input item. The Fake runs no
// JavaScript: a jsCode holding "throw new Error('m')" fails with m, one
// holding "return []" outputs no item, and any other outputs
// {"answer": …, "escalate": …} where answer is the expression after
// "answer:" — string literals and $input.first().json.<path> references
// joined with + — and escalate the literal after "escalate:".
func runCode(v fakeVersion, item map[string]any) codeResult {
	res := codeResult{in: item}
	code := ""
	for _, n := range nodesOf(v) {
		if n.Parameters.JSCode != "" {
			code, res.node = n.Parameters.JSCode, n.Name
			break
		}
	}
	switch {
	case strings.Contains(code, "throw"):
		res.err = "Error"
		if m := throwRE.FindStringSubmatch(code); m != nil {
			res.err = unescapeJS(m[1] + m[2])
		}
	case strings.Contains(code, "return []"):
	default:
		escalate := false
		if m := escalateRE.FindStringSubmatch(code); m != nil {
			escalate = m[1] == "true"
		}
		answer, err := evalAnswer(code, item)
		if err != "" {
			res.err = err
			break
		}
		res.out = map[string]any{"answer": answer, "escalate": escalate}
	}
	return res
}

// evalAnswer evaluates the expression after "answer:" in code, or returns
// the TypeError JavaScript throws for a property read of undefined.
func evalAnswer(code string, item map[string]any) (string, string) {
	i := strings.Index(code, "answer:")
	if i < 0 {
		return "", ""
	}
	s := code[i+len("answer:"):]
	var out strings.Builder
	for {
		s = strings.TrimLeft(s, " \t\n")
		switch {
		case s != "" && (s[0] == '\'' || s[0] == '"'):
			q := s[0]
			j := 1
			for j < len(s) && s[j] != q {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(s) {
				return out.String(), ""
			}
			out.WriteString(unescapeJS(s[1:j]))
			s = s[j+1:]
		case strings.HasPrefix(s, "$input.first().json"):
			s = s[len("$input.first().json"):]
			var v any = item
			for strings.HasPrefix(s, ".") {
				j := 1
				for j < len(s) && (s[j] == '_' || s[j] == '$' || s[j] >= '0' && s[j] <= '9' ||
					s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z') {
					j++
				}
				if v == nil {
					return "", fmt.Sprintf("Cannot read properties of undefined (reading '%s')", s[1:j])
				}
				m, _ := v.(map[string]any)
				v = m[s[1:j]]
				s = s[j:]
			}
			out.WriteString(jsString(v))
		default:
			return out.String(), ""
		}
		s = strings.TrimLeft(s, " \t\n")
		if !strings.HasPrefix(s, "+") {
			return out.String(), ""
		}
		s = s[1:]
	}
}

// jsString is how JavaScript's + turns v into a string.
func jsString(v any) string {
	switch x := v.(type) {
	case nil:
		return "undefined"
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	case []any:
		return "[array]"
	default:
		return "[object Object]"
	}
}

func unescapeJS(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			default:
				b.WriteByte(s[i])
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// record keeps an execution of workflow id with the run data n8n would
// hold: the trigger's item, the Code node's output, the error.
func (f *Fake) record(id, mode string, res codeResult) *fakeExecution {
	f.execSeq++
	runData := map[string]any{}
	if res.node != "" {
		main := []any{}
		if res.out != nil {
			main = []any{map[string]any{"json": res.out}}
		}
		runData[res.node] = []any{map[string]any{"data": map[string]any{"main": []any{main}}}}
	}
	result := map[string]any{"runData": runData, "lastNodeExecuted": res.node}
	status := "success"
	if res.err != "" {
		status = "error"
		result["error"] = map[string]any{"message": res.err, "name": "Error"}
	}
	e := &fakeExecution{id: f.execSeq, workflowID: id, mode: mode, status: status, startedAt: now(), stoppedAt: now(),
		data: map[string]any{"resultData": result, "startData": map[string]any{}, "executionData": map[string]any{"input": res.in}}}
	f.executions = append(f.executions, e)
	return e
}

// reported is the status a read sees.
func (e *fakeExecution) reported() string {
	if e.pending > 0 {
		return "running"
	}
	return e.status
}

// view is the execution as the public API answers it (ids as numbers, as
// n8n sends them); a read counts down a pending run.
func (e *fakeExecution) view(includeData bool) map[string]any {
	status := e.reported()
	v := map[string]any{"id": e.id, "finished": status == "success", "mode": e.mode, "retryOf": nil,
		"retrySuccessId": nil, "status": status, "startedAt": e.startedAt, "workflowId": e.workflowID, "waitTill": nil}
	if status == "running" {
		v["stoppedAt"] = nil
	} else {
		v["stoppedAt"] = e.stoppedAt
	}
	if includeData {
		v["data"] = e.data
	}
	if e.pending > 0 {
		e.pending--
	}
	return v
}
