package approval

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/candorkit/candor/internal/sqlitex"
)

func sqlMigrations() []sqlitex.Migration {
	ms := schemaMigrations()
	out := make([]sqlitex.Migration, len(ms))
	for i, m := range ms {
		out[i] = sqlitex.Migration{Version: m.version, Name: m.name, SQL: m.sql}
	}
	return out
}

// migrate brings db's store tables to the current version.
func migrate(ctx context.Context, db *sql.DB) error {
	return migrationErr(sqlitex.Migrate(ctx, db, TableMigrations, sqlMigrations()))
}

// migrationErr gives a refusal of the migrator the store's sentinel.
func migrationErr(err error) error {
	msg := func() string {
		if err == nil {
			return ""
		}
		return strings.TrimPrefix(err.Error(), "sqlitex: ")
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, sqlitex.ErrSchemaTooNew):
		return fmt.Errorf("%w: %s", ErrSchemaTooNew, msg())
	case errors.Is(err, sqlitex.ErrSchemaAltered):
		return fmt.Errorf("%w: %s", ErrSchemaAltered, msg())
	case sqlitex.IsCorrupt(err):
		return corrupt(err)
	}
	return fmt.Errorf("approval: migrate: %w", err)
}

// corrupt turns the damage sqlitex reports into a *CorruptError.
func corrupt(err error) error {
	var sce *sqlitex.CorruptError
	if !errors.As(err, &sce) {
		if sqlitex.IsCorrupt(err) {
			return &CorruptError{Problems: []string{err.Error()}, Err: err}
		}
		return err
	}
	ce := &CorruptError{Problems: sce.Problems, Err: sce.Err}
	if len(ce.Problems) == 0 && sce.Err != nil {
		ce.Problems = []string{sce.Err.Error()}
	}
	return ce
}

// checkCurrent confirms, without writing, that the recorded migrations
// are exactly this package's: a read-only store cannot migrate.
func (s *Store) checkCurrent(ctx context.Context) error {
	rows, err := s.db.QueryContext(ctx, qMigrations)
	if err != nil {
		return s.dbErr(err)
	}
	defer rows.Close()
	ms := sqlMigrations()
	n := 0
	for rows.Next() {
		var v int
		var sum string
		if err := rows.Scan(&v, &sum); err != nil {
			return s.dbErr(err)
		}
		n++
		switch {
		case v > len(ms):
			return fmt.Errorf("%w: the database is at version %d, this package knows %d", ErrSchemaTooNew, v, len(ms))
		case v != n:
			return fmt.Errorf("%w: version %d is missing", ErrSchemaAltered, n)
		case sum != ms[v-1].Checksum():
			return fmt.Errorf("%w: version %d (%s) recorded with checksum %s, the package has %s",
				ErrSchemaAltered, v, ms[v-1].Name, sum, ms[v-1].Checksum())
		}
	}
	if err := rows.Err(); err != nil {
		return s.dbErr(err)
	}
	if n < len(ms) {
		return fmt.Errorf("%w: the database is at version %d, this package is at %d", ErrSchemaTooOld, n, len(ms))
	}
	return nil
}

// adoptLegacy moves a store from before the candor_approval_ prefix into
// the staging tables of version 1, in one BEGIN IMMEDIATE transaction, once
// its recorded history is confirmed to be this package's: Migrate then
// gives the tables their names. A crash leaves the legacy store or the
// staged one, both of which Open recognises.
func (s *Store) adoptLegacy(ctx context.Context) (err error) {
	c, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("approval: connect: %w", err)
	}
	defer c.Close()
	if _, err := c.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return fmt.Errorf("approval: adopt the legacy schema: begin: %w", err)
	}
	committed := false
	defer func() {
		if committed {
			return
		}
		if _, rerr := c.ExecContext(context.WithoutCancel(ctx), "ROLLBACK"); rerr != nil {
			err = errors.Join(err, fmt.Errorf("approval: rollback: %w", rerr))
		}
	}()
	var l layout
	if err := c.QueryRowContext(ctx, qIdentify).Scan(&l.appID, &l.migrations, &l.staged, &l.legacy); err != nil {
		return err
	}
	if !l.legacy || l.migrations || l.staged {
		return nil // another opener adopted it meanwhile
	}
	if err := checkLegacyHistory(ctx, c); err != nil {
		return err
	}
	if _, err := c.ExecContext(ctx, v1Tables+adoptLegacySQL); err != nil {
		return fmt.Errorf("approval: adopt the legacy schema: %w", err)
	}
	if _, err := c.ExecContext(ctx, "COMMIT"); err != nil {
		return fmt.Errorf("approval: adopt the legacy schema: commit: %w", err)
	}
	committed = true
	return nil
}

func checkLegacyHistory(ctx context.Context, c *sql.Conn) error {
	rows, err := c.QueryContext(ctx, qLegacyHistory)
	if err != nil {
		return err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var v int
		var sum string
		if err := rows.Scan(&v, &sum); err != nil {
			return err
		}
		n++
		switch {
		case v >= len(legacyChecksums):
			return fmt.Errorf("%w: the legacy schema_migrations records version %d, unknown to this package", ErrSchemaTooNew, v)
		case v != n:
			return fmt.Errorf("%w: legacy version %d is missing", ErrSchemaAltered, n)
		case sum != legacyChecksums[v]:
			return fmt.Errorf("%w: legacy version %d recorded with checksum %s, want %s", ErrSchemaAltered, v, sum, legacyChecksums[v])
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("%w: the legacy schema_migrations table is empty", ErrSchemaAltered)
	}
	return nil
}
