package retrieval

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/candorkit/candor/internal/sqlitex"
)

// Option configures Open.
type Option func(*options)

type options struct {
	chunker     Chunker
	logger      *slog.Logger
	workers     int
	portable    bool
	busyTimeout time.Duration
	readOnly    bool
	half        bool
	tp          trace.TracerProvider
	mp          metric.MeterProvider
}

// WithChunker sets the chunking rule Rebuild and Upsert apply (default:
// the zero Chunker). The rule an index was built with is recorded; Upsert
// through a handle with another rule returns ErrManifestMismatch.
func WithChunker(c Chunker) Option { return func(o *options) { o.chunker = c } }

// WithLogger sets where the index logs (opens, writes, a compaction that
// failed). Without it, or with nil, nothing is logged. Logs never contain
// vectors or chunk text.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithWorkers bounds the goroutines one search, and the load at Open, use
// (default: GOMAXPROCS; at least 1).
func WithWorkers(n int) Option { return func(o *options) { o.workers = n } }

// WithPortableKernel makes the index use the pure-Go kernels even when the
// CPU supports the assembly ones. Results are the same (see Index.Search);
// only the speed differs.
func WithPortableKernel() Option { return func(o *options) { o.portable = true } }

// WithBusyTimeout sets how long Open waits for another handle that holds
// the file (default 5s) before failing with ErrLocked.
func WithBusyTimeout(d time.Duration) Option { return func(o *options) { o.busyTimeout = d } }

// WithReadOnly opens an existing index for searching only. Any number of
// read-only handles, in any processes, may hold a file at once; a writer
// excludes them and they exclude a writer (ErrLocked). Rebuild, Upsert and
// Delete return ErrReadOnly.
func WithReadOnly() Option { return func(o *options) { o.readOnly = true } }

// WithHalfPrecision keeps the in-memory matrix in IEEE half precision: half
// the memory, and a scan that reads half the bytes. The matrix is the
// index's stored half-precision copy of its vectors (on Linux, mapped),
// checked at Open against the float32 vector file; results are exactly
// those of a float32 handle: every row the half-precision scores cannot
// rule out is scored again from the float32 row on disk, which is checked
// against its half-precision row (see Index.Search).
func WithHalfPrecision() Option { return func(o *options) { o.half = true } }

// Index is an exact-cosine vector index of chunks, stored in files and
// served from memory.
//
// At Open every vector is checked once and served from one contiguous,
// L2-normalised matrix (on Linux, the vector file or its half-precision
// copy mapped), and every source is checked and kept in memory with what
// the policy needs, but not its chunk texts, which a search reads from the
// source log for its hits only. Rebuild, Upsert and Delete write the files
// and then update the matrix, so memory and files stay in step and Search
// reads no SQLite. A writable handle holds the files exclusively for its
// whole life; read-only handles share them with each other.
//
// An Index is safe for concurrent use. Searches run concurrently with each
// other; a write blocks searches only while the matrix is updated.
type Index struct {
	db       *sql.DB
	path     string // absolute path of the SQLite file
	log      *slog.Logger
	tel      *telemetry
	chunker  Chunker
	kern     kernel
	workers  int
	half     bool
	readOnly bool

	writeMu sync.Mutex // serialises writers (held across the SQLite transaction)

	mu       sync.RWMutex // guards everything below
	closed   bool
	want     Manifest // the manifest the caller opened the handle with
	built    bool
	stored   Manifest // the manifest the file records
	maxRunes int      // chunker.MaxRunes the file records
	mat      *matrix  // every row of the vector file, dead ones included
	vf       *os.File // the current vector file; nil until built
	hf       *os.File // its halves file
	sf       *os.File // its source log
	logEnd   int64    // the source log's recorded length
	gen      int64    // the generation of the three
	fileID   string
	rows     int // rows of the vector file, dead ones included
	dead     int
	srcs     map[string]*entry // by ID; nil until a write needs it (see writable)
	order    []*entry          // the live sources, sorted by start row
}

// entry is one live source as the handle keeps it: what the policy and the
// hits need, and where its record (with its chunk texts) lies in the
// source log.
type entry struct {
	meta   Source   // Text is not kept
	digest [32]byte // of the source, as Chunker's per-source digest
	start  int      // first row; chunk i is row start+i
	n      int      // chunks
	rec    int64    // offset of its record in the source log
	recLen int      // the record's bytes
	texts  []string // chunk texts, only while a write or a migration holds them
}

const migrationsTable = "candor_retrieval_migrations"

// Open opens (creating if needed) the index at path for vectors of the
// model that want names, and loads every vector into memory. The index is
// the SQLite file at path and the files beside it (see the package
// documentation); files of the earlier layouts are migrated.
//
// Open succeeds when the file was built with another manifest: Search,
// Upsert and Delete then return ErrManifestMismatch until Rebuild replaces
// the content with vectors of want's model. want.CorpusDigest is optional;
// when set, it pins the corpus the caller expects (and moves with this
// handle's own writes).
//
// Errors: ErrLocked when another handle holds the file; ErrCorrupt when
// the files fail a check; ErrInvalidCorpus for an unusable want or option.
func Open(ctx context.Context, path string, want Manifest, opts ...Option) (*Index, error) {
	o := options{workers: runtime.GOMAXPROCS(0), busyTimeout: 5 * time.Second}
	for _, opt := range opts {
		opt(&o)
	}
	tel := newTelemetry(o.tp, o.mp)
	return openTraced(ctx, tel, o.readOnly, func(ctx context.Context) (*Index, error) {
		ix, err := open(ctx, path, want, o)
		if ix != nil {
			ix.tel = tel
		}
		return ix, err
	})
}

