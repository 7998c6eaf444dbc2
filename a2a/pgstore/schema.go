package pgstore

import "github.com/candorkit/candor/internal/pgx"

// migrationsTable records the applied migrations, in the store's schema.
const migrationsTable = "a2a_task_migrations"

// migrations is the store's schema history. A released migration never
// changes (its checksum is recorded); new behaviour is a new migration.
var migrations = []pgx.Migration{
	{Version: 1, Name: "tasks", SQL: `
CREATE SEQUENCE task_seq;
CREATE TABLE tasks (
	id         TEXT    PRIMARY KEY,
	owner      TEXT    NOT NULL,
	context_id TEXT    NOT NULL,
	state      TEXT    NOT NULL,
	finished   BOOLEAN NOT NULL,
	status_at  BIGINT,
	version    BIGINT  NOT NULL,
	seq        BIGINT  NOT NULL,
	last_used  BIGINT  NOT NULL,
	task       BYTEA   NOT NULL
);
CREATE INDEX tasks_owner_seq ON tasks (owner, seq DESC);
CREATE INDEX tasks_finished_lru ON tasks (last_used, id) WHERE finished;
CREATE INDEX tasks_running ON tasks (last_used) WHERE NOT finished;
`},
}
