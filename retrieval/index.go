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
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"time"
	"unsafe"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// Option configures Open.
type Option func(*options)

type options struct {
	chunker     Chunker
	logger      *slog.Logger
	workers     int
	portable    bool
	busyTimeout time.Duration
}

// WithChunker sets the chunking rule Rebuild and Upsert apply (default:
// the zero Chunker). The rule an index was built with is recorded; Upsert
// through a handle with another rule returns ErrManifestMismatch.
func WithChunker(c Chunker) Option { return func(o *options) { o.chunker = c } }

// WithLogger sets the logger (default: discard). Logs never contain
// vectors or chunk text.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithWorkers bounds the goroutines one search uses on large matrices
// (default: GOMAXPROCS). 1 disables parallel search, and makes Open
// normalise the vectors it loads on the goroutine that reads them rather
// than on a second one.
func WithWorkers(n int) Option { return func(o *options) { o.workers = n } }

// WithPortableKernel makes the index use the pure-Go dot product even when
// the CPU supports the assembly kernel. Scores may then differ from the
// assembly kernel's in the last bits (see Kernel).
func WithPortableKernel() Option { return func(o *options) { o.portable = true } }

// WithBusyTimeout sets how long Open waits for another process that holds
// the file (default 5s) before failing.
func WithBusyTimeout(d time.Duration) Option { return func(o *options) { o.busyTimeout = d } }

// Index is an exact-cosine vector index of chunks, stored in one SQLite file
// and served from memory.
//
// At Open every vector is loaded once into one contiguous, L2-normalised
// float32 matrix; Rebuild, Upsert and Delete write SQLite in one transaction
// and then update the matrix, so memory and file stay in step and Search
// never reads SQLite. The handle takes an exclusive lock on the file for its
// whole life, so no other process can change the file under it.
//
// An Index is safe for concurrent use. Searches run concurrently with each
// other; a write blocks searches only while the matrix is updated.
type Index struct {
	db      *sql.DB
	log     *slog.Logger
	chunker Chunker
	kern    kernel
	workers int

	writeMu sync.Mutex // serialises writers (held across the SQLite transaction)

	mu       sync.RWMutex // guards everything below
	closed   bool
	want     Manifest // the manifest the caller opened the handle with
	built    bool
	stored   Manifest // the manifest the file records
	maxRunes int      // chunker.MaxRunes the file records
	mat      []float32
	owner    []*entry // per row; nil for a dead row
	dead     int
	srcs     map[string]*entry
	order    []*entry // sorted by start row
}

type entry struct {
	meta   Source // Text is not kept
	digest string
	chunks []Chunk
	start  int
}

// Open opens (creating if needed) the index file at path for vectors of the
// model that want names, and loads every vector into memory.
//
// Open succeeds when the file was built with another manifest: Search,
// Upsert and Delete then return ErrManifestMismatch until Rebuild replaces
// the content with vectors of want's model. want.CorpusDigest is optional;
// when set, it pins the corpus the caller expects (and moves with this
// handle's own writes).
func Open(ctx context.Context, path string, want Manifest, opts ...Option) (*Index, error) {
	if err := want.validate(); err != nil {
		return nil, err
	}
	o := options{logger: slog.New(slog.DiscardHandler), workers: runtime.GOMAXPROCS(0), busyTimeout: 5 * time.Second}
	for _, opt := range opts {
		opt(&o)
	}
	if o.workers < 1 {
		o.workers = 1
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("retrieval: open %q: %w", path, err)
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout("+strconv.FormatInt(o.busyTimeout.Milliseconds(), 10)+")")
	q.Add("_pragma", "locking_mode(EXCLUSIVE)")
	q.Add("_pragma", "synchronous(FULL)")
	q.Add("_txlock", "exclusive")
	dsn := (&url.URL{Scheme: "file", Path: abs}).String() + "?" + q.Encode()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("retrieval: open %q: %w", path, err)
	}
	// One connection: SQLite serialises writers anyway, and the exclusive
	// lock belongs to that connection.
	db.SetMaxOpenConns(1)
	db.SetConnMaxIdleTime(0)
	db.SetConnMaxLifetime(0)
	ix := &Index{db: db, log: o.logger, chunker: o.chunker, workers: o.workers, want: want, kern: bestKernel()}
	if o.portable {
		ix.kern = portableKernel()
	}
	start := time.Now()
	if err := ix.init(ctx); err != nil {
		_ = db.Close() // the init error is the one to report
		return nil, fmt.Errorf("retrieval: open %q: %w", path, err)
	}
	ix.log.LogAttrs(ctx, slog.LevelInfo, "retrieval index opened",
		slog.String("path", abs), slog.Int("chunks", len(ix.owner)-ix.dead),
		slog.Int("sources", len(ix.srcs)), slog.String("kernel", ix.kern.name),
		slog.Duration("load", time.Since(start)))
	return ix, nil
}