func open(ctx context.Context, path string, want Manifest, o options) (*Index, error) {
	if err := want.validate(); err != nil {
		return nil, err
	}
	switch {
	case o.workers < 1:
		return nil, errors.New("retrieval: open: WithWorkers must be at least 1")
	case o.busyTimeout < 0:
		return nil, errors.New("retrieval: open: WithBusyTimeout must not be negative")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("retrieval: open %q: %w", path, err)
	}
	exists, err := sqlitex.Exists(abs)
	if err != nil {
		return nil, fmt.Errorf("retrieval: open %q: %w", path, err)
	}
	if o.readOnly && !exists {
		return nil, fmt.Errorf("retrieval: open %q read-only: %w", path, os.ErrNotExist)
	}
	dopts := sqlitex.DSNOptions{ReadOnly: o.readOnly, BusyTimeout: o.busyTimeout, SyncFull: !o.readOnly}
	// In exclusive locking mode a connection keeps every lock it takes: the
	// writer's first (exclusive) transaction locks out everyone else, a
	// reader's first read keeps a shared lock that locks out writers.
	extra := url.Values{"_pragma": {"locking_mode(EXCLUSIVE)"}}
	if !o.readOnly {
		extra.Set("_txlock", "exclusive")
	}
	dsn := sqlitex.DSN(abs, dopts)
	if strings.Contains(dsn, "?") {
		dsn += "&" + extra.Encode()
	} else {
		dsn += "?" + extra.Encode()
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("retrieval: open %q: %w", path, err)
	}
	// One connection, for the handle's life: the locks belong to it.
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxIdleTime(0)
	db.SetConnMaxLifetime(0)
	ix := &Index{db: db, path: abs, log: o.logger, chunker: o.chunker, workers: o.workers, want: want,
		kern: bestKernel(), half: o.half, readOnly: o.readOnly}
	if o.portable {
		ix.kern = portableKernel()
	}
	start := time.Now()
	if err := ix.init(ctx, exists, dopts); err != nil {
		ix.closeFiles()
		return nil, fmt.Errorf("retrieval: open %q: %w", path, classify(err))
	}
	ix.logAttrs(ctx, slog.LevelInfo, "retrieval index opened",
		slog.String("path", abs), slog.Int("chunks", ix.rows-ix.dead),
		slog.Int("sources", len(ix.order)), slog.String("kernel", ix.kern.name),
		slog.Bool("half_precision", ix.half), slog.Bool("read_only", ix.readOnly),
		slog.Duration("load", time.Since(start)))
	return ix, nil
}

// classify gives SQLite's lock and corruption errors their sentinels.
func classify(err error) error {
	var ce *CorruptError
	switch {
	case errors.As(err, &ce):
		return err
	case sqlitex.IsBusy(err):
		return fmt.Errorf("%w: %w", ErrLocked, err)
	case sqlitex.IsCorrupt(err):
		return &CorruptError{What: "SQLite file", Err: err}
	}
	return err
}

func (ix *Index) closeFiles() {
	for _, f := range []**os.File{&ix.vf, &ix.hf, &ix.sf} {
		if *f != nil {
			_ = (*f).Close()
			*f = nil
		}
	}
	_ = ix.db.Close()
}

func (ix *Index) logAttrs(ctx context.Context, level slog.Level, msg string, attrs ...slog.Attr) {
	if ix.log != nil {
		ix.log.LogAttrs(ctx, level, msg, attrs...)
	}
}

// migrations is the schema history of the SQLite file. Version 1 is the
// original one-file layout (vectors as one BLOB per chunk), written so that
// it is a no-op on a file of that layout; version 2 moves the chunks to a
// table without vectors and keeps the old table as chunks_v1 until
// migrateVectors has copied its vectors into a vector file; version 3
// keeps the sources table (with the chunk texts) as sources_v2 until
// migrateSources has written it into a source log and the halves file.
// The Go steps run in that order, after every SQL step.
var migrations = []sqlitex.Migration{
	{Version: 1, Name: "one-file layout", SQL: `
CREATE TABLE IF NOT EXISTS meta (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
) STRICT;
CREATE TABLE IF NOT EXISTS sources (
	id          TEXT PRIMARY KEY,
	title       TEXT NOT NULL,
	scopes      TEXT NOT NULL,
	valid_from  TEXT NOT NULL,
	valid_until TEXT NOT NULL,
	admissible  INTEGER NOT NULL
) STRICT;
CREATE TABLE IF NOT EXISTS chunks (
	source_id TEXT NOT NULL REFERENCES sources(id),
	n         INTEGER NOT NULL,
	text      TEXT NOT NULL,
	vector    BLOB NOT NULL,
	PRIMARY KEY (source_id, n)
) STRICT;
INSERT OR IGNORE INTO meta(key, value) VALUES('schema', '1');
`},
	{Version: 2, Name: "vectors in a vector file, chunk texts with their source", SQL: `
ALTER TABLE chunks RENAME TO chunks_v1;
ALTER TABLE sources ADD COLUMN first_row INTEGER NOT NULL DEFAULT -1;
ALTER TABLE sources ADD COLUMN chunk_texts BLOB NOT NULL DEFAULT x'';
CREATE TABLE segments (
	first_row INTEGER PRIMARY KEY,
	rows      INTEGER NOT NULL,
	crc32c    INTEGER NOT NULL
) STRICT;
UPDATE meta SET value = '2' WHERE key = 'schema';
`},
	{Version: 3, Name: "sources in a source log, a half-precision copy of the vectors", SQL: `
ALTER TABLE sources RENAME TO sources_v2;
UPDATE meta SET value = '3' WHERE key = 'schema';
`},
}

