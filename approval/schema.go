package approval

// The store's tables. Every object the store creates in a database (table,
// index, trigger) is named with the candor_approval_ prefix, so that it can
// share a file with the caller's own tables and with other migrators (a
// golang-migrate schema_migrations table, say).
//
// A caller's table may refer to TableOperations(operation_id) or
// TableItems(operation_id) with a foreign key: the store never deletes a
// row. The columns are documented in doc.go; new columns may be added,
// existing ones are not renamed or removed without a major version.
const (
	// TableOperations holds one row per operation id: the canonical draft,
	// the status, the decision and the completion time.
	TableOperations = "candor_approval_operations"
	// TableItems holds one row per applied operation: the approved item,
	// inserted by the operation's move to Completed.
	TableItems = "candor_approval_items"
	// TableReceipts holds the waiting receipts the store issued.
	TableReceipts = "candor_approval_receipts"
	// TableMigrations records the schema migrations applied, with their
	// checksums.
	TableMigrations = "candor_approval_migrations"
)

// applicationID is the PRAGMA application_id a file that Open created
// carries ("CAap"). A file with another non-zero id belongs to another
// application.
const applicationID int32 = 0x43416170

// migration is one forward-only schema step. Once released, a migration's
// SQL never changes: the migrator records its checksum and refuses a
// database whose recorded checksum differs. New behaviour is a new
// migration.
type migration struct {
	version int
	name    string
	sql     string
}

// v1Tables creates the tables under staging names, in the shape that
// stores from before the prefix already hold (adoptLegacy copies their rows
// into them first, hence IF NOT EXISTS); version 2 moves them to their
// names. The staging names carry the prefix too.
const v1Tables = `
CREATE TABLE IF NOT EXISTS candor_approval_v1_operations (
	seq          INTEGER PRIMARY KEY,
	operation_id TEXT    NOT NULL UNIQUE,
	draft        BLOB    NOT NULL,
	status       TEXT    NOT NULL,
	created_at   INTEGER NOT NULL,
	verdict      TEXT,
	comment      TEXT,
	decided_by   TEXT,
	decided_at   INTEGER,
	completed_at INTEGER
);
CREATE TABLE IF NOT EXISTS candor_approval_v1_items (
	operation_id TEXT    NOT NULL PRIMARY KEY,
	id           INTEGER NOT NULL,
	draft        BLOB    NOT NULL,
	created_at   INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS candor_approval_v1_receipts (
	operation_id  TEXT    NOT NULL,
	graph_version TEXT    NOT NULL,
	session_id    TEXT    NOT NULL,
	checkpoint_id TEXT    NOT NULL,
	request_id    TEXT    NOT NULL,
	issued_at     INTEGER NOT NULL,
	PRIMARY KEY (operation_id, graph_version, session_id, checkpoint_id, request_id)
) WITHOUT ROWID;
`

