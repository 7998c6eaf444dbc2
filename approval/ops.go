package approval

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Register stores the ticket's draft, in canonical JSON, under its
// operation id, as a Waiting operation.
//
// Registering an id again with a draft whose canonical JSON is byte-for-byte
// the stored one changes nothing and returns the current state (whatever its
// status). Any other draft is refused with a *ReboundError
// (ErrOperationRebound) and nothing changes. An invalid operation id is
// ErrInvalidOperationID; a nil, unmarshalable, oversized or invalid draft is
// an *InvalidDraftError listing every problem; both are reported together
// when both apply.
func (s *Store) Register(ctx context.Context, t Ticket) (State, error) {
	ctx, span := s.tel.start(ctx, "approval.register", t.OperationID)
	st, made, err := s.register(ctx, t)
	outcome := outcomeRepeated
	if made {
		outcome = outcomeRegistered
		s.tel.transition(ctx, StatusWaiting)
	}
	end(span, outcome, err)
	return st, err
}

func (s *Store) register(ctx context.Context, t Ticket) (State, bool, error) {
	idErr := checkOperationID(t.OperationID)
	canon, draftErr := canonicalDraft(t.OperationID, t.Draft, s.maxDraft)
	if idErr != nil || draftErr != nil {
		return State{}, false, errors.Join(idErr, draftErr)
	}
	var st State
	made := false
	err := s.writeOne(ctx, func(tx *sql.Tx) error {
		now := time.Now().UTC().UnixNano()
		args := []any{t.OperationID, []byte(canon), now}
		if s.pg {
			args = append(args, s.listLock)
		}
		res, err := s.exec(ctx, tx, s.q.register, args...)
		if err != nil {
			return fmt.Errorf("approval: register %q: %w", t.OperationID, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("approval: register %q: %w", t.OperationID, err)
		} else if n == 1 {
			st = State{OperationID: t.OperationID, Draft: canon, Status: StatusWaiting, CreatedAt: fromNanos(now)}
			s.info(ctx, "approval: registered", slog.String("operation_id", t.OperationID))
			made = true
			return nil
		}
		cur, err := s.readState(ctx, tx, t.OperationID)
		if err != nil {
			return err
		}
		if !bytes.Equal(cur.Draft, canon) {
			return &ReboundError{OperationID: t.OperationID, Stored: cur.Draft, Offered: canon}
		}
		st = cur
		return nil
	})
	if err != nil {
		return State{}, false, err
	}
	return st, made, nil
}

// Decide records a person's decision on a Waiting operation and moves it to
// Approved or Rejected.
//
// The first decision persisted wins. Deciding again with exactly the same
// decision (same verdict, trimmed comment and decider) returns the state;
// any other decision is refused with an *AlreadyDecidedError
// (ErrAlreadyDecided) that carries the standing decision. A rejection is
// final: proposing again needs a new operation id.
//
// The verdict must be Approve or Reject, DecidedBy must be set, and the
// comment, trimmed of surrounding white space, must be UTF-8 of at most
// MaxCommentRunes runes; neither may hold NUL. Otherwise the error is
// ErrInvalidDecision and nothing is stored.
func (s *Store) Decide(ctx context.Context, d Decision) (State, error) {
	ctx, span := s.tel.start(ctx, "approval.decide", d.OperationID)
	st, made, err := s.decide(ctx, d)
	outcome := outcomeRepeated
	if made {
		outcome = outcomeApproved
		if st.Status == StatusRejected {
			outcome = outcomeRejected
		}
		s.tel.transition(ctx, st.Status)
		s.tel.decided(ctx, st)
	}
	if err == nil && span.IsRecording() {
		span.SetAttributes(attrVerdict.String(string(st.Decision.Verdict)))
	}
	end(span, outcome, err)
	return st, err
}

func (s *Store) decide(ctx context.Context, d Decision) (State, bool, error) {
	d, err := normaliseDecision(d)
	if err != nil {
		return State{}, false, err
	}
	next := StatusApproved
	if d.Verdict == Reject {
		next = StatusRejected
	}
	var st State
	made := false
	err = s.writeOne(ctx, func(tx *sql.Tx) error {
		now := time.Now().UTC().UnixNano()
		q, err := s.prepared(ctx, tx, s.q.decide)
		if err != nil {
			return err
		}
		var draft []byte
		var created int64
		err = q.QueryRowContext(ctx, string(next), string(d.Verdict), d.Comment, d.DecidedBy, now, d.OperationID).
			Scan(&draft, &created)
		if err == nil {
			st = State{OperationID: d.OperationID, Draft: draft, Status: next, Decision: &d,
				CreatedAt: fromNanos(created), DecidedAt: fromNanos(now)}
			s.info(ctx, "approval: decided", slog.String("operation_id", d.OperationID), slog.String("verdict", string(d.Verdict)))
			made = true
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("approval: decide %q: %w", d.OperationID, err)
		}
		// Not waiting: unknown, or decided before.
		cur, err := s.readState(ctx, tx, d.OperationID)
		if err != nil {
			return err
		}
		if cur.Decision == nil {
			return fmt.Errorf("%w: %q is %s without a decision", ErrInconsistent, d.OperationID, cur.Status)
		}
		if *cur.Decision != d {
			return &AlreadyDecidedError{Standing: *cur.Decision, Offered: d, Status: cur.Status}
		}
		st = cur
		return nil
	})
	if err != nil {
		return State{}, false, err
	}
	return st, made, nil
}

// Apply applies an Approved operation, at most once.
//
// In one transaction it marks the operation Completed and inserts the
// approved item (copied by SQL from the persisted draft; one item per
// operation id, enforced by a UNIQUE constraint) in one statement, runs
// effect with that transaction, then commits. Item.Draft is the persisted
// draft. If anything fails (the effect included), the transaction rolls
// back: nothing of the effect, the item or the completion is kept, the
// operation stays Approved and a retry can succeed. An effect error is
// returned as an *EffectError (ErrEffectFailed) wrapping it. A panic in
// effect rolls back too and propagates.
//
// Applying a Completed operation again returns its state, with the same
// ItemID, without running effect. A Waiting or Rejected operation is a
// *NotApprovedError (ErrNotApproved). effect may be nil when the item row
// is all the caller needs.
func (s *Store) Apply(ctx context.Context, operationID string, effect Effect) (State, error) {
	ctx, span := s.tel.start(ctx, "approval.apply", operationID)
	ended := false
	defer func() {
		if !ended { // effect panicked
			end(span, "", &EffectError{OperationID: operationID, Err: errors.New("panic")})
		}
	}()
	st, made, err := s.apply(ctx, operationID, effect)
	ended = true
	outcome := outcomeRepeated
	if made {
		outcome = outcomeApplied
		s.tel.transition(ctx, StatusCompleted)
	}
	end(span, outcome, err)
	return st, err
}

func (s *Store) apply(ctx context.Context, operationID string, effect Effect) (State, bool, error) {
	if err := checkOperationID(operationID); err != nil {
		return State{}, false, err
	}
	var st State
	applied := false
	// Without an effect the completion is one statement, which PostgreSQL
	// commits on its own (see writeOne).
	run := s.write
	if effect == nil {
		run = s.writeOne
	}
	err := run(ctx, func(tx *sql.Tx) error {
		now := time.Now().UTC().UnixNano()
		q, err := s.prepared(ctx, tx, s.q.complete)
		if err != nil {
			return err
		}
		// One statement marks the operation Completed and, through the
		// candor_approval_operations_complete trigger, inserts its item
		// from the persisted draft; the effect runs after it, so the item
		// and the status stay together even if a misbehaving effect ends
		// the transaction. It is the transaction's first statement, a
		// write (see write).
		var itemID int64 // the operation's seq
		d := Decision{OperationID: operationID}
		var draft []byte
		var created, decided int64
		err = q.QueryRowContext(ctx, now, operationID).
			Scan(&itemID, &draft, &created, &d.Verdict, &d.Comment, &d.DecidedBy, &decided)
		if errors.Is(err, sql.ErrNoRows) {
			// Not approved: unknown, waiting, rejected, or completed before.
			cur, err := s.readState(ctx, tx, operationID)
			if err != nil {
				return err
			}
			if cur.Status != StatusCompleted {
				return &NotApprovedError{OperationID: operationID, Status: cur.Status}
			}
			st = cur
			return nil
		}
		if err != nil {
			return fmt.Errorf("approval: complete %q: %w", operationID, err)
		}
		if effect != nil {
			item := Item{ID: itemID, OperationID: operationID, Draft: draft, Decision: d}
			if err := effect(ctx, tx, item); err != nil {
				return &EffectError{OperationID: operationID, Err: err}
			}
			// The effect must leave the transaction open: check that the
			// item and the completion are still part of it.
			q, err := s.prepared(ctx, tx, s.q.checkApplied)
			if err != nil {
				return err
			}
			var n int
			if err := q.QueryRowContext(ctx, operationID, itemID).Scan(&n); err != nil {
				return fmt.Errorf("approval: effect for %q ended Apply's transaction: %w", operationID, err)
			}
			if n != 1 {
				return fmt.Errorf("%w: effect for %q ended or undid Apply's transaction", ErrInconsistent, operationID)
			}
		}
		st = State{OperationID: operationID, Draft: draft, Status: StatusCompleted, Decision: &d, ItemID: itemID,
			CreatedAt: fromNanos(created), DecidedAt: fromNanos(decided), CompletedAt: fromNanos(now)}
		applied = true
		return nil
	})
	if err != nil {
		return State{}, false, err
	}
	if applied {
		s.info(ctx, "approval: applied", slog.String("operation_id", operationID), slog.Int64("item_id", st.ItemID))
	}
	return st, applied, nil
}

// Read returns the state of one operation, or ErrUnknownOperation.
func (s *Store) Read(ctx context.Context, operationID string) (State, error) {
	if err := checkOperationID(operationID); err != nil {
		return State{}, err
	}
	if err := s.open(); err != nil {
		return State{}, err
	}
	return s.readState(ctx, nil, operationID)
}

// List returns operations oldest first, filtered by status and paged by
// cursor (see Filter and Page).
//
// It walks the operations in the order they were registered, along the
// table's primary key; a status filter skips the others. A page therefore
// costs the rows between the cursor and its last match: keep the cursor of
// the last page to poll for new operations cheaply. There is no status
// index, because every Register, Decide and Apply would pay to maintain it.
func (s *Store) List(ctx context.Context, f Filter) (Page, error) {
	if f.Status != "" && !f.Status.Valid() {
		return Page{}, fmt.Errorf("%w: unknown status %q", ErrInvalidFilter, f.Status)
	}
	limit := f.Limit
	switch {
	case limit == 0:
		limit = DefaultPageSize
	case limit < 0 || limit > MaxPageSize:
		return Page{}, fmt.Errorf("%w: limit %d outside 1..%d", ErrInvalidFilter, f.Limit, MaxPageSize)
	}
	var after int64
	if f.Cursor != "" {
		n, err := strconv.ParseInt(f.Cursor, 10, 64)
		if err != nil || n <= 0 || strconv.FormatInt(n, 10) != f.Cursor {
			return Page{}, fmt.Errorf("%w: cursor %q was not issued by List", ErrInvalidFilter, f.Cursor)
		}
		after = n
	}
	if err := s.open(); err != nil {
		return Page{}, err
	}
	if !s.pg {
		return s.listPage(ctx, nil, after, f.Status, limit)
	}
	// Registrations hold listLock shared from before their sequence number
	// is drawn until they commit; holding it exclusively, this listing
	// sees every operation with a lower number than the highest it sees, so
	// a cursor never skips one that commits later.
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		return Page{}, fmt.Errorf("approval: list: %w", s.dbErr(err))
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, pgLockExclusive, s.listLock); err != nil {
		return Page{}, fmt.Errorf("approval: list: %w", s.dbErr(err))
	}
	page, err := s.listPage(ctx, tx, after, f.Status, limit)
	if err != nil {
		return Page{}, err
	}
	if err := tx.Commit(); err != nil {
		return Page{}, fmt.Errorf("approval: list: %w", s.dbErr(err))
	}
	return page, nil
}