const schemaVersion = "3"

func (ix *Index) init(ctx context.Context, exists bool, dopts sqlitex.DSNOptions) error {
	if err := sqlitex.Verify(ctx, ix.db, dopts); err != nil {
		return err
	}
	if exists {
		if err := sqlitex.QuickCheck(ctx, ix.db); err != nil {
			if sqlitex.IsCorrupt(err) {
				return &CorruptError{What: "SQLite integrity check", Err: err}
			}
			return err
		}
		var tables int
		if err := ix.db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE type='table' AND name='meta'`).Scan(&tables); err != nil {
			return err
		}
		if tables == 0 {
			// An existing file without the index's tables (for example
			// truncated to 0 bytes) is not silently made a new, empty index.
			return &CorruptError{What: "the existing file holds no retrieval index"}
		}
	}
	if ix.readOnly {
		var version string
		if err := ix.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key='schema'`).Scan(&version); err != nil {
			return &CorruptError{What: "schema version", Err: err}
		}
		switch version {
		case schemaVersion:
		case "1", "2":
			return fmt.Errorf("%w: the file has an earlier layout (schema %s); open it once without WithReadOnly to migrate it", ErrReadOnly, version)
		default:
			return &CorruptError{What: "schema version " + strconv.Quote(version) + " is not " + schemaVersion}
		}
	} else {
		if err := sqlitex.Migrate(ctx, ix.db, migrationsTable, migrations); err != nil {
			if errors.Is(err, sqlitex.ErrSchemaTooNew) || errors.Is(err, sqlitex.ErrSchemaAltered) {
				return &CorruptError{What: "schema history", Err: err}
			}
			return err
		}
		moved, err := ix.migrateVectors(ctx)
		if err != nil {
			return err
		}
		rewritten, err := ix.migrateSources(ctx)
		if err != nil {
			return err
		}
		if moved || rewritten {
			// The dropped tables' pages (for a migrated file, most of it)
			// go back to the file system.
			if _, err := ix.db.ExecContext(ctx, `VACUUM`); err != nil {
				return err
			}
		}
	}
	if err := ix.load(ctx); err != nil {
		return err
	}
	if !ix.readOnly {
		// What a crash may have left: the next generation of a Rebuild or
		// compaction that was not recorded, or the previous one that was
		// not yet removed.
		for _, g := range []int64{ix.gen + 1, ix.gen - 1} {
			if g < 1 {
				continue
			}
			for _, name := range generationFiles(ix.path, g) {
				if err := os.Remove(name); err == nil {
					ix.logAttrs(ctx, slog.LevelInfo, "retrieval: removed a stale file", slog.String("file", name))
				}
			}
		}
	}
	return nil
}

