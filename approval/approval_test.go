package approval

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// reorderedDraft marshals to the same JSON object as testDraft, with its
// keys in another order: canonicalisation must make them byte-identical.
type reorderedDraft struct {
	Lines    []string `json:"lines,omitempty"`
	Quantity int      `json:"quantity"`
	Title    string   `json:"title"`
}

func (reorderedDraft) Validate() []error { return nil }

type unmarshalableDraft struct{ C chan int }

func (unmarshalableDraft) Validate() []error { return nil }

type ptrDraft struct{ Title string }

func (*ptrDraft) Validate() []error { return nil }

type mapDraft map[string]any

func (mapDraft) Validate() []error { return nil }

// rawDraft marshals to exactly its bytes, which need not be UTF-8.
type rawDraft []byte

func (rawDraft) Validate() []error              { return nil }
func (d rawDraft) MarshalJSON() ([]byte, error) { return d, nil }

// embeddedRawDraft carries a json.RawMessage, which json.Marshal copies
// without checking its strings.
type embeddedRawDraft struct {
	Title string          `json:"title"`
	Extra json.RawMessage `json:"extra"`
}

func (embeddedRawDraft) Validate() []error { return nil }

type nullDraft struct{}

func (nullDraft) Validate() []error            { return nil }
func (nullDraft) MarshalJSON() ([]byte, error) { return []byte("null"), nil }

func TestRegister(t *testing.T) {
	ctx := context.Background()
	var nilPtr *ptrDraft
	tests := []struct {
		name     string
		ticket   Ticket
		opts     []Option
		want     []error  // every error errors.Is must match
		problems []string // substrings, one per expected draft problem
	}{
		{name: "valid", ticket: Ticket{OperationID: "op", Draft: testDraft{Title: "t", Quantity: 1}}},
		{name: "empty id", ticket: Ticket{OperationID: "", Draft: testDraft{Title: "t", Quantity: 1}}, want: []error{ErrInvalidOperationID}},
		{name: "id with white space", ticket: Ticket{OperationID: " op", Draft: testDraft{Title: "t", Quantity: 1}}, want: []error{ErrInvalidOperationID}},
		{name: "id with control char", ticket: Ticket{OperationID: "op\n1", Draft: testDraft{Title: "t", Quantity: 1}}, want: []error{ErrInvalidOperationID}},
		{name: "id not UTF-8", ticket: Ticket{OperationID: "op\xff", Draft: testDraft{Title: "t", Quantity: 1}}, want: []error{ErrInvalidOperationID}},
		{name: "id too long", ticket: Ticket{OperationID: strings.Repeat("x", MaxOperationIDBytes+1), Draft: testDraft{Title: "t", Quantity: 1}}, want: []error{ErrInvalidOperationID}},
		{name: "nil draft", ticket: Ticket{OperationID: "op"}, want: []error{ErrInvalidDraft}, problems: []string{"nil"}},
		{name: "typed nil draft", ticket: Ticket{OperationID: "op", Draft: nilPtr}, want: []error{ErrInvalidDraft}, problems: []string{"nil"}},
		{name: "every Validate problem", ticket: Ticket{OperationID: "op", Draft: testDraft{}}, want: []error{ErrInvalidDraft},
			problems: []string{"title is empty", "quantity must be positive"}},
		{name: "id and draft both bad", ticket: Ticket{OperationID: "", Draft: testDraft{Quantity: 1}}, want: []error{ErrInvalidOperationID, ErrInvalidDraft},
			problems: []string{"title is empty"}},
		{name: "unmarshalable", ticket: Ticket{OperationID: "op", Draft: unmarshalableDraft{C: make(chan int)}}, want: []error{ErrInvalidDraft},
			problems: []string{"does not marshal"}},
		{name: "invalid UTF-8 in draft", ticket: Ticket{OperationID: "op", Draft: testDraft{Title: "bad \xff", Quantity: 1}}, want: []error{ErrInvalidDraft},
			problems: []string{"not valid UTF-8"}},
		{name: "MarshalJSON not UTF-8", ticket: Ticket{OperationID: "op", Draft: rawDraft("{\"a\":\"\xff\"}")}, want: []error{ErrInvalidDraft},
			problems: []string{"not valid UTF-8"}},
		{name: "RawMessage not UTF-8", ticket: Ticket{OperationID: "op", Draft: embeddedRawDraft{Title: "t", Extra: json.RawMessage("\"\xfe\"")}},
			want: []error{ErrInvalidDraft}, problems: []string{"not valid UTF-8"}},
		{name: "genuine U+FFFD is fine", ticket: Ticket{OperationID: "op", Draft: testDraft{Title: "ok \ufffd and \\ufffd", Quantity: 1}}},
		{name: "null draft", ticket: Ticket{OperationID: "op", Draft: nullDraft{}}, want: []error{ErrInvalidDraft}, problems: []string{"null"}},
		{name: "too large", ticket: Ticket{OperationID: "op", Draft: testDraft{Title: strings.Repeat("x", 100), Quantity: 1}},
			opts: []Option{WithMaxDraftBytes(64)}, want: []error{ErrInvalidDraft}, problems: []string{"more than the bound of 64"}},
		{name: "too large and invalid", ticket: Ticket{OperationID: "op", Draft: testDraft{Title: strings.Repeat("x", 100)}},
			opts: []Option{WithMaxDraftBytes(64)}, want: []error{ErrInvalidDraft}, problems: []string{"quantity must be positive", "more than the bound"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t, tc.opts...)
			st, err := s.Register(ctx, tc.ticket)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("Register: %v", err)
				}
				if st.Status != StatusWaiting || st.OperationID != tc.ticket.OperationID || st.Decision != nil || st.CreatedAt.IsZero() {
					t.Fatalf("state %+v", st)
				}
				got, err := s.Read(ctx, tc.ticket.OperationID)
				if err != nil || string(got.Draft) != string(st.Draft) || !got.CreatedAt.Equal(st.CreatedAt) {
					t.Fatalf("Read = %+v, %v; Register returned %+v", got, err, st)
				}
				return
			}
			if err == nil {
				t.Fatalf("Register succeeded with %+v", st)
			}
			for _, w := range tc.want {
				if !errors.Is(err, w) {
					t.Errorf("error %v does not match %v", err, w)
				}
			}
			if len(tc.problems) > 0 {
				var ide *InvalidDraftError
				if !errors.As(err, &ide) {
					t.Fatalf("error %v is not an *InvalidDraftError", err)
				}
				if len(ide.Problems) != len(tc.problems) {
					t.Fatalf("problems %q, want %d of them (%q)", ide.Problems, len(tc.problems), tc.problems)
				}
				for i, p := range tc.problems {
					if !strings.Contains(ide.Problems[i].Error(), p) {
						t.Errorf("problem %d = %q, want it to mention %q", i, ide.Problems[i], p)
					}
				}
			}
			page, lerr := s.List(ctx, Filter{})
			if lerr != nil || len(page.States) != 0 {
				t.Fatalf("a refused Register stored something: %+v, %v", page, lerr)
			}
		})
	}
}

