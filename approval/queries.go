package approval

// The store's statements. Open prepares every one of them.
const (
	stateSelect = `
SELECT o.seq, o.operation_id, o.draft, o.status, o.created_at, o.completed_at,
       o.verdict, o.comment, o.decided_by, o.decided_at, i.id
FROM operations o
LEFT JOIN items i ON i.operation_id = o.operation_id`

	qReadState = stateSelect + `
WHERE o.operation_id = ?`

	qList = stateSelect + `
WHERE o.seq > ? AND (? = '' OR o.status = ?)
ORDER BY o.seq LIMIT ?`

	// qRegister inserts a new operation; an existing id inserts nothing
	// and Register compares the drafts.
	qRegister = `INSERT INTO operations (operation_id, draft, status, created_at) VALUES (?, ?, 'waiting', ?)
ON CONFLICT (operation_id) DO NOTHING`

	// qDecide records the decision only on a waiting operation; no row
	// back means unknown or already decided.
	qDecide = `UPDATE operations SET status = ?, verdict = ?, comment = ?, decided_by = ?, decided_at = ?
WHERE operation_id = ? AND status = 'waiting'
RETURNING draft, created_at`

	// qComplete moves an approved operation to Completed; the
	// operations_complete trigger inserts its item from the persisted draft
	// in the same statement, the caller's bytes never reach it. No row back
	// means unknown, not approved, or completed before.
	qComplete = `UPDATE operations SET status = 'completed', completed_at = ?
WHERE operation_id = ? AND status = 'approved'
RETURNING seq, draft, created_at, verdict, comment, decided_by, decided_at`

	qCheckApplied = `SELECT count(*) FROM operations o JOIN items i ON i.operation_id = o.operation_id
WHERE o.operation_id = ? AND o.status = 'completed' AND i.id = ?`

	qInsertReceipt = `INSERT INTO receipts (operation_id, graph_version, session_id, checkpoint_id, request_id, issued_at)
VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`

	qFindReceipt = `SELECT 1 FROM receipts WHERE operation_id = ? AND graph_version = ?
AND session_id = ? AND checkpoint_id = ? AND request_id = ?`
)

func statements() []string {
	return []string{qReadState, qList, qRegister, qDecide, qComplete, qCheckApplied,
		qInsertReceipt, qFindReceipt}
}

// scanner is a *sql.Row or *sql.Rows.
type scanner interface {
	Scan(dest ...any) error
}
