package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/candorkit/candor/approval"
	"github.com/candorkit/candor/examples/internal/catalog"
	"github.com/candorkit/candor/examples/internal/clitest"
	"github.com/candorkit/candor/examples/internal/demo"
	"github.com/candorkit/candor/internal/testproc"
	"github.com/candorkit/candor/reorder"
	"github.com/candorkit/candor/tokenexchange"
	"github.com/candorkit/candor/tokenexchange/mandate"
	"github.com/candorkit/candor/tokenexchange/oidctest"
)

func TestMain(m *testing.M) {
	// zitadel's OP logs every route at Info through slog.Default, as in main.
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	os.Exit(m.Run())
}

// runDay is the instant the tests' runs happen: 06:00 in Paris.
var runDay = time.Date(2025, 6, 2, 4, 0, 0, 0, time.UTC)

// result is one run of the program's logic.
type result struct {
	code           int
	stdout, stderr string
	emb            *demo.World // the embedded services of the run, nil if none
}

// harness runs the program's logic in process, on loopback.
type harness struct {
	t     *testing.T
	state string
	env   map[string]string
	now   time.Time
	daily *oneDay // nil: the real daily loop (reorder.Run)
}

func newHarness(t *testing.T) *harness {
	return &harness{t: t, state: t.TempDir(), env: map[string]string{}, now: runDay}
}

func (h *harness) run(args ...string) result {
	h.t.Helper()
	var out, errb bytes.Buffer
	var res result
	a := &app{
		stdout: &out, stderr: &errb, now: func() time.Time { return h.now }, progName: "reorder",
		lookup: func(k string) (string, bool) {
			if k == envState {
				return h.state, true
			}
			v, ok := h.env[k]
			return v, ok
		},
		started: func(e *demo.World) { res.emb = e },
	}
	if h.daily != nil {
		a.runDaily = h.daily.run
	}
	res.code = a.run(context.Background(), args)
	res.stdout, res.stderr = out.String(), errb.String()
	return res
}

// must fails the test unless the run exited with code.
func (r result) must(t *testing.T, code int) result {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, r.stdout, r.stderr)
	}
	return r
}

var ticketRE = regexp.MustCompile(`approval ticket: (reorder-\d{4}-\d{2}-\d{2}-[0-9a-f]{12}) \(([^)]*)\)`)

func (r result) ticket(t *testing.T) (id, status string) {
	t.Helper()
	m := ticketRE.FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("no approval ticket in the output:\n%s", r.stdout)
	}
	return m[1], m[2]
}

// s24Line is the one line the 110-product catalog gives.
var s24Line = regexp.MustCompile(`(?m)^  S24_2000  1960 BSA Gold Star DBD34  Highway 66 Mini Classics +15 +135$`)

func (h *harness) rows(id string) []reorderRow {
	h.t.Helper()
	rows, err := readReorders(context.Background(), filepath.Join(h.state, approvalsFile), id)
	if err != nil {
		h.t.Fatal(err)
	}
	return rows
}

// approvals opens the run's approval store; the caller closes it.
func (h *harness) approvals() *approval.Store {
	h.t.Helper()
	s, err := approval.Open(context.Background(), filepath.Join(h.state, approvalsFile), approval.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		h.t.Fatal(err)
	}
	return s
}

func (h *harness) ticketState(id string) approval.State {
	h.t.Helper()
	s := h.approvals()
	defer s.Close()
	st, err := s.Read(context.Background(), id)
	if err != nil {
		h.t.Fatal(err)
	}
	return st
}

func (h *harness) tickets() []approval.State {
	h.t.Helper()
	s := h.approvals()
	defer s.Close()
	p, err := s.List(context.Background(), approval.Filter{Limit: approval.MaxPageSize})
	if err != nil {
		h.t.Fatal(err)
	}
	return p.States
}