// metaValues reads the meta table.
func metaValues(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}) (map[string]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT key, value FROM meta`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	m := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		m[k] = v
	}
	return m, rows.Err()
}

// header is what the meta table records about the content.
type header struct {
	manifest Manifest
	maxRunes int
	chunks   int   // live chunks
	gen      int64 // vector file generation
	rows     int   // rows in the vector file, dead ones included
	fileID   string
	logEnd   int64 // the source log's length (schema 3)
}

func parseHeader(meta map[string]string, vectors bool) (header, error) {
	var h header
	if err := json.Unmarshal([]byte(meta["manifest"]), &h.manifest); err != nil {
		return h, &CorruptError{What: "manifest", Err: err}
	}
	if err := h.manifest.validate(); err != nil {
		return h, &CorruptError{What: "manifest", Err: err}
	}
	var err error
	if h.maxRunes, err = strconv.Atoi(meta["chunker_max_runes"]); err != nil || h.maxRunes <= 0 {
		return h, &CorruptError{What: "chunker_max_runes " + strconv.Quote(meta["chunker_max_runes"])}
	}
	if h.chunks, err = strconv.Atoi(meta["chunks"]); err != nil || h.chunks < 0 || h.chunks > math.MaxInt32 {
		return h, &CorruptError{What: "chunk count " + strconv.Quote(meta["chunks"])}
	}
	if !vectors {
		return h, nil
	}
	if h.gen, err = strconv.ParseInt(meta["vector_file"], 10, 64); err != nil || h.gen < 1 {
		return h, &CorruptError{What: "vector file generation " + strconv.Quote(meta["vector_file"])}
	}
	if h.rows, err = strconv.Atoi(meta["vector_rows"]); err != nil || h.rows < h.chunks || h.rows > math.MaxInt32 {
		return h, &CorruptError{What: "vector row count " + strconv.Quote(meta["vector_rows"])}
	}
	h.fileID = meta["vector_file_id"]
	if v, ok := meta["sources_bytes"]; ok {
		if h.logEnd, err = strconv.ParseInt(v, 10, 64); err != nil || h.logEnd < fileHeaderBytes {
			return h, &CorruptError{What: "source log length " + strconv.Quote(v)}
		}
	}
	return h, nil
}

// generationFiles are the files of generation gen.
func generationFiles(path string, gen int64) []string {
	return []string{vectorPath(path, gen), halvesPath(path, gen), sourcesPath(path, gen)}
}

// readSources reads the sources table of the earlier layouts (sources_v2
// since migration 3); withChunks (schema 2) also reads each source's first
// row and chunk texts, allocating at most maxChunks chunks.
func readSources(ctx context.Context, tx *sql.Tx, withChunks bool, maxChunks int) (map[string]*entry, []*entry, error) {
	q := `SELECT id, title, scopes, valid_from, valid_until, admissible FROM sources_v2 ORDER BY id`
	if withChunks {
		q = `SELECT id, title, scopes, valid_from, valid_until, admissible, first_row, chunk_texts FROM sources_v2 ORDER BY rowid`
	}
	var all []string
	if withChunks {
		all = make([]string, 0, maxChunks)
	}
	rows, err := tx.QueryContext(ctx, q)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	srcs := map[string]*entry{}
	var order []*entry
	for rows.Next() {
		var e entry
		var from, until string
		var scopes sql.RawBytes
		var adm, first int64
		var texts sql.RawBytes
		dest := []any{&e.meta.ID, &e.meta.Title, &scopes, &from, &until, &adm}
		if withChunks {
			dest = append(dest, &first, &texts)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, nil, err
		}
		if e.meta.Scopes, err = parseScopes(scopes); err != nil {
			return nil, nil, &CorruptError{What: "scopes of source " + strconv.Quote(e.meta.ID), Err: err}
		}
		if e.meta.ValidFrom, err = parseTime(from); err != nil {
			return nil, nil, &CorruptError{What: "valid_from of source " + strconv.Quote(e.meta.ID), Err: err}
		}
		if e.meta.ValidUntil, err = parseTime(until); err != nil {
			return nil, nil, &CorruptError{What: "valid_until of source " + strconv.Quote(e.meta.ID), Err: err}
		}
		e.meta.Admissible = adm != 0
		if first < 0 || first > math.MaxInt32 {
			return nil, nil, &CorruptError{What: "first row of source " + strconv.Quote(e.meta.ID)}
		}
		e.start = int(first)
		if withChunks {
			if all, err = decodeChunks(&e, texts, all); err != nil {
				return nil, nil, err
			}
		}
		e.n = len(e.texts)
		srcs[e.meta.ID] = &e
		order = append(order, &e)
	}
	return srcs, order, rows.Err()
}

// parseScopes decodes a JSON array of strings as json.Unmarshal does, without
// its reflection for the usual case: strings of printable ASCII without
// escapes. Anything else goes through json.Unmarshal.
func parseScopes(raw []byte) ([]string, error) {
	if len(raw) < 2 || raw[0] != '[' || raw[len(raw)-1] != ']' {
		return slowScopes(raw)
	}
	out := []string{}
	body := raw[1 : len(raw)-1]
	for i := 0; i < len(body); {
		if len(out) > 0 {
			if body[i] != ',' {
				return slowScopes(raw)
			}
			i++
		}
		if i >= len(body) || body[i] != '"' {
			return slowScopes(raw)
		}
		j := i + 1
		for j < len(body) && body[j] != '"' {
			if c := body[j]; c < 0x20 || c > 0x7e || c == '\\' {
				return slowScopes(raw)
			}
			j++
		}
		if j == len(body) {
			return slowScopes(raw)
		}
		out = append(out, string(body[i+1:j]))
		i = j + 1
	}
	return out, nil
}

func slowScopes(raw []byte) ([]string, error) {
	var out []string
	err := json.Unmarshal(raw, &out)
	return out, err
}

// encodeTexts packs chunk texts: for each, its length as a uvarint and its
// bytes.
func encodeTexts(texts []string) []byte {
	n := 0
	for _, t := range texts {
		n += binary.MaxVarintLen64 + len(t)
	}
	b := make([]byte, 0, n)
	for _, t := range texts {
		b = binary.AppendUvarint(b, uint64(len(t)))
		b = append(b, t...)
	}
	return b
}

// decodeChunks unpacks the chunk texts of e, appended to all (which never
// grows past its capacity), and makes e.texts a slice of them. The texts
// share one string.
func decodeChunks(e *entry, packed []byte, all []string) ([]string, error) {
	s := string(packed)
	first := len(all)
	for i := 0; i < len(s); {
		n, w := binary.Uvarint(packed[i:])
		if w <= 0 || n > uint64(len(s)-i-w) {
			return nil, &CorruptError{What: "chunk texts of source " + strconv.Quote(e.meta.ID)}
		}
		i += w
		if len(all) == cap(all) {
			return nil, &CorruptError{What: "more chunks stored than the index records"}
		}
		all = append(all, s[i:i+int(n)])
		i += int(n)
	}
	e.texts = all[first:len(all):len(all)]
	return all, nil
}

func readSegmentTable(ctx context.Context, tx *sql.Tx, rows int) ([]segment, error) {
	rs, err := tx.QueryContext(ctx, `SELECT first_row, rows, crc32c FROM segments ORDER BY first_row`)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var segs []segment
	next := 0
	for rs.Next() {
		var first, n, crc int64
		if err := rs.Scan(&first, &n, &crc); err != nil {
			return nil, err
		}
		if first != int64(next) || n < 1 || first+n > int64(rows) || crc < 0 || crc > math.MaxUint32 {
			return nil, &CorruptError{What: fmt.Sprintf("vector segment table: segment at row %d of %d rows does not follow row %d", first, n, next)}
		}
		segs = append(segs, segment{first: int(first), rows: int(n), crc: uint32(crc)})
		next = int(first + n)
	}
	if err := rs.Err(); err != nil {
		return nil, err
	}
	if next != rows {
		return nil, &CorruptError{What: fmt.Sprintf("vector segments cover %d rows, the index records %d", next, rows)}
	}
	return segs, nil
}

func (ix *Index) load(ctx context.Context) error {
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	meta, err := metaValues(ctx, tx)
	if err != nil {
		return err
	}
	if meta["schema"] != schemaVersion {
		return &CorruptError{What: "schema version " + strconv.Quote(meta["schema"]) + " is not " + schemaVersion}
	}
	if _, ok := meta["manifest"]; !ok {
		for _, k := range []string{"vector_file", "sources_bytes", "chunks"} {
			if _, ok := meta[k]; ok {
				return &CorruptError{What: "content (" + k + ") without a manifest"}
			}
		}
		ix.srcs = map[string]*entry{}
		return tx.Commit()
	}
	h, err := parseHeader(meta, true)
	if err != nil {
		return err
	}
	if h.logEnd == 0 {
		return &CorruptError{What: "source log length missing"}
	}
	dims := h.manifest.Dims
	segs, err := readSegmentTable(ctx, tx, h.rows)
	if err != nil {
		return err
	}
	flag := os.O_RDWR
	if ix.readOnly {
		flag = os.O_RDONLY
	}
	// Each file is closed by closeFiles on failure.
	if ix.vf, err = os.OpenFile(vectorPath(ix.path, h.gen), flag, 0); err != nil {
		return &CorruptError{What: "vector file", Err: err}
	}
	if ix.hf, err = os.OpenFile(halvesPath(ix.path, h.gen), flag, 0); err != nil {
		return &CorruptError{What: "halves file", Err: err}
	}
	if ix.sf, err = os.OpenFile(sourcesPath(ix.path, h.gen), flag, 0); err != nil {
		return &CorruptError{What: "source log", Err: err}
	}
	if err := checkVectorFile(ix.vf, dims, h.rows, h.fileID); err != nil {
		return err
	}
	if err := checkFile(ix.hf, "halves file", halvesMagic, dims, h.fileID, fileHeaderBytes+int64(h.rows)*int64(2*dims)); err != nil {
		return err
	}
	if err := checkFile(ix.sf, "source log", sourceMagic, dims, h.fileID, h.logEnd); err != nil {
		return err
	}
	// Where the platform allows, the matrix is a mapping: of the vector
	// file in float32, checked in place in one sequential pass; of the
	// halves file in half precision, checked against the vector file's rows
	// read into one reused buffer per worker, so that the float32 rows never
	// count in the process's resident memory.
	var mat *matrix
	if mapsVectors() {
		f, esize := ix.vf, 4
		if ix.half {
			f, esize = ix.hf, 2
		}
		b, err := mapRows(f, dims, h.rows, esize)
		if err != nil {
			return err
		}
		mat = mappedOf(b, dims, h.rows, ix.half)
		defer func() {
			if mat != nil {
				mat.release()
			}
		}()
		if b != nil {
			adviseSequential(b)
		}
	} else {
		mat = newMatrix(dims, h.rows, ix.half)
	}
	// The vectors are checked on the workers while this goroutine reads the
	// source log.
	vecErr := make(chan error, 1)
	go func() { vecErr <- readSegments(ix.vf, segs, mat, dims, ix.kern, ix.workers) }()
	order, byID, err := readLog(ix.sf, h.logEnd, h.rows)
	if err == nil {
		// Still while the vectors are checked.
		err = checkCorpusDigest(order, h.manifest)
	}
	if verr := <-vecErr; verr != nil {
		// A damaged vector file is reported before what it may have caused.
		err = verr
	}
	if err != nil {
		return err
	}
	count := 0
	for _, e := range order {
		count += e.n
	}
	if count != h.chunks {
		return &CorruptError{What: fmt.Sprintf("%d chunks stored, %d recorded", count, h.chunks)}
	}
	// Every source owns consecutive rows of the vector file, and no row
	// belongs to two chunks. The log is in row order but for a compaction's
	// or a hand-edited file's.
	if !slices.IsSortedFunc(order, byStart) {
		slices.SortFunc(order, byStart)
	}
	end := 0
	for _, e := range order {
		if e.start < end {
			return &CorruptError{What: fmt.Sprintf("rows %d-%d of source %q overlap another source or lie past the %d rows", e.start, e.start+e.n-1, e.meta.ID, h.rows)}
		}
		end = e.start + e.n
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	if mat.mapped != nil {
		// The searches that follow read the whole matrix each time, with
		// the kernel's default read-ahead.
		adviseNormal(mat.mapped)
	}
	ix.built, ix.stored, ix.maxRunes = true, h.manifest, h.maxRunes
	ix.mat, ix.srcs, ix.order, ix.rows, ix.dead = mat, byID, order, h.rows, h.rows-count
	ix.gen, ix.fileID, ix.logEnd = h.gen, h.fileID, h.logEnd
	mat = nil
	return nil
}

func byStart(a, b *entry) int { return a.start - b.start }

// sourceOf returns the live source that owns row r, or nil; the caller
// holds mu.
func (ix *Index) sourceOf(r int) *entry {
	i, found := slices.BinarySearchFunc(ix.order, r, func(e *entry, r int) int { return e.start - r })
	if !found {
		i--
	}
	if i < 0 || r >= ix.order[i].start+ix.order[i].n {
		return nil
	}
	return ix.order[i]
}

// checkDigest recomputes each source's digest from its stored parts and
// the corpus digest from them (the check of the earlier layouts).
func checkDigest(order []*entry, m Manifest, workers int) error {
	parts := max(1, min(workers, len(order)/256))
	n := (len(order) + parts - 1) / parts
	var wg sync.WaitGroup
	for p := range parts {
		wg.Go(func() {
			for i := p * n; i < min(len(order), (p+1)*n); i++ {
				e := order[i]
				e.digest = digestRaw(e.meta, e.texts)
			}
		})
	}
	wg.Wait()
	return checkCorpusDigest(order, m)
}

var errNotGrouped = errors.New("chunks not grouped by source")

type loaded struct {
	count int
	mat   []float32 // the normalised vectors, in load order
	order []*entry  // by start row
}

// loadLegacyChunks reads every chunk of the one-file layout (table
// chunks_v1), in rowid order (byRowid) or in (source, n) order, into its
// source's entry, its vector BLOB into the next row of legacy, normalised,
// and sets each source's start row.
func loadLegacyChunks(ctx context.Context, tx *sql.Tx, byRowid bool, srcs map[string]*entry, legacy *legacyMatrix) (*loaded, error) {
	query := `SELECT source_id, n, text, vector FROM chunks_v1 ORDER BY source_id, n`
	if byRowid {
		query = `SELECT source_id, n, text, vector FROM chunks_v1 ORDER BY rowid`
	}
	ld := &loaded{}
	rows, err := tx.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var last *entry
	var sid, blob sql.RawBytes
	var text string
	var n64 int64
	for rows.Next() {
		if err := rows.Scan(&sid, &n64, &text, &blob); err != nil {
			return nil, err
		}
		n := int(n64)
		e := last
		if e == nil || e.meta.ID != string(sid) {
			if e = srcs[string(sid)]; e == nil {
				return nil, &CorruptError{What: "chunk of unknown source " + strconv.Quote(string(sid))}
			}
		}
		if next := (len(e.texts) == 0 && n == 0) || (last == e && n == len(e.texts)); !next {
			if byRowid {
				return nil, errNotGrouped
			}
			return nil, &CorruptError{What: "chunk numbering of source " + strconv.Quote(e.meta.ID)}
		}
		last = e
		if len(e.texts) == 0 {
			e.start = ld.count
			ld.order = append(ld.order, e)
		}
		if err := legacy.add(ChunkID(e.meta.ID, n), blob); err != nil {
			return nil, err
		}
		e.texts = append(e.texts, text)
		ld.count++
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	ld.mat = legacy.mat
	return ld, nil
}

// legacyMatrix collects the vectors of the one-file layout, normalised.
type legacyMatrix struct {
	dims, count int
	mat         []float32
}

func (l *legacyMatrix) add(id string, blob []byte) error {
	if len(blob) != 4*l.dims {
		return &CorruptError{What: fmt.Sprintf("vector of chunk %q has %d bytes, want %d", id, len(blob), 4*l.dims)}
	}
	r := len(l.mat) / l.dims
	if r == l.count {
		return &CorruptError{What: fmt.Sprintf("more chunks stored than the %d recorded", l.count)}
	}
	l.mat = append(l.mat, make([]float32, l.dims)...)
	row := l.mat[r*l.dims:]
	decodeVector(row, blob)
	if reason := normalise(row); reason != "" {
		return &CorruptError{What: fmt.Sprintf("vector of chunk %q: %s", id, reason)}
	}
	return nil
}

// beginMigration begins the transaction of the migration step whose
// leftover is table, with the meta values read in it; ok is false (and
// nothing is begun) when there is no such table, the step being done.
func (ix *Index) beginMigration(ctx context.Context, table string) (tx *sql.Tx, meta map[string]string, ok bool, err error) {
	var n int
	if err := ix.db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE type='table' AND name=?`, table).Scan(&n); err != nil {
		return nil, nil, false, err
	}
	if n == 0 {
		return nil, nil, false, nil
	}
	if tx, err = ix.db.BeginTx(ctx, nil); err != nil {
		return nil, nil, false, err
	}
	if meta, err = metaValues(ctx, tx); err != nil {
		_ = tx.Rollback()
		return nil, nil, false, err
	}
	return tx, meta, true, nil
}

