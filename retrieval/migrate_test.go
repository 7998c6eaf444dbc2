package retrieval

import (
	"database/sql"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/candorkit/candor/internal/sqlitex"
)

// writeLegacyIndex writes an index file exactly as the one-file layout did:
// the schema below, meta rows 'schema' = '1', 'manifest', 'chunker_max_runes'
// and 'chunks', and each chunk's vector, as given, in a float32
// little-endian BLOB.
func writeLegacyIndex(t *testing.T, path string, corpus []Source, m Manifest, vecs [][]float32) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer db.Close()
	_, err = db.Exec(`
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;
CREATE TABLE sources (id TEXT PRIMARY KEY, title TEXT NOT NULL, scopes TEXT NOT NULL,
	valid_from TEXT NOT NULL, valid_until TEXT NOT NULL, admissible INTEGER NOT NULL) STRICT;
CREATE TABLE chunks (source_id TEXT NOT NULL REFERENCES sources(id), n INTEGER NOT NULL,
	text TEXT NOT NULL, vector BLOB NOT NULL, PRIMARY KEY (source_id, n)) STRICT;`)
	require.NoError(t, err)
	mj, err := json.Marshal(m)
	require.NoError(t, err)
	n := len(Chunks(corpus))
	for k, v := range map[string]string{"schema": "1", "manifest": string(mj), "chunker_max_runes": strconv.Itoa(DefaultMaxChunkRunes), "chunks": strconv.Itoa(n)} {
		_, err := db.Exec(`INSERT INTO meta(key,value) VALUES(?,?)`, k, v)
		require.NoError(t, err)
	}
	vi := 0
	for _, s := range corpus {
		scopes, err := json.Marshal(s.Scopes)
		require.NoError(t, err)
		adm := 0
		if s.Admissible {
			adm = 1
		}
		_, err = db.Exec(`INSERT INTO sources VALUES(?,?,?,?,?,?)`, s.ID, s.Title, string(scopes), timeKey(s.ValidFrom), timeKey(s.ValidUntil), adm)
		require.NoError(t, err)
		for _, c := range Chunks([]Source{s}) {
			_, err := db.Exec(`INSERT INTO chunks VALUES(?,?,?,?)`, c.Source, c.N, c.Text, encodeVector(nil, vecs[vi]))
			require.NoError(t, err)
			vi++
		}
	}
}