func TestRegisterBinding(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	orig := testDraft{Title: "order <5> & more", Quantity: 5, Lines: []string{"a"}}
	first, err := s.Register(ctx, Ticket{OperationID: "op-1", Draft: orig})
	if err != nil {
		t.Fatal(err)
	}
	const canon = `{"lines":["a"],"quantity":5,"title":"order <5> & more"}`
	if string(first.Draft) != canon {
		t.Fatalf("stored draft %s, want canonical %s", first.Draft, canon)
	}
	tests := []struct {
		name    string
		draft   Draft
		decide  bool
		rebound bool
	}{
		{name: "same value", draft: orig},
		{name: "same JSON, other key order", draft: reorderedDraft{Lines: []string{"a"}, Quantity: 5, Title: "order <5> & more"}},
		{name: "same JSON as a map", draft: mapDraft{"title": "order <5> & more", "quantity": 5, "lines": []string{"a"}}},
		{name: "other quantity", draft: testDraft{Title: "order <5> & more", Quantity: 6, Lines: []string{"a"}}, rebound: true},
		{name: "extra key", draft: mapDraft{"title": "order <5> & more", "quantity": 5, "lines": []string{"a"}, "x": 1}, rebound: true},
		{name: "number written differently", draft: mapDraft{"title": "order <5> & more", "quantity": 5.0001, "lines": []string{"a"}}, rebound: true},
		{name: "same value after the decision", draft: orig, decide: true},
		{name: "other draft after the decision", draft: testDraft{Title: "x", Quantity: 1}, decide: true, rebound: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.decide {
				if _, err := s.Decide(ctx, Decision{OperationID: "op-1", Verdict: Approve, DecidedBy: "a"}); err != nil {
					t.Fatal(err)
				}
			}
			before, err := s.Read(ctx, "op-1")
			if err != nil {
				t.Fatal(err)
			}
			st, err := s.Register(ctx, Ticket{OperationID: "op-1", Draft: tc.draft})
			after, rerr := s.Read(ctx, "op-1")
			if rerr != nil {
				t.Fatal(rerr)
			}
			if !reflect.DeepEqual(after, before) {
				t.Fatalf("Register changed the state: %+v -> %+v", before, after)
			}
			if !tc.rebound {
				if err != nil || !reflect.DeepEqual(st, before) {
					t.Fatalf("Register = %+v, %v; want the stored state %+v", st, err, before)
				}
				return
			}
			var re *ReboundError
			if !errors.Is(err, ErrOperationRebound) || !errors.As(err, &re) {
				t.Fatalf("Register = %v, want a *ReboundError", err)
			}
			if string(re.Stored) != canon || string(re.Offered) == canon {
				t.Fatalf("ReboundError stored %s offered %s", re.Stored, re.Offered)
			}
		})
	}
}

