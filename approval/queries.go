package approval

// The store's SQL, all of it in this file and schema.go. Open prepares
// every statement that statements lists.
const (
	stateSelect = `
SELECT o.seq, o.operation_id, o.draft, o.status, o.created_at, o.completed_at,
       o.verdict, o.comment, o.decided_by, o.decided_at, i.id
FROM candor_approval_operations o
LEFT JOIN candor_approval_items i ON i.operation_id = o.operation_id`

	qReadState = stateSelect + `
WHERE o.operation_id = ?`

	qList = stateSelect + `
WHERE o.seq > ? AND (? = '' OR o.status = ?)
ORDER BY o.seq LIMIT ?`

	// qRegister inserts a new operation; an existing id inserts nothing
	// and Register compares the drafts.
	qRegister = `INSERT INTO candor_approval_operations (operation_id, draft, status, created_at) VALUES (?, ?, 'waiting', ?)
ON CONFLICT (operation_id) DO NOTHING`

	// qDecide records the decision only on a waiting operation; no row
	// back means unknown or already decided.
	qDecide = `UPDATE candor_approval_operations SET status = ?, verdict = ?, comment = ?, decided_by = ?, decided_at = ?
WHERE operation_id = ? AND status = 'waiting'
RETURNING draft, created_at`

	// qComplete moves an approved operation to Completed; the
	// candor_approval_operations_complete trigger inserts its item from the
	// persisted draft in the same statement, the caller's bytes never reach
	// it. No row back means unknown, not approved, or completed before.
	qComplete = `UPDATE candor_approval_operations SET status = 'completed', completed_at = ?
WHERE operation_id = ? AND status = 'approved'
RETURNING seq, draft, created_at, verdict, comment, decided_by, decided_at`

	qCheckApplied = `SELECT count(*) FROM candor_approval_operations o JOIN candor_approval_items i ON i.operation_id = o.operation_id
WHERE o.operation_id = ? AND o.status = 'completed' AND i.id = ?`

	// qInsertReceipt records a receipt for an operation the store holds;
	// no row inserted means an unknown operation or a receipt issued
	// before. It is the first statement of Receipt's transaction, a write.
	qInsertReceipt = `INSERT INTO candor_approval_receipts (operation_id, graph_version, session_id, checkpoint_id, request_id, issued_at)
SELECT ?1, ?2, ?3, ?4, ?5, ?6 WHERE EXISTS (SELECT 1 FROM candor_approval_operations WHERE operation_id = ?1)
ON CONFLICT DO NOTHING`

	qFindReceipt = `SELECT 1 FROM candor_approval_receipts WHERE operation_id = ? AND graph_version = ?
AND session_id = ? AND checkpoint_id = ? AND request_id = ?`
)

// Statements Open runs once, not prepared.
const (
	// qIdentify tells what a database holds: its application_id, the
	// migrations table, the staging tables of version 1, and a store from
	// before the prefix (its schema_migrations has a checksum column,
	// which golang-migrate's has not).
	qIdentify = `SELECT
	(SELECT application_id FROM pragma_application_id),
	EXISTS (SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'candor_approval_migrations'),
	EXISTS (SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'candor_approval_v1_operations'),
	EXISTS (SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'operations')
		AND EXISTS (SELECT 1 FROM pragma_table_info('schema_migrations') WHERE name = 'checksum')`

	qLegacyHistory = `SELECT version, checksum FROM schema_migrations ORDER BY version`

	qMigrations = `SELECT version, checksum FROM candor_approval_migrations ORDER BY version`

	// qMainFile names the file of a caller's database (seq, name, file).
	qMainFile = `SELECT seq, name, file FROM pragma_database_list WHERE name = 'main'`

	// qDBSettings and qConnSettings read what the store relies on; see
	// settingsProblem.
	qDBSettings   = `SELECT * FROM pragma_journal_mode, pragma_synchronous, pragma_foreign_keys, pragma_busy_timeout`
	qConnSettings = `SELECT * FROM pragma_synchronous, pragma_foreign_keys, pragma_busy_timeout`

	// qProbe reads the schema, which a read-only open cannot do when SQLite
	// may not create the write-ahead log's index.
	qProbe = `SELECT count(*) FROM sqlite_schema`
)

// queryset is the text of the store's statements for one backend: the
// SQLite constants above, or the PostgreSQL ones (postgres.go) under the
// store's schema.
type queryset struct {
	readState, list, register, decide, complete, checkApplied, insertReceipt, findReceipt string
}

// sqliteQueries are the SQLite store's statements, prepared at Open.
var sqliteQueries = queryset{
	readState: qReadState, list: qList, register: qRegister, decide: qDecide, complete: qComplete,
	checkApplied: qCheckApplied, insertReceipt: qInsertReceipt, findReceipt: qFindReceipt,
}

func (q *queryset) all() []string {
	return []string{q.readState, q.list, q.register, q.decide, q.complete, q.checkApplied,
		q.insertReceipt, q.findReceipt}
}

// scanner is a *sql.Row or *sql.Rows.
type scanner interface {
	Scan(dest ...any) error
}