// migrateVectors moves the vectors of a file migrated from the one-file
// layout (still in chunks_v1) into a vector file, after checking them as
// that layout was checked, and drops chunks_v1, in one transaction. Until
// that commits, the file keeps its vectors in chunks_v1 and the next Open
// starts the move again.
func (ix *Index) migrateVectors(ctx context.Context) (bool, error) {
	tx, meta, ok, err := ix.beginMigration(ctx, "chunks_v1")
	if !ok || err != nil {
		return false, err
	}
	defer func() { _ = tx.Rollback() }()
	var created *os.File
	var name string
	if _, built := meta["manifest"]; built {
		h, err := parseHeader(meta, false)
		if err != nil {
			return false, err
		}
		srcs, order, err := readSources(ctx, tx, false, 0)
		if err != nil {
			return false, err
		}
		// The recorded count sizes nothing here, but a file that cannot hold
		// it is corrupt all the same.
		lm := &legacyMatrix{dims: h.manifest.Dims, count: h.chunks}
		// The matrix grows as the file is read, so a corrupt count
		// allocates nothing.
		ld, err := loadLegacyChunks(ctx, tx, true, srcs, lm)
		if errors.Is(err, errNotGrouped) {
			for _, e := range order {
				e.texts = nil
			}
			lm.mat = lm.mat[:0]
			ld, err = loadLegacyChunks(ctx, tx, false, srcs, lm)
		}
		if err != nil {
			return false, err
		}
		if ld.count != h.chunks {
			return false, &CorruptError{What: fmt.Sprintf("%d chunks stored, %d recorded", ld.count, h.chunks)}
		}
		for _, e := range order {
			if len(e.texts) == 0 {
				return false, &CorruptError{What: "source " + strconv.Quote(e.meta.ID) + " has no chunk"}
			}
		}
		if err := checkDigest(order, h.manifest, ix.workers); err != nil {
			return false, err
		}
		fileID, err := newFileID()
		if err != nil {
			return false, err
		}
		name = vectorPath(ix.path, 1)
		f, segs, err := createVectorFile(name, h.manifest.Dims, fileID, ld.mat)
		if err != nil {
			return false, fmt.Errorf("retrieval: migrate: write vector file: %w", err)
		}
		created = f
		defer func() {
			if created != nil {
				_ = created.Close()
				_ = os.Remove(name)
			}
		}()
		for _, e := range ld.order {
			if _, err := tx.ExecContext(ctx, `UPDATE sources_v2 SET first_row=?, chunk_texts=? WHERE id=?`, e.start, encodeTexts(e.texts), e.meta.ID); err != nil {
				return false, err
			}
		}
		if err := insertSegments(ctx, tx, segs); err != nil {
			return false, err
		}
		if err := writeVectorMeta(ctx, tx, 1, len(ld.mat)/h.manifest.Dims, fileID, 0); err != nil {
			return false, err
		}
	}
	if _, err := tx.ExecContext(ctx, `DROP TABLE chunks_v1`); err != nil {
		return false, err
	}
	if err := tx.Commit(); err != nil {
		return false, err
	}
	if created != nil {
		_ = created.Close()
		created = nil
	}
	ix.logAttrs(ctx, slog.LevelInfo, "retrieval index migrated to the vector file layout", slog.String("path", ix.path))
	return true, nil
}