func TestDecide(t *testing.T) {
	ctx := context.Background()
	approve := Decision{OperationID: "op", Verdict: Approve, Comment: "fine", DecidedBy: "alice"}
	reject := Decision{OperationID: "op", Verdict: Reject, Comment: "no", DecidedBy: "bob"}
	with := func(d Decision, f func(*Decision)) Decision { f(&d); return d }
	type step struct {
		d          Decision
		want       error // nil: success
		wantStatus Status
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"approve", []step{{approve, nil, StatusApproved}}},
		{"reject", []step{{reject, nil, StatusRejected}}},
		{"empty verdict", []step{{with(approve, func(d *Decision) { d.Verdict = "" }), ErrInvalidDecision, StatusWaiting}}},
		{"other verdict", []step{{with(approve, func(d *Decision) { d.Verdict = "APPROVE" }), ErrInvalidDecision, StatusWaiting}}},
		{"no decider", []step{{with(approve, func(d *Decision) { d.DecidedBy = "  " }), ErrInvalidDecision, StatusWaiting}}},
		{"decider too long", []step{{with(approve, func(d *Decision) { d.DecidedBy = strings.Repeat("a", MaxDecidedByBytes+1) }), ErrInvalidDecision, StatusWaiting}}},
		{"comment at the bound", []step{{with(approve, func(d *Decision) { d.Comment = " " + strings.Repeat("é", MaxCommentRunes) + "\n" }), nil, StatusApproved}}},
		{"comment over the bound", []step{{with(approve, func(d *Decision) { d.Comment = strings.Repeat("é", MaxCommentRunes+1) }), ErrInvalidDecision, StatusWaiting}}},
		{"comment not UTF-8", []step{{with(approve, func(d *Decision) { d.Comment = "\xff" }), ErrInvalidDecision, StatusWaiting}}},
		{"unknown operation", []step{{with(approve, func(d *Decision) { d.OperationID = "nope" }), ErrUnknownOperation, StatusWaiting}}},
		{"empty operation id", []step{{with(approve, func(d *Decision) { d.OperationID = "" }), ErrInvalidOperationID, StatusWaiting}}},
		{"same decision twice", []step{{approve, nil, StatusApproved}, {approve, nil, StatusApproved}}},
		{"same decision, comment with other padding", []step{{approve, nil, StatusApproved},
			{with(approve, func(d *Decision) { d.Comment = "  fine\t" }), nil, StatusApproved}}},
		{"approve then reject", []step{{approve, nil, StatusApproved}, {reject, ErrAlreadyDecided, StatusApproved}}},
		{"reject is final", []step{{reject, nil, StatusRejected}, {approve, ErrAlreadyDecided, StatusRejected}, {reject, nil, StatusRejected}}},
		{"other comment loses", []step{{approve, nil, StatusApproved}, {with(approve, func(d *Decision) { d.Comment = "ok" }), ErrAlreadyDecided, StatusApproved}}},
		{"other decider loses", []step{{approve, nil, StatusApproved}, {with(approve, func(d *Decision) { d.DecidedBy = "carol" }), ErrAlreadyDecided, StatusApproved}}},
		{"invalid after decided", []step{{approve, nil, StatusApproved}, {with(reject, func(d *Decision) { d.Verdict = "maybe" }), ErrInvalidDecision, StatusApproved}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			if _, err := s.Register(ctx, Ticket{OperationID: "op", Draft: testDraft{Title: "t", Quantity: 1}}); err != nil {
				t.Fatal(err)
			}
			var standing *Decision
			for i, st := range tc.steps {
				got, err := s.Decide(ctx, st.d)
				if st.want == nil {
					if err != nil {
						t.Fatalf("step %d: %v", i, err)
					}
					if got.Status != st.wantStatus || got.Decision == nil || got.DecidedAt.IsZero() {
						t.Fatalf("step %d: state %+v", i, got)
					}
					if got.Decision.Comment != strings.TrimSpace(got.Decision.Comment) {
						t.Fatalf("step %d: comment not trimmed: %q", i, got.Decision.Comment)
					}
					if standing == nil {
						standing = got.Decision
					} else if *got.Decision != *standing {
						t.Fatalf("step %d: decision changed from %+v to %+v", i, standing, got.Decision)
					}
				} else {
					if !errors.Is(err, st.want) {
						t.Fatalf("step %d: error %v, want %v", i, err, st.want)
					}
					if errors.Is(st.want, ErrAlreadyDecided) {
						var ade *AlreadyDecidedError
						if !errors.As(err, &ade) || ade.Standing != *standing || ade.Status != st.wantStatus {
							t.Fatalf("step %d: %#v, want standing %+v", i, ade, standing)
						}
						if ade.Offered.Verdict != st.d.Verdict {
							t.Fatalf("step %d: offered %+v", i, ade.Offered)
						}
					}
				}
				stored, err := s.Read(ctx, "op")
				if err != nil {
					t.Fatal(err)
				}
				if stored.Status != st.wantStatus {
					t.Fatalf("step %d: stored status %s, want %s", i, stored.Status, st.wantStatus)
				}
				if (standing == nil) != (stored.Decision == nil) || (standing != nil && *standing != *stored.Decision) {
					t.Fatalf("step %d: stored decision %+v, want %+v", i, stored.Decision, standing)
				}
			}
		})
	}
}

// TestDecideRaceInProcess: goroutines sharing one Store race with
// different decisions; one wins, the rest learn the standing decision.
func TestDecideRaceInProcess(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	if _, err := s.Register(ctx, Ticket{OperationID: "op", Draft: testDraft{Title: "t", Quantity: 1}}); err != nil {
		t.Fatal(err)
	}
	const n = 16
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			v := Approve
			if i%2 == 1 {
				v = Reject
			}
			_, errs[i] = s.Decide(ctx, Decision{OperationID: "op", Verdict: v, DecidedBy: fmt.Sprint("user-", i)})
		})
	}
	wg.Wait()
	st, err := s.Read(ctx, "op")
	if err != nil {
		t.Fatal(err)
	}
	wins := 0
	for i, err := range errs {
		var ade *AlreadyDecidedError
		switch {
		case err == nil:
			wins++
			if st.Decision.DecidedBy != fmt.Sprint("user-", i) {
				t.Fatalf("winner user-%d, stored %+v", i, st.Decision)
			}
		case errors.As(err, &ade):
			if ade.Standing != *st.Decision {
				t.Fatalf("loser %d saw %+v, stored %+v", i, ade.Standing, st.Decision)
			}
		default:
			t.Fatalf("decider %d: %v", i, err)
		}
	}
	if wins != 1 {
		t.Fatalf("%d winners", wins)
	}
}

