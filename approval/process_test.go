package approval

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/candorkit/candor/internal/testproc"
)

// The multi-process tests re-execute this test binary with childRole set;
// TestMain then runs the child's part instead of the tests. Parent and
// children talk in JSON lines: the child writes events to stdout, the
// parent writes "go" lines to the child's stdin. No sleeps synchronise them.
const (
	childRole = "CANDOR_APPROVAL_CHILD"
	childDB   = "CANDOR_APPROVAL_DB"
	childOp   = "CANDOR_APPROVAL_OP"
	childN    = "CANDOR_APPROVAL_N"
	childArg  = "CANDOR_APPROVAL_ARG"
	// childRetry names an operation the apply child retries first, before
	// it reports ready: the retry after a crash runs in a fresh process,
	// the next crash child.
	childRetry = "CANDOR_APPROVAL_RETRY"
	// childKill makes the apply child SIGKILL itself at a chosen point:
	// 0..ledgerLines is inside the effect after that many ledger rows,
	// killAfterCommit right after Apply returned.
	childKill = "CANDOR_APPROVAL_KILL"
)

// killAfterCommit is the childKill point after Apply committed, before the
// child reports.
const killAfterCommit = ledgerLines + 1

func TestMain(m *testing.M) {
	if role := os.Getenv(childRole); role != "" {
		os.Exit(runChild(role))
	}
	os.Exit(m.Run())
}

// childEvent is one line a child writes.
type childEvent struct {
	Event     string    `json:"event"` // ready, result
	Err       string    `json:"err,omitempty"`
	Busy      bool      `json:"busy,omitempty"`
	Already   bool      `json:"already,omitempty"`
	Mismatch  bool      `json:"mismatch,omitempty"`
	Unknown   bool      `json:"unknown,omitempty"`
	Standing  *Decision `json:"standing,omitempty"`
	Status    Status    `json:"status,omitempty"`
	ItemID    int64     `json:"item_id,omitempty"`
	EffectRan bool      `json:"effect_ran,omitempty"`
	// at is when the parent read the event.
	at time.Time
}

// surfacedBusy reports whether err is, or says, SQLITE_BUSY or
// SQLITE_LOCKED.
func surfacedBusy(err error) bool {
	if err == nil {
		return false
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return true
		}
	}
	msg := err.Error()
	return strings.Contains(msg, "SQLITE_BUSY") || strings.Contains(msg, "database is locked") ||
		strings.Contains(msg, "SQLITE_LOCKED")
}

