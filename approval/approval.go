package approval

import (
	"context"
	"database/sql"
	"encoding/json"
	"time"
)

// Draft is the proposal a person is asked to approve. Any value that
// encoding/json can marshal will do, as long as it can say what is wrong
// with it: Validate returns every problem it finds (nil or empty when the
// draft is acceptable). Nil entries in the returned slice are ignored.
type Draft interface {
	Validate() []error
}

// Ticket binds a draft to the operation id under which it is proposed. An
// operation id is bound to exactly one draft, forever.
type Ticket struct {
	OperationID string
	Draft       Draft
}

// Verdict is the outcome a person chose.
type Verdict string

// The only two verdicts.
const (
	Approve Verdict = "approve"
	Reject  Verdict = "reject"
)

// Decision is a person's verdict on an operation.
type Decision struct {
	OperationID string
	Verdict     Verdict
	// Comment is trimmed of surrounding white space and may hold at most
	// MaxCommentRunes runes after trimming.
	Comment string
	// DecidedBy names the person (or the identity) who decided. It is
	// required: a decision without a decider is refused.
	DecidedBy string
}

// Status is where an operation stands.
type Status string

// The statuses an operation moves through. The only transitions are
// Waiting→Approved, Waiting→Rejected and Approved→Completed.
const (
	StatusWaiting   Status = "waiting"
	StatusApproved  Status = "approved"
	StatusRejected  Status = "rejected"
	StatusCompleted Status = "completed"
)

// Valid reports whether s is one of the four statuses.
func (s Status) Valid() bool {
	switch s {
	case StatusWaiting, StatusApproved, StatusRejected, StatusCompleted:
		return true
	}
	return false
}

// State is what the store holds for one operation.
type State struct {
	OperationID string
	// Draft is the canonical JSON the store persisted at Register: object
	// keys sorted, no insignificant white space, HTML characters not
	// escaped. It is the draft a person saw and the one Apply uses.
	Draft  json.RawMessage
	Status Status
	// Decision is nil while the operation is Waiting.
	Decision *Decision
	// ItemID is the id of the approved item Apply inserted; 0 until the
	// operation is Completed. It is the operation's sequence number in the
	// store (positive, unique, never reused), so a retried Apply returns
	// the same id.
	ItemID      int64
	CreatedAt   time.Time
	DecidedAt   time.Time // zero while Waiting
	CompletedAt time.Time // zero until Completed
}

// Item is the approved item Apply inserts and hands to the Effect.
type Item struct {
	ID          int64
	OperationID string
	// Draft is the persisted canonical draft, never a value re-marshalled
	// from the caller's memory.
	Draft    json.RawMessage
	Decision Decision
}

// Effect performs the approved operation inside Apply's transaction. It
// must do its database work through tx, so that its rows (in the caller's
// own tables, in the store's file or, with OpenDB, in the caller's
// database) commit or roll back together with the item and the
// completion; it must neither commit nor roll back tx. It runs while the
// store holds SQLite's write lock (on PostgreSQL, the operation's row lock),
// so it should be short and must not write through another connection to
// the same file (that would wait for the lock Apply holds). Its SQL with
// $1, $2 placeholders runs on both backends. An effect that reaches
// outside the database (an HTTP call, a message) is not covered by the
// transaction: it may run again if the process dies between the effect and
// the commit, so such an effect must itself be idempotent, keyed on
// Item.OperationID.
type Effect func(ctx context.Context, tx *sql.Tx, item Item) error

// Filter selects the operations List returns.
type Filter struct {
	// Status keeps only operations in this status; empty keeps all.
	Status Status
	// Limit is the page size: 0 means DefaultPageSize, more than
	// MaxPageSize is refused.
	Limit int
	// Cursor continues a previous listing: pass Page.Next. Empty starts at
	// the oldest operation.
	Cursor string
}

// Page is one page of a listing, oldest operation first.
type Page struct {
	States []State
	// Next is the cursor of the following page; empty when this page is
	// the last one.
	Next string
}

// Bounds the store enforces.
const (
	// MaxCommentRunes bounds Decision.Comment after trimming.
	MaxCommentRunes = 500
	// MaxDecidedByBytes bounds Decision.DecidedBy.
	MaxDecidedByBytes = 256
	// MaxOperationIDBytes bounds an operation id.
	MaxOperationIDBytes = 256
	// DefaultMaxDraftBytes bounds a draft's canonical JSON unless
	// WithMaxDraftBytes says otherwise.
	DefaultMaxDraftBytes = 1 << 20
	// DefaultPageSize is the page size of a List whose Limit is 0.
	DefaultPageSize = 50
	// MaxPageSize is the largest Limit List accepts.
	MaxPageSize = 1000
)