// migrateSources writes the sources of a schema 2 file (still in
// sources_v2, with their chunk texts) into the source log of the current
// generation and the vectors' half-precision copy into its halves file,
// after checking the content as that layout's Open did (chunk texts,
// counts, row ranges, every segment's CRC-32C and every row's length, the
// corpus digest recomputed from the texts), and drops sources_v2, in one
// transaction. Until that commits, the next Open writes both files again.
func (ix *Index) migrateSources(ctx context.Context) (bool, error) {
	tx, meta, ok, err := ix.beginMigration(ctx, "sources_v2")
	if !ok || err != nil {
		return false, err
	}
	defer func() { _ = tx.Rollback() }()
	var written []string
	defer func() {
		for _, name := range written {
			_ = os.Remove(name)
		}
	}()
	if _, built := meta["manifest"]; built {
		h, err := parseHeader(meta, true)
		if err != nil {
			return false, err
		}
		dims := h.manifest.Dims
		_, order, err := readSources(ctx, tx, true, h.chunks)
		if err != nil {
			return false, err
		}
		count := 0
		for _, e := range order {
			count += e.n
		}
		if count != h.chunks {
			return false, &CorruptError{What: fmt.Sprintf("%d chunks stored, %d recorded", count, h.chunks)}
		}
		if !slices.IsSortedFunc(order, byStart) {
			slices.SortFunc(order, byStart)
		}
		end := 0
		for _, e := range order {
			if e.n == 0 {
				return false, &CorruptError{What: "source " + strconv.Quote(e.meta.ID) + " has no chunk"}
			}
			if e.start < end || e.start+e.n > h.rows {
				return false, &CorruptError{What: fmt.Sprintf("rows %d-%d of source %q overlap another source or lie past the %d rows", e.start, e.start+e.n-1, e.meta.ID, h.rows)}
			}
			end = e.start + e.n
		}
		if err := checkDigest(order, h.manifest, ix.workers); err != nil {
			return false, err
		}
		segs, err := readSegmentTable(ctx, tx, h.rows)
		if err != nil {
			return false, err
		}
		vf, err := os.Open(vectorPath(ix.path, h.gen))
		if err != nil {
			return false, &CorruptError{What: "vector file", Err: err}
		}
		defer vf.Close()
		if err := checkVectorFile(vf, dims, h.rows, h.fileID); err != nil {
			return false, err
		}
		hname := halvesPath(ix.path, h.gen)
		hf, err := createFile(hname, halvesMagic, dims, h.fileID)
		if err != nil {
			return false, fmt.Errorf("retrieval: migrate: write halves file: %w", err)
		}
		written = append(written, hname)
		defer hf.Close()
		c := newSegmentChecker(vf, dims, ix.kern)
		for _, sg := range segs {
			err := c.checkThen(sg, nil, func(r int, rows []float32) error {
				if err := writeHalfRows(hf, rows, dims, sg.first+r, ix.kern); err != nil {
					return fmt.Errorf("retrieval: migrate: write halves file: %w", err)
				}
				return nil
			})
			if err != nil {
				return false, err
			}
		}
		if err := hf.Sync(); err != nil {
			return false, err
		}
		sname := sourcesPath(ix.path, h.gen)
		sf, err := createFile(sname, sourceMagic, dims, h.fileID)
		if err != nil {
			return false, fmt.Errorf("retrieval: migrate: write source log: %w", err)
		}
		written = append(written, sname)
		defer sf.Close()
		logEnd, err := appendRecords(sf, fileHeaderBytes, nil, order, func(e *entry) int { return e.start })
		if err == nil {
			err = sf.Sync()
		}
		if err == nil {
			err = syncDir(filepath.Dir(sname))
		}
		if err != nil {
			return false, fmt.Errorf("retrieval: migrate: write source log: %w", err)
		}
		if err := setMeta(ctx, tx, map[string]string{"sources_bytes": strconv.FormatInt(logEnd, 10)}); err != nil {
			return false, err
		}
	}
	if _, err := tx.ExecContext(ctx, `DROP TABLE sources_v2`); err != nil {
		return false, err
	}
	if err := tx.Commit(); err != nil {
		return false, err
	}
	written = nil
	ix.logAttrs(ctx, slog.LevelInfo, "retrieval index migrated to the source log layout", slog.String("path", ix.path))
	return true, nil
}

