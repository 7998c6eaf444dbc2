package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/candorkit/candor/approval"
	"github.com/candorkit/candor/examples/internal/clitest"
	"github.com/candorkit/candor/internal/testproc"
)

// wantDraft is the canonical JSON the store must hold, written out by hand
// rather than derived from the code under test.
const wantDraft = `{"area":"Reporting","links":[],"priority":"medium",` +
	`"summary":"\"open Reporting > Exports, pick the report and choose Download CSV\" [ACME-EXPORT#0]",` +
	`"title":"Review Reporting CSV export","type":"Question"}`

const wantSummary = `"open Reporting > Exports, pick the report and choose Download CSV" [ACME-EXPORT#0]`

// agent runs the built binary as separate processes, as a person would.
type agent struct {
	bin string
	env []string
}

type result struct {
	code           int
	stdout, stderr string
}

// field returns the value of the first "key=value" line of stdout.
func (r result) field(key string) string {
	for _, line := range strings.Split(r.stdout, "\n") {
		if v, ok := strings.CutPrefix(line, key+"="); ok {
			return v
		}
	}
	return ""
}

func (r result) String() string {
	return "exit " + itoa(r.code) + "\n--- stdout\n" + r.stdout + "--- stderr\n" + r.stderr
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func buildAgent(t *testing.T) *agent {
	t.Helper()
	bin := testproc.Build(t, ".")
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CANDOR_") {
			env = append(env, kv)
		}
	}
	return &agent{bin: bin, env: env}
}

func (a *agent) exec(t *testing.T, args ...string) result {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), a.bin, args...)
	cmd.Env = a.env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errOut.String()}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	default:
		t.Fatalf("%v: %v", args, err)
	}
	return r
}

func (a *agent) mustRun(t *testing.T, args ...string) result {
	t.Helper()
	r := a.exec(t, args...)
	if r.code != 0 {
		t.Fatalf("%v: %s", args, r)
	}
	return r
}

// stored reads the store directly (not through the agent): every operation
// and every ApprovedBacklogItems row as (operation id, approval item id,
// summary, draft).
type storedRow struct {
	OperationID string
	ItemID      int64
	Summary     string
	Draft       string
}