func TestApply(t *testing.T) {
	ctx := context.Background()
	errBoom := errors.New("boom")
	tests := []struct {
		name       string
		verdict    Verdict // "" leaves the operation waiting
		op         string
		effect     func(calls *int) Effect
		want       error
		wantStatus Status
	}{
		{name: "waiting", want: ErrNotApproved, wantStatus: StatusWaiting},
		{name: "rejected", verdict: Reject, want: ErrNotApproved, wantStatus: StatusRejected},
		{name: "unknown", verdict: Approve, op: "other", want: ErrUnknownOperation, wantStatus: StatusApproved},
		{name: "bad id", verdict: Approve, op: " ", want: ErrInvalidOperationID, wantStatus: StatusApproved},
		{name: "approved, nil effect", verdict: Approve, wantStatus: StatusCompleted},
		{name: "approved, effect", verdict: Approve, wantStatus: StatusCompleted, effect: func(calls *int) Effect {
			return func(ctx context.Context, tx *sql.Tx, item Item) error {
				*calls++
				_, err := tx.ExecContext(ctx, `INSERT INTO mine (op, item, draft) VALUES (?, ?, ?)`, item.OperationID, item.ID, []byte(item.Draft))
				return err
			}
		}},
		{name: "effect fails after writing", verdict: Approve, want: ErrEffectFailed, wantStatus: StatusApproved, effect: func(calls *int) Effect {
			return func(ctx context.Context, tx *sql.Tx, item Item) error {
				*calls++
				if _, err := tx.ExecContext(ctx, `INSERT INTO mine (op, item, draft) VALUES (?, ?, ?)`, item.OperationID, item.ID, []byte(item.Draft)); err != nil {
					return err
				}
				return errBoom
			}
		}},
		{name: "effect tampers with the store", verdict: Approve, wantStatus: StatusApproved, effect: func(calls *int) Effect {
			return func(ctx context.Context, tx *sql.Tx, item Item) error {
				*calls++
				_, err := tx.ExecContext(ctx, `UPDATE candor_approval_operations SET draft = '{}' WHERE operation_id = ?`, item.OperationID)
				return err
			}
		}, want: ErrEffectFailed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			if _, err := s.db.ExecContext(ctx, `CREATE TABLE mine (op TEXT, item INTEGER, draft BLOB)`); err != nil {
				t.Fatal(err)
			}
			draft := testDraft{Title: "t", Quantity: 1, Lines: []string{"x"}}
			reg, err := s.Register(ctx, Ticket{OperationID: "op", Draft: draft})
			if err != nil {
				t.Fatal(err)
			}
			draft.Lines[0] = "changed in memory after Register"
			if tc.verdict != "" {
				if _, err := s.Decide(ctx, Decision{OperationID: "op", Verdict: tc.verdict, DecidedBy: "a"}); err != nil {
					t.Fatal(err)
				}
			}
			op := "op"
			if tc.op != "" {
				op = tc.op
			}
			calls := 0
			var effect Effect
			if tc.effect != nil {
				effect = tc.effect(&calls)
			}
			st, err := s.Apply(ctx, op, effect)
			if tc.want != nil {
				if !errors.Is(err, tc.want) {
					t.Fatalf("Apply = %+v, %v; want %v", st, err, tc.want)
				}
				if errors.Is(tc.want, ErrNotApproved) {
					var nae *NotApprovedError
					if !errors.As(err, &nae) || nae.Status != tc.wantStatus {
						t.Fatalf("error %#v", err)
					}
				}
				if errors.Is(err, errBoom) != (tc.name == "effect fails after writing") {
					t.Fatalf("effect error not wrapped as expected: %v", err)
				}
			} else if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			stored, err := s.Read(ctx, "op")
			if err != nil {
				t.Fatal(err)
			}
			if stored.Status != tc.wantStatus {
				t.Fatalf("stored status %s, want %s", stored.Status, tc.wantStatus)
			}
			var items, mine int
			if err := s.db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM candor_approval_items), (SELECT count(*) FROM mine)`).Scan(&items, &mine); err != nil {
				t.Fatal(err)
			}
			if tc.wantStatus != StatusCompleted {
				if items != 0 || mine != 0 || stored.ItemID != 0 {
					t.Fatalf("not completed, yet %d items and %d effect rows committed", items, mine)
				}
				if tc.verdict == Approve && tc.op == "" {
					// The decision stays Approved: a retry with a good effect succeeds.
					if st, err := s.Apply(ctx, "op", nil); err != nil || st.Status != StatusCompleted {
						t.Fatalf("retry after failure: %+v, %v", st, err)
					}
				}
				return
			}
			if st.ItemID == 0 || st.ItemID != stored.ItemID || st.CompletedAt.IsZero() || items != 1 || mine != calls {
				t.Fatalf("Apply = %+v, stored %+v, %d items, %d effect rows, %d calls", st, stored, items, mine, calls)
			}
			var itemDraft []byte
			if err := s.db.QueryRowContext(ctx, `SELECT draft FROM candor_approval_items WHERE id = ?`, st.ItemID).Scan(&itemDraft); err != nil {
				t.Fatal(err)
			}
			if string(itemDraft) != string(reg.Draft) {
				t.Fatalf("item draft %s, persisted %s", itemDraft, reg.Draft)
			}
			if tc.effect != nil {
				var seen []byte
				if err := s.db.QueryRowContext(ctx, `SELECT draft FROM mine`).Scan(&seen); err != nil {
					t.Fatal(err)
				}
				if string(seen) != string(reg.Draft) {
					t.Fatalf("effect saw draft %s, persisted %s", seen, reg.Draft)
				}
			}
			// A retry returns the same item and does not run the effect.
			again, err := s.Apply(ctx, "op", effect)
			if err != nil || again.ItemID != st.ItemID || again.Status != StatusCompleted || !again.CompletedAt.Equal(st.CompletedAt) {
				t.Fatalf("retry = %+v, %v; first %+v", again, err, st)
			}
			if tc.effect != nil && calls != 1 {
				t.Fatalf("effect ran %d times", calls)
			}
			// Deciding again with the standing decision still answers.
			if got, err := s.Decide(ctx, Decision{OperationID: "op", Verdict: Approve, DecidedBy: "a"}); err != nil || got.Status != StatusCompleted {
				t.Fatalf("Decide after completion: %+v, %v", got, err)
			}
		})
	}
}

// TestApplyEffectEndsTransaction: an effect that wrongly commits or rolls
// back Apply's transaction gets an error, and the store's invariant (the
// item and Completed together, or neither) still holds.
func TestApplyEffectEndsTransaction(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name       string
		effect     Effect
		wantStatus Status
	}{
		{"tx.Commit", func(ctx context.Context, tx *sql.Tx, item Item) error { return tx.Commit() }, StatusCompleted},
		{"tx.Rollback", func(ctx context.Context, tx *sql.Tx, item Item) error { return tx.Rollback() }, StatusApproved},
		{"COMMIT statement", func(ctx context.Context, tx *sql.Tx, item Item) error {
			_, err := tx.ExecContext(ctx, "COMMIT")
			return err
		}, StatusCompleted},
		{"ROLLBACK statement", func(ctx context.Context, tx *sql.Tx, item Item) error {
			_, err := tx.ExecContext(ctx, "ROLLBACK")
			return err
		}, StatusApproved},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			if _, err := s.Register(ctx, Ticket{OperationID: "op", Draft: testDraft{Title: "t", Quantity: 1}}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Decide(ctx, Decision{OperationID: "op", Verdict: Approve, DecidedBy: "a"}); err != nil {
				t.Fatal(err)
			}
			if st, err := s.Apply(ctx, "op", tc.effect); err == nil {
				t.Fatalf("Apply = %+v with an effect that ended the transaction", st)
			}
			st, err := s.Read(ctx, "op")
			if err != nil || st.Status != tc.wantStatus {
				t.Fatalf("Read = %+v, %v; want %s", st, err, tc.wantStatus)
			}
			var items int
			if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM candor_approval_items`).Scan(&items); err != nil {
				t.Fatal(err)
			}
			if (items == 1) != (st.Status == StatusCompleted) || items > 1 {
				t.Fatalf("%d items with status %s", items, st.Status)
			}
			again, err := s.Apply(ctx, "op", nil)
			if err != nil || again.Status != StatusCompleted {
				t.Fatalf("retry: %+v, %v", again, err)
			}
		})
	}
}