// decodeVector decodes len(dst) little-endian float32 values from src, which
// holds exactly 4*len(dst) bytes. On a little-endian CPU the stored bytes
// already are the in-memory float32 values, and a plain copy decodes them.
func decodeVector(dst []float32, src []byte) {
	src = src[:4*len(dst)]
	if littleEndian {
		copy(floatBytes(dst), src)
		return
	}
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i : 4*i+4]))
	}
}

func encodeVector(dst []byte, v []float32) []byte {
	for _, x := range v {
		dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(x))
	}
	return dst
}

func parseTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	return time.Parse(time.RFC3339Nano, s)
}

// normalise scales v to unit length in place, or says why it cannot. The
// sum of squares is taken in float64, where the square of a float32 is
// exact and a sum of up to maxDims of them can neither overflow nor lose a
// vector's scale; so the sum is non-finite exactly when a component is, and
// one test after the loop replaces a test per component.
func normalise(v []float32) string {
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(v); i += 4 {
		x := v[i : i+4 : i+4]
		a, b, c, d := float64(x[0]), float64(x[1]), float64(x[2]), float64(x[3])
		s0 += a * a
		s1 += b * b
		s2 += c * c
		s3 += d * d
	}
	for ; i < len(v); i++ {
		a := float64(v[i])
		s0 += a * a
	}
	ss := (s0 + s1) + (s2 + s3)
	switch {
	case math.IsNaN(ss) || math.IsInf(ss, 0):
		return "non-finite component"
	case ss == 0:
		return "zero vector"
	}
	inv := 1 / math.Sqrt(ss)
	for i, x := range v {
		v[i] = float32(float64(x) * inv)
	}
	return ""
}