func runChild(role string) int {
	ctx := context.Background()
	out := json.NewEncoder(os.Stdout)
	in := bufio.NewScanner(os.Stdin)
	emit := func(ev childEvent) {
		if err := out.Encode(ev); err != nil {
			os.Exit(3)
		}
	}
	fail := func(err error) int {
		emit(childEvent{Event: "result", Err: err.Error(), Busy: surfacedBusy(err)})
		return 1
	}
	op := os.Getenv(childOp)
	switch role {
	case "readonly":
		return runReadOnlyChild()
	case "decide":
		// Open (perhaps creating and migrating the file), register the
		// shared ticket, then race Decide once the parent says go.
		n, _ := strconv.Atoi(os.Getenv(childN))
		s, err := openChild(ctx)
		if err != nil {
			return fail(err)
		}
		defer s.Close()
		if _, err := s.Register(ctx, Ticket{OperationID: op, Draft: raceDraft()}); err != nil {
			return fail(err)
		}
		emit(childEvent{Event: "ready"})
		if !in.Scan() {
			return fail(errors.New("no go from parent"))
		}
		verdict := Approve
		if n%2 == 1 {
			verdict = Reject
		}
		st, err := s.Decide(ctx, Decision{OperationID: op, Verdict: verdict,
			Comment: fmt.Sprintf("from child %d", n), DecidedBy: fmt.Sprintf("child-%d", n)})
		var ade *AlreadyDecidedError
		switch {
		case err == nil:
			emit(childEvent{Event: "result", Status: st.Status, Standing: st.Decision})
		case errors.Is(err, ErrAlreadyDecided) && errors.As(err, &ade):
			emit(childEvent{Event: "result", Already: true, Status: ade.Status, Standing: &ade.Standing, Err: err.Error()})
		default:
			return fail(err)
		}
		return 0
	case "apply":
		// Retry childRetry if set and report it; then, once the parent says
		// go, apply op with an effect that writes ledgerLines rows through
		// the transaction, report, and wait for stdin to close: the parent
		// (or childKill) decides when this process ends, mostly with
		// SIGKILL.
		s, err := openChild(ctx)
		if err != nil {
			return fail(err)
		}
		defer s.Close()
		if retry := os.Getenv(childRetry); retry != "" {
			ran := false
			st, err := s.Apply(ctx, retry, ledgerEffect(&ran, -1))
			if err != nil {
				emit(childEvent{Event: "retried", Err: err.Error(), Busy: surfacedBusy(err)})
				return 1
			}
			emit(childEvent{Event: "retried", Status: st.Status, ItemID: st.ItemID, EffectRan: ran})
		}
		if op == "" {
			for in.Scan() {
			}
			return 0
		}
		killAt := -1
		if k := os.Getenv(childKill); k != "" {
			if killAt, err = strconv.Atoi(k); err != nil {
				return fail(err)
			}
		}
		emit(childEvent{Event: "ready"})
		if !in.Scan() {
			return fail(errors.New("no go from parent"))
		}
		ran := false
		effect := ledgerEffect(&ran, killAt)
		if marker := os.Getenv(childArg); marker != "" {
			// Leave a trace, outside the transaction, that the effect has
			// started: the parent then knows a kill landed inside Apply's
			// transaction. It only classifies kill points.
			inner := effect
			effect = func(ctx context.Context, tx *sql.Tx, item Item) error {
				if err := os.WriteFile(marker, nil, 0o600); err != nil {
					return err
				}
				return inner(ctx, tx, item)
			}
		}
		st, err := s.Apply(ctx, op, effect)
		if err != nil {
			return fail(err)
		}
		if killAt == killAfterCommit {
			killSelf()
		}
		emit(childEvent{Event: "result", Status: st.Status, ItemID: st.ItemID, EffectRan: ran})
		for in.Scan() {
		}
		return 0
	case "resume":
		// A new process picks up a waiting run from its receipt file.
		s, err := openChild(ctx)
		if err != nil {
			return fail(err)
		}
		defer s.Close()
		r, err := ReadReceiptFile(os.Getenv(childOp))
		if err != nil {
			return fail(err)
		}
		st, err := s.Resume(ctx, r, os.Getenv(childArg))
		if err != nil {
			emit(childEvent{Event: "result", Err: err.Error(), Busy: surfacedBusy(err),
				Mismatch: errors.Is(err, ErrGraphVersionMismatch), Unknown: errors.Is(err, ErrUnknownReceipt)})
			return 0
		}
		if st.Status == StatusApproved {
			ran := false
			if st, err = s.Apply(ctx, r.OperationID, ledgerEffect(&ran, -1)); err != nil {
				return fail(err)
			}
			emit(childEvent{Event: "result", Status: st.Status, ItemID: st.ItemID, EffectRan: ran})
			return 0
		}
		emit(childEvent{Event: "result", Status: st.Status, ItemID: st.ItemID})
		return 0
	}
	fmt.Fprintf(os.Stderr, "unknown child role %q\n", role)
	return 2
}

func raceDraft() testDraft {
	return testDraft{Title: "restock", Quantity: 3, Lines: []string{"sku-9 x 3"}}
}

// ledgerLines is how many rows the test effect writes, to widen the window
// in which a kill lands inside the transaction.
const ledgerLines = 40

