package approval

// legacyMigrations is the schema history of stores written before the
// candor_approval_ prefix, verbatim: the tests build such stores with it.
func legacyMigrations() []migration {
	return []migration{
		{1, "tables", `
CREATE TABLE operations (
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
CREATE TABLE items (
	operation_id TEXT    NOT NULL PRIMARY KEY REFERENCES operations (operation_id),
	id           INTEGER NOT NULL,
	draft        BLOB    NOT NULL,
	created_at   INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE receipts (
	operation_id  TEXT    NOT NULL REFERENCES operations (operation_id),
	graph_version TEXT    NOT NULL,
	session_id    TEXT    NOT NULL,
	checkpoint_id TEXT    NOT NULL,
	request_id    TEXT    NOT NULL,
	issued_at     INTEGER NOT NULL,
	PRIMARY KEY (operation_id, graph_version, session_id, checkpoint_id, request_id)
) WITHOUT ROWID;
`},
		{2, "append-only triggers", `
CREATE TRIGGER operations_insert BEFORE INSERT ON operations
WHEN NEW.status <> 'waiting'
BEGIN SELECT RAISE(ABORT, 'approval: an operation is registered as waiting'); END;

CREATE TRIGGER operations_transition BEFORE UPDATE ON operations
WHEN NOT (
	NEW.seq IS OLD.seq AND NEW.operation_id IS OLD.operation_id AND
	NEW.draft IS OLD.draft AND NEW.created_at IS OLD.created_at AND (
		(OLD.status = 'waiting' AND NEW.status IN ('approved', 'rejected'))
		OR
		(OLD.status = 'approved' AND NEW.status = 'completed' AND
			NEW.verdict IS OLD.verdict AND NEW.comment IS OLD.comment AND
			NEW.decided_by IS OLD.decided_by AND NEW.decided_at IS OLD.decided_at AND
			EXISTS (SELECT 1 FROM items i WHERE i.operation_id = NEW.operation_id))))
BEGIN SELECT RAISE(ABORT, 'approval: operations change only by a permitted status transition'); END;

CREATE TRIGGER operations_no_delete BEFORE DELETE ON operations
BEGIN SELECT RAISE(ABORT, 'approval: operations are never deleted'); END;

CREATE TRIGGER items_insert BEFORE INSERT ON items
WHEN NOT EXISTS (SELECT 1 FROM operations o
	WHERE o.operation_id = NEW.operation_id AND o.status = 'approved' AND o.draft IS NEW.draft AND o.seq IS NEW.id)
BEGIN SELECT RAISE(ABORT, 'approval: an item is the persisted draft of an approved operation'); END;

CREATE TRIGGER items_no_update BEFORE UPDATE ON items
BEGIN SELECT RAISE(ABORT, 'approval: items are immutable'); END;

CREATE TRIGGER items_no_delete BEFORE DELETE ON items
BEGIN SELECT RAISE(ABORT, 'approval: items are never deleted'); END;

CREATE TRIGGER receipts_no_update BEFORE UPDATE ON receipts
BEGIN SELECT RAISE(ABORT, 'approval: receipts are immutable'); END;

CREATE TRIGGER receipts_no_delete BEFORE DELETE ON receipts
BEGIN SELECT RAISE(ABORT, 'approval: receipts are never deleted'); END;
`},
		{3, "list by status index", `
CREATE INDEX operations_by_status ON operations (status, seq);
`},
		// Version 4 makes Apply one statement. No query ever used
		// operations_by_status (List walks seq, the primary key), yet every
		// Register, Decide and Apply paid for keeping it up to date. The
		// move Approved→Completed now inserts the item itself, from the
		// row's own draft, in the same statement; an item can no longer be
		// inserted on its own, so an item exists exactly when its operation
		// is Completed. (Every completion sets completed_at, which the CHECK
		// requires, so the trigger watches that column and stays out of
		// Decide's way.)
		{4, "completion inserts the item; drop the unused status index", `
DROP INDEX operations_by_status;

DROP TRIGGER operations_transition;
CREATE TRIGGER operations_transition BEFORE UPDATE ON operations
WHEN NOT (
	NEW.seq IS OLD.seq AND NEW.operation_id IS OLD.operation_id AND
	NEW.draft IS OLD.draft AND NEW.created_at IS OLD.created_at AND (
		(OLD.status = 'waiting' AND NEW.status IN ('approved', 'rejected'))
		OR
		(OLD.status = 'approved' AND NEW.status = 'completed' AND
			NEW.verdict IS OLD.verdict AND NEW.comment IS OLD.comment AND
			NEW.decided_by IS OLD.decided_by AND NEW.decided_at IS OLD.decided_at)))
BEGIN SELECT RAISE(ABORT, 'approval: operations change only by a permitted status transition'); END;

CREATE TRIGGER operations_complete AFTER UPDATE OF completed_at ON operations
WHEN OLD.status = 'approved' AND NEW.status = 'completed'
BEGIN
	INSERT INTO items (operation_id, id, draft, created_at)
	VALUES (NEW.operation_id, NEW.seq, NEW.draft, NEW.completed_at);
END;

DROP TRIGGER items_insert;
CREATE TRIGGER items_insert BEFORE INSERT ON items
WHEN NOT EXISTS (SELECT 1 FROM operations o
	WHERE o.operation_id = NEW.operation_id AND o.status = 'completed' AND o.draft IS NEW.draft
	AND o.seq IS NEW.id AND o.completed_at IS NEW.created_at)
BEGIN SELECT RAISE(ABORT, 'approval: an item is the persisted draft of the operation its completion inserts'); END;
`},
	}
}
