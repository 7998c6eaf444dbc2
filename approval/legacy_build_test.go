package approval

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/require"
)

func (m migration) checksum() string {
	sum := sha256.Sum256([]byte(m.sql))
	return hex.EncodeToString(sum[:])
}

// buildLegacyStore writes, in db, a store as the package wrote it before
// the candor_approval_ prefix, at legacy version upTo: the same tables,
// triggers and schema_migrations rows.
func buildLegacyStore(t testing.TB, db *sql.DB, upTo int) {
	t.Helper()
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil)
	require.NoError(t, err)
	defer tx.Rollback()
	_, err = tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
	version    INTEGER PRIMARY KEY,
	name       TEXT    NOT NULL,
	checksum   TEXT    NOT NULL,
	applied_at INTEGER NOT NULL
)`)
	require.NoError(t, err)
	for _, m := range legacyMigrations()[:upTo] {
		_, err := tx.ExecContext(ctx, m.sql)
		require.NoError(t, err, m.name)
		_, err = tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES (?, ?, ?, 1)`,
			m.version, m.name, m.checksum())
		require.NoError(t, err)
	}
	require.NoError(t, tx.Commit())
}

// TestLegacyChecksums: the checksums the package recognises a legacy store
// by are those of the legacy SQL.
func TestLegacyChecksums(t *testing.T) {
	ms := legacyMigrations()
	require.Len(t, legacyChecksums, len(ms)+1)
	for i, m := range ms {
		require.Equal(t, i+1, m.version)
		require.Equal(t, legacyChecksums[m.version], m.checksum(), m.name)
	}
}