func TestApplyEffectPanicRollsBack(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	if _, err := s.Register(ctx, Ticket{OperationID: "op", Draft: testDraft{Title: "t", Quantity: 1}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Decide(ctx, Decision{OperationID: "op", Verdict: Approve, DecidedBy: "a"}); err != nil {
		t.Fatal(err)
	}
	func() {
		defer func() {
			if r := recover(); r != "effect panic" {
				t.Fatalf("recovered %v", r)
			}
		}()
		_, _ = s.Apply(ctx, "op", func(context.Context, *sql.Tx, Item) error { panic("effect panic") })
	}()
	st, err := s.Apply(ctx, "op", nil)
	if err != nil || st.Status != StatusCompleted {
		t.Fatalf("Apply after a panicking effect: %+v, %v", st, err)
	}
}

// TestAppendOnly: statements that would rewrite history are refused by the
// schema itself, whoever runs them through a normal connection.
func TestAppendOnly(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	for _, op := range []string{"w", "a", "r", "c"} {
		if _, err := s.Register(ctx, Ticket{OperationID: op, Draft: testDraft{Title: op, Quantity: 1}}); err != nil {
			t.Fatal(err)
		}
	}
	for op, v := range map[string]Verdict{"a": Approve, "r": Reject, "c": Approve} {
		if _, err := s.Decide(ctx, Decision{OperationID: op, Verdict: v, DecidedBy: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Apply(ctx, "c", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Receipt(ctx, WaitingReceipt{GraphVersion: "g", SessionID: "s", CheckpointID: "c", OperationID: "w", RequestID: "r"}); err != nil {
		t.Fatal(err)
	}
	refused := []string{
		`DELETE FROM candor_approval_operations WHERE operation_id = 'w'`,
		`DELETE FROM candor_approval_items`,
		`DELETE FROM candor_approval_receipts`,
		`UPDATE candor_approval_operations SET draft = '{}' WHERE operation_id = 'w'`,
		`UPDATE candor_approval_operations SET created_at = 1 WHERE operation_id = 'w'`,
		`UPDATE candor_approval_operations SET operation_id = 'w2' WHERE operation_id = 'w'`,
		`UPDATE candor_approval_operations SET seq = 99 WHERE operation_id = 'w'`,
		`UPDATE candor_approval_operations SET status = 'approved' WHERE operation_id = 'w'`,
		`UPDATE candor_approval_operations SET status = 'rejected', verdict = 'approve', comment = '', decided_by = 'x', decided_at = 1 WHERE operation_id = 'w'`,
		`UPDATE candor_approval_operations SET status = 'completed', verdict = 'approve', comment = '', decided_by = 'x', decided_at = 1, completed_at = 1 WHERE operation_id = 'w'`,
		`UPDATE candor_approval_operations SET status = 'waiting', verdict = NULL, comment = NULL, decided_by = NULL, decided_at = NULL WHERE operation_id = 'a'`,
		`UPDATE candor_approval_operations SET status = 'rejected', verdict = 'reject' WHERE operation_id = 'a'`,
		`UPDATE candor_approval_operations SET comment = 'edited' WHERE operation_id = 'a'`,
		`UPDATE candor_approval_operations SET decided_by = 'mallory' WHERE operation_id = 'c'`,
		`UPDATE candor_approval_operations SET status = 'approved', verdict = 'approve' WHERE operation_id = 'r'`,
		`UPDATE candor_approval_operations SET status = 'completed', completed_at = NULL WHERE operation_id = 'a'`,
		`UPDATE candor_approval_operations SET status = 'completed' WHERE operation_id = 'a'`,
		`UPDATE candor_approval_operations SET status = 'approved', completed_at = NULL WHERE operation_id = 'c'`,
		`UPDATE candor_approval_operations SET completed_at = 2 WHERE operation_id = 'c'`,
		`UPDATE candor_approval_items SET draft = '{}'`,
		`INSERT INTO candor_approval_operations (operation_id, draft, status, created_at) VALUES ('x', '{}', 'approved', 1)`,
		`INSERT INTO candor_approval_operations (operation_id, draft, status, created_at, verdict, comment, decided_by, decided_at) VALUES ('x', '{}', 'waiting', 1, 'approve', '', 'y', 1)`,
		`INSERT INTO candor_approval_operations (operation_id, draft, status, created_at) VALUES ('x', '{}', 'done', 1)`,
		`INSERT INTO candor_approval_items (operation_id, id, draft, created_at) SELECT operation_id, seq, draft, 1 FROM candor_approval_operations WHERE operation_id = 'a'`,
		`INSERT INTO candor_approval_items (operation_id, id, draft, created_at) SELECT operation_id, seq, draft, 1 FROM candor_approval_operations WHERE operation_id = 'w'`,
		`INSERT INTO candor_approval_items (operation_id, id, draft, created_at) SELECT operation_id, seq, draft, 1 FROM candor_approval_operations WHERE operation_id = 'r'`,
		`INSERT INTO candor_approval_items (operation_id, id, draft, created_at) SELECT operation_id, seq, '{"forged":true}', 1 FROM candor_approval_operations WHERE operation_id = 'a'`,
		`INSERT INTO candor_approval_items (operation_id, id, draft, created_at) SELECT operation_id, seq + 100, draft, 1 FROM candor_approval_operations WHERE operation_id = 'a'`,
		`INSERT INTO candor_approval_items (operation_id, id, draft, created_at) VALUES ('nope', 1000, '{}', 1)`,
		`INSERT INTO candor_approval_items (operation_id, id, draft, created_at) SELECT operation_id, seq, draft, 1 FROM candor_approval_operations WHERE operation_id = 'c'`,
		`INSERT INTO candor_approval_receipts (operation_id, graph_version, session_id, checkpoint_id, request_id, issued_at) VALUES ('nope', 'g', 's', 'c', 'r', 1)`,
	}
	before, err := s.List(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range refused {
		t.Run(q, func(t *testing.T) {
			_, err := s.db.ExecContext(ctx, q)
			if err == nil {
				t.Fatalf("%s was accepted", q)
			}
			// Refused by the schema's rules, not by a typo in the test.
			if msg := err.Error(); !strings.Contains(msg, "approval:") && !strings.Contains(msg, "constraint failed") {
				t.Fatalf("%s failed for another reason: %v", q, err)
			}
		})
	}
	// The same kind of statement, well formed, is accepted: the refusals
	// above are the rules at work. (Inside a transaction rolled back, so
	// the history compared below is untouched.) Completing an operation
	// inserts its item, from its own draft, in the same statement.
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`UPDATE candor_approval_operations SET status = 'completed', completed_at = 1 WHERE operation_id = 'a'`,
		`UPDATE candor_approval_operations SET status = 'approved', verdict = 'approve', comment = '', decided_by = 'x', decided_at = 1 WHERE operation_id = 'w'`,
	} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			t.Errorf("well-formed %s refused: %v", q, err)
		}
	}
	var itemOK int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM candor_approval_items i JOIN candor_approval_operations o USING (operation_id)
		WHERE i.operation_id = 'a' AND i.draft = o.draft AND i.id = o.seq AND i.created_at = 1`).Scan(&itemOK); err != nil || itemOK != 1 {
		t.Errorf("completing 'a' inserted %d matching items (%v), want 1", itemOK, err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	after, err := s.List(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(before, after) {
		t.Fatalf("history changed:\n%+v\n%+v", before, after)
	}
}

// TestTrustBoundary: an administrator with the file can drop the triggers
// and edit rows; the store then reports the inconsistency instead of
// reading it as a state.
func TestTrustBoundary(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	if _, err := s.Register(ctx, Ticket{OperationID: "op", Draft: testDraft{Title: "t", Quantity: 1}}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`DROP TRIGGER candor_approval_operations_transition`,
		`UPDATE candor_approval_operations SET status = 'completed', verdict = 'approve', comment = '', decided_by = 'x', decided_at = 1,
			completed_at = 1 WHERE operation_id = 'op'`,
	} {
		if _, err := s.db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if st, err := s.Read(ctx, "op"); !errors.Is(err, ErrInconsistent) {
		t.Fatalf("Read = %+v, %v; want ErrInconsistent", st, err)
	}
	if page, err := s.List(ctx, Filter{}); !errors.Is(err, ErrInconsistent) {
		t.Fatalf("List = %+v, %v; want ErrInconsistent", page, err)
	}
	if st, err := s.Apply(ctx, "op", nil); !errors.Is(err, ErrInconsistent) {
		t.Fatalf("Apply = %+v, %v; want ErrInconsistent", st, err)
	}
}

func TestList(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	want := map[Status][]string{}
	for i := range 11 {
		op := fmt.Sprintf("op-%02d", i)
		if _, err := s.Register(ctx, Ticket{OperationID: op, Draft: testDraft{Title: op, Quantity: 1}}); err != nil {
			t.Fatal(err)
		}
		status := StatusWaiting
		switch i % 4 {
		case 1:
			status = StatusApproved
		case 2:
			status = StatusRejected
		case 3:
			status = StatusCompleted
		}
		if status != StatusWaiting {
			v := Approve
			if status == StatusRejected {
				v = Reject
			}
			if _, err := s.Decide(ctx, Decision{OperationID: op, Verdict: v, DecidedBy: "x"}); err != nil {
				t.Fatal(err)
			}
		}
		if status == StatusCompleted {
			if _, err := s.Apply(ctx, op, nil); err != nil {
				t.Fatal(err)
			}
		}
		want[status] = append(want[status], op)
		want[""] = append(want[""], op)
	}
	for _, status := range []Status{"", StatusWaiting, StatusApproved, StatusRejected, StatusCompleted} {
		for _, limit := range []int{0, 1, 2, 3, 100} {
			t.Run(fmt.Sprintf("%s/limit=%d", status, limit), func(t *testing.T) {
				var got []string
				cursor := ""
				for pages := 0; ; pages++ {
					if pages > 20 {
						t.Fatal("paging does not end")
					}
					page, err := s.List(ctx, Filter{Status: status, Limit: limit, Cursor: cursor})
					if err != nil {
						t.Fatal(err)
					}
					effective := limit
					if limit == 0 {
						effective = DefaultPageSize
					}
					if len(page.States) > effective || (page.Next != "" && len(page.States) != effective) {
						t.Fatalf("page of %d with next %q at limit %d", len(page.States), page.Next, effective)
					}
					for _, st := range page.States {
						if status != "" && st.Status != status {
							t.Fatalf("%s listed under %s", st.OperationID, status)
						}
						got = append(got, st.OperationID)
					}
					if page.Next == "" {
						break
					}
					cursor = page.Next
				}
				if fmt.Sprint(got) != fmt.Sprint(want[status]) {
					t.Fatalf("listed %v, want %v", got, want[status])
				}
			})
		}
	}
	bad := []Filter{
		{Status: "done"},
		{Limit: -1},
		{Limit: MaxPageSize + 1},
		{Cursor: "abc"},
		{Cursor: "0"},
		{Cursor: "007"},
		{Cursor: "-3"},
	}
	for _, f := range bad {
		t.Run(fmt.Sprintf("bad %+v", f), func(t *testing.T) {
			if page, err := s.List(ctx, f); !errors.Is(err, ErrInvalidFilter) {
				t.Fatalf("List(%+v) = %+v, %v; want ErrInvalidFilter", f, page, err)
			}
		})
	}
}

func TestReceiptAndResume(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	if _, err := s.Register(ctx, Ticket{OperationID: "op", Draft: testDraft{Title: "t", Quantity: 1}}); err != nil {
		t.Fatal(err)
	}
	good := WaitingReceipt{GraphVersion: "v1", SessionID: "s", CheckpointID: "c", OperationID: "op", RequestID: "r"}
	if _, err := s.Receipt(ctx, good); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Receipt(ctx, good); err != nil {
		t.Fatalf("issuing the same receipt again: %v", err)
	}
	with := func(f func(*WaitingReceipt)) WaitingReceipt { r := good; f(&r); return r }
	if _, err := s.Receipt(ctx, with(func(r *WaitingReceipt) { r.OperationID = "nope" })); !errors.Is(err, ErrUnknownOperation) {
		t.Fatalf("Receipt for an unknown operation: %v", err)
	}
	if _, err := s.Receipt(ctx, with(func(r *WaitingReceipt) { r.SessionID = "" })); !errors.Is(err, ErrInvalidReceipt) {
		t.Fatalf("Receipt without a session: %v", err)
	}
	tests := []struct {
		name    string
		r       WaitingReceipt
		version string
		want    error
	}{
		{"issued", good, "v1", nil},
		{"other graph version", good, "v2", ErrGraphVersionMismatch},
		{"empty running version", good, "", ErrInvalidReceipt},
		{"missing request id", with(func(r *WaitingReceipt) { r.RequestID = "" }), "v1", ErrInvalidReceipt},
		{"oversized field", with(func(r *WaitingReceipt) { r.CheckpointID = strings.Repeat("c", MaxReceiptFieldBytes+1) }), "v1", ErrInvalidReceipt},
		{"unknown operation", with(func(r *WaitingReceipt) { r.OperationID = "nope" }), "v1", ErrUnknownOperation},
		{"edited session", with(func(r *WaitingReceipt) { r.SessionID = "s2" }), "v1", ErrUnknownReceipt},
		{"edited checkpoint", with(func(r *WaitingReceipt) { r.CheckpointID = "c2" }), "v1", ErrUnknownReceipt},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, err := s.Resume(ctx, tc.r, tc.version)
			if tc.want == nil {
				if err != nil || st.OperationID != "op" || st.Status != StatusWaiting {
					t.Fatalf("Resume = %+v, %v", st, err)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("Resume = %+v, %v; want %v", st, err, tc.want)
			}
			var gve *GraphVersionError
			if errors.Is(tc.want, ErrGraphVersionMismatch) && (!errors.As(err, &gve) || gve.Receipt != "v1" || gve.Want != "v2") {
				t.Fatalf("error %#v", err)
			}
		})
	}
}

func TestReceiptFile(t *testing.T) {
	dir := t.TempDir()
	good := WaitingReceipt{GraphVersion: "v1", SessionID: "s", CheckpointID: "c", OperationID: "op", RequestID: "r"}
	path := filepath.Join(dir, "r.json")
	if err := WriteReceiptFile(path, good); err != nil {
		t.Fatal(err)
	}
	got, err := ReadReceiptFile(path)
	if err != nil || got != good {
		t.Fatalf("ReadReceiptFile = %+v, %v", got, err)
	}
	if err := WriteReceiptFile(filepath.Join(dir, "bad.json"), WaitingReceipt{}); !errors.Is(err, ErrInvalidReceipt) {
		t.Fatalf("writing an empty receipt: %v", err)
	}
	entries, err := filepath.Glob(filepath.Join(dir, ".*"))
	if err != nil || len(entries) != 0 {
		t.Fatalf("temporary files left behind: %v, %v", entries, err)
	}
	valid, _ := json.Marshal(good)
	tests := []struct {
		name string
		body string
	}{
		{"empty", ""},
		{"not JSON", "receipt"},
		{"array", "[]"},
		{"unknown field", `{"graph_version":"v1","session_id":"s","checkpoint_id":"c","operation_id":"op","request_id":"r","extra":1}`},
		{"missing field", `{"graph_version":"v1","session_id":"s","checkpoint_id":"c","operation_id":"op"}`},
		{"trailing data", string(valid) + `{}`},
		{"too large", `{"graph_version":"` + strings.Repeat("v", MaxReceiptFileBytes) + `"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, "case.json")
			if err := writeFile(p, tc.body); err != nil {
				t.Fatal(err)
			}
			if r, err := ReadReceiptFile(p); !errors.Is(err, ErrInvalidReceipt) {
				t.Fatalf("ReadReceiptFile = %+v, %v; want ErrInvalidReceipt", r, err)
			}
		})
	}
	if _, err := ReadReceiptFile(filepath.Join(dir, "missing.json")); err == nil || errors.Is(err, ErrInvalidReceipt) {
		t.Fatalf("missing file: %v", err)
	}
}

func TestClosed(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, filepath.Join(t.TempDir(), "c.db"))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := s.Register(ctx, Ticket{OperationID: "op", Draft: testDraft{Title: "t", Quantity: 1}}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Register after Close: %v", err)
	}
	if _, err := s.Read(ctx, "op"); !errors.Is(err, ErrClosed) {
		t.Fatalf("Read after Close: %v", err)
	}
	if _, err := s.List(ctx, Filter{}); !errors.Is(err, ErrClosed) {
		t.Fatalf("List after Close: %v", err)
	}
}

