package approval

// The PostgreSQL schema. Every object is created in the store's schema
// (WithSchema, DefaultSchema by default) and named with the
// candor_approval_ prefix, like the SQLite tables, so the schema may be
// shared with the caller's own tables. {schema} stands for the quoted
// schema name; a migration's checksum is taken over the text with the
// placeholder, so it is the same in every schema.

// pgV1 creates the tables, their CHECK constraints and the triggers that
// keep them append-only, with the same rules as the SQLite schema: an
// operation is inserted waiting; it changes only Waiting→Approved,
// Waiting→Rejected or Approved→Completed, its id, draft and creation time
// never, its decision once; the move to Completed inserts its item from the
// persisted draft; items and receipts are never updated or deleted; nothing
// is deleted or truncated.
const pgV1 = `
CREATE TABLE {schema}.candor_approval_operations (
	seq          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	operation_id text   NOT NULL UNIQUE,
	draft        bytea  NOT NULL,
	status       text   NOT NULL,
	created_at   bigint NOT NULL,
	verdict      text,
	comment      text,
	decided_by   text,
	decided_at   bigint,
	completed_at bigint,
	CONSTRAINT candor_approval_operations_status CHECK (CASE status
		WHEN 'waiting'   THEN verdict IS NULL AND completed_at IS NULL
		WHEN 'approved'  THEN verdict IS NOT DISTINCT FROM 'approve' AND completed_at IS NULL
		WHEN 'rejected'  THEN verdict IS NOT DISTINCT FROM 'reject' AND completed_at IS NULL
		WHEN 'completed' THEN verdict IS NOT DISTINCT FROM 'approve' AND completed_at IS NOT NULL
		ELSE false END),
	CONSTRAINT candor_approval_operations_decision CHECK ((verdict IS NULL) = (comment IS NULL) AND
		(verdict IS NULL) = (decided_by IS NULL) AND (verdict IS NULL) = (decided_at IS NULL))
);
CREATE TABLE {schema}.candor_approval_items (
	operation_id text   NOT NULL PRIMARY KEY REFERENCES {schema}.candor_approval_operations (operation_id),
	id           bigint NOT NULL,
	draft        bytea  NOT NULL,
	created_at   bigint NOT NULL
);
CREATE TABLE {schema}.candor_approval_receipts (
	operation_id  text   NOT NULL REFERENCES {schema}.candor_approval_operations (operation_id),
	graph_version text   NOT NULL,
	session_id    text   NOT NULL,
	checkpoint_id text   NOT NULL,
	request_id    text   NOT NULL,
	issued_at     bigint NOT NULL,
	PRIMARY KEY (operation_id, graph_version, session_id, checkpoint_id, request_id)
);

CREATE FUNCTION {schema}.candor_approval_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	RAISE EXCEPTION 'approval: %', TG_ARGV[0];
END $$;

CREATE TRIGGER candor_approval_operations_insert BEFORE INSERT ON {schema}.candor_approval_operations
FOR EACH ROW WHEN (NEW.status IS DISTINCT FROM 'waiting')
EXECUTE FUNCTION {schema}.candor_approval_refuse('an operation is registered as waiting');

CREATE TRIGGER candor_approval_operations_transition BEFORE UPDATE ON {schema}.candor_approval_operations
FOR EACH ROW WHEN (NOT coalesce(
	NEW.seq = OLD.seq AND NEW.operation_id = OLD.operation_id AND
	NEW.draft = OLD.draft AND NEW.created_at = OLD.created_at AND (
		(OLD.status = 'waiting' AND NEW.status IN ('approved', 'rejected'))
		OR
		(OLD.status = 'approved' AND NEW.status = 'completed' AND
			NEW.verdict IS NOT DISTINCT FROM OLD.verdict AND NEW.comment IS NOT DISTINCT FROM OLD.comment AND
			NEW.decided_by IS NOT DISTINCT FROM OLD.decided_by AND NEW.decided_at IS NOT DISTINCT FROM OLD.decided_at)), false))
EXECUTE FUNCTION {schema}.candor_approval_refuse('operations change only by a permitted status transition');

CREATE TRIGGER candor_approval_operations_no_delete BEFORE DELETE ON {schema}.candor_approval_operations
FOR EACH ROW EXECUTE FUNCTION {schema}.candor_approval_refuse('operations are never deleted');

CREATE FUNCTION {schema}.candor_approval_operations_complete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO {schema}.candor_approval_items (operation_id, id, draft, created_at)
	VALUES (NEW.operation_id, NEW.seq, NEW.draft, NEW.completed_at);
	RETURN NULL;
END $$;
CREATE TRIGGER candor_approval_operations_complete AFTER UPDATE ON {schema}.candor_approval_operations
FOR EACH ROW WHEN (OLD.status = 'approved' AND NEW.status = 'completed')
EXECUTE FUNCTION {schema}.candor_approval_operations_complete();

CREATE FUNCTION {schema}.candor_approval_items_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF NOT EXISTS (SELECT 1 FROM {schema}.candor_approval_operations o
		WHERE o.operation_id = NEW.operation_id AND o.status = 'completed' AND o.draft = NEW.draft
		AND o.seq = NEW.id AND o.completed_at = NEW.created_at) THEN
		RAISE EXCEPTION 'approval: an item is the persisted draft of the operation its completion inserts';
	END IF;
	RETURN NEW;
END $$;
CREATE TRIGGER candor_approval_items_insert BEFORE INSERT ON {schema}.candor_approval_items
FOR EACH ROW EXECUTE FUNCTION {schema}.candor_approval_items_insert();

CREATE TRIGGER candor_approval_items_immutable BEFORE UPDATE OR DELETE ON {schema}.candor_approval_items
FOR EACH ROW EXECUTE FUNCTION {schema}.candor_approval_refuse('items are immutable and never deleted');
CREATE TRIGGER candor_approval_receipts_immutable BEFORE UPDATE OR DELETE ON {schema}.candor_approval_receipts
FOR EACH ROW EXECUTE FUNCTION {schema}.candor_approval_refuse('receipts are immutable and never deleted');
CREATE TRIGGER candor_approval_operations_truncate BEFORE TRUNCATE ON {schema}.candor_approval_operations
FOR EACH STATEMENT EXECUTE FUNCTION {schema}.candor_approval_refuse('operations are never truncated');
CREATE TRIGGER candor_approval_items_truncate BEFORE TRUNCATE ON {schema}.candor_approval_items
FOR EACH STATEMENT EXECUTE FUNCTION {schema}.candor_approval_refuse('items are never truncated');
CREATE TRIGGER candor_approval_receipts_truncate BEFORE TRUNCATE ON {schema}.candor_approval_receipts
FOR EACH STATEMENT EXECUTE FUNCTION {schema}.candor_approval_refuse('receipts are never truncated');
`