// Close releases the files and the matrix (unmapping it once no search
// reads it: a search racing Close either finishes or returns ErrClosed).
// It is safe to call more than once.
func (ix *Index) Close() error {
	ix.writeMu.Lock()
	defer ix.writeMu.Unlock()
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.closed {
		return nil
	}
	ix.closed = true
	ix.mat.release()
	ix.mat, ix.srcs, ix.order = nil, nil, nil
	var errs []error
	for _, f := range []**os.File{&ix.vf, &ix.hf, &ix.sf} {
		if *f != nil {
			errs = append(errs, (*f).Close())
			*f = nil
		}
	}
	return errors.Join(append(errs, ix.db.Close())...)
}

// Manifest returns the manifest the file records and whether the index has
// been built.
func (ix *Index) Manifest() (Manifest, bool) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.stored, ix.built
}

// Kernel names the kernels in use: "avx2+fma+f16c" or "go".
func (ix *Index) Kernel() string { return ix.kern.name }

// Len returns the number of chunks (vectors) in the index.
func (ix *Index) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.rows - ix.dead
}

// MatrixBytes returns the size of the in-memory matrix: 4 bytes per
// dimension and row, 2 with WithHalfPrecision. Rows of deleted chunks are
// counted until the next compaction.
func (ix *Index) MatrixBytes() int64 {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.mat == nil {
		return 0
	}
	return ix.mat.bytes()
}

// usable reports why the handle may not serve a search or an update; the
// caller holds mu.
func (ix *Index) usable() error {
	switch {
	case ix.closed:
		return ErrClosed
	case !ix.built:
		return ErrNotBuilt
	}
	return mismatch(ix.want, ix.stored, true)
}