// ledgerEffect is the caller's effect in the process tests: it writes its
// own rows through Apply's transaction. With killAfter in 0..ledgerLines the
// process SIGKILLs itself once it has written that many rows, inside the
// transaction.
func ledgerEffect(ran *bool, killAfter int) Effect {
	return func(ctx context.Context, tx *sql.Tx, item Item) error {
		*ran = true
		// The ledger table exists (ensureLedger): an effect runs no DDL.
		for i := range ledgerLines {
			if i == killAfter {
				killSelf()
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO ledger (operation_id, item_id, line) VALUES ($1, $2, $3)`,
				item.OperationID, item.ID, i); err != nil {
				return err
			}
		}
		if killAfter == ledgerLines {
			killSelf()
		}
		return nil
	}
}

// killSelf ends the process as the parent's SIGKILL would: at once, with no
// deferred function, no Close and no flush.
func killSelf() {
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	for {
		time.Sleep(time.Hour) // not reached: the kernel ends the process first
	}
}

// child is a running re-executed test binary.
type child struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	events chan childEvent
	stderr *testproc.Buffer // exec copies into it while a failing test may read it
}

func startChild(t testing.TB, role string, env ...string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	// Under -race a process sleeps atexit_sleep_ms (1s by default) before it
	// exits; the children need not.
	gorace := strings.TrimSpace(os.Getenv("GORACE") + " atexit_sleep_ms=0")
	cmd.Env = append(os.Environ(), append([]string{childRole + "=" + role, "GORACE=" + gorace}, env...)...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, stdin: stdin, events: make(chan childEvent, 4), stderr: &testproc.Buffer{}}
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(c.events)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var ev childEvent
			if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
				ev = childEvent{Event: "garbage", Err: sc.Text()}
			}
			ev.at = time.Now()
			c.events <- ev
		}
	}()
	return c
}

// next returns the child's next event; a child that ended without one
// fails the test.
func (c *child) next(t testing.TB) childEvent {
	t.Helper()
	ev, ok := <-c.events
	if !ok {
		err := c.cmd.Wait()
		t.Fatalf("child ended without an event (%v); stderr:\n%s", err, c.stderr.String())
	}
	return ev
}

func (c *child) expect(t testing.TB, event string) childEvent {
	t.Helper()
	ev := c.next(t)
	if ev.Event != event {
		t.Fatalf("child sent %+v, want event %q; stderr:\n%s", ev, event, c.stderr.String())
	}
	return ev
}

func (c *child) send(t testing.TB, line string) {
	t.Helper()
	if _, err := io.WriteString(c.stdin, line+"\n"); err != nil {
		t.Fatalf("write to child: %v", err)
	}
}

// finish closes the child's stdin and requires a clean exit.
func (c *child) finish(t testing.TB) {
	t.Helper()
	if err := c.stdin.Close(); err != nil {
		t.Fatal(err)
	}
	for range c.events {
	}
	if err := c.cmd.Wait(); err != nil {
		t.Fatalf("child exited with %v; stderr:\n%s", err, c.stderr.String())
	}
}

// TestDecideRaceAcrossProcesses starts 8 processes on one database file (a
// fresh one in the first round: they also race to create and migrate it and
// to register the shared ticket) and lets them race Decide with different
// decisions.
func TestDecideRaceAcrossProcesses(t *testing.T) {
	forBackends(t, testDecideRaceAcrossProcesses)
}

func testDecideRaceAcrossProcesses(t *testing.T, b *backend) {
	const procs = 8
	db := b.location(t, "race")
	rng := testRand(t)
	for round := range 3 {
		op := fmt.Sprintf("race-%d", round)
		children := make([]*child, procs)
		for i := range children {
			children[i] = startChild(t, "decide", append(b.env(db), childOp+"="+op, childN+"="+strconv.Itoa(i))...)
		}
		for _, c := range children {
			c.expect(t, "ready")
		}
		// The go lines go out in a random order, so that no child is
		// always first.
		for _, i := range rng.Perm(procs) {
			children[i].send(t, "go")
		}
		var winners []childEvent
		losers := 0
		results := make([]childEvent, procs)
		for i, c := range children {
			ev := c.expect(t, "result")
			results[i] = ev
			c.finish(t)
			if ev.Busy {
				t.Errorf("round %d child %d surfaced SQLITE_BUSY: %s", round, i, ev.Err)
			}
			switch {
			case ev.Already:
				losers++
			case ev.Err == "":
				winners = append(winners, ev)
			default:
				t.Errorf("round %d child %d failed: %s", round, i, ev.Err)
			}
		}
		if len(winners) != 1 || losers != procs-1 {
			t.Fatalf("round %d: %d winners and %d losers, want 1 and %d: %+v", round, len(winners), losers, procs-1, results)
		}
		s := b.open(t, db)
		st, err := s.Read(context.Background(), op)
		if err != nil {
			t.Fatal(err)
		}
		if st.Decision == nil || *st.Decision != *winners[0].Standing {
			t.Fatalf("round %d: persisted decision %+v, winner's %+v", round, st.Decision, winners[0].Standing)
		}
		for i, ev := range results {
			if ev.Already && (ev.Standing == nil || *ev.Standing != *st.Decision || ev.Status != st.Status) {
				t.Errorf("round %d child %d lost to %+v (%s), persisted %+v (%s)", round, i, ev.Standing, ev.Status, st.Decision, st.Status)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// seedEnv replays a run of the randomised process tests: set it to the
// seed a failing run logged.
const seedEnv = "CANDOR_APPROVAL_SEED"

// testRand returns the test's random source and logs its seed.
func testRand(t testing.TB) *rand.Rand {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv(seedEnv); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", seedEnv, v, err)
		}
		seed = n
	}
	t.Logf("seed %d (replay with %s=%d)", seed, seedEnv, seed)
	return rand.New(rand.NewPCG(seed, 0x5eed))
}

// TestApplyRaceAcrossProcesses: 8 processes apply one approved operation
// at once, each with an effect that writes its rows through the
// transaction; the effect runs exactly once and every process gets the
// same item.
func TestApplyRaceAcrossProcesses(t *testing.T) {
	forBackends(t, testApplyRaceAcrossProcesses)
}

func testApplyRaceAcrossProcesses(t *testing.T, b *backend) {
	const procs = 8
	ctx := context.Background()
	db := b.location(t, "apply")
	rng := testRand(t)
	s := b.open(t, db)
	ensureLedger(t, s)
	for round := range 2 {
		op := fmt.Sprintf("apply-%d", round)
		if _, err := s.Register(ctx, Ticket{OperationID: op, Draft: testDraft{Title: op, Quantity: 1}}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Decide(ctx, Decision{OperationID: op, Verdict: Approve, DecidedBy: "tester"}); err != nil {
			t.Fatal(err)
		}
		children := make([]*child, procs)
		for i := range children {
			children[i] = startChild(t, "apply", append(b.env(db), childOp+"="+op)...)
		}
		for _, c := range children {
			c.expect(t, "ready")
		}
		for _, i := range rng.Perm(procs) {
			children[i].send(t, "go")
		}
		ran := 0
		var item int64
		for i, c := range children {
			ev := c.expect(t, "result")
			c.finish(t)
			if ev.Err != "" || ev.Busy || ev.Status != StatusCompleted {
				t.Fatalf("round %d child %d: %+v", round, i, ev)
			}
			if ev.EffectRan {
				ran++
			}
			if item == 0 {
				item = ev.ItemID
			} else if ev.ItemID != item {
				t.Fatalf("round %d child %d got item %d, another %d", round, i, ev.ItemID, item)
			}
		}
		if ran != 1 {
			t.Fatalf("round %d: the effect ran %d times", round, ran)
		}
		checkApplyInvariant(t, s, op)
	}
}

// crashCounts tallies where the kills landed, for the log.
type crashCounts struct{ beforeEffect, insideTx, afterCommit int }

// crashApplyLoop registers and approves n operations and applies each in a
// child process killed with SIGKILL, checks the file right after the kill,
// and has a fresh process retry the apply: the next crash child, which
// retries before it starts its own apply (and a last child for the last
// operation), so each round costs one process start.
//
// Two kinds of kill alternate. Two rounds in three, the parent kills the
// child after a random delay, so kills land anywhere, the commit included.
// Every third round, the child kills itself at a random point that is
// certainly inside Apply's transaction (after 0..ledgerLines rows of the
// effect) or certainly just after the commit: those rounds do not depend on
// timing, so every run covers both sides of the commit whatever the load.
func crashApplyLoop(t *testing.T, b *backend, n int) {
	ctx := context.Background()
	db := b.location(t, "crash")
	s := b.open(t, db)
	ensureLedger(t, s)
	rng := testRand(t)
	markers := t.TempDir()
	// window estimates how long a child takes from the parent's go to its
	// result: the mean of what the parent measured on children that
	// finished before their kill, doubled while none has. The kill delay is
	// drawn uniformly over 1.5 windows, so that about a third of the
	// external kills land after the commit and the rest before or inside
	// the transaction, the commit included. It only shapes the distribution
	// of kill points; nothing waits on it.
	window, measured := 5*time.Millisecond, 0
	var counts crashCounts
	prev, prevBefore := "", State{} // the killed operation awaiting its retry
	for i := range n {
		op := fmt.Sprintf("crash-%d", i)
		if _, err := s.Register(ctx, Ticket{OperationID: op, Draft: testDraft{Title: op, Quantity: i + 1}}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Decide(ctx, Decision{OperationID: op, Verdict: Approve, DecidedBy: "tester"}); err != nil {
			t.Fatal(err)
		}

		marker := filepath.Join(markers, op+".effect")
		env := append(b.env(db), childOp+"="+op, childArg+"="+marker, childRetry+"="+prev)
		killAt := -1 // the parent kills
		if i%3 == 2 {
			killAt = rng.IntN(killAfterCommit + 1)
			env = append(env, childKill+"="+strconv.Itoa(killAt))
		}
		c := startChild(t, "apply", env...)
		if prev != "" {
			checkRetry(t, s, prev, prevBefore, c.expect(t, "retried"))
		}
		c.expect(t, "ready")
		c.send(t, "go")
		sent := time.Now()
		if killAt < 0 {
			time.Sleep(time.Duration(rng.Int64N(int64(window) * 3 / 2))) // a random kill point, not synchronisation
			if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
		}
		var finished *childEvent
		for ev := range c.events {
			if ev.Event != "result" {
				continue
			}
			finished = &ev
			if killAt >= 0 {
				// The child should have killed itself before reporting.
				_ = c.cmd.Process.Signal(syscall.SIGKILL)
				t.Errorf("%s: child meant to kill itself at %d reported %+v", op, killAt, ev)
				continue
			}
			took := ev.at.Sub(sent)
			if measured == 0 {
				window = took
			}
			window += (took - window) / time.Duration(min(measured+1, 16))
			measured++
		}
		if finished == nil && killAt < 0 && measured == 0 {
			window = min(2*window, time.Second)
		}
		werr := c.cmd.Wait()
		if finished != nil && finished.Err != "" {
			t.Fatalf("%s: child failed before the kill: %s", op, finished.Err)
		}
		if ws, ok := werr.(*exec.ExitError); !ok || ws.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("%s: child was not killed by SIGKILL: %v; stderr:\n%s", op, werr, c.stderr.String())
		}

		b.awaitChildSessions(t, s)
		before := checkApplyInvariant(t, s, op)
		_, markErr := os.Stat(marker)
		switch {
		case before.Status == StatusCompleted:
			counts.afterCommit++
		case markErr == nil:
			counts.insideTx++
		default:
			counts.beforeEffect++
		}
		if finished != nil && (before.Status != StatusCompleted || before.ItemID != finished.ItemID) {
			t.Fatalf("%s: child reported item %d completed, file holds %+v", op, finished.ItemID, before)
		}
		switch {
		case killAt >= 0 && killAt < killAfterCommit && (before.Status != StatusApproved || markErr != nil):
			t.Fatalf("%s: killed inside the effect after %d rows, yet the file holds %+v (effect marker: %v)", op, killAt, before, markErr)
		case killAt == killAfterCommit && before.Status != StatusCompleted:
			t.Fatalf("%s: killed after the commit, yet the file holds %+v", op, before)
		}
		prev, prevBefore = op, before
	}
	last := startChild(t, "apply", append(b.env(db), childRetry+"="+prev)...)
	checkRetry(t, s, prev, prevBefore, last.expect(t, "retried"))
	last.finish(t)

	t.Logf("%d kills: %d before the effect began, %d inside the transaction after it began, %d after the commit (kill window %v)",
		n, counts.beforeEffect, counts.insideTx, counts.afterCommit, window)
	var items, ops, ledger int
	if err := s.db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM `+s.table(TableItems)+`), (SELECT count(*) FROM `+s.table(TableOperations)+` WHERE status = 'completed'),
		(SELECT count(*) FROM ledger)`).Scan(&items, &ops, &ledger); err != nil {
		t.Fatal(err)
	}
	if items != n || ops != n || ledger != n*ledgerLines {
		t.Fatalf("%d items, %d completed operations and %d ledger rows, want %d, %d and %d", items, ops, ledger, n, n, n*ledgerLines)
	}
}

// checkRetry checks what a fresh process's retry of op reported against the
// state op was in after the kill (before).
func checkRetry(t *testing.T, s *Store, op string, before State, ev childEvent) {
	t.Helper()
	if ev.Err != "" || ev.Busy {
		t.Fatalf("%s: retry failed: %s", op, ev.Err)
	}
	after := checkApplyInvariant(t, s, op)
	if after.Status != StatusCompleted || after.ItemID != ev.ItemID {
		t.Fatalf("%s: after retry %+v, retry reported item %d", op, after, ev.ItemID)
	}
	if before.Status == StatusCompleted && (ev.EffectRan || ev.ItemID != before.ItemID) {
		t.Fatalf("%s: completed before the retry (item %d) but the retry ran the effect=%v, item %d",
			op, before.ItemID, ev.EffectRan, ev.ItemID)
	}
	if before.Status == StatusApproved && !ev.EffectRan {
		t.Fatalf("%s: approved before the retry, but the retry did not run the effect", op)
	}
}

// checkApplyInvariant reads op from the file and requires that the item,
// the effect's rows and the Completed status exist all together or not at
// all.
func checkApplyInvariant(t *testing.T, s *Store, op string) State {
	t.Helper()
	ctx := context.Background()
	st, err := s.Read(ctx, op)
	if err != nil {
		t.Fatalf("%s: %v", op, err)
	}
	var items, ledger int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM `+s.table(TableItems)+` WHERE operation_id = $1`, op).Scan(&items); err != nil {
		t.Fatal(err)
	}
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM ledger WHERE operation_id = $1`, op).Scan(&ledger); err != nil {
		t.Fatal(err)
	}
	switch st.Status {
	case StatusCompleted:
		if items != 1 || ledger != ledgerLines || st.ItemID == 0 {
			t.Fatalf("%s: completed with %d items, %d ledger rows, item id %d", op, items, ledger, st.ItemID)
		}
	case StatusApproved:
		if items != 0 || ledger != 0 {
			t.Fatalf("%s: approved (not completed) with %d items and %d ledger rows", op, items, ledger)
		}
	default:
		t.Fatalf("%s: status %s", op, st.Status)
	}
	return st
}

func TestApplyCrashSafety(t *testing.T) {
	forBackends(t, func(t *testing.T, b *backend) { crashApplyLoop(t, b, 50) })
}

// TestApplyCrashSafetyLong is the longer run of the same test; -short
// skips it.
func TestApplyCrashSafetyLong(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the 300-kill crash run (TestApplyCrashSafety runs 50)")
	}
	forBackends(t, func(t *testing.T, b *backend) { crashApplyLoop(t, b, 300) })
}