// pgMigrations returns the PostgreSQL schema's history, oldest first;
// versions are 1, 2, 3, ... without gaps. Once released a migration's text
// never changes (its checksum is recorded); new behaviour is a new one.
func pgMigrations() []migration {
	return []migration{
		{1, "tables, rules and triggers", pgV1},
	}
}

// pgMigrationsTable records the migrations applied in the store's schema,
// with the SHA-256 of each one's text.
const pgMigrationsTable = `CREATE TABLE IF NOT EXISTS {schema}.candor_approval_migrations (
	version    integer PRIMARY KEY,
	name       text    NOT NULL,
	checksum   text    NOT NULL,
	applied_at bigint  NOT NULL
)`

// pgStateSelect is stateSelect under the store's schema.
const pgStateSelect = `
SELECT o.seq, o.operation_id, o.draft, o.status, o.created_at, o.completed_at,
       o.verdict, o.comment, o.decided_by, o.decided_at, i.id
FROM {schema}.candor_approval_operations o
LEFT JOIN {schema}.candor_approval_items i ON i.operation_id = o.operation_id`

// pgQueryTemplates are the store's statements on PostgreSQL; see the
// SQLite ones in queries.go for what each does.
var pgQueryTemplates = queryset{
	readState: pgStateSelect + `
WHERE o.operation_id = $1`,
	list: pgStateSelect + `
WHERE o.seq > $1 AND ($2::text = '' OR o.status = $3::text)
ORDER BY o.seq LIMIT $4`,
	// register takes the list lock shared (see List) before the identity
	// column draws the operation's sequence number, and holds it until the
	// statement commits.
	register: `WITH lock AS (SELECT pg_advisory_xact_lock_shared($4::bigint))
INSERT INTO {schema}.candor_approval_operations (operation_id, draft, status, created_at)
SELECT $1::text, $2::bytea, 'waiting', $3::bigint FROM lock
ON CONFLICT (operation_id) DO NOTHING`,
	decide: `UPDATE {schema}.candor_approval_operations
SET status = $1, verdict = $2, comment = $3, decided_by = $4, decided_at = $5
WHERE operation_id = $6 AND status = 'waiting'
RETURNING draft, created_at`,
	complete: `UPDATE {schema}.candor_approval_operations SET status = 'completed', completed_at = $1
WHERE operation_id = $2 AND status = 'approved'
RETURNING seq, draft, created_at, verdict, comment, decided_by, decided_at`,
	checkApplied: `SELECT count(*) FROM {schema}.candor_approval_operations o
JOIN {schema}.candor_approval_items i ON i.operation_id = o.operation_id
WHERE o.operation_id = $1 AND o.status = 'completed' AND i.id = $2`,
	insertReceipt: `INSERT INTO {schema}.candor_approval_receipts
	(operation_id, graph_version, session_id, checkpoint_id, request_id, issued_at)
SELECT $1::text, $2::text, $3::text, $4::text, $5::text, $6::bigint
WHERE EXISTS (SELECT 1 FROM {schema}.candor_approval_operations WHERE operation_id = $1::text)
ON CONFLICT DO NOTHING`,
	findReceipt: `SELECT 1 FROM {schema}.candor_approval_receipts WHERE operation_id = $1 AND graph_version = $2
AND session_id = $3 AND checkpoint_id = $4 AND request_id = $5`,
}

// Statements the PostgreSQL store runs outside the query set.
const (
	pgLockExclusive = `SELECT pg_advisory_xact_lock($1::bigint)`
	// pgSettings reads the database's name and what the store relies on.
	pgSettings = `SELECT current_database(), current_setting('synchronous_commit'),
	current_setting('server_version_num')::integer`
	pgSchemaExists = `SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = $1)`
	// pgIdentify tells whether the schema holds the migrations table and
	// the operations table.
	pgIdentify = `SELECT to_regclass($1) IS NOT NULL, to_regclass($2) IS NOT NULL`
	pgHistory  = `SELECT version, checksum FROM {schema}.candor_approval_migrations ORDER BY version`
	pgRecord   = `INSERT INTO {schema}.candor_approval_migrations (version, name, checksum, applied_at) VALUES ($1, $2, $3, $4)`
)