const schema = `
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
`

const schemaVersion = "1"

// loadMmapSize is the mmap_size in force while Open reads the file: SQLite
// then reads pages in place instead of copying each one into its page
// cache with a system call (a quarter less CPU time for a whole load of
// 100,000 vectors of 768 dimensions, as measured). It is set back to 0 once
// the matrix is loaded, so that afterwards an I/O error on the file is an
// error returned by a write, not a signal. SQLite clamps the value to its
// compile-time maximum (2 GiB by default) and reads the rest of a larger
// file as usual.
const loadMmapSize = 1 << 40

func (ix *Index) init(ctx context.Context) error {
	// The pool holds one connection (see Open), so these pragmas apply to
	// the connection the transaction below uses.
	if _, err := ix.db.ExecContext(ctx, "PRAGMA mmap_size="+strconv.Itoa(loadMmapSize)); err != nil {
		return err
	}
	if err := ix.initTx(ctx); err != nil {
		return err
	}
	_, err := ix.db.ExecContext(ctx, "PRAGMA mmap_size=0")
	return err
}

func (ix *Index) initTx(ctx context.Context) error {
	// Take the exclusive lock now (it is kept: locking_mode is EXCLUSIVE).
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }() // no-op after Commit
	if _, err := tx.ExecContext(ctx, schema); err != nil {
		return err
	}
	var version string
	switch err := tx.QueryRowContext(ctx, `SELECT value FROM meta WHERE key='schema'`).Scan(&version); {
	case errors.Is(err, sql.ErrNoRows):
		if _, err := tx.ExecContext(ctx, `INSERT INTO meta(key,value) VALUES('schema',?)`, schemaVersion); err != nil {
			return err
		}
	case err != nil:
		return err
	case version != schemaVersion:
		return &CorruptError{What: "schema version " + strconv.Quote(version) + " is not " + schemaVersion}
	}
	if err := ix.load(ctx, tx); err != nil {
		return err
	}
	return tx.Commit()
}