func TestNoMandateReadsNothing(t *testing.T) {
	h := newHarness(t)
	h.run("revoke").must(t, exitOK)
	r := h.run("-once").must(t, exitFail) // no mandate: the work was refused
	if !strings.Contains(r.stderr, `msg="no mandate: halting before any exchange or read"`) {
		t.Errorf("stderr lacks the no-mandate log line:\n%s", r.stderr)
	}
	if !strings.Contains(r.stdout, "nothing was read, no proposal") || strings.Contains(r.stdout, "scanned") {
		t.Errorf("stdout:\n%s", r.stdout)
	}
	if n := r.emb.OP.TokenRequests(); n != 0 {
		t.Errorf("%d token endpoint requests, want 0", n)
	}
	if n := r.emb.Catalog.Requests(); n != 0 {
		t.Errorf("%d MCP requests reached the catalog, want 0", n)
	}
	if ts := h.tickets(); len(ts) != 0 {
		t.Errorf("%d tickets registered, want 0", len(ts))
	}

	// The same as JSON.
	r = h.run("-once", "-json").must(t, exitFail)
	var out struct {
		Halted   string          `json:"halted"`
		Proposal json.RawMessage `json:"proposal"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || out.Halted != msgNoMandate || out.Proposal != nil {
		t.Errorf("json %+v, %v:\n%s", out, err, r.stdout)
	}
	if r.emb.OP.TokenRequests() != 0 || r.emb.Catalog.Requests() != 0 {
		t.Error("the -json run made requests")
	}

	// Marie grants it again: the next run reads.
	h.run("grant").must(t, exitOK)
	r = h.run("-once").must(t, exitOK)
	if !s24Line.MatchString(r.stdout) {
		t.Errorf("after grant:\n%s", r.stdout)
	}
}

func TestProposalApproveAtMostOnce(t *testing.T) {
	h := newHarness(t)
	r := h.run("-once").must(t, exitOK)
	for _, want := range []string{
		"reorder run of 2025-06-02 (daily at 06:00 Europe/Paris) for marie\n",
		"scanned 110 of 110, complete\n",
		"1 line(s) proposed:\n",
		"escalate: true\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	if !s24Line.MatchString(r.stdout) {
		t.Errorf("no S24_2000 line (on hand 15, propose 135):\n%s", r.stdout)
	}
	id, status := r.ticket(t)
	if status != "waiting, new" || !strings.HasPrefix(id, "reorder-2025-06-02-") {
		t.Errorf("ticket %s (%s)", id, status)
	}
	if want := "  approve: reorder approve " + id + "\n"; !strings.Contains(r.stdout, want) {
		t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
	}
	// The mandate was redeemed in two requests (refresh, then exchange),
	// and every catalog request carried a token the provider verified for
	// the catalog's audience.
	reqs := r.emb.OP.Requests()
	if len(reqs) != 2 || reqs[0].GrantType != "refresh_token" || reqs[1].GrantType != tokenexchange.GrantTypeTokenExchange {
		t.Errorf("token requests %+v, want refresh_token then token exchange", reqs)
	}
	if ok, refused := r.emb.Verified(); ok == 0 || refused != 0 {
		t.Errorf("catalog bearer checks: %d verified, %d refused", ok, refused)
	}
	if n := r.emb.Catalog.Calls("list-products"); n != 1 {
		t.Errorf("list-products called %d times, want 1 (one page of 200)", n)
	}
	if rows := h.rows(""); len(rows) != 0 {
		t.Fatalf("rows before any approval: %+v", rows)
	}

	// The draft the person approves is the proposal.
	d, err := decodeDraft(h.ticketState(id).Draft)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Lines) != 1 || d.Lines[0] != (DraftLine{Code: "S24_2000", Name: "1960 BSA Gold Star DBD34", Vendor: "Highway 66 Mini Classics", OnHand: 15, Quantity: 135}) ||
		!d.Complete || d.Scanned != 110 || d.Total != 110 || d.Subject != "marie" {
		t.Errorf("stored draft %+v", d)
	}

	// A re-run the same day: same id, no second ticket.
	again := h.run("-once").must(t, exitOK)
	if id2, st := again.ticket(t); id2 != id || !strings.Contains(st, "already registered") {
		t.Errorf("re-run ticket %s (%s), want %s already registered", id2, st, id)
	}
	if n := len(h.tickets()); n != 1 {
		t.Errorf("%d tickets after a re-run the same day, want 1", n)
	}

	// Approve: one row per line.
	a := h.run("approve", "-by", "alice", "-comment", "ok", id).must(t, exitOK)
	if !strings.Contains(a.stdout, "applied: 1 reorders row(s) written") {
		t.Errorf("approve:\n%s", a.stdout)
	}
	want := []reorderRow{{OperationID: id, Line: 1, Code: "S24_2000", Name: "1960 BSA Gold Star DBD34", Vendor: "Highway 66 Mini Classics",
		OnHand: 15, Quantity: 135, RunDate: "2025-06-02", ApprovedBy: "alice"}}
	checkRows := func(when string) {
		t.Helper()
		got := h.rows("")
		if len(got) != len(want) {
			t.Fatalf("%s: %d rows, want %d: %+v", when, len(got), len(want), got)
		}
		for i := range got {
			g := got[i]
			g.ItemID, g.RecordedAt = 0, ""
			if g != want[i] || got[i].ItemID == 0 {
				t.Errorf("%s: row %+v, want %+v", when, got[i], want[i])
			}
		}
	}
	checkRows("after approve")
	st := h.ticketState(id)
	if st.Status != approval.StatusCompleted || st.ItemID == 0 {
		t.Errorf("state after approve: %+v", st)
	}

	// Approve again, by the same person and by another: still one row.
	a = h.run("approve", "-by", "alice", "-comment", "ok", id).must(t, exitOK)
	if !strings.Contains(a.stdout, "already applied") {
		t.Errorf("second approve:\n%s", a.stdout)
	}
	h.run("approve", "-by", "bob", id).must(t, exitOK)
	checkRows("after approving again")

	// Reject after approve: refused, nothing changes.
	rj := h.run("reject", "-by", "bob", id).must(t, exitFail)
	if !strings.Contains(rj.stderr, "already decided: approved by alice") {
		t.Errorf("reject after approve:\n%s", rj.stderr)
	}
	checkRows("after reject")
	st2 := h.ticketState(id)
	if st2.Status != approval.StatusCompleted || st2.Decision.Verdict != approval.Approve || st2.Decision.DecidedBy != "alice" || st2.ItemID != st.ItemID {
		t.Errorf("state after reject: %+v", st2)
	}

	// The completed ticket is reported as such by a later run of the day.
	later := h.run("-once").must(t, exitOK)
	if _, s := later.ticket(t); !strings.HasPrefix(s, "completed") || strings.Contains(later.stdout, "approve: ") {
		t.Errorf("later run:\n%s", later.stdout)
	}

	// show prints the ticket, the decision and the rows.
	sh := h.run("show", id).must(t, exitOK)
	for _, w := range []string{id + ": completed", "decision: approve by alice", `("ok")`, "reorders rows (1):"} {
		if !strings.Contains(sh.stdout, w) {
			t.Errorf("show lacks %q:\n%s", w, sh.stdout)
		}
	}
}

func TestRejectThenApproveRefused(t *testing.T) {
	h := newHarness(t)
	id, _ := h.run("-once").must(t, exitOK).ticket(t)
	rj := h.run("reject", "-by", "alice", id).must(t, exitOK)
	if !strings.Contains(rj.stdout, "rejected by alice: nothing will be ordered") {
		t.Errorf("reject:\n%s", rj.stdout)
	}
	ap := h.run("approve", "-by", "bob", id).must(t, exitFail)
	if !strings.Contains(ap.stderr, "already decided: rejected by alice") {
		t.Errorf("approve after reject:\n%s", ap.stderr)
	}
	if rows := h.rows(""); len(rows) != 0 {
		t.Errorf("rows after a rejection: %+v", rows)
	}
	if st := h.ticketState(id); st.Status != approval.StatusRejected {
		t.Errorf("status %s", st.Status)
	}
	h.run("approve", "-by", "bob", "reorder-2025-06-02-000000000000").must(t, exitFail)
	// $USER unset: the decider defaults to the login name, and the approve
	// is still refused.
	h.run("approve", id).must(t, exitFail)
}

// TestSameVerdictAnotherPerson pins the examples' one policy: a second
// decision with the standing verdict, by another person, exits 0, records
// nothing and names the standing decider.
func TestSameVerdictAnotherPerson(t *testing.T) {
	h := newHarness(t)
	id, _ := h.run("-once").must(t, exitOK).ticket(t)
	h.run("reject", "-by", "alice", "-comment", "too many", id).must(t, exitOK)
	r := h.run("reject", "-by", "bob", id).must(t, exitOK)
	if !strings.Contains(r.stdout, id+" already rejected by alice; nothing new recorded") {
		t.Errorf("second reject:\n%s", r.stdout)
	}
	if st := h.ticketState(id); st.Decision == nil || st.Decision.DecidedBy != "alice" || st.Decision.Comment != "too many" {
		t.Errorf("standing decision %+v", st.Decision)
	}

	id2 := approveDay(t, h)
	r = h.run("approve", "-by", "bob", id2).must(t, exitOK)
	if !strings.Contains(r.stdout, id2+" already approved by alice; nothing new recorded") || !strings.Contains(r.stdout, "already applied") {
		t.Errorf("second approve:\n%s", r.stdout)
	}
	if rows := h.rows(id2); len(rows) != 1 || rows[0].ApprovedBy != "alice" {
		t.Errorf("rows %+v", rows)
	}
}

// approveDay runs the next day and has alice approve its ticket.
func approveDay(t *testing.T, h *harness) string {
	t.Helper()
	h.now = h.now.Add(24 * time.Hour)
	id, _ := h.run("-once").must(t, exitOK).ticket(t)
	h.run("approve", "-by", "alice", id).must(t, exitOK)
	return id
}

// An apply whose effect fails writes nothing and leaves the ticket
// approved; approving again once the cause is gone applies it.
func TestApplyFailureWritesNothing(t *testing.T) {
	h := newHarness(t)
	id, _ := h.run("-once").must(t, exitOK).ticket(t)
	db, err := sql.Open("sqlite", "file:"+filepath.Join(h.state, approvalsFile)+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// A foreign table in the way: the effect's insert fails.
	if _, err := db.Exec(`CREATE TABLE reorders (something_else TEXT)`); err != nil {
		t.Fatal(err)
	}
	r := h.run("approve", "-by", "alice", id).must(t, exitFail)
	if !strings.Contains(r.stderr, "nothing was written; the ticket stays approved") {
		t.Errorf("stderr:\n%s", r.stderr)
	}
	if st := h.ticketState(id); st.Status != approval.StatusApproved || st.ItemID != 0 {
		t.Errorf("state after a failed apply: %+v", st)
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM reorders`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("foreign table holds %d rows (%v)", n, err)
	}
	if _, err := db.Exec(`DROP TABLE reorders`); err != nil {
		t.Fatal(err)
	}
	h.run("approve", "-by", "alice", id).must(t, exitOK)
	if rows := h.rows(id); len(rows) != 1 || rows[0].Quantity != 135 {
		t.Errorf("rows after retry: %+v", rows)
	}
}