// An index file of the one-file layout opens after migration with results
// identical to an index built from the same corpus in the current layout,
// keeps them across reopening, and can then be shared read-only.
func TestMigrateOneFileLayout(t *testing.T) {
	r := rand.New(rand.NewPCG(81, 82))
	corpus, vecs := randomCorpus(r, 60, 16)
	m := testManifest(16, corpus)
	dir := t.TempDir()
	legacy := filepath.Join(dir, "legacy.db")
	writeLegacyIndex(t, legacy, corpus, m, vecs)

	_, err := Open(t.Context(), legacy, m, WithReadOnly())
	require.ErrorIs(t, err, ErrReadOnly, "a read-only handle cannot migrate")

	fresh, _, _ := openBuilt(t, corpus, vecs)
	migrated, err := Open(t.Context(), legacy, m)
	require.NoError(t, err)
	p := CorpusPolicy{AsOf: asOf, Scope: "acme"}
	qs := make([][]float32, 20)
	for i := range qs {
		qs[i] = randVec(r, 16)
	}
	want, err := fresh.SearchBatch(t.Context(), qs, p, 12)
	require.NoError(t, err)
	got, err := migrated.SearchBatch(t.Context(), qs, p, 12)
	require.NoError(t, err)
	assert.Equal(t, want, got, "migrated index answers like a fresh one")
	require.NoError(t, migrated.Close())

	db, err := sql.Open("sqlite", legacy)
	require.NoError(t, err)
	var legacyTables int
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE name='chunks_v1'`).Scan(&legacyTables))
	var schema string
	require.NoError(t, db.QueryRow(`SELECT value FROM meta WHERE key='schema'`).Scan(&schema))
	require.NoError(t, db.Close())
	assert.Zero(t, legacyTables, "the BLOB table is dropped")
	assert.Equal(t, schemaVersion, schema)
	_, err = os.Stat(vectorPath(legacy, 1))
	require.NoError(t, err, "the vectors moved to the vector file")

	for _, opts := range [][]Option{nil, {WithReadOnly()}, {WithReadOnly(), WithHalfPrecision()}} {
		re, err := Open(t.Context(), legacy, m, opts...)
		require.NoError(t, err)
		got, err := re.SearchBatch(t.Context(), qs, p, 12)
		require.NoError(t, err)
		assert.Equal(t, want, got, "after reopening")
		require.NoError(t, re.Close())
	}
}

// A damaged file of the one-file layout is refused by the migration, and
// stays as it was.
func TestMigrateRefusesDamagedLegacyFile(t *testing.T) {
	corpus, vecs := controlled()
	m := testManifest(2, corpus)
	path := filepath.Join(t.TempDir(), "legacy.db")
	writeLegacyIndex(t, path, corpus, m, vecs)
	editFile(t, path, `UPDATE chunks SET text = 'Export is under Settings.' WHERE source_id = 'ACME-EXPORT'`)
	// (the statement above edits the one-file layout's own chunks table)
	requireCorrupt(t, path, m, "edited legacy text")
	_, err := os.Stat(vectorPath(path, 1))
	assert.ErrorIs(t, err, os.ErrNotExist, "no vector file left behind")
	path = filepath.Join(t.TempDir(), "legacy.db")
	writeLegacyIndex(t, path, corpus, m, vecs)
	editFile(t, path, `UPDATE chunks SET vector = zeroblob(8) WHERE source_id = 'ACME-USERS'`)
	requireCorrupt(t, path, m, "zero legacy vector")
}

// A file of the one-file layout whose chunk rows are not grouped by source
// in rowid order migrates through the (source, n) order, with the same
// results.
func TestMigrateUngroupedLegacyFile(t *testing.T) {
	r := rand.New(rand.NewPCG(83, 84))
	corpus, vecs := randomCorpus(r, 20, 8)
	corpus = append(corpus, Source{ID: "LONG", Scopes: []string{"acme"}, Admissible: true, Text: strings.Repeat("lorem ipsum ", 300)})
	for len(vecs) < len(Chunks(corpus)) {
		vecs = append(vecs, randVec(r, 8))
	}
	m := testManifest(8, corpus)
	path := filepath.Join(t.TempDir(), "legacy.db")
	writeLegacyIndex(t, path, corpus, m, vecs)
	var sid string
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	require.NoError(t, db.QueryRow(`SELECT source_id FROM chunks GROUP BY source_id HAVING count(*) > 1 LIMIT 1`).Scan(&sid))
	require.NoError(t, db.Close())
	editFile(t, path,
		`CREATE TEMP TABLE c AS SELECT * FROM chunks WHERE source_id='`+sid+`' AND n=0`,
		`DELETE FROM chunks WHERE source_id='`+sid+`' AND n=0`,
		`INSERT INTO chunks SELECT * FROM temp.c`)
	fresh, _, _ := openBuilt(t, corpus, vecs)
	migrated, err := Open(t.Context(), path, m)
	require.NoError(t, err)
	defer migrated.Close()
	q := randVec(r, 8)
	p := CorpusPolicy{AsOf: asOf, Scope: "acme"}
	want, err := fresh.Search(t.Context(), q, p, 20)
	require.NoError(t, err)
	got, err := migrated.Search(t.Context(), q, p, 20)
	require.NoError(t, err)
	assert.Equal(t, want, got)
}

// writeV2Index writes an index exactly as the schema 2 layout did: the
// migrations record of versions 1 and 2, a sources table holding each
// source's metadata, first row and chunk texts (packed as uvarint length
// and bytes), the segments table, meta 'schema' = '2' with the manifest,
// chunker rule, chunk count, vector file generation, row count and file
// ID, and the vector file "<path>-vectors-1" (normalised float32 rows).
func writeV2Index(t *testing.T, path string, corpus []Source, m Manifest, vecs [][]float32) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, sqlitex.Migrate(t.Context(), db, migrationsTable, migrations[:2]))
	_, err = db.Exec(`DROP TABLE chunks_v1`)
	require.NoError(t, err)
	rows := make([]float32, 0, len(vecs)*m.Dims)
	for _, v := range vecs {
		row := append([]float32(nil), v...)
		require.Empty(t, normalise(row))
		rows = append(rows, row...)
	}
	first := 0
	for _, s := range corpus {
		scopes, err := json.Marshal(s.Scopes)
		require.NoError(t, err)
		adm := 0
		if s.Admissible {
			adm = 1
		}
		var texts []string
		for _, c := range Chunks([]Source{s}) {
			texts = append(texts, c.Text)
		}
		_, err = db.Exec(`INSERT INTO sources(id,title,scopes,valid_from,valid_until,admissible,first_row,chunk_texts) VALUES(?,?,?,?,?,?,?,?)`,
			s.ID, s.Title, string(scopes), timeKey(s.ValidFrom), timeKey(s.ValidUntil), adm, first, encodeTexts(texts))
		require.NoError(t, err)
		first += len(texts)
	}
	fileID, err := newFileID()
	require.NoError(t, err)
	f, segs, err := createVectorFile(vectorPath(path, 1), m.Dims, fileID, rows)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	for _, s := range segs {
		_, err := db.Exec(`INSERT INTO segments(first_row,rows,crc32c) VALUES(?,?,?)`, s.first, s.rows, int64(s.crc))
		require.NoError(t, err)
	}
	mj, err := json.Marshal(m)
	require.NoError(t, err)
	for k, v := range map[string]string{"manifest": string(mj), "chunker_max_runes": strconv.Itoa(DefaultMaxChunkRunes), "chunks": strconv.Itoa(first),
		"vector_file": "1", "vector_rows": strconv.Itoa(first), "vector_file_id": fileID} {
		_, err := db.Exec(`INSERT INTO meta(key,value) VALUES(?,?)`, k, v)
		require.NoError(t, err)
	}
}

// An index of the schema 2 layout (sources and chunk texts in SQLite, no
// halves file) migrates on its first writable Open: it then answers like
// an index built from the same corpus, in float32 and half precision, keeps
// doing so across reopening, has a source log and a halves file, and no
// sources table.
func TestMigrateVectorFileLayout(t *testing.T) {
	r := rand.New(rand.NewPCG(85, 86))
	corpus, vecs := randomCorpus(r, 60, 16)
	m := testManifest(16, corpus)
	path := filepath.Join(t.TempDir(), "v2.db")
	writeV2Index(t, path, corpus, m, vecs)

	_, err := Open(t.Context(), path, m, WithReadOnly())
	require.ErrorIs(t, err, ErrReadOnly, "a read-only handle cannot migrate")

	fresh, _, _ := openBuilt(t, corpus, vecs)
	p := CorpusPolicy{AsOf: asOf, Scope: "acme"}
	qs := make([][]float32, 20)
	for i := range qs {
		qs[i] = randVec(r, 16)
	}
	want, err := fresh.SearchBatch(t.Context(), qs, p, 12)
	require.NoError(t, err)
	migrated, err := Open(t.Context(), path, m)
	require.NoError(t, err)
	got, err := migrated.SearchBatch(t.Context(), qs, p, 12)
	require.NoError(t, err)
	assert.Equal(t, want, got, "migrated index answers like a fresh one")
	require.NoError(t, migrated.Close())

	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	var tables int
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE name IN ('sources', 'sources_v2')`).Scan(&tables))
	var schema string
	require.NoError(t, db.QueryRow(`SELECT value FROM meta WHERE key='schema'`).Scan(&schema))
	require.NoError(t, db.Close())
	assert.Zero(t, tables, "the sources table is dropped")
	assert.Equal(t, schemaVersion, schema)
	for _, name := range generationFiles(path, 1) {
		_, err = os.Stat(name)
		require.NoError(t, err, name)
	}
	for _, opts := range [][]Option{nil, {WithReadOnly()}, {WithReadOnly(), WithHalfPrecision()}} {
		re, err := Open(t.Context(), path, m, opts...)
		require.NoError(t, err)
		got, err := re.SearchBatch(t.Context(), qs, p, 12)
		require.NoError(t, err)
		assert.Equal(t, want, got, "after reopening")
		require.NoError(t, re.Close())
	}
}

