package n8n

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/candorkit/candor/internal/canonjson"
)

// exportedFields are the fields an exported file keeps: what identifies a
// workflow and what Deploy can apply. Everything else n8n sends is
// instance-only or not writable through the public API (createdAt,
// updatedAt, versionId, activeVersionId, activeVersion, versionCounter,
// triggerCount, shared, meta, pinData, staticData, tags, isArchived,
// description, …) and is stripped.
var exportedFields = []string{"id", "name", "active", "nodes", "connections", "settings"}

// MaxFileBytes bounds a workflow file read by Plan and ApplyDir; it is n8n's
// own request body limit.
const MaxFileBytes = 16 << 20

// CanonicalExport returns the bytes ExportDir writes for wf: the exported
// fields only, object keys sorted at every level, numbers verbatim,
// two-space indentation, no HTML escaping and a final newline. Equal
// workflows give equal bytes, so `git diff` shows only real changes.
func CanonicalExport(wf *Workflow) ([]byte, error) {
	b, err := json.Marshal(wf)
	if err != nil {
		return nil, err
	}
	return canonicalFile(b)
}

// canonicalFile keeps the exported fields of a workflow document and
// canonicalises it.
func canonicalFile(doc []byte) ([]byte, error) {
	// Strict first: a repeated key or trailing data would otherwise be
	// read one way here and another way by n8n or a person.
	if _, err := canonjson.Canonicalize(doc); err != nil {
		return nil, err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(doc, &all); err != nil {
		return nil, err
	}
	if all == nil {
		return nil, errors.New("n8n: workflow document is null")
	}
	kept := make(map[string]json.RawMessage, len(exportedFields))
	for _, k := range exportedFields {
		if v, ok := all[k]; ok {
			kept[k] = v
		}
	}
	if _, ok := kept["active"]; !ok {
		kept["active"] = json.RawMessage("false") // a file without it means inactive
	}
	b, err := json.Marshal(kept)
	if err != nil {
		return nil, err
	}
	return canonicalJSON(b)
}

// ExportDir writes every workflow of the instance to dir in canonical form
// (see CanonicalExport), creating dir if needed: into the *.json file that
// already names the workflow's id, else into <id>.json. Files are replaced
// atomically; files of workflows that no longer exist are left alone.
// Archived workflows (n8n 2.x) are skipped. On n8n 2.x a file holds the
// saved definition, which may be a draft newer than the published version;
// Plan reports such a workflow as an update. It returns the paths written,
// sorted.
func ExportDir(ctx context.Context, client *Client, dir string) ([]string, error) {
	if client == nil {
		return nil, errors.New("n8n: ExportDir: nil client")
	}
	wfs, err := client.ListWorkflows(ctx, ListWorkflowsOptions{PageSize: 250})
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	existing, err := filesByID(dir)
	if err != nil {
		return nil, err
	}
	var paths []string
	for i := range wfs {
		wf := &wfs[i]
		if archived(wf) {
			continue
		}
		if wf.ID == "" || strings.ContainsAny(string(wf.ID), `/\`) || strings.HasPrefix(string(wf.ID), ".") {
			return nil, fmt.Errorf("n8n: workflow %q has an id unfit for a file name: %q", wf.Name, wf.ID)
		}
		data, err := CanonicalExport(wf)
		if err != nil {
			return nil, fmt.Errorf("n8n: exporting workflow %s: %w", wf.ID, err)
		}
		p, ok := existing[wf.ID]
		if !ok {
			p = filepath.Join(dir, string(wf.ID)+".json")
		}
		if err := writeFileAtomic(p, data); err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	sort.Strings(paths)
	return paths, nil
}

// filesByID maps the ids named by the *.json files of dir to their paths.
// Files that are not workflow objects are ignored here (Plan reports them).
func filesByID(dir string) (map[ID]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	out := map[ID]string{}
	for _, f := range files {
		data, err := readBounded(f)
		if err != nil {
			return nil, err
		}
		var doc struct {
			ID ID `json:"id"`
		}
		if json.Unmarshal(data, &doc) != nil || doc.ID == "" {
			continue
		}
		if other, dup := out[doc.ID]; dup {
			return nil, fmt.Errorf("n8n: %s and %s both name workflow %s", other, f, doc.ID)
		}
		out[doc.ID] = f
	}
	return out, nil
}

func archived(wf *Workflow) bool {
	return string(bytes.TrimSpace(wf.Extra["isArchived"])) == "true"
}

func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".n8n-export-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Action is what applying a plan does to one workflow.
type Action string

const (
	ActionCreate    Action = "create"
	ActionUpdate    Action = "update"
	ActionUnchanged Action = "unchanged"
)

// PlanItem is one workflow file and what applying it would do.
type PlanItem struct {
	// File is the path of the workflow file.
	File string
	// ID is the workflow id (empty for a create).
	ID     ID
	Name   string
	Action Action
	// Reason explains a create of a file that names an id.
	Reason string
	// Changes lists, for an update, what differs: top-level fields and
	// nodes ("node \"Code\" changed", "node \"X\" added").
	Changes []string
	// Problems are Validate's findings; ApplyDir refuses a plan with any.
	Problems []Problem
	// Current is the instance's workflow as Plan read it (zero for a
	// create). ApplyPlan deploys with it as DeployOptions.Expect, so a
	// change made on the instance after the plan was read is a
	// *ConflictError, never overwritten.
	Current Snapshot

	wf        *Workflow
	canonical []byte
}

// DirPlan is what ApplyDir would do for a directory.
type DirPlan struct {
	Items []PlanItem
	// Untracked are workflows of the instance that no file names; ApplyDir
	// leaves them alone.
	Untracked []Workflow
}

// Count returns how many items have action a.
func (p *DirPlan) Count(a Action) int {
	n := 0
	for _, it := range p.Items {
		if it.Action == a {
			n++
		}
	}
	return n
}

// Plan compares every *.json file of dir with the instance. A file
// without an id, or with an id the instance does not have, is a create; a
// file whose canonical form differs from the instance's export is an update,
// and so is an active workflow whose saved version is not the live one (n8n
// 2.x: an unpublished draft; an export shows the draft); the rest are
// unchanged. A file that is not a JSON object, or two files with
// the same id, is an error.
func Plan(ctx context.Context, client *Client, dir string) (*DirPlan, error) {
	if client == nil {
		return nil, errors.New("n8n: Plan: nil client")
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	wfs, err := client.ListWorkflows(ctx, ListWorkflowsOptions{PageSize: 250})
	if err != nil {
		return nil, err
	}
	byID := make(map[ID]*Workflow, len(wfs))
	for i := range wfs {
		if !archived(&wfs[i]) {
			byID[wfs[i].ID] = &wfs[i]
		}
	}
	plan := &DirPlan{}
	tracked := map[ID]string{}
	for _, f := range files {
		it, err := planFile(f, byID)
		if err != nil {
			return nil, err
		}
		if it.ID != "" {
			if other, dup := tracked[it.ID]; dup {
				return nil, fmt.Errorf("n8n: %s and %s both name workflow %s", other, f, it.ID)
			}
			tracked[it.ID] = f
		}
		plan.Items = append(plan.Items, it)
	}
	for i := range wfs {
		if _, ok := tracked[wfs[i].ID]; !ok && !archived(&wfs[i]) {
			plan.Untracked = append(plan.Untracked, wfs[i])
		}
	}
	return plan, nil
}

func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("n8n: %s is larger than %d bytes", path, MaxFileBytes)
	}
	return data, nil
}

func planFile(path string, byID map[ID]*Workflow) (PlanItem, error) {
	data, err := readBounded(path)
	if err != nil {
		return PlanItem{}, err
	}
	canon, err := canonicalFile(data)
	if err != nil {
		return PlanItem{}, fmt.Errorf("n8n: %s: not a workflow JSON object: %w", path, err)
	}
	wf, err := ParseWorkflow(canon)
	if err != nil {
		return PlanItem{}, fmt.Errorf("n8n: %s: %w", path, err)
	}
	it := PlanItem{File: path, ID: wf.ID, Name: wf.Name, wf: wf, canonical: canon, Problems: ValidateJSON(canon)}
	cur, ok := byID[wf.ID]
	switch {
	case wf.ID == "":
		it.Action = ActionCreate
	case !ok:
		it.Action = ActionCreate
		it.Reason = fmt.Sprintf("id %s is not on this instance; applying creates a new workflow and records its id in the file", wf.ID)
		it.ID = ""
	default:
		it.Current = SnapshotOf(cur)
		theirs, err := CanonicalExport(cur)
		if err != nil {
			return PlanItem{}, fmt.Errorf("n8n: workflow %s: %w", cur.ID, err)
		}
		same, err := sameExport(theirs, canon)
		if err != nil {
			return PlanItem{}, fmt.Errorf("n8n: %s: %w", path, err)
		}
		switch {
		case same && settingsIncluded(wf.Settings, cur.Settings) && !(wf.Active && pendingDraft(cur)):
			it.Action = ActionUnchanged
		default:
			it.Action = ActionUpdate
			it.Changes = changes(cur, wf)
		}
	}
	return it, nil
}

// sameExport compares two canonical files except for their settings, which
// are compared as a subset (n8n merges settings on update and adds its own
// defaults, so a key can be added or changed but never removed).
func sameExport(a, b []byte) (bool, error) {
	strip := func(doc []byte) ([]byte, error) {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(doc, &m); err != nil {
			return nil, err
		}
		delete(m, "settings")
		out, err := json.Marshal(m)
		if err != nil {
			return nil, err
		}
		return canonicalJSON(out)
	}
	sa, err := strip(a)
	if err != nil {
		return false, err
	}
	sb, err := strip(b)
	if err != nil {
		return false, err
	}
	return bytes.Equal(sa, sb), nil
}

// String describes the item on one line.
func (it PlanItem) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", it.Action, filepath.Base(it.File))
	if it.ID != "" {
		fmt.Fprintf(&b, " (workflow %s %q)", it.ID, it.Name)
	} else {
		fmt.Fprintf(&b, " (%q)", it.Name)
	}
	if len(it.Changes) > 0 {
		b.WriteString(": " + strings.Join(it.Changes, "; "))
	}
	if it.Reason != "" {
		b.WriteString("; " + it.Reason)
	}
	if len(it.Problems) > 0 {
		fmt.Fprintf(&b, "; %d problem(s), first %s", len(it.Problems), it.Problems[0])
	}
	return b.String()
}

// String lists the plan, one item a line, then the untracked workflows.
func (p *DirPlan) String() string {
	var b strings.Builder
	for _, it := range p.Items {
		b.WriteString(it.String())
		b.WriteByte('\n')
	}
	for _, w := range p.Untracked {
		fmt.Fprintf(&b, "untracked workflow %s %q\n", w.ID, w.Name)
	}
	return b.String()
}

// changes lists what differs between the instance's workflow and the file's.
func changes(cur, want *Workflow) []string {
	var out []string
	if cur.Name != want.Name {
		out = append(out, fmt.Sprintf("name %q -> %q", cur.Name, want.Name))
	}
	if cur.Active != want.Active {
		out = append(out, fmt.Sprintf("active %t -> %t", cur.Active, want.Active))
	}
	if !settingsIncluded(want.Settings, cur.Settings) {
		out = append(out, "settings changed")
	}
	if !equalCanonical(mustJSON(cur.Connections), mustJSON(want.Connections)) {
		out = append(out, "connections changed")
	}
	old := map[string][]byte{}
	for i := range cur.Nodes {
		old[cur.Nodes[i].Name] = mustJSON(cur.Nodes[i])
	}
	seen := map[string]bool{}
	for i := range want.Nodes {
		n := want.Nodes[i].Name
		seen[n] = true
		o, ok := old[n]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("node %q added", n))
		case !equalCanonical(o, mustJSON(want.Nodes[i])):
			out = append(out, fmt.Sprintf("node %q changed", n))
		}
	}
	for i := range cur.Nodes {
		if !seen[cur.Nodes[i].Name] {
			out = append(out, fmt.Sprintf("node %q removed", cur.Nodes[i].Name))
		}
	}
	if want.Active && pendingDraft(cur) {
		// n8n 2.x: the saved definition (what an export shows) is a draft,
		// and the live version is an older one.
		out = append(out, fmt.Sprintf("the saved version %s is not published (live: %s)", cur.VersionID, cur.ActiveVersionID))
	}
	if len(out) == 0 {
		out = append(out, "formatting or field order only")
	}
	return out
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return []byte(fmt.Sprintf("%q", err.Error()))
	}
	return b
}

func equalCanonical(a, b []byte) bool {
	if len(bytes.TrimSpace(a)) == 0 || len(bytes.TrimSpace(b)) == 0 {
		return len(bytes.TrimSpace(a)) == len(bytes.TrimSpace(b))
	}
	ca, err1 := canonicalJSON(a)
	cb, err2 := canonicalJSON(b)
	return err1 == nil && err2 == nil && bytes.Equal(ca, cb)
}

// ApplyDirOptions tune ApplyDir and ApplyPlan.
type ApplyDirOptions struct {
	// Deploy is passed to each Deploy; its Active, Expect and Smoke are set
	// per file (Active from the file's "active", Expect from the plan, no
	// smoke). Give it a Session on n8n 2.x (see DeployOptions.Session).
	Deploy DeployOptions
}

// Applied is what ApplyDir did with one plan item.
type Applied struct {
	Item PlanItem
	// ID is the workflow id, new for a create.
	ID ID
	// Report is Deploy's report (nil for unchanged items, and for a create
	// of an inactive workflow).
	Report *Report
}

// ApplyDir plans dir (see Plan) and applies the plan (see ApplyPlan).
func ApplyDir(ctx context.Context, client *Client, dir string, opts ApplyDirOptions) ([]Applied, error) {
	plan, err := Plan(ctx, client, dir)
	if err != nil {
		return nil, err
	}
	return ApplyPlan(ctx, client, plan, opts)
}

// ApplyPlan applies a plan made by Plan, for instance after a person
// reviewed it: it refuses the whole plan when any file has Validate problems
// (a *ValidationError, nothing written), then deploys every update with
// Deploy, expecting each workflow to be as the plan read it (a workflow
// changed on the instance since is a *ConflictError and is not written),
// and creates every new workflow (recording its new id in its file, so a
// second apply updates it instead of creating it again), activating it when
// the file says "active": true. It stops at the first failure; the returned
// list says what was applied, and the failed item's Report says what state
// it is in. A plan item whose action is unchanged is not re-checked.
func ApplyPlan(ctx context.Context, client *Client, plan *DirPlan, opts ApplyDirOptions) ([]Applied, error) {
	if plan == nil {
		return nil, errors.New("n8n: ApplyPlan: nil plan")
	}
	for _, it := range plan.Items {
		if len(it.Problems) > 0 {
			return nil, &ValidationError{Source: it.File, Problems: it.Problems}
		}
		if it.wf == nil {
			return nil, fmt.Errorf("n8n: ApplyPlan: item %s was not made by Plan", it.File)
		}
	}
	var done []Applied
	for _, it := range plan.Items {
		dopts := opts.Deploy
		dopts.Smoke = nil
		active := it.wf.Active
		dopts.Active = &active
		switch it.Action {
		case ActionUnchanged:
			done = append(done, Applied{Item: it, ID: it.ID})
		case ActionUpdate:
			expect := it.Current
			dopts.Expect = &expect
			rep, err := Deploy(ctx, client, it.ID, it.wf, dopts)
			done = append(done, Applied{Item: it, ID: it.ID, Report: &rep})
			if err != nil {
				return done, fmt.Errorf("n8n: applying %s: %w", it.File, err)
			}
		case ActionCreate:
			created, err := client.CreateWorkflow(ctx, it.wf)
			if err != nil {
				return done, fmt.Errorf("n8n: applying %s: %w", it.File, err)
			}
			if err := recordID(it.File, created.ID); err != nil {
				return done, fmt.Errorf("n8n: created workflow %s for %s but could not record its id: %w", created.ID, it.File, err)
			}
			applied := Applied{Item: it, ID: created.ID}
			if active {
				expect := SnapshotOf(created)
				dopts.Expect = &expect
				rep, err := Deploy(ctx, client, created.ID, it.wf, dopts)
				applied.Report = &rep
				if err != nil {
					done = append(done, applied)
					return done, fmt.Errorf("n8n: activating %s (created as %s): %w", it.File, created.ID, err)
				}
			}
			done = append(done, applied)
		}
	}
	return done, nil
}

// recordID rewrites a workflow file with its new id, in canonical form.
func recordID(path string, id ID) error {
	data, err := readBounded(path)
	if err != nil {
		return err
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		return err
	}
	doc["id"] = mustJSON(id)
	b, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	canon, err := canonicalFile(b)
	if err != nil {
		return err
	}
	return writeFileAtomic(path, canon)
}