func TestPageCapIsIncomplete(t *testing.T) {
	h := newHarness(t)
	r := h.run("-once", "-page-size", "50", "-max-pages", "1").must(t, exitFail)
	for _, want := range []string{
		"scanned 50 of 110, INCOMPLETE",
		"escalate: true\n",
		"page cap",
		"no approval ticket: the scan is incomplete",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, ", complete") {
		t.Errorf("an incomplete scan printed as complete:\n%s", r.stdout)
	}
	if n := r.emb.Catalog.Calls("list-products"); n != 1 {
		t.Errorf("list-products called %d times, want 1", n)
	}
	if n := len(h.tickets()); n != 0 {
		t.Errorf("%d tickets from an incomplete scan", n)
	}

	// -json says Complete false too.
	r = h.run("-once", "-json", "-page-size", "50", "-max-pages", "1").must(t, exitFail)
	var out struct {
		Proposal struct {
			Complete bool     `json:"complete"`
			Escalate bool     `json:"escalate"`
			Scanned  int      `json:"scanned"`
			Reasons  []string `json:"reasons"`
		} `json:"proposal"`
		Ticket   *ticketReport `json:"ticket"`
		NoTicket string        `json:"noTicket"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatal(err)
	}
	if out.Proposal.Complete || !out.Proposal.Escalate || out.Proposal.Scanned != 50 || out.Ticket != nil || out.NoTicket == "" ||
		len(out.Proposal.Reasons) == 0 || !strings.HasPrefix(out.Proposal.Reasons[0], "page cap") {
		t.Errorf("json: %+v", out)
	}

	// Pages of 50 without a cap read the whole catalog in 3 calls.
	r = h.run("-once", "-page-size", "50").must(t, exitOK)
	if !strings.Contains(r.stdout, "scanned 110 of 110, complete") || r.emb.Catalog.Calls("list-products") != 3 {
		t.Errorf("3 pages of 50: %d calls\n%s", r.emb.Catalog.Calls("list-products"), r.stdout)
	}
}

// A byte budget smaller than one page stops the scan: incomplete, no ticket.
func TestBudgetIsIncomplete(t *testing.T) {
	h := newHarness(t)
	r := h.run("-once", "-max-bytes", "4096").must(t, exitFail)
	if !strings.Contains(r.stdout, "INCOMPLETE") || !strings.Contains(r.stdout, "budget") {
		t.Errorf("stdout:\n%s", r.stdout)
	}
}

func TestJSONOutput(t *testing.T) {
	h := newHarness(t)
	r := h.run("-once", "-json").must(t, exitOK)
	var out struct {
		RunDate  string `json:"runDate"`
		Subject  string `json:"subject"`
		Proposal struct {
			Scanned  int  `json:"scanned"`
			Total    int  `json:"total"`
			Complete bool `json:"complete"`
			Escalate bool `json:"escalate"`
			Lines    []struct {
				Code     string `json:"code"`
				OnHand   int    `json:"onHand"`
				Quantity int    `json:"quantity"`
			} `json:"lines"`
		} `json:"proposal"`
		Ticket  ticketReport `json:"ticket"`
		Approve string       `json:"approveCommand"`
	}
	var loose map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &loose); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, r.stdout)
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatal(err)
	}
	p := out.Proposal
	if out.RunDate != "2025-06-02" || out.Subject != "marie" || p.Scanned != 110 || p.Total != 110 || !p.Complete || !p.Escalate ||
		len(p.Lines) != 1 || p.Lines[0].Code != "S24_2000" || p.Lines[0].OnHand != 15 || p.Lines[0].Quantity != 135 {
		t.Errorf("json: %+v", out)
	}
	if !out.Ticket.New || out.Ticket.Status != approval.StatusWaiting || out.Approve != "reorder approve "+out.Ticket.OperationID {
		t.Errorf("ticket %+v, approve %q", out.Ticket, out.Approve)
	}
}

// oneDay replaces reorder.Run: it runs the job at the first scheduled time
// after now, records the next one, and ends as a SIGINT would.
type oneDay struct {
	now   time.Time
	waits []time.Time
}

func (d *oneDay) run(ctx context.Context, s reorder.Schedule, job reorder.Job, _ ...reorder.Option) error {
	at := s.Next(d.now)
	d.waits = append(d.waits, at)
	if err := job(ctx, at); err != nil {
		return err
	}
	d.waits = append(d.waits, s.Next(at))
	return context.Canceled
}

func TestDailySchedule(t *testing.T) {
	h := newHarness(t)
	h.now = time.Date(2025, 10, 25, 12, 0, 0, 0, time.UTC) // the day before the fall-back change
	h.daily = &oneDay{now: h.now}
	r := h.run().must(t, exitOK) // no -once: the daily loop, ended as by SIGINT
	want := []time.Time{
		time.Date(2025, 10, 26, 5, 0, 0, 0, time.UTC), // 06:00 CET, the day after
		time.Date(2025, 10, 27, 5, 0, 0, 0, time.UTC),
	}
	if len(h.daily.waits) != 2 || !h.daily.waits[0].Equal(want[0]) || !h.daily.waits[1].Equal(want[1]) {
		t.Errorf("waited until %v, want %v", h.daily.waits, want)
	}
	if !strings.Contains(r.stdout, "reorder run of 2025-10-26 ") || !s24Line.MatchString(r.stdout) {
		t.Errorf("stdout:\n%s", r.stdout)
	}
	if id, _ := r.ticket(t); !strings.HasPrefix(id, "reorder-2025-10-26-") {
		t.Errorf("ticket %s not dated by the scheduled run", id)
	}
	if !strings.Contains(r.stderr, "daily at 06:00 Europe/Paris; next run 2025-10-26 06:00 CET") {
		t.Errorf("stderr:\n%s", r.stderr)
	}
}

// realServices starts a demo world to stand for real services, with a user
// paul who is not the demo's, and returns paul's offline token and a fresh
// mandate key (base64).
func realServices(t *testing.T) (e *demo.World, offline, key string) {
	t.Helper()
	e, err := startEmbedded(t.Context(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	if err := e.OP.AddUser(oidctest.User{ID: "paul", Username: "paul"}); err != nil {
		t.Fatal(err)
	}
	if offline, err = e.OP.OfflineToken(t.Context(), "paul", demoAgent); err != nil {
		t.Fatal(err)
	}
	keyBytes := make([]byte, mandate.KeySize)
	_, _ = rand.Read(keyBytes)
	return e, offline, base64.StdEncoding.EncodeToString(keyBytes)
}

// Real services: the agent is given a catalog URL and a provider, and the
// mandate is granted from an offline token in the environment.
func TestRealServices(t *testing.T) {
	e, offline, key := realServices(t)

	h := newHarness(t)
	args := []string{"-once", "-v", "-catalog", e.MCPURL, "-token-url", e.OP.TokenURL(), "-client-id", demoAgent, "-audience", mcpAudience}

	// Missing pieces are refused before anything runs.
	if r := h.run(append(args, "-user", "paul")...); r.code != exitUsage || !strings.Contains(r.stderr, envClientSecret) {
		t.Errorf("without the client secret: %d %s", r.code, r.stderr)
	}
	h.env[envClientSecret] = e.AgentSecret
	if r := h.run(append(args, "-user", "paul")...); r.code != exitConfig || !strings.Contains(r.stderr, envMandateKey+" is required") {
		t.Errorf("without the mandate key: %d %s", r.code, r.stderr)
	}
	h.env[envMandateKey] = key
	if e.OP.TokenRequests() != 0 || e.Catalog.Requests() != 0 {
		t.Fatal("refused runs made requests")
	}

	// paul has no mandate yet: nothing is exchanged or read.
	r := h.run(append(args, "-user", "paul")...).must(t, exitFail)
	if !strings.Contains(r.stderr, msgNoMandate) || r.emb != nil {
		t.Errorf("stderr:\n%s", r.stderr)
	}
	if e.OP.TokenRequests() != 0 || e.Catalog.Requests() != 0 {
		t.Errorf("no mandate: %d token requests, %d MCP requests", e.OP.TokenRequests(), e.Catalog.Requests())
	}

	h.env[envOfflineToken] = offline
	h.run("grant", "-user", "paul", "-client-id", demoAgent).must(t, exitOK)
	delete(h.env, envOfflineToken)
	r = h.run(append(args, "-user", "paul")...).must(t, exitOK)
	if !s24Line.MatchString(r.stdout) || !strings.Contains(r.stdout, "scanned 110 of 110, complete") ||
		!strings.Contains(r.stdout, "catalog: "+e.MCPURL) {
		t.Errorf("stdout:\n%s", r.stdout)
	}
	if ok, refused := e.Verified(); ok == 0 || refused != 0 {
		t.Errorf("bearer checks: %d verified, %d refused", ok, refused)
	}
	for _, secret := range []string{e.AgentSecret, offline, key} {
		if strings.Contains(r.stdout+r.stderr, secret) {
			t.Error("a secret reached the output or the logs")
		}
	}

	// Revoked: halts again, with no new request.
	h.run("revoke", "-user", "paul", "-client-id", demoAgent).must(t, exitOK)
	before, mcpBefore := e.OP.TokenRequests(), e.Catalog.Requests()
	r = h.run(append(args, "-user", "paul")...).must(t, exitFail)
	if !strings.Contains(r.stderr, msgNoMandate) || e.OP.TokenRequests() != before || e.Catalog.Requests() != mcpBefore {
		t.Errorf("after revoke: %d→%d token requests, %d→%d MCP requests\n%s",
			before, e.OP.TokenRequests(), mcpBefore, e.Catalog.Requests(), r.stderr)
	}

	// A mandate the provider no longer honours stops the run (exit 1).
	h.env[envOfflineToken] = offline // already rotated away: the provider refuses it
	h.run("grant", "-user", "paul", "-client-id", demoAgent).must(t, exitOK)
	r = h.run(append(args, "-user", "paul")...).must(t, exitFail)
	if !strings.Contains(r.stderr, "mandate rejected by the provider") || strings.Contains(r.stdout, "scanned") {
		t.Errorf("rejected mandate:\n%s\n%s", r.stdout, r.stderr)
	}
}

// A complete scan whose proposal breaks the draft's rules (the catalog
// reports a negative stock, which Plan proposes and flags but a person may
// not approve) registers no ticket that could never be applied:
// approval.Register runs Draft.Validate, and the run says why and exits 1.
func TestInvalidDraftIsNoTicket(t *testing.T) {
	e, offline, key := realServices(t)
	products, err := catalog.Products()
	if err != nil {
		t.Fatal(err)
	}
	products[0].QuantityInStock = -5 // S10_1678
	odd, err := catalog.New(catalog.WithProducts(products), catalog.WithBearerCheck(func(ctx context.Context, tok string) error {
		_, err := e.OP.VerifyAccessToken(ctx, tok, mcpAudience)
		return err
	}))
	if err != nil {
		t.Fatal(err)
	}
	oddURL, stop, err := odd.Start(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)

	h := newHarness(t)
	h.env[envClientSecret] = e.AgentSecret
	h.env[envMandateKey] = key
	h.env[envOfflineToken] = offline
	h.run("grant", "-user", "paul", "-client-id", demoAgent).must(t, exitOK)
	delete(h.env, envOfflineToken)

	r := h.run("-once", "-catalog", oddURL, "-token-url", e.OP.TokenURL(), "-client-id", demoAgent, "-audience", mcpAudience, "-user", "paul").must(t, exitFail)
	for _, want := range []string{
		"scanned 110 of 110, complete\n",
		"2 line(s) proposed:\n",
		"S10_1678 reports a negative on-hand quantity (-5)",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	// The failure is on stderr, not stdout.
	for _, want := range []string{
		"reorder: run failed: registering the approval ticket: approval: invalid draft",
		"line 1 (S10_1678): negative on-hand quantity -5",
	} {
		if !strings.Contains(r.stderr, want) || strings.Contains(r.stdout, want) {
			t.Errorf("stderr lacks %q (or stdout has it):\nstdout:\n%s\nstderr:\n%s", want, r.stdout, r.stderr)
		}
	}
	if strings.Contains(r.stdout, "approval ticket: reorder-") || strings.Contains(r.stdout, "approve: ") {
		t.Errorf("a ticket was offered:\n%s", r.stdout)
	}
	if n := len(h.tickets()); n != 0 {
		t.Errorf("%d tickets registered for a proposal that cannot be approved", n)
	}
}

func TestUsageErrors(t *testing.T) {
	h := newHarness(t)
	for _, args := range [][]string{
		{"frobnicate"},
		{"-at", "6"},
		{"-at", "25:00"},
		{"-zone", "Mars/Olympus"},
		{"-reorder-point", "200"},
		{"-token-url", "https://example.invalid/token"},
		{"approve"},
		{"show"},
		{"revoke", "extra"},
	} {
		if r := h.run(args...); r.code != exitUsage {
			t.Errorf("%q: exit %d, want %d", args, r.code, exitUsage)
		}
	}
	if r := h.run("-h"); r.code != exitOK || !strings.Contains(r.stdout, "Usage:") {
		t.Errorf("-h: %d", r.code)
	}
}

func validDraft() Draft {
	return Draft{
		Kind: draftKind, RunDate: "2025-06-02", Zone: "Europe/Paris", Subject: "marie",
		ReorderPoint: 50, OrderUpTo: 150, Scanned: 110, Total: 110, Complete: true,
		Lines: []DraftLine{{Code: "S24_2000", Name: "1960 BSA Gold Star DBD34", Vendor: "Highway 66 Mini Classics", OnHand: 15, Quantity: 135}},
	}
}

func TestDraftValidate(t *testing.T) {
	if errs := validDraft().Validate(); len(errs) != 0 {
		t.Fatalf("valid draft: %v", errs)
	}
	cases := map[string]func(*Draft){
		"incomplete":    func(d *Draft) { d.Complete = false },
		"no lines":      func(d *Draft) { d.Lines = nil },
		"bad date":      func(d *Draft) { d.RunDate = "02/06/2025" },
		"wrong qty":     func(d *Draft) { d.Lines[0].Quantity = 136 },
		"not below":     func(d *Draft) { d.Lines[0].OnHand, d.Lines[0].Quantity = 50, 100 },
		"duplicate":     func(d *Draft) { d.Lines = append(d.Lines, d.Lines[0]) },
		"empty code":    func(d *Draft) { d.Lines[0].Code = "" },
		"short scan":    func(d *Draft) { d.Scanned = 100 },
		"other kind":    func(d *Draft) { d.Kind = "x" },
		"no subject":    func(d *Draft) { d.Subject = "" },
		"rule inverted": func(d *Draft) { d.OrderUpTo = 10 },
	}
	for name, mutate := range cases {
		d := validDraft()
		d.Lines = append([]DraftLine(nil), d.Lines...)
		mutate(&d)
		if errs := d.Validate(); len(errs) == 0 {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestOperationID(t *testing.T) {
	a, err := operationID(validDraft())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := operationID(validDraft())
	if a != b || !regexp.MustCompile(`^reorder-2025-06-02-[0-9a-f]{12}$`).MatchString(a) {
		t.Errorf("ids %q, %q", a, b)
	}
	d := validDraft()
	d.Lines[0].OnHand, d.Lines[0].Quantity = 14, 136
	c, _ := operationID(d)
	d = validDraft()
	d.RunDate = "2025-06-03"
	e, _ := operationID(d)
	if c == a || e == a || !strings.HasPrefix(e, "reorder-2025-06-03-") {
		t.Errorf("different proposals share an id: %q %q %q", a, c, e)
	}
}

func TestDecodeDraftStrict(t *testing.T) {
	good, _ := json.Marshal(validDraft())
	if _, err := decodeDraft(good); err != nil {
		t.Fatal(err)
	}
	for _, raw := range []string{string(good) + "{}", `{"kind":"x","extra":1}`, `[]`} {
		if _, err := decodeDraft([]byte(raw)); err == nil {
			t.Errorf("%s: accepted", raw)
		}
	}
}

// The built binary, run as a person would: the default embedded run, then
// the no-mandate path.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := testproc.Build(t, ".")
	state := t.TempDir()
	run := func(args ...string) (string, string, int) {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), envState+"="+state)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		return out.String(), errb.String(), cmd.ProcessState.ExitCode()
	}
	out, errs, code := run("-once")
	if code != 0 || !strings.Contains(out, "scanned 110 of 110, complete") || !s24Line.MatchString(out) || !strings.Contains(out, "escalate: true") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	m := ticketRE.FindStringSubmatch(out)
	if m == nil || !strings.Contains(out, "approve: "+bin+" approve "+m[1]) {
		t.Fatalf("no ticket or approve command:\n%s", out)
	}
	out, errs, code = run("approve", "-by", "alice", m[1])
	if code != 0 || !strings.Contains(out, "applied: 1 reorders row(s) written") {
		t.Fatalf("approve: exit %d\n%s\n%s", code, out, errs)
	}
	if _, _, code = run("revoke"); code != 0 {
		t.Fatal("revoke failed")
	}
	out, errs, code = run("-once")
	if code != exitFail || !strings.Contains(errs, msgNoMandate) || strings.Contains(out, "scanned") {
		t.Fatalf("no mandate: exit %d\n%s\n%s", code, out, errs)
	}
}

// TestCLIConvention runs the built program: -h (and help, and each
// subcommand's -h) on stdout with exit 0 listing the subcommands; a usage
// error on stderr, with the usage once, exit 2, and found before any
// environment check (a bad CANDOR_MANDATE_KEY would be exit 3).
func TestCLIConvention(t *testing.T) {
	bin := testproc.Build(t, ".")
	subcommands := []string{"approve", "reject", "show", "revoke", "grant", "Exit codes:", "docs/examples.md"}
	clitest.Help(t, bin, []string{"-h"}, subcommands...)
	clitest.Help(t, bin, []string{"help"}, subcommands...)
	for _, sub := range []string{"approve", "reject", "show", "revoke", "grant"} {
		clitest.Help(t, bin, []string{sub, "-h"}, "Flags of reorder "+sub+":")
	}
	badKey := []string{envMandateKey + "=not-a-key"}
	for _, tc := range []struct {
		args   []string
		prefix string
	}{
		{[]string{"frobnicate"}, `reorder: unknown command "frobnicate"`},
		{[]string{"-nope"}, "reorder: flag provided but not defined: -nope"},
		{[]string{"-catalog", "http://127.0.0.1:1/mcp", "-at", "25:00"}, "reorder: "},
		{[]string{"-max-bytes", "0"}, "reorder: -max-bytes must be positive"},
		{[]string{"approve"}, "reorder approve: want exactly one operation id"},
		{[]string{"approve", "-nope", "x"}, "reorder approve: flag provided but not defined"},
		{[]string{"show", "a", "b"}, "reorder show: want exactly one operation id"},
		{[]string{"revoke", "extra"}, "reorder revoke: takes no arguments"},
	} {
		clitest.UsageError(t, bin, badKey, tc.args, tc.prefix, "Usage:")
	}
	// A configuration error is exit 3, on stderr.
	r := clitest.Exec(t, bin, badKey, "-once", "-catalog", "http://127.0.0.1:1/mcp", "-token-url", "http://127.0.0.1:1/token",
		"-client-id", "c", "-user", "u", "-client-secret", "s")
	if r.Code != exitConfig || !strings.Contains(r.Stderr, envMandateKey) || r.Stdout != "" {
		t.Errorf("bad key: exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
}
