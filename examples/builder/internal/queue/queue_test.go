package queue

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/candorkit/candor/internal/pgtest"
)

// backend opens fresh, initialised stores on one database kind.
type backend struct {
	name string
	dsn  func(t *testing.T) string
}

// backends returns SQLite (a file in t.TempDir()) and PostgreSQL (a fresh
// database in one throwaway cluster for the whole test).
func backends(t *testing.T) []backend {
	t.Helper()
	cluster := pgtest.Start(t)
	return []backend{
		{"sqlite", func(t *testing.T) string { return filepath.Join(t.TempDir(), "queue.db") }},
		{"postgres", func(t *testing.T) string { return cluster.NewDatabase(t) }},
	}
}

func openStore(t *testing.T, dsn string, opts ...Option) *Store {
	t.Helper()
	s, err := Open(context.Background(), dsn, opts...)
	if err != nil {
		t.Fatalf("open %s: %v", dsn, err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Init(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

func prio(n int64) sql.NullInt64 { return sql.NullInt64{Int64: n, Valid: true} }

func TestStore(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			t.Run("init is idempotent and round-trips an idea", func(t *testing.T) { testRoundTrip(t, b.dsn(t)) })
			t.Run("pick order and filters", func(t *testing.T) { testPickOrder(t, b.dsn(t)) })
			t.Run("claim", func(t *testing.T) { testClaim(t, b.dsn(t)) })
			t.Run("transitions", func(t *testing.T) { testTransitions(t, b.dsn(t)) })
			t.Run("test results", func(t *testing.T) { testResults(t, b.dsn(t)) })
			t.Run("assertion checks", func(t *testing.T) { testAssertionChecks(t, b.dsn(t)) })
			t.Run("two builders race the claim", func(t *testing.T) { testClaimRace(t, b.dsn(t)) })
		})
	}
}

func testRoundTrip(t *testing.T, dsn string) {
	ctx := context.Background()
	clock := time.Date(2026, 3, 4, 5, 6, 7, 890000000, time.UTC)
	s := openStore(t, dsn, WithClock(func() time.Time { return clock }))
	if err := s.Init(ctx); err != nil {
		t.Fatalf("second Init: %v", err)
	}
	id, err := s.InsertSample(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	want := Sample()
	if got.Name != want.Name || got.Type != IdeaType || got.Status != StatusReadyToBuild || got.BuilderStatus != NotStarted ||
		got.Priority != want.Priority || got.Spec != want.Spec || got.Infrastructure != want.Infrastructure {
		t.Fatalf("round trip changed the idea: %+v", got)
	}
	if !got.CreatedAt.Equal(clock) || !got.UpdatedAt.Equal(clock) {
		t.Fatalf("timestamps %v/%v; want %v", got.CreatedAt, got.UpdatedAt, clock)
	}
	a, err := got.Assertion()
	if err != nil {
		t.Fatalf("stored sample assertion: %v", err)
	}
	if len(a.SQL) != 1 || len(a.HTTP) != 1 || a.HTTP[0].Capture != "order-confirmations" {
		t.Fatalf("assertion %+v", a)
	}
	if _, err := s.Get(ctx, id+100); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get unknown id: %v; want ErrNotFound", err)
	}
	if _, err := s.InsertIdea(ctx, NewIdea{Name: "  "}); err == nil {
		t.Fatal("an idea without a name was stored")
	}
	noSpec, err := s.InsertIdea(ctx, NewIdea{Name: "no assertion"})
	if err != nil {
		t.Fatal(err)
	}
	it, err := s.Get(ctx, noSpec)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := it.Assertion(); !errors.Is(err, ErrNoAssertion) || err.Error() != "no assertion defined" {
		t.Fatalf("idea without spec: %v; want ErrNoAssertion \"no assertion defined\"", err)
	}
}

func testPickOrder(t *testing.T, dsn string) {
	ctx := context.Background()
	s := openStore(t, dsn)
	if _, err := s.Pick(ctx); !errors.Is(err, ErrNoIdea) {
		t.Fatalf("Pick on an empty queue: %v; want ErrNoIdea", err)
	}
	ins := func(n NewIdea) int64 {
		t.Helper()
		id, err := s.InsertIdea(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	noPrio := ins(NewIdea{Name: "no priority"})
	two := ins(NewIdea{Name: "two", Priority: prio(2)})
	oneA := ins(NewIdea{Name: "one a", Priority: prio(1)})
	oneB := ins(NewIdea{Name: "one b", Priority: prio(1)})
	ins(NewIdea{Name: "other type", Type: "email_template", Priority: prio(0)})
	ins(NewIdea{Name: "not ready", Status: "draft", Priority: prio(0)})
	taken := ins(NewIdea{Name: "taken", Priority: prio(0)})
	if err := s.Claim(ctx, taken); err != nil {
		t.Fatal(err)
	}
	var order []int64
	for {
		it, err := s.Pick(ctx)
		if errors.Is(err, ErrNoIdea) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		order = append(order, it.ID)
		if err := s.Claim(ctx, it.ID); err != nil {
			t.Fatal(err)
		}
	}
	want := []int64{oneA, oneB, two, noPrio}
	if fmt.Sprint(order) != fmt.Sprint(want) {
		t.Fatalf("pick order %v; want %v (priority ASC NULLS LAST, id ASC, only ready n8n ideas)", order, want)
	}
}

func testClaim(t *testing.T, dsn string) {
	ctx := context.Background()
	s := openStore(t, dsn)
	id, err := s.InsertIdea(ctx, NewIdea{Name: "claim me"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Claim(ctx, id); err != nil {
		t.Fatalf("first claim: %v", err)
	}
	err = s.Claim(ctx, id)
	var te *TransitionError
	if !errors.Is(err, ErrClaimed) || !errors.As(err, &te) || te.Actual != Queued || errors.Is(err, ErrTransition) {
		t.Fatalf("second claim: %v; want ErrClaimed with Actual=queued", err)
	}
	if err := s.Claim(ctx, id+1000); !errors.Is(err, ErrNotFound) {
		t.Fatalf("claim unknown id: %v; want ErrNotFound", err)
	}
}

func testTransitions(t *testing.T, dsn string) {
	ctx := context.Background()
	s := openStore(t, dsn)
	id, err := s.InsertIdea(ctx, NewIdea{Name: "happy"})
	if err != nil {
		t.Fatal(err)
	}
	mustState := func(want BuilderStatus) Idea {
		t.Helper()
		it, err := s.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if it.BuilderStatus != want {
			t.Fatalf("builder_status %s; want %s", it.BuilderStatus, want)
		}
		return it
	}
	if err := s.StartBuilding(ctx, id); !errors.Is(err, ErrTransition) {
		t.Fatalf("building an unclaimed idea: %v; want ErrTransition", err)
	}
	if err := s.Claim(ctx, id); err != nil {
		t.Fatal(err)
	}
	if err := s.Release(ctx, id); err != nil {
		t.Fatalf("release: %v", err)
	}
	mustState(NotStarted)
	if got, err := s.Pick(ctx); err != nil || got.ID != id {
		t.Fatalf("released idea not picked again: %v %v", got.ID, err)
	}
	if err := s.Claim(ctx, id); err != nil {
		t.Fatal(err)
	}
	if err := s.StartBuilding(ctx, id); err != nil {
		t.Fatal(err)
	}
	if err := s.Release(ctx, id); !errors.Is(err, ErrTransition) {
		t.Fatalf("release after generation started: %v; want ErrTransition", err)
	}
	if err := s.AwaitApproval(ctx, id); !errors.Is(err, ErrTransition) {
		t.Fatalf("awaiting approval without a sandbox workflow: %v; want ErrTransition", err)
	}
	if err := s.SetSandboxWorkflow(ctx, id, "wf-sandbox-1"); err != nil {
		t.Fatal(err)
	}
	if err := s.AwaitApproval(ctx, id); err != nil {
		t.Fatal(err)
	}
	if err := s.MarkDeployed(ctx, id, ""); !errors.Is(err, ErrTransition) {
		t.Fatalf("deployed without a production id: %v", err)
	}
	if err := s.MarkDeployed(ctx, id, "wf-prod-9"); err != nil {
		t.Fatal(err)
	}
	it := mustState(Deployed)
	if it.Status != StatusDeployed || it.ProductionWorkflowID != "wf-prod-9" || it.SandboxWorkflowID != "wf-sandbox-1" {
		t.Fatalf("deployed idea %+v", it)
	}
	err = s.MarkDeployed(ctx, id, "wf-prod-10")
	var te *TransitionError
	if !errors.As(err, &te) || te.Actual != Deployed || !errors.Is(err, ErrTransition) {
		t.Fatalf("second MarkDeployed: %v; want a TransitionError with Actual=deployed", err)
	}
	if got, _ := s.Get(ctx, id); got.ProductionWorkflowID != "wf-prod-9" {
		t.Fatalf("second MarkDeployed overwrote the production id: %q", got.ProductionWorkflowID)
	}
	if err := s.Fail(ctx, id, "late"); !errors.Is(err, ErrTransition) {
		t.Fatalf("failing a deployed idea: %v; want ErrTransition", err)
	}

	bad, err := s.InsertIdea(ctx, NewIdea{Name: "sad"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Claim(ctx, bad); err != nil {
		t.Fatal(err)
	}
	if err := s.StartBuilding(ctx, bad); err != nil {
		t.Fatal(err)
	}
	if err := s.Fail(ctx, bad, "Level 3: execution error: boom"); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, bad)
	if err != nil {
		t.Fatal(err)
	}
	if got.BuilderStatus != Failed || got.LastError != "Level 3: execution error: boom" {
		t.Fatalf("failed idea %+v", got)
	}
	if err := s.Claim(ctx, bad); !errors.Is(err, ErrClaimed) {
		t.Fatalf("claiming a failed idea: %v; want ErrClaimed", err)
	}
}

func testResults(t *testing.T, dsn string) {
	ctx := context.Background()
	s := openStore(t, dsn)
	id, err := s.InsertIdea(ctx, NewIdea{Name: "tested"})
	if err != nil {
		t.Fatal(err)
	}
	rows := []TestResult{
		{AutomationID: id, Level: 1, Passed: true, Detail: "GET 200, 3 nodes"},
		{AutomationID: id, Level: 2, Passed: false, Detail: "credential link broken: Slack"},
		{AutomationID: id, Level: 0, Passed: false, Detail: "unhandled: context deadline exceeded"},
	}
	for _, r := range rows {
		if _, err := s.AddTestResult(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.AddTestResult(ctx, TestResult{AutomationID: id, Level: 5}); err == nil {
		t.Fatal("level 5 was recorded")
	}
	if _, err := s.AddTestResult(ctx, TestResult{AutomationID: id + 999, Level: 1, Passed: true}); err == nil {
		t.Fatal("a result for an unknown automation was recorded")
	}
	got, err := s.TestResults(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(rows) {
		t.Fatalf("%d rows; want %d", len(got), len(rows))
	}
	for i, r := range got {
		if r.Level != rows[i].Level || r.Passed != rows[i].Passed || r.Detail != rows[i].Detail || r.AutomationID != id || r.CreatedAt.IsZero() {
			t.Fatalf("row %d = %+v; want %+v", i, r, rows[i])
		}
	}
	var status string
	if err := s.DB().QueryRow(s.q(`SELECT status FROM agent_test_results WHERE id = ?`), got[1].ID).Scan(&status); err != nil || status != "fail" {
		t.Fatalf("stored status %q (%v); want fail", status, err)
	}
}

func testAssertionChecks(t *testing.T, dsn string) {
	ctx := context.Background()
	s := openStore(t, dsn)
	srv := httptest.NewServer(s.CaptureHandler(nil))
	t.Cleanup(srv.Close)
	a := *Sample().Assertion

	start := time.Now().Add(-time.Second)
	rep, err := s.CheckAssertion(ctx, a, start)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Passed() || len(rep.Results) != 2 || rep.Results[0].Passed || rep.Results[1].Passed {
		t.Fatalf("checks passed before the capture was called: %+v", rep)
	}
	if !strings.Contains(rep.Failure(), "no row") {
		t.Fatalf("failure %q does not say the query returned no row", rep.Failure())
	}

	resp, err := http.Post(srv.URL+"/capture/order-confirmations", "application/json", strings.NewReader(`{"order_id":7,"status":"confirmed"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != `{"captured":true}` {
		t.Fatalf("capture answered %d %s", resp.StatusCode, body)
	}
	rep, err = s.CheckAssertion(ctx, a, start)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Passed() || rep.Failure() != "" {
		t.Fatalf("checks failed after the capture was called: %+v", rep)
	}
	// A call from before the smoke run started does not count.
	rep, err = s.CheckAssertion(ctx, Assertion{HTTP: a.HTTP}, time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Passed() {
		t.Fatal("a capture recorded before `since` satisfied the check")
	}
	// Method and body narrow the match.
	rep, _ = s.CheckAssertion(ctx, Assertion{HTTP: []HTTPCheck{{Capture: "order-confirmations", Method: "PUT"}}}, start)
	if rep.Passed() {
		t.Fatal("a POST satisfied a PUT check")
	}
	// A query that errors is a failed check with the reason; a writing query is rolled back.
	rep, err = s.CheckAssertion(ctx, Assertion{SQL: []SQLCheck{{Query: "SELECT nope FROM missing_table"}}}, start)
	if err != nil || rep.Passed() || !strings.Contains(rep.Failure(), "query failed") {
		t.Fatalf("erroring query: %+v %v", rep, err)
	}
	_, _ = s.CheckAssertion(ctx, Assertion{SQL: []SQLCheck{{Query: "DELETE FROM http_captures RETURNING id"}}}, start)
	if caps, err := s.Captures(ctx, "order-confirmations", start); err != nil || len(caps) != 1 {
		t.Fatalf("a check changed state: %d captures left (%v)", len(caps), err)
	}
	if _, err := s.CheckAssertion(ctx, Assertion{}, start); err == nil {
		t.Fatal("an empty assertion was checked")
	}
	// Bad capture names and oversized bodies are refused.
	resp, err = http.Post(srv.URL+"/capture/Bad%20Name", "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("bad capture name answered %d", resp.StatusCode)
	}
	resp, err = http.Post(srv.URL+"/capture/big", "text/plain", strings.NewReader(strings.Repeat("x", MaxCaptureBody+1)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("oversized capture answered %d", resp.StatusCode)
	}
	if caps, _ := s.Captures(ctx, "big", start); len(caps) != 0 {
		t.Fatal("an oversized body was recorded")
	}
}

// testClaimRace runs rounds in which two builders (two separate connections
// pools, as two processes would have) pick the same idea and claim it at the
// same instant. Exactly one must win every round.
func testClaimRace(t *testing.T, dsn string) {
	ctx := context.Background()
	a := openStore(t, dsn)
	b := openStore(t, dsn)
	const rounds = 25
	for round := 0; round < rounds; round++ {
		id, err := a.InsertIdea(ctx, NewIdea{Name: fmt.Sprintf("race %d", round), Priority: prio(1)})
		if err != nil {
			t.Fatal(err)
		}
		builders := []*Store{a, b}
		var (
			wg   sync.WaitGroup
			go_  = make(chan struct{})
			errs = make([]error, len(builders))
		)
		for i, st := range builders {
			it, err := st.Pick(ctx)
			if err != nil || it.ID != id {
				t.Fatalf("builder %d picked %d (%v); want %d", i, it.ID, err, id)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-go_
				errs[i] = st.Claim(ctx, it.ID)
			}()
		}
		close(go_)
		wg.Wait()
		wins, lost := 0, 0
		for _, err := range errs {
			switch {
			case err == nil:
				wins++
			case errors.Is(err, ErrClaimed):
				lost++
			default:
				t.Fatalf("round %d: claim failed otherwise: %v", round, err)
			}
		}
		if wins != 1 || lost != 1 {
			t.Fatalf("round %d: %d builders won and %d lost; want exactly one winner", round, wins, lost)
		}
		if err := a.StartBuilding(ctx, id); err != nil { // take it out of the queue for the next round
			t.Fatal(err)
		}
	}
}

func TestOpenKeepsThePasswordOutOfErrors(t *testing.T) {
	dsn := "postgres://postgres:s3cret-never-shown@127.0.0.1:1/postgres?sslmode=disable&connect_timeout=2"
	_, err := Open(context.Background(), dsn)
	if err == nil {
		t.Fatal("Open succeeded against a closed port")
	}
	if strings.Contains(err.Error(), "s3cret-never-shown") {
		t.Fatalf("error shows the password: %v", err)
	}
}

func TestRebind(t *testing.T) {
	pg := New(nil, Postgres)
	if got := pg.q("UPDATE t SET a = ? WHERE id = ? AND s IN (?, ?)"); got != "UPDATE t SET a = $1 WHERE id = $2 AND s IN ($3, $4)" {
		t.Fatalf("rebind: %s", got)
	}
	if got := New(nil, SQLite).q("a = ?"); got != "a = ?" {
		t.Fatalf("sqlite query changed: %s", got)
	}
}