// TestResumeInNewProcess: a host registers, issues a receipt, writes it to
// a file and exits; a person approves; a new process resumes from the file
// and applies. A process running another graph version, or holding an
// edited receipt, is refused.
func TestResumeInNewProcess(t *testing.T) {
	forBackends(t, testResumeInNewProcess)
}

func testResumeInNewProcess(t *testing.T, b *backend) {
	ctx := context.Background()
	dir := t.TempDir()
	db := b.location(t, "resume")
	file := filepath.Join(dir, "waiting.json")
	host := b.open(t, db)
	ensureLedger(t, host)
	const op = "resume-1"
	if _, err := host.Register(ctx, Ticket{OperationID: op, Draft: testDraft{Title: "resume", Quantity: 2}}); err != nil {
		t.Fatal(err)
	}
	rcpt, err := host.Receipt(ctx, WaitingReceipt{GraphVersion: "g7", SessionID: "sess-1", CheckpointID: "cp-3", OperationID: op, RequestID: "req-9"})
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteReceiptFile(file, rcpt); err != nil {
		t.Fatal(err)
	}
	if err := host.Close(); err != nil {
		t.Fatal(err)
	}

	resume := func(version, path string) childEvent {
		c := startChild(t, "resume", append(b.env(db), childOp+"="+path, childArg+"="+version)...)
		ev := c.expect(t, "result")
		c.finish(t)
		if ev.Busy {
			t.Fatalf("SQLITE_BUSY surfaced: %s", ev.Err)
		}
		return ev
	}
	// Still waiting: the new process sees Waiting and applies nothing.
	if ev := resume("g7", file); ev.Err != "" || ev.Status != StatusWaiting {
		t.Fatalf("resume while waiting: %+v", ev)
	}

	reviewer := b.open(t, db)
	if _, err := reviewer.Decide(ctx, Decision{OperationID: op, Verdict: Approve, DecidedBy: "alice"}); err != nil {
		t.Fatal(err)
	}
	if ev := resume("g8", file); !ev.Mismatch {
		t.Fatalf("resume under another graph version: %+v, want ErrGraphVersionMismatch", ev)
	}
	edited := filepath.Join(dir, "edited.json")
	forged := rcpt
	forged.SessionID = "sess-other"
	if err := WriteReceiptFile(edited, forged); err != nil {
		t.Fatal(err)
	}
	if ev := resume("g7", edited); !ev.Unknown {
		t.Fatalf("resume from an edited receipt: %+v, want ErrUnknownReceipt", ev)
	}
	if st, err := reviewer.Read(ctx, op); err != nil || st.Status != StatusApproved {
		t.Fatalf("refused resumes changed the operation: %+v, %v", st, err)
	}

	ev := resume("g7", file)
	if ev.Err != "" || ev.Status != StatusCompleted || !ev.EffectRan || ev.ItemID == 0 {
		t.Fatalf("resume after approval: %+v", ev)
	}
	again := resume("g7", file)
	if again.Err != "" || again.Status != StatusCompleted || again.EffectRan || again.ItemID != ev.ItemID {
		t.Fatalf("second resume: %+v, first %+v", again, ev)
	}
	checkApplyInvariant(t, reviewer, op)
}