// A damaged file of the schema 2 layout is refused by the migration, with
// the checks that layout's Open made, and stays as it was: no source log
// or halves file is left behind, and the sources table is kept.
func TestMigrateRefusesDamagedV2File(t *testing.T) {
	cases := map[string]string{
		"edited text":          `UPDATE sources SET chunk_texts = CAST(x'19' || 'Export is under Settings.' AS BLOB) WHERE id = 'ACME-EXPORT'`,
		"bad chunk texts":      `UPDATE sources SET chunk_texts = CAST(x'7f' || 'short' AS BLOB) WHERE id = 'ACME-EXPORT'`,
		"edited admissibility": `UPDATE sources SET admissible = 0 WHERE id = 'ACME-USERS'`,
		"lost chunk":           `UPDATE sources SET chunk_texts = x'' WHERE id = 'ACME-USERS'`,
		"overlapping rows":     `UPDATE sources SET first_row = 0 WHERE id = 'ACME-USERS'`,
		"segment checksum":     `UPDATE segments SET crc32c = (crc32c + 1) % 4294967296`,
	}
	for name, stmt := range cases {
		t.Run(name, func(t *testing.T) {
			corpus, vecs := controlled()
			m := testManifest(2, corpus)
			path := filepath.Join(t.TempDir(), "v2.db")
			writeV2Index(t, path, corpus, m, vecs)
			editFile(t, path, stmt)
			requireCorrupt(t, path, m, name)
			for _, f := range []string{halvesPath(path, 1), sourcesPath(path, 1)} {
				_, err := os.Stat(f)
				assert.ErrorIs(t, err, os.ErrNotExist, "no %s left behind", f)
			}
			db, err := sql.Open("sqlite", path)
			require.NoError(t, err)
			defer db.Close()
			var n int
			require.NoError(t, db.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE name IN ('sources', 'sources_v2')`).Scan(&n))
			assert.Equal(t, 1, n, "the sources table is kept")
		})
	}
}