func readStore(t *testing.T, dir string) ([]approval.State, []storedRow) {
	t.Helper()
	path := filepath.Join(dir, "approvals.db")
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	ctx := context.Background()
	s, err := approval.Open(ctx, path, approval.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	page, err := s.List(ctx, approval.Filter{Limit: approval.MaxPageSize})
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name = 'ApprovedBacklogItems'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		return page.States, nil
	}
	rs, err := db.Query(`SELECT operation_id, approval_item_id, summary, draft FROM ApprovedBacklogItems ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	var rows []storedRow
	for rs.Next() {
		var r storedRow
		if err := rs.Scan(&r.OperationID, &r.ItemID, &r.Summary, &r.Draft); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r)
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	return page.States, rows
}

// propose runs "run" and checks what every successful fixture run prints.
func (a *agent) propose(t *testing.T, dir string) (opID string, r result) {
	t.Helper()
	r = a.mustRun(t, "run", "-dir", dir)
	if first, _, _ := strings.Cut(r.stdout, "\n"); first != fixtureProfile {
		t.Fatalf("first line %q, want the profile line %q", first, fixtureProfile)
	}
	if !strings.Contains(r.stdout, "Hit 1: ACME-EXPORT#0 score=1.000") {
		t.Fatalf("ACME-EXPORT#0 is not the first hit:\n%s", r.stdout)
	}
	// The output says plainly where the vectors are, and why the decoys
	// differ from the fixture's "every other chunk at (0,1)" (docs/examples.md).
	if !strings.Contains(r.stdout, "\nVectors: ACME-EXPORT at (1,0) and the 2 other admissible chunks at (0,1), as in the controlled fixture of docs/examples.md; "+
		"unlike it, the 4 refused decoys are deliberately at (1,0) too, on the query, so that the policy, not the vector, keeps them out\n") {
		t.Fatalf("run does not state the vector layout:\n%s", r.stdout)
	}
	for _, d := range decoys() {
		if strings.Contains(r.stdout, d.ID+"#") {
			t.Fatalf("refused source %s appears among the hits:\n%s", d.ID, r.stdout)
		}
	}
	opID = r.field("Operation")
	if !strings.HasPrefix(opID, "documented-") || r.field("Status") != "waiting" || r.field("Draft") != wantDraft {
		t.Fatalf("run did not register the expected draft:\n%s", r)
	}
	if !strings.Contains(r.stdout, "resume -dir "+dir+" approve") {
		t.Fatalf("run does not print the command to decide:\n%s", r.stdout)
	}
	rc, err := approval.ReadReceiptFile(filepath.Join(dir, "receipt.json"))
	if err != nil || rc.OperationID != opID || rc.GraphVersion != graphVersion {
		t.Fatalf("receipt %+v (%v), want operation %s at %s", rc, err, opID, graphVersion)
	}
	return opID, r
}

func TestAgentProcesses(t *testing.T) {
	a := buildAgent(t)

	t.Run("approve once across processes", func(t *testing.T) {
		dir := t.TempDir()
		opID, _ := a.propose(t, dir)
		if states, rows := readStore(t, dir); len(states) != 1 || states[0].Status != approval.StatusWaiting || len(rows) != 0 {
			t.Fatalf("after run: %d operations, %d rows; want 1 waiting, 0 rows", len(states), len(rows))
		}

		first := a.mustRun(t, "resume", "-dir", dir, "approve")
		if first.field("Operation") != opID || first.field("Status") != "completed" || first.field("Draft") != wantDraft ||
			first.field("ItemID") == "none" || first.field("ApprovedBacklogItems") != "1" {
			t.Fatalf("resume approve:\n%s", first)
		}
		states, rows := readStore(t, dir)
		if len(rows) != 1 || rows[0].OperationID != opID || rows[0].Summary != wantSummary || rows[0].Draft != wantDraft ||
			itoa(int(rows[0].ItemID)) != first.field("ItemID") || states[0].Status != approval.StatusCompleted {
			t.Fatalf("after approve: states %+v rows %+v", states, rows)
		}

		// The same decision again: same item, same row, nothing new.
		again := a.mustRun(t, "resume", "approve", "-dir", dir)
		if again.field("ItemID") != first.field("ItemID") || again.field("BacklogRow") != first.field("BacklogRow") ||
			again.field("ApprovedBacklogItems") != "1" {
			t.Fatalf("second approve:\n%s\nfirst:\n%s", again, first)
		}
		if _, rows := readStore(t, dir); len(rows) != 1 {
			t.Fatalf("%d rows after a second approve, want 1", len(rows))
		}

		before := a.mustRun(t, "show", "-dir", dir)
		reject := a.exec(t, "resume", "-dir", dir, "reject")
		if reject.code != exitFailure || !strings.Contains(reject.stderr, "already decided") ||
			!strings.Contains(reject.stderr, "approve") || reject.field("Status") != "completed" {
			t.Fatalf("reject after approve:\n%s", reject)
		}
		after := a.mustRun(t, "show", "-dir", dir)
		if after.stdout != before.stdout {
			t.Fatalf("a refused reject changed the stored state:\nbefore\n%s\nafter\n%s", before.stdout, after.stdout)
		}
		if after.field("Status") != "completed" || after.field("ApprovedBacklogItems") != "1" || after.field("Operations") != "1" ||
			!strings.HasPrefix(after.field("Decision"), "approve by ") || after.field("Draft") != wantDraft {
			t.Fatalf("show:\n%s", after)
		}
		if states, rows := readStore(t, dir); len(rows) != 1 || states[0].Decision.Verdict != approval.Approve {
			t.Fatalf("after the refused reject: states %+v rows %+v", states, rows)
		}
	})

	t.Run("editing evidence.json changes nothing stored", func(t *testing.T) {
		dir := t.TempDir()
		a.propose(t, dir)
		path := filepath.Join(dir, "evidence.json")
		var ev map[string]any
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &ev); err != nil {
			t.Fatal(err)
		}
		forged := `{"area":"Billing","links":["https://evil.example/"],"priority":"high","summary":"Export lives in Settings","title":"Delete all reports","type":"Task"}`
		ev["draft_as_registered"] = json.RawMessage(forged)
		ev["answer"] = "Export lives in Settings"
		ev["proposal"] = map[string]any{"Usable": true, "Evidence": []any{map[string]string{"ChunkID": "ACME-EXPORT-2024#0", "Quote": "Settings > Data"}}}
		edited, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, edited, 0o600); err != nil {
			t.Fatal(err)
		}

		r := a.mustRun(t, "resume", "-dir", dir, "approve")
		if r.field("Draft") != wantDraft || strings.Contains(r.stdout, "Settings") {
			t.Fatalf("resume after editing evidence.json:\n%s", r)
		}
		states, rows := readStore(t, dir)
		if len(states) != 1 || string(states[0].Draft) != wantDraft || len(rows) != 1 ||
			rows[0].Draft != wantDraft || rows[0].Summary != wantSummary {
			t.Fatalf("stored after editing evidence.json: states %+v rows %+v", states, rows)
		}
	})

	// The examples' one policy: the same verdict by another person exits 0,
	// records nothing and names the standing decider.
	t.Run("same verdict another person", func(t *testing.T) {
		dir := t.TempDir()
		a.propose(t, dir)
		first := a.mustRun(t, "resume", "-dir", dir, "-by", "alice", "approve")
		again := a.mustRun(t, "resume", "-dir", dir, "-by", "bob", "approve")
		if !strings.Contains(again.stdout, "Decision: already approved by alice; nothing new recorded") ||
			again.field("ItemID") != first.field("ItemID") || again.field("ApprovedBacklogItems") != "1" {
			t.Fatalf("approve by another person:\n%s\nfirst:\n%s", again, first)
		}
		if states, _ := readStore(t, dir); len(states) != 1 || states[0].Decision == nil || states[0].Decision.DecidedBy != "alice" {
			t.Fatalf("standing decision: %+v", states)
		}
	})

	t.Run("reject is final", func(t *testing.T) {
		dir := t.TempDir()
		a.propose(t, dir)
		r := a.mustRun(t, "resume", "-dir", dir, "reject")
		if r.field("Status") != "rejected" || r.field("ItemID") != "none" || r.field("ApprovedBacklogItems") != "0" {
			t.Fatalf("resume reject:\n%s", r)
		}
		approve := a.exec(t, "resume", "-dir", dir, "approve")
		if approve.code != exitFailure || !strings.Contains(approve.stderr, "already decided") {
			t.Fatalf("approve after reject:\n%s", approve)
		}
		if states, rows := readStore(t, dir); len(states) != 1 || states[0].Status != approval.StatusRejected || len(rows) != 0 {
			t.Fatalf("after approve-after-reject: states %+v rows %+v", states, rows)
		}
	})

	t.Run("invented evidence registers nothing", func(t *testing.T) {
		dir := t.TempDir()
		r := a.exec(t, "run", "-dir", dir, "--invalid-evidence")
		if r.code != exitFailure || !strings.Contains(r.stderr, inventedChunk) || !strings.Contains(r.stderr, "chunk-among-hits") ||
			!strings.Contains(r.stderr, "nothing registered") || r.field("Operation") != "" {
			t.Fatalf("run --invalid-evidence:\n%s", r)
		}
		if first, _, _ := strings.Cut(r.stdout, "\n"); first != fixtureProfile {
			t.Fatalf("first line %q", first)
		}
		if states, rows := readStore(t, dir); len(states) != 0 || len(rows) != 0 {
			t.Fatalf("store not empty: states %+v rows %+v", states, rows)
		}
		for _, f := range []string{"receipt.json", "evidence.json"} {
			if _, err := os.Stat(filepath.Join(dir, f)); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("%s exists after a refused run (%v)", f, err)
			}
		}
		if res := a.exec(t, "resume", "-dir", dir, "approve"); res.code != exitFailure || !strings.Contains(res.stderr, "nothing to resume") {
			t.Fatalf("resume after a refused run:\n%s", res)
		}
		if show := a.mustRun(t, "show", "-dir", dir); show.field("Operations") != "0" || show.field("ApprovedBacklogItems") != "0" {
			t.Fatalf("show after a refused run:\n%s", show)
		}
	})

	t.Run("live without Ollama fails visibly", func(t *testing.T) {
		dir := t.TempDir()
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		url := "http://" + ln.Addr().String()
		ln.Close() // nothing listens there any more
		r := a.exec(t, "run", "-dir", dir, "--live", "-ollama-url", url)
		if r.code != exitFailure || !strings.Contains(r.stderr, "live embedding") || !strings.Contains(r.stderr, "no fallback") ||
			!strings.Contains(r.stderr, "ollama: ") || !strings.Contains(r.stderr, url) {
			t.Fatalf("run --live against %s:\n%s", url, r)
		}
		if strings.Contains(r.stdout, "Profile=fixture") || !strings.HasPrefix(r.stdout, "Profile=live;") || strings.Contains(r.stdout, "Hit 1") ||
			strings.Contains(r.stdout, "Vectors:") {
			t.Fatalf("live run printed fixture output:\n%s", r.stdout)
		}
		if states, _ := readStore(t, dir); len(states) != 0 {
			t.Fatalf("a failed live run registered %+v", states)
		}
		if _, err := os.Stat(filepath.Join(dir, "receipt.json")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("receipt written by a failed live run (%v)", err)
		}
	})

	t.Run("live with an Ollama stand-in", func(t *testing.T) {
		// A loopback server speaking Ollama's documented POST /api/embed
		// shape: no Ollama is available to the tests, and the point here
		// is that -live really uses the embedder's vectors end to end.
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var req struct {
				Model string   `json:"model"`
				Input []string `json:"input"`
			}
			if r.Method != http.MethodPost || r.URL.Path != "/api/embed" || json.NewDecoder(r.Body).Decode(&req) != nil {
				http.Error(w, "bad request", http.StatusBadRequest)
				return
			}
			vs := make([][]float64, len(req.Input))
			for i, s := range req.Input {
				vs[i] = []float64{0, 1, 0}
				if strings.Contains(s, "CSV") {
					vs[i] = []float64{1, 0, 0.5}
				}
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"model": req.Model, "embeddings": vs})
		}))
		defer srv.Close()
		dir := t.TempDir()
		r := a.mustRun(t, "run", "-dir", dir, "--live", "-ollama-url", srv.URL, "-ollama-model", "stand-in")
		if !strings.HasPrefix(r.stdout, "Profile=live;") || !strings.Contains(r.stdout, "provider=ollama model=stand-in dims=3") ||
			!strings.Contains(r.stdout, "Hit 1: ACME-EXPORT#0 score=1.000") || r.field("Draft") != wantDraft ||
			strings.Contains(r.stdout, "Vectors:") {
			t.Fatalf("live run:\n%s", r)
		}
		for _, d := range decoys() {
			if strings.Contains(r.stdout, d.ID+"#") {
				t.Fatalf("refused source %s among live hits:\n%s", d.ID, r.stdout)
			}
		}
	})

	t.Run("a waiting proposal blocks a new run", func(t *testing.T) {
		dir := t.TempDir()
		opID, _ := a.propose(t, dir)
		receipt, err := os.ReadFile(filepath.Join(dir, "receipt.json"))
		if err != nil {
			t.Fatal(err)
		}
		r := a.exec(t, "run", "-dir", dir)
		if r.code != exitFailure || !strings.Contains(r.stderr, "still waiting") || !strings.Contains(r.stderr, opID) {
			t.Fatalf("second run:\n%s", r)
		}
		now, err := os.ReadFile(filepath.Join(dir, "receipt.json"))
		if err != nil || !bytes.Equal(now, receipt) {
			t.Fatalf("the receipt changed (%v)", err)
		}
		if states, _ := readStore(t, dir); len(states) != 1 {
			t.Fatalf("%d operations, want 1", len(states))
		}
		// Once decided, a new run proposes under a new operation id.
		a.mustRun(t, "resume", "-dir", dir, "reject")
		next, _ := a.propose(t, dir)
		if next == opID {
			t.Fatalf("new run reused operation id %s", opID)
		}
		show := a.mustRun(t, "show", "-dir", dir)
		if show.field("Operations") != "2" || !strings.Contains(show.stdout, "Receipt="+filepath.Join(dir, "receipt.json")+" operation="+next) {
			t.Fatalf("show:\n%s", show)
		}
	})

	t.Run("receipt from another graph version is refused", func(t *testing.T) {
		dir := t.TempDir()
		a.propose(t, dir)
		path := filepath.Join(dir, "receipt.json")
		rc, err := approval.ReadReceiptFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rc.GraphVersion = "documented/0"
		if err := approval.WriteReceiptFile(path, rc); err != nil {
			t.Fatal(err)
		}
		r := a.exec(t, "resume", "-dir", dir, "approve")
		if r.code != exitFailure || !strings.Contains(r.stderr, "graph version") {
			t.Fatalf("resume with another graph version:\n%s", r)
		}
		if states, rows := readStore(t, dir); len(states) != 1 || states[0].Status != approval.StatusWaiting || len(rows) != 0 {
			t.Fatalf("after a refused resume: states %+v rows %+v", states, rows)
		}
	})

	t.Run("usage", func(t *testing.T) {
		dir := t.TempDir()
		for _, args := range [][]string{
			{},
			{"frobnicate"},
			{"resume", "-dir", dir},
			{"resume", "-dir", dir, "maybe"},
			{"resume", "-dir", dir, "approve", "reject"},
			{"run", "-dir", dir, "extra"},
			{"show", "-dir", dir, "-nope"},
		} {
			clitest.UsageError(t, a.bin, nil, args, "documented", "Usage:")
		}
		// -h, help and each command's -h: the usage on stdout, exit 0.
		clitest.Help(t, a.bin, []string{"-h"}, "documented run", "documented resume", "documented show", "Exit codes:", "docs/examples.md")
		clitest.Help(t, a.bin, []string{"help"}, "documented run", "Exit codes:")
		for _, cmd := range []string{"run", "resume", "show"} {
			clitest.Help(t, a.bin, []string{cmd, "-h"}, "Flags of documented "+cmd+":", "-dir")
		}
		if r := a.exec(t, "resume", "-dir", dir, "approve"); r.code != exitFailure || !strings.Contains(r.stderr, "run first") {
			t.Errorf("resume before run: %s", r)
		}
		if _, err := os.Stat(filepath.Join(dir, "approvals.db")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a refused command created the store (%v)", err)
		}
	})
}