// listPage reads one page of List, in tx when tx is not nil.
func (s *Store) listPage(ctx context.Context, tx *sql.Tx, after int64, status Status, limit int) (Page, error) {
	q, err := s.prepared(ctx, tx, s.q.list)
	if err != nil {
		return Page{}, err
	}
	rows, err := q.QueryContext(ctx, after, string(status), string(status), limit+1)
	if err != nil {
		return Page{}, fmt.Errorf("approval: list: %w", s.dbErr(err))
	}
	defer rows.Close()
	var page Page
	var lastSeq int64
	for rows.Next() {
		if len(page.States) == limit {
			page.Next = strconv.FormatInt(lastSeq, 10)
			break
		}
		st, seq, err := scanState(rows)
		if err != nil {
			return Page{}, s.dbErr(err)
		}
		page.States = append(page.States, st)
		lastSeq = seq
	}
	if err := rows.Err(); err != nil {
		return Page{}, fmt.Errorf("approval: list: %w", s.dbErr(err))
	}
	if err := rows.Close(); err != nil {
		return Page{}, fmt.Errorf("approval: list: %w", s.dbErr(err))
	}
	return page, nil
}

// All yields every operation that f selects, oldest first, paging
// through List with f.Limit as the page size (0 means DefaultPageSize),
// from f.Cursor. A listing that cannot finish yields a final non-nil error,
// never a silent end; stopping the loop early is fine.
func (s *Store) All(ctx context.Context, f Filter) iter.Seq2[State, error] {
	return func(yield func(State, error) bool) {
		for {
			page, err := s.List(ctx, f)
			if err != nil {
				yield(State{}, err)
				return
			}
			for _, st := range page.States {
				if !yield(st, nil) {
					return
				}
			}
			if page.Next == "" {
				return
			}
			f.Cursor = page.Next
		}
	}
}