// TestCloseConcurrently: Close may be called from several goroutines at once
// (the Store is documented as safe for concurrent use); exactly one call
// closes, none panics, and every later call is a no-op.
func TestCloseConcurrently(t *testing.T) {
	s := newStore(t)
	path := filepath.Join(t.TempDir(), "unused.db")
	// Many rounds make the race between two closers likely; a Store whose
	// pool never connected keeps each round cheap.
	for range 300 {
		db, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		c := &Store{db: db, ownsDB: true, closed: make(chan struct{}), writer: make(chan struct{}, 1), stmts: map[string]*sql.Stmt{}}
		start := make(chan struct{})
		var wg sync.WaitGroup
		for range 3 {
			wg.Go(func() {
				<-start
				if err := c.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
		}
		close(start)
		wg.Wait()
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := s.Read(context.Background(), "op"); !errors.Is(err, ErrClosed) {
		t.Fatalf("Read after Close: %v", err)
	}
}

func TestWriteHonoursContext(t *testing.T) {
	s := newStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Register(ctx, Ticket{OperationID: "op", Draft: testDraft{Title: "t", Quantity: 1}}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Register with a cancelled context: %v", err)
	}
	if _, err := s.Read(context.Background(), "op"); !errors.Is(err, ErrUnknownOperation) {
		t.Fatalf("a cancelled Register stored something: %v", err)
	}
}

// TestClock: times are the clock's, stored in UTC with nanosecond
// precision. In a synctest bubble the clock is the bubble's, so the test
// knows every time the store records.
func TestClock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "clock.db")
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		start := time.Now()
		s := openTest(t, path)
		defer s.Close()
		st, err := s.Register(ctx, Ticket{OperationID: "op", Draft: testDraft{Title: "t", Quantity: 1}})
		require.NoError(t, err)
		assert.True(t, st.CreatedAt.Equal(start), "CreatedAt %v, want %v", st.CreatedAt, start)
		assert.Equal(t, time.UTC, st.CreatedAt.Location())
		time.Sleep(90 * time.Minute)
		d, err := s.Decide(ctx, Decision{OperationID: "op", Verdict: Approve, DecidedBy: "a"})
		require.NoError(t, err)
		assert.Equal(t, 90*time.Minute, d.DecidedAt.Sub(start))
		time.Sleep(time.Nanosecond)
		c, err := s.Apply(ctx, "op", nil)
		require.NoError(t, err)
		assert.Equal(t, 90*time.Minute+time.Nanosecond, c.CompletedAt.Sub(start))
		got, err := s.Read(ctx, "op")
		require.NoError(t, err)
		assert.Equal(t, c.CreatedAt, got.CreatedAt)
		assert.Equal(t, c.CompletedAt, got.CompletedAt)
	})
}