func (ix *Index) load(ctx context.Context, tx *sql.Tx) error {
	var mj, mr string
	err := tx.QueryRowContext(ctx, `SELECT value FROM meta WHERE key='manifest'`).Scan(&mj)
	if errors.Is(err, sql.ErrNoRows) {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sources`).Scan(&n); err != nil {
			return err
		}
		if n != 0 {
			return &CorruptError{What: "sources without a manifest"}
		}
		ix.srcs = map[string]*entry{}
		return nil
	}
	if err != nil {
		return err
	}
	var m Manifest
	if err := json.Unmarshal([]byte(mj), &m); err != nil {
		return &CorruptError{What: "manifest", Err: err}
	}
	if err := m.validate(); err != nil {
		return &CorruptError{What: "manifest", Err: err}
	}
	if err := tx.QueryRowContext(ctx, `SELECT value FROM meta WHERE key='chunker_max_runes'`).Scan(&mr); err != nil {
		return &CorruptError{What: "chunker_max_runes", Err: err}
	}
	maxRunes, err := strconv.Atoi(mr)
	if err != nil || maxRunes <= 0 {
		return &CorruptError{What: "chunker_max_runes " + strconv.Quote(mr)}
	}

	srcs := map[string]*entry{}
	var order []*entry
	rows, err := tx.QueryContext(ctx, `SELECT id, title, scopes, valid_from, valid_until, admissible FROM sources ORDER BY id`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var e entry
		var scopes, from, until string
		var adm int64
		if err := rows.Scan(&e.meta.ID, &e.meta.Title, &scopes, &from, &until, &adm); err != nil {
			_ = rows.Close()
			return err
		}
		if err := json.Unmarshal([]byte(scopes), &e.meta.Scopes); err != nil {
			_ = rows.Close()
			return &CorruptError{What: "scopes of source " + strconv.Quote(e.meta.ID), Err: err}
		}
		if e.meta.ValidFrom, err = parseTime(from); err != nil {
			_ = rows.Close()
			return &CorruptError{What: "valid_from of source " + strconv.Quote(e.meta.ID), Err: err}
		}
		if e.meta.ValidUntil, err = parseTime(until); err != nil {
			_ = rows.Close()
			return &CorruptError{What: "valid_until of source " + strconv.Quote(e.meta.ID), Err: err}
		}
		e.meta.Admissible = adm != 0
		srcs[e.meta.ID] = &e
		order = append(order, &e)
	}
	if err := rows.Err(); err != nil {
		return err
	}

	var countText string
	if err := tx.QueryRowContext(ctx, `SELECT value FROM meta WHERE key='chunks'`).Scan(&countText); err != nil {
		return &CorruptError{What: "chunk count", Err: err}
	}
	count, err := strconv.Atoi(countText)
	if err != nil || count < 0 || count > math.MaxInt32 {
		return &CorruptError{What: "chunk count " + strconv.Quote(countText)}
	}
	// The matrix is sized by the recorded count, so first make sure the
	// file can hold that many vectors at all.
	var pages, pageSize int64
	if err := tx.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&pages); err != nil {
		return err
	}
	if err := tx.QueryRowContext(ctx, `PRAGMA page_size`).Scan(&pageSize); err != nil {
		return err
	}
	if int64(count)*4*int64(m.Dims) > pages*pageSize {
		return &CorruptError{What: fmt.Sprintf("chunk count %d recorded, more vectors of %d dimensions than the %d-byte file holds", count, m.Dims, pages*pageSize)}
	}
	// Rowid order is the order chunks were written in, and every write
	// inserts a source's chunks together, so it is a plain table scan that
	// already groups chunks by source. Should a file not be laid out so, the
	// indexed order is used instead.
	async := ix.workers > 1
	ld, err := loadChunks(ctx, tx, true, async, srcs, m.Dims, count)
	if errors.Is(err, errNotGrouped) {
		for _, e := range order {
			e.chunks = nil
		}
		ld, err = loadChunks(ctx, tx, false, async, srcs, m.Dims, count)
	}
	if err != nil {
		return err
	}
	if len(ld.owner) != count {
		return &CorruptError{What: fmt.Sprintf("%d chunks stored, %d recorded", len(ld.owner), count)}
	}
	mat, owner := ld.mat, ld.owner
	per := make([][2]string, 0, len(order))
	for _, e := range order {
		if len(e.chunks) == 0 {
			return &CorruptError{What: "source " + strconv.Quote(e.meta.ID) + " has no chunk"}
		}
		e.digest = digestParts(e.meta, e.chunks)
		per = append(per, [2]string{e.meta.ID, e.digest})
	}
	if d := combineDigests(per); d != m.CorpusDigest {
		return &CorruptError{What: fmt.Sprintf("corpus digest of stored content is %s, manifest records %s", d, m.CorpusDigest)}
	}
	ix.built, ix.stored, ix.maxRunes = true, m, maxRunes
	ix.mat, ix.owner, ix.srcs, ix.order, ix.dead = mat, owner, srcs, ld.order, 0
	return nil
}

var errNotGrouped = errors.New("chunks not grouped by source")

type loaded struct {
	mat   []float32
	owner []*entry
	order []*entry // by start row
}

// loadChunks reads every chunk into a new matrix, in rowid order (byRowid)
// or in (source, n) order. Vectors are normalised by a normaliser that, when
// async, runs on another goroutine a block of rows behind the scan, so that
// the two overlap.
func loadChunks(ctx context.Context, tx *sql.Tx, byRowid, async bool, srcs map[string]*entry, dims, count int) (_ *loaded, err error) {
	query := `SELECT source_id, n, text, vector FROM chunks ORDER BY source_id, n`
	if byRowid {
		query = `SELECT source_id, n, text, vector FROM chunks ORDER BY rowid`
	}
	ld := &loaded{mat: make([]float32, count*dims), owner: make([]*entry, 0, count)}
	rows, err := tx.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	norm := startNormaliser(ld.mat, dims, async)
	defer func() {
		// The normaliser is always stopped. What it found counts only when
		// the scan itself succeeded, so which error Open reports does not
		// depend on timing.
		end := len(ld.owner)
		if err != nil {
			end = 0 // hand over nothing more
		}
		if bad, reason := norm.finish(end); err == nil && bad >= 0 {
			e := ld.owner[bad]
			err = &CorruptError{What: fmt.Sprintf("vector of chunk %q: %s", e.chunks[bad-e.start].ID, reason)}
		}
	}()
	block := max(1, normaliseBlockBytes/(4*dims))
	var last *entry
	// sid and blob are scanned as sql.RawBytes: the source ID is only
	// looked up (the entry's own ID string is shared by its chunks), and
	// the vector is decoded straight into the matrix.
	var sid, blob sql.RawBytes
	var text string
	var n64 int64 // int64, not int: database/sql then assigns it without formatting and parsing
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
		if next := (len(e.chunks) == 0 && n == 0) || (last == e && n == len(e.chunks)); !next {
			if byRowid {
				return nil, errNotGrouped
			}
			return nil, &CorruptError{What: "chunk numbering of source " + strconv.Quote(e.meta.ID)}
		}
		if len(e.chunks) == 0 {
			e.start = len(ld.owner)
			ld.order = append(ld.order, e)
		}
		last = e
		id := ChunkID(e.meta.ID, n)
		if len(blob) != 4*dims {
			return nil, &CorruptError{What: fmt.Sprintf("vector of chunk %q has %d bytes, want %d", id, len(blob), 4*dims)}
		}
		r := len(ld.owner)
		if r == count {
			return nil, &CorruptError{What: fmt.Sprintf("more chunks stored than the %d recorded", count)}
		}
		decodeVector(ld.mat[r*dims:(r+1)*dims], blob)
		e.chunks = append(e.chunks, Chunk{ID: id, Source: e.meta.ID, N: n, Text: text})
		ld.owner = append(ld.owner, e)
		if (r+1)%block == 0 {
			norm.upTo(r + 1)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	ld.mat = ld.mat[:len(ld.owner)*dims]
	return ld, nil // unless the deferred normaliser check fails
}

// normaliseBlockBytes is how much of the matrix the scan fills before it
// hands the rows to the normaliser: small enough to still be in cache.
const normaliseBlockBytes = 256 << 10

// normaliser normalises the rows of a matrix that a scan has filled, in
// order, and remembers the first row that cannot be normalised.
type normaliser struct {
	mat    []float32
	dims   int
	done   int      // rows handed over so far (owned by the scan)
	ends   chan int // async: the end of each block handed over
	over   chan struct{}
	bad    int // first row that failed, or -1; read after finish
	reason string
}

func startNormaliser(mat []float32, dims int, async bool) *normaliser {
	n := &normaliser{mat: mat, dims: dims, bad: -1}
	if async {
		n.ends, n.over = make(chan int, 64), make(chan struct{})
		go func() {
			defer close(n.over)
			start := 0
			for end := range n.ends {
				n.rows(start, end)
				start = end
			}
		}()
	}
	return n
}

// rows normalises rows [start, end) until one fails.
func (n *normaliser) rows(start, end int) {
	for r := start; r < end && n.bad < 0; r++ {
		if reason := normalise(n.mat[r*n.dims : (r+1)*n.dims]); reason != "" {
			n.bad, n.reason = r, reason
		}
	}
}

// upTo hands over rows [done, end); the scan does not touch them again.
func (n *normaliser) upTo(end int) {
	if n.ends != nil {
		n.ends <- end
	} else {
		n.rows(n.done, end)
	}
	n.done = end
}

// finish hands over the rows up to end, waits for the normaliser and
// returns the first row that failed (or -1) and why.
func (n *normaliser) finish(end int) (int, string) {
	if end > n.done {
		n.upTo(end)
	}
	if n.ends != nil {
		close(n.ends)
		<-n.over
	}
	return n.bad, n.reason
}

// decodeVector decodes len(dst) little-endian float32 values from src, which
// holds exactly 4*len(dst) bytes. On a little-endian CPU the stored bytes
// already are the in-memory float32 values, and a plain copy decodes them.
func decodeVector(dst []float32, src []byte) {
	src = src[:4*len(dst)]
	if binary.NativeEndian.Uint16([]byte{1, 0}) == 1 {
		copy(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(dst))), 4*len(dst)), src)
		return
	}
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i : 4*i+4]))
	}
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

// Close releases the file and the matrix. It is safe to call more than once.
func (ix *Index) Close() error {
	ix.writeMu.Lock()
	defer ix.writeMu.Unlock()
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.closed {
		return nil
	}
	ix.closed = true
	ix.mat, ix.owner, ix.srcs, ix.order = nil, nil, nil, nil
	return ix.db.Close()
}

// Manifest returns the manifest the file records and whether the index has
// been built.
func (ix *Index) Manifest() (Manifest, bool) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.stored, ix.built
}

// Kernel names the dot-product kernel in use: "avx2+fma" or "go".
func (ix *Index) Kernel() string { return ix.kern.name }

// Len returns the number of chunks (vectors) in the index.
func (ix *Index) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return len(ix.owner) - ix.dead
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

// prepared is a validated batch of sources with their chunks and
// normalised vectors, ready for SQLite and the matrix.
type prepared struct {
	entries []*entry
	raw     [][]float32 // as given, stored in SQLite
	rows    []float32   // normalised, consecutive
}

func (ix *Index) prepare(sources []Source, vectors [][]float32, dims int) (*prepared, error) {
	seen := make(map[string]bool, len(sources))
	p := &prepared{}
	vi := 0
	for _, s := range sources {
		if err := validateSource(s, ix.chunker); err != nil {
			return nil, err
		}
		if seen[s.ID] {
			return nil, &CorpusError{SourceID: s.ID, Reason: "duplicate source ID"}
		}
		seen[s.ID] = true
		meta := s
		meta.Text = ""
		meta.Scopes = slices.Clone(s.Scopes)
		chunks := ix.chunker.Chunk(s)
		p.entries = append(p.entries, &entry{meta: meta, chunks: chunks, digest: ix.chunker.sourceDigest(s)})
		vi += len(chunks)
	}
	if vi != len(vectors) {
		return nil, &CorpusError{Reason: fmt.Sprintf("%d vectors for %d chunks", len(vectors), vi)}
	}
	p.rows = make([]float32, len(vectors)*dims)
	vi = 0
	for _, e := range p.entries {
		for _, c := range e.chunks {
			v := vectors[vi]
			if len(v) != dims {
				return nil, &MismatchError{Field: "Dims", Want: strconv.Itoa(dims), Got: strconv.Itoa(len(v)), ChunkID: c.ID}
			}
			row := p.rows[vi*dims : (vi+1)*dims]
			copy(row, v)
			if reason := normalise(row); reason != "" {
				return nil, &CorpusError{SourceID: c.Source, ChunkID: c.ID, Reason: "vector: " + reason}
			}
			vi++
		}
	}
	p.raw = vectors
	return p, nil
}

func insertSources(ctx context.Context, tx *sql.Tx, p *prepared) error {
	srcStmt, err := tx.PrepareContext(ctx, `INSERT INTO sources(id,title,scopes,valid_from,valid_until,admissible) VALUES(?,?,?,?,?,?)`)
	if err != nil {
		return err
	}
	defer srcStmt.Close()
	chStmt, err := tx.PrepareContext(ctx, `INSERT INTO chunks(source_id,n,text,vector) VALUES(?,?,?,?)`)
	if err != nil {
		return err
	}
	defer chStmt.Close()
	vi := 0
	var blob []byte
	for _, e := range p.entries {
		scopes, err := json.Marshal(e.meta.Scopes)
		if err != nil {
			return err
		}
		if scopes == nil || string(scopes) == "null" {
			scopes = []byte("[]")
		}
		adm := 0
		if e.meta.Admissible {
			adm = 1
		}
		if _, err := srcStmt.ExecContext(ctx, e.meta.ID, e.meta.Title, string(scopes), timeKey(e.meta.ValidFrom), timeKey(e.meta.ValidUntil), adm); err != nil {
			return err
		}
		for _, c := range e.chunks {
			blob = encodeVector(blob[:0], p.raw[vi])
			if _, err := chStmt.ExecContext(ctx, c.Source, c.N, c.Text, blob); err != nil {
				return err
			}
			vi++
		}
	}
	return nil
}

func encodeVector(dst []byte, v []float32) []byte {
	for _, x := range v {
		dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(x))
	}
	return dst
}

func writeMeta(ctx context.Context, tx *sql.Tx, m Manifest, maxRunes, chunks int) error {
	mj, err := json.Marshal(m)
	if err != nil {
		return err
	}
	for k, v := range map[string]string{"manifest": string(mj), "chunker_max_runes": strconv.Itoa(maxRunes), "chunks": strconv.Itoa(chunks)} {
		if _, err := tx.ExecContext(ctx, `INSERT INTO meta(key,value) VALUES(?,?) ON CONFLICT(key) DO UPDATE SET value=excluded.value`, k, v); err != nil {
			return err
		}
	}
	return nil
}

// Rebuild replaces the whole content of the index with corpus and its
// vectors, in one SQLite transaction.
//
// vectors holds one vector per chunk, in the order Chunker.ChunkCorpus
// returns them for this index's chunker. m must name the same model as the
// manifest the handle was opened with, and m.CorpusDigest must equal the
// chunker's Digest of corpus; otherwise ErrManifestMismatch. A vector of
// another length is ErrManifestMismatch (Field "Dims"); a wrong count, a
// zero or non-finite vector or an invalid source is ErrInvalidCorpus. On
// any error nothing changes, in the file or in memory. An empty corpus is
// allowed (to start an index that Upsert fills).
func (ix *Index) Rebuild(ctx context.Context, corpus []Source, m Manifest, vectors [][]float32) error {
	if err := m.validate(); err != nil {
		return err
	}
	if d := ix.chunker.Digest(corpus); m.CorpusDigest != d {
		return &MismatchError{Field: "CorpusDigest", Want: m.CorpusDigest, Got: d}
	}
	p, err := ix.prepare(corpus, vectors, m.Dims)
	if err != nil {
		return err
	}
	ix.writeMu.Lock()
	defer ix.writeMu.Unlock()
	if ix.isClosed() {
		return ErrClosed
	}
	// ix.want changes only under writeMu, which is held here.
	if err := mismatch(ix.want, m, false); err != nil {
		return err
	}
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("retrieval: rebuild: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	for _, stmt := range []string{`DELETE FROM chunks`, `DELETE FROM sources`} {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("retrieval: rebuild: %w", err)
		}
	}
	if err := insertSources(ctx, tx, p); err != nil {
		return fmt.Errorf("retrieval: rebuild: %w", err)
	}
	if err := writeMeta(ctx, tx, m, ix.chunker.maxRunes(), len(p.rows)/m.Dims); err != nil {
		return fmt.Errorf("retrieval: rebuild: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("retrieval: rebuild: commit: %w", err)
	}

	srcs := make(map[string]*entry, len(p.entries))
	owner := make([]*entry, 0, len(p.rows)/m.Dims)
	for _, e := range p.entries {
		e.start = len(owner)
		for range e.chunks {
			owner = append(owner, e)
		}
		srcs[e.meta.ID] = e
	}
	ix.mu.Lock()
	ix.built, ix.stored, ix.maxRunes = true, m, ix.chunker.maxRunes()
	ix.want.CorpusDigest = m.CorpusDigest
	ix.mat, ix.owner, ix.srcs, ix.order, ix.dead = p.rows, owner, srcs, p.entries, 0
	ix.mu.Unlock()
	ix.log.LogAttrs(ctx, slog.LevelInfo, "retrieval index rebuilt",
		slog.Int("sources", len(p.entries)), slog.Int("chunks", len(owner)), slog.String("corpus_digest", m.CorpusDigest))
	return nil
}

func (ix *Index) isClosed() bool {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.closed
}

// writable checks, under the write lock, that an update may proceed, and
// returns the current manifest.
func (ix *Index) writable() (Manifest, error) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if err := ix.usable(); err != nil {
		return Manifest{}, err
	}
	if ix.maxRunes != ix.chunker.maxRunes() {
		return Manifest{}, &MismatchError{Field: "Chunker.MaxRunes", Want: strconv.Itoa(ix.chunker.maxRunes()), Got: strconv.Itoa(ix.maxRunes)}
	}
	return ix.stored, nil
}

// Upsert adds sources, or replaces every chunk of sources already in the
// index, in one SQLite transaction. vectors holds one vector per chunk in
// Chunker.ChunkCorpus(sources) order. The recorded corpus digest becomes the
// digest of the new content. Errors are those of Rebuild, plus
// ErrNotBuilt and ErrManifestMismatch when the handle's manifest (or
// chunker) differs from the file's; on any error nothing changes.
func (ix *Index) Upsert(ctx context.Context, sources []Source, vectors [][]float32) error {
	ix.writeMu.Lock()
	defer ix.writeMu.Unlock()
	m, err := ix.writable()
	if err != nil {
		return err
	}
	if len(sources) == 0 {
		return &CorpusError{Reason: "no source to upsert"}
	}
	p, err := ix.prepare(sources, vectors, m.Dims)
	if err != nil {
		return err
	}
	ids := make([]string, len(p.entries))
	for i, e := range p.entries {
		ids[i] = e.meta.ID
	}
	return ix.apply(ctx, "upsert", m, ids, p)
}

// Delete removes sources and all their chunks, in one SQLite transaction.
// An ID the index does not hold is ErrInvalidCorpus and nothing is deleted.
func (ix *Index) Delete(ctx context.Context, ids ...string) error {
	ix.writeMu.Lock()
	defer ix.writeMu.Unlock()
	m, err := ix.writable()
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		return &CorpusError{Reason: "no source to delete"}
	}
	seen := map[string]bool{}
	ix.mu.RLock()
	for _, id := range ids {
		if ix.srcs[id] == nil || seen[id] {
			ix.mu.RUnlock()
			return &CorpusError{SourceID: id, Reason: "not in the index (or listed twice)"}
		}
		seen[id] = true
	}
	ix.mu.RUnlock()
	return ix.apply(ctx, "delete", m, ids, &prepared{})
}

// apply removes the sources ids and inserts p, in SQLite then in memory. The
// caller holds writeMu.
func (ix *Index) apply(ctx context.Context, op string, m Manifest, ids []string, p *prepared) error {
	// New corpus digest: the current per-source digests, minus ids, plus p.
	ix.mu.RLock()
	per := make(map[string]string, len(ix.srcs)+len(p.entries))
	for id, e := range ix.srcs {
		per[id] = e.digest
	}
	chunks := len(ix.owner) - ix.dead + len(p.rows)/m.Dims
	for _, id := range ids {
		if e := ix.srcs[id]; e != nil {
			chunks -= len(e.chunks)
		}
	}
	ix.mu.RUnlock()
	for _, id := range ids {
		delete(per, id)
	}
	for _, e := range p.entries {
		per[e.meta.ID] = e.digest
	}
	pairs := make([][2]string, 0, len(per))
	for id, d := range per {
		pairs = append(pairs, [2]string{id, d})
	}
	m.CorpusDigest = combineDigests(pairs)

	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("retrieval: %s: %w", op, err)
	}
	defer func() { _ = tx.Rollback() }()
	for _, id := range ids {
		for _, stmt := range []string{`DELETE FROM chunks WHERE source_id=?`, `DELETE FROM sources WHERE id=?`} {
			if _, err := tx.ExecContext(ctx, stmt, id); err != nil {
				return fmt.Errorf("retrieval: %s: %w", op, err)
			}
		}
	}
	if err := insertSources(ctx, tx, p); err != nil {
		return fmt.Errorf("retrieval: %s: %w", op, err)
	}
	if err := writeMeta(ctx, tx, m, ix.maxRunes, chunks); err != nil {
		return fmt.Errorf("retrieval: %s: %w", op, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("retrieval: %s: commit: %w", op, err)
	}

	ix.mu.Lock()
	defer ix.mu.Unlock()
	for _, id := range ids {
		e := ix.srcs[id]
		if e == nil {
			continue // an upsert of a new source
		}
		for r := e.start; r < e.start+len(e.chunks); r++ {
			ix.owner[r] = nil
		}
		ix.dead += len(e.chunks)
		delete(ix.srcs, id)
		ix.order = slices.DeleteFunc(ix.order, func(x *entry) bool { return x == e })
	}
	dims := m.Dims
	for _, e := range p.entries {
		e.start = len(ix.owner)
		for range e.chunks {
			ix.owner = append(ix.owner, e)
		}
		ix.srcs[e.meta.ID] = e
		ix.order = append(ix.order, e)
	}
	ix.mat = append(ix.mat, p.rows...)
	if live := len(ix.owner) - ix.dead; ix.dead > 0 && ix.dead >= live/4 {
		ix.compact(dims)
	}
	ix.stored = m
	if ix.want.CorpusDigest != "" {
		ix.want.CorpusDigest = m.CorpusDigest
	}
	ix.log.LogAttrs(ctx, slog.LevelInfo, "retrieval index updated", slog.String("op", op),
		slog.Int("sources", len(ids)), slog.Int("chunks", len(ix.owner)-ix.dead), slog.String("corpus_digest", m.CorpusDigest))
	return nil
}

// compact drops dead rows; the caller holds mu for writing.
func (ix *Index) compact(dims int) {
	live := len(ix.owner) - ix.dead
	mat := make([]float32, 0, live*dims)
	owner := make([]*entry, 0, live)
	for _, e := range ix.order {
		n := len(e.chunks)
		mat = append(mat, ix.mat[e.start*dims:(e.start+n)*dims]...)
		e.start = len(owner)
		for range n {
			owner = append(owner, e)
		}
	}
	ix.mat, ix.owner, ix.dead = mat, owner, 0
}

// digestParts is Chunker.sourceDigest computed from stored parts.
func digestParts(meta Source, chunks []Chunk) string {
	texts := make([]string, len(chunks))
	for i, c := range chunks {
		texts[i] = c.Text
	}
	return digestOf(meta, texts)
}