// v2Named creates the tables under their names with their rules, copies
// the staged rows (the CHECK constraints vet each one) and drops the
// staging tables. The triggers are created after the copy: they refuse an
// item inserted other than by a completion.
const v2Named = `
CREATE TABLE candor_approval_operations (
	seq          INTEGER PRIMARY KEY,
	operation_id TEXT    NOT NULL UNIQUE,
	draft        BLOB    NOT NULL,
	status       TEXT    NOT NULL,
	created_at   INTEGER NOT NULL,
	verdict      TEXT,
	comment      TEXT,
	decided_by   TEXT,
	decided_at   INTEGER,
	completed_at INTEGER,
	CHECK (CASE status
		WHEN 'waiting'   THEN verdict IS NULL AND completed_at IS NULL
		WHEN 'approved'  THEN verdict IS 'approve' AND completed_at IS NULL
		WHEN 'rejected'  THEN verdict IS 'reject' AND completed_at IS NULL
		WHEN 'completed' THEN verdict IS 'approve' AND completed_at IS NOT NULL
		ELSE 0 END),
	CHECK ((verdict IS NULL) = (comment IS NULL) AND (verdict IS NULL) = (decided_by IS NULL) AND
		(verdict IS NULL) = (decided_at IS NULL))
);
CREATE TABLE candor_approval_items (
	operation_id TEXT    NOT NULL PRIMARY KEY REFERENCES candor_approval_operations (operation_id),
	id           INTEGER NOT NULL,
	draft        BLOB    NOT NULL,
	created_at   INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE candor_approval_receipts (
	operation_id  TEXT    NOT NULL REFERENCES candor_approval_operations (operation_id),
	graph_version TEXT    NOT NULL,
	session_id    TEXT    NOT NULL,
	checkpoint_id TEXT    NOT NULL,
	request_id    TEXT    NOT NULL,
	issued_at     INTEGER NOT NULL,
	PRIMARY KEY (operation_id, graph_version, session_id, checkpoint_id, request_id)
) WITHOUT ROWID;

INSERT INTO candor_approval_operations
	(seq, operation_id, draft, status, created_at, verdict, comment, decided_by, decided_at, completed_at)
SELECT seq, operation_id, draft, status, created_at, verdict, comment, decided_by, decided_at, completed_at
FROM candor_approval_v1_operations ORDER BY seq;
INSERT INTO candor_approval_items (operation_id, id, draft, created_at)
SELECT operation_id, id, draft, created_at FROM candor_approval_v1_items;
INSERT INTO candor_approval_receipts (operation_id, graph_version, session_id, checkpoint_id, request_id, issued_at)
SELECT operation_id, graph_version, session_id, checkpoint_id, request_id, issued_at FROM candor_approval_v1_receipts;
DROP TABLE candor_approval_v1_receipts;
DROP TABLE candor_approval_v1_items;
DROP TABLE candor_approval_v1_operations;

CREATE TRIGGER candor_approval_operations_insert BEFORE INSERT ON candor_approval_operations
WHEN NEW.status <> 'waiting'
BEGIN SELECT RAISE(ABORT, 'approval: an operation is registered as waiting'); END;

CREATE TRIGGER candor_approval_operations_transition BEFORE UPDATE ON candor_approval_operations
WHEN NOT (
	NEW.seq IS OLD.seq AND NEW.operation_id IS OLD.operation_id AND
	NEW.draft IS OLD.draft AND NEW.created_at IS OLD.created_at AND (
		(OLD.status = 'waiting' AND NEW.status IN ('approved', 'rejected'))
		OR
		(OLD.status = 'approved' AND NEW.status = 'completed' AND
			NEW.verdict IS OLD.verdict AND NEW.comment IS OLD.comment AND
			NEW.decided_by IS OLD.decided_by AND NEW.decided_at IS OLD.decided_at)))
BEGIN SELECT RAISE(ABORT, 'approval: operations change only by a permitted status transition'); END;

CREATE TRIGGER candor_approval_operations_no_delete BEFORE DELETE ON candor_approval_operations
BEGIN SELECT RAISE(ABORT, 'approval: operations are never deleted'); END;

CREATE TRIGGER candor_approval_operations_complete AFTER UPDATE OF completed_at ON candor_approval_operations
WHEN OLD.status = 'approved' AND NEW.status = 'completed'
BEGIN
	INSERT INTO candor_approval_items (operation_id, id, draft, created_at)
	VALUES (NEW.operation_id, NEW.seq, NEW.draft, NEW.completed_at);
END;

CREATE TRIGGER candor_approval_items_insert BEFORE INSERT ON candor_approval_items
WHEN NOT EXISTS (SELECT 1 FROM candor_approval_operations o
	WHERE o.operation_id = NEW.operation_id AND o.status = 'completed' AND o.draft IS NEW.draft
	AND o.seq IS NEW.id AND o.completed_at IS NEW.created_at)
BEGIN SELECT RAISE(ABORT, 'approval: an item is the persisted draft of the operation its completion inserts'); END;

CREATE TRIGGER candor_approval_items_no_update BEFORE UPDATE ON candor_approval_items
BEGIN SELECT RAISE(ABORT, 'approval: items are immutable'); END;

CREATE TRIGGER candor_approval_items_no_delete BEFORE DELETE ON candor_approval_items
BEGIN SELECT RAISE(ABORT, 'approval: items are never deleted'); END;

CREATE TRIGGER candor_approval_receipts_no_update BEFORE UPDATE ON candor_approval_receipts
BEGIN SELECT RAISE(ABORT, 'approval: receipts are immutable'); END;

CREATE TRIGGER candor_approval_receipts_no_delete BEFORE DELETE ON candor_approval_receipts
BEGIN SELECT RAISE(ABORT, 'approval: receipts are never deleted'); END;
`

// schemaMigrations returns the schema's history, oldest first; versions
// are 1, 2, 3, ... without gaps.
func schemaMigrations() []migration {
	return []migration{
		{1, "tables under staging names", v1Tables},
		{2, "tables under their names, with their rules", v2Named},
	}
}

// Stores written before the prefix kept their tables as operations, items
// and receipts, and their history in schema_migrations (version, name,
// checksum, applied_at), with these four migrations: the hex SHA-256 of
// each one's SQL. adoptLegacy recognises such a store by that table and
// these checksums, nothing else.
var legacyChecksums = []string{
	"", // versions start at 1
	legacyV1, legacyV2, legacyV3, legacyV4,
}

const (
	legacyV1 = "c9c7dcb36149c253385dfa1bc7b8d7992d2787174ae18e1da7ec60244088d31c"
	legacyV2 = "479a8e486acfd375659264184273eb00c0a74479c1dac8c0d954d1619a650fdc"
	legacyV3 = "81bf3727f0ceaa905e6cd853d7806b0f20fa9f837578b6dff0432f048b5bad74"
	legacyV4 = "70225647724abee37432725b911287c41aff0a64e1c783a04deb2b5bf40f67ee"
)

// adoptLegacySQL copies a legacy store's rows into the staging tables
// (created by v1Tables first) and drops the legacy tables, their triggers
// with them.
const adoptLegacySQL = `
INSERT INTO candor_approval_v1_operations
	(seq, operation_id, draft, status, created_at, verdict, comment, decided_by, decided_at, completed_at)
SELECT seq, operation_id, draft, status, created_at, verdict, comment, decided_by, decided_at, completed_at
FROM operations ORDER BY seq;
INSERT INTO candor_approval_v1_items (operation_id, id, draft, created_at)
SELECT operation_id, id, draft, created_at FROM items;
INSERT INTO candor_approval_v1_receipts (operation_id, graph_version, session_id, checkpoint_id, request_id, issued_at)
SELECT operation_id, graph_version, session_id, checkpoint_id, request_id, issued_at FROM receipts;
DROP TABLE receipts;
DROP TABLE items;
DROP TABLE operations;
DROP TABLE schema_migrations;
`