func (s *Store) open() error {
	select {
	case <-s.closed:
		return ErrClosed
	default:
		return nil
	}
}

// readState reads one operation, in tx when tx is not nil.
func (s *Store) readState(ctx context.Context, tx *sql.Tx, operationID string) (State, error) {
	q, err := s.prepared(ctx, tx, s.q.readState)
	if err != nil {
		return State{}, err
	}
	st, _, err := scanState(q.QueryRowContext(ctx, operationID))
	if errors.Is(err, sql.ErrNoRows) {
		return State{}, fmt.Errorf("%w: %q", ErrUnknownOperation, operationID)
	}
	return st, s.dbErr(err)
}

// scanState reads one row of stateSelect and checks that it is one of the
// shapes the store writes; anything else is ErrInconsistent, never a state.
func scanState(r scanner) (State, int64, error) {
	var (
		st                       State
		seq, created             int64
		status                   string
		draft                    []byte
		completed, decidedAt, id sql.NullInt64
		verdict, comment, by     sql.NullString
	)
	if err := r.Scan(&seq, &st.OperationID, &draft, &status, &created, &completed,
		&verdict, &comment, &by, &decidedAt, &id); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return State{}, 0, err
		}
		return State{}, 0, fmt.Errorf("approval: read state: %w", err)
	}
	st.Draft = draft
	st.Status = Status(status)
	st.CreatedAt = fromNanos(created)
	if verdict.Valid {
		st.Decision = &Decision{OperationID: st.OperationID, Verdict: Verdict(verdict.String),
			Comment: comment.String, DecidedBy: by.String}
		st.DecidedAt = fromNanos(decidedAt.Int64)
	}
	if completed.Valid {
		st.CompletedAt = fromNanos(completed.Int64)
	}
	if id.Valid {
		st.ItemID = id.Int64
	}
	bad := func(why string) (State, int64, error) {
		return State{}, 0, fmt.Errorf("%w: operation %q: %s", ErrInconsistent, st.OperationID, why)
	}
	switch st.Status {
	case StatusWaiting:
		if st.Decision != nil || id.Valid || completed.Valid {
			return bad("waiting but decided or applied")
		}
	case StatusApproved, StatusRejected, StatusCompleted:
		want := Approve
		if st.Status == StatusRejected {
			want = Reject
		}
		if st.Decision == nil || st.Decision.Verdict != want {
			return bad(fmt.Sprintf("%s without a matching decision", st.Status))
		}
		if (st.Status == StatusCompleted) != (id.Valid && completed.Valid) {
			return bad(fmt.Sprintf("%s with item=%v completed_at=%v", st.Status, id.Valid, completed.Valid))
		}
	default:
		return bad(fmt.Sprintf("unknown status %q", status))
	}
	return st, seq, nil
}

func fromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }

func checkOperationID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("%w: empty", ErrInvalidOperationID)
	case len(id) > MaxOperationIDBytes:
		return fmt.Errorf("%w: %d bytes, more than %d", ErrInvalidOperationID, len(id), MaxOperationIDBytes)
	case !utf8.ValidString(id):
		return fmt.Errorf("%w: %q is not UTF-8", ErrInvalidOperationID, id)
	case strings.TrimSpace(id) != id:
		return fmt.Errorf("%w: %q has surrounding white space", ErrInvalidOperationID, id)
	case strings.IndexFunc(id, unicode.IsControl) >= 0:
		return fmt.Errorf("%w: %q holds a control character", ErrInvalidOperationID, id)
	}
	return nil
}

func normaliseDecision(d Decision) (Decision, error) {
	if err := checkOperationID(d.OperationID); err != nil {
		return Decision{}, err
	}
	if d.Verdict != Approve && d.Verdict != Reject {
		return Decision{}, fmt.Errorf("%w: verdict %q is neither %q nor %q", ErrInvalidDecision, d.Verdict, Approve, Reject)
	}
	d.DecidedBy = strings.TrimSpace(d.DecidedBy)
	switch {
	case d.DecidedBy == "":
		return Decision{}, fmt.Errorf("%w: no decider (DecidedBy is empty)", ErrInvalidDecision)
	case len(d.DecidedBy) > MaxDecidedByBytes:
		return Decision{}, fmt.Errorf("%w: DecidedBy is %d bytes, more than %d", ErrInvalidDecision, len(d.DecidedBy), MaxDecidedByBytes)
	case !utf8.ValidString(d.DecidedBy):
		return Decision{}, fmt.Errorf("%w: DecidedBy is not UTF-8", ErrInvalidDecision)
	case strings.ContainsRune(d.DecidedBy, 0):
		return Decision{}, fmt.Errorf("%w: DecidedBy holds NUL", ErrInvalidDecision)
	}
	d.Comment = strings.TrimSpace(d.Comment)
	if !utf8.ValidString(d.Comment) {
		return Decision{}, fmt.Errorf("%w: comment is not UTF-8", ErrInvalidDecision)
	}
	if strings.ContainsRune(d.Comment, 0) {
		// PostgreSQL's text cannot hold it; both backends refuse it alike.
		return Decision{}, fmt.Errorf("%w: comment holds NUL", ErrInvalidDecision)
	}
	if n := utf8.RuneCountInString(d.Comment); n > MaxCommentRunes {
		return Decision{}, fmt.Errorf("%w: comment is %d runes after trimming, more than %d", ErrInvalidDecision, n, MaxCommentRunes)
	}
	return d, nil
}
