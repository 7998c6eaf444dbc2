package retrieval

import (
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// prepared is a validated batch of sources with their chunks and
// normalised vectors, ready for the files and the matrix.
type prepared struct {
	entries []*entry
	rows    []float32 // normalised, consecutive
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
		texts := make([]string, len(chunks))
		for i, c := range chunks {
			texts[i] = c.Text
		}
		p.entries = append(p.entries, &entry{meta: meta, texts: texts, n: len(texts), digest: digestRaw(meta, texts)})
		vi += len(chunks)
	}
	if vi != len(vectors) {
		return nil, &CorpusError{Reason: fmt.Sprintf("%d vectors for %d chunks", len(vectors), vi)}
	}
	p.rows = make([]float32, len(vectors)*dims)
	vi = 0
	for _, e := range p.entries {
		for n := range e.texts {
			v := vectors[vi]
			if len(v) != dims {
				return nil, &MismatchError{Field: "Dims", Want: strconv.Itoa(dims), Got: strconv.Itoa(len(v)), ChunkID: ChunkID(e.meta.ID, n)}
			}
			row := p.rows[vi*dims : (vi+1)*dims]
			copy(row, v)
			if reason := normalise(row); reason != "" {
				return nil, &CorpusError{SourceID: e.meta.ID, ChunkID: ChunkID(e.meta.ID, n), Reason: "vector: " + reason}
			}
			vi++
		}
	}
	return p, nil
}

func insertSegments(ctx context.Context, tx *sql.Tx, segs []segment) error {
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO segments(first_row,rows,crc32c) VALUES(?,?,?)`)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for _, s := range segs {
		if _, err := stmt.ExecContext(ctx, s.first, s.rows, int64(s.crc)); err != nil {
			return err
		}
	}
	return nil
}

func setMeta(ctx context.Context, tx *sql.Tx, kv map[string]string) error {
	for k, v := range kv {
		if _, err := tx.ExecContext(ctx, `INSERT INTO meta(key,value) VALUES(?,?) ON CONFLICT(key) DO UPDATE SET value=excluded.value`, k, v); err != nil {
			return err
		}
	}
	return nil
}

func writeMeta(ctx context.Context, tx *sql.Tx, m Manifest, maxRunes, chunks int) error {
	mj, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return setMeta(ctx, tx, map[string]string{"manifest": string(mj), "chunker_max_runes": strconv.Itoa(maxRunes), "chunks": strconv.Itoa(chunks)})
}

func writeVectorMeta(ctx context.Context, tx *sql.Tx, gen int64, rows int, fileID string, logEnd int64) error {
	kv := map[string]string{"vector_file": strconv.FormatInt(gen, 10), "vector_rows": strconv.Itoa(rows), "vector_file_id": fileID}
	if logEnd > 0 {
		kv["sources_bytes"] = strconv.FormatInt(logEnd, 10)
	}
	return setMeta(ctx, tx, kv)
}

// logWriter appends records to a source log from offset at, in writes of
// about 1 MiB.
type logWriter struct {
	f   *os.File
	at  int64 // where the next record goes
	buf []byte
}

// put appends the put record of e (texts, first row start) and returns
// where it lies.
func (w *logWriter) put(e *entry, texts []string, start int) (int64, int, error) {
	off := w.at + int64(len(w.buf))
	n := len(w.buf)
	w.buf = appendPut(w.buf, e, texts, start)
	return off, len(w.buf) - n, w.flushIfFull()
}

func (w *logWriter) del(id string) error {
	w.buf = appendDelete(w.buf, id)
	return w.flushIfFull()
}

func (w *logWriter) flushIfFull() error {
	if len(w.buf) < segmentBytes {
		return nil
	}
	return w.flush()
}

func (w *logWriter) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	if _, err := w.f.WriteAt(w.buf, w.at); err != nil {
		return err
	}
	w.at += int64(len(w.buf))
	w.buf = w.buf[:0]
	return nil
}

// appendRecords writes the put records of entries (their texts, their
// first rows as startOf gives them) to the source log f from offset at,
// sets each entry's record, and returns the new end.
func appendRecords(f *os.File, at int64, dels []string, entries []*entry, startOf func(*entry) int) (int64, error) {
	w := &logWriter{f: f, at: at}
	for _, id := range dels {
		if err := w.del(id); err != nil {
			return 0, err
		}
	}
	for _, e := range entries {
		off, n, err := w.put(e, e.texts, startOf(e))
		if err != nil {
			return 0, err
		}
		e.rec, e.recLen = off, n
	}
	if err := w.flush(); err != nil {
		return 0, err
	}
	return w.at, nil
}

// generation is the three files of the next generation, written and
// synced. The caller records it in a transaction and then calls
// switchGeneration, or discards it.
type generation struct {
	gen        int64
	fileID     string
	vf, hf, sf *os.File
	segs       []segment
	logEnd     int64
}

// newGeneration writes the next generation's files: vec writes the vector
// file's rows and returns their segments, half the halves file's rows,
// log the source log's records (from fileHeaderBytes, returning its end).
func (ix *Index) newGeneration(dims int, vec func(f *os.File) ([]segment, error), half func(f *os.File) error, log func(f *os.File) (int64, error)) (*generation, error) {
	g := &generation{gen: ix.gen + 1}
	var err error
	if g.fileID, err = newFileID(); err != nil {
		return nil, err
	}
	names := generationFiles(ix.path, g.gen)
	files := []**os.File{&g.vf, &g.hf, &g.sf}
	for i, magic := range []string{vectorMagic, halvesMagic, sourceMagic} {
		if *files[i], err = createFile(names[i], magic, dims, g.fileID); err != nil {
			g.discard(ix.path)
			return nil, err
		}
	}
	if g.segs, err = vec(g.vf); err == nil {
		if err = half(g.hf); err == nil {
			g.logEnd, err = log(g.sf)
		}
	}
	for _, f := range []*os.File{g.vf, g.hf, g.sf} {
		if err == nil {
			err = f.Sync()
		}
	}
	if err == nil {
		err = syncDir(filepath.Dir(ix.path))
	}
	if err != nil {
		g.discard(ix.path)
		return nil, err
	}
	return g, nil
}

func (g *generation) discard(path string) {
	for _, f := range []*os.File{g.vf, g.hf, g.sf} {
		if f != nil {
			_ = f.Close()
		}
	}
	for _, name := range generationFiles(path, g.gen) {
		_ = os.Remove(name)
	}
}

// switchGeneration makes g the handle's files and removes the old ones;
// the caller holds mu for writing.
func (ix *Index) switchGeneration(ctx context.Context, g *generation) {
	had := ix.vf != nil
	for _, f := range []*os.File{ix.vf, ix.hf, ix.sf} {
		if f != nil {
			_ = f.Close()
		}
	}
	if had {
		for _, name := range generationFiles(ix.path, ix.gen) {
			if err := os.Remove(name); err != nil && !errors.Is(err, os.ErrNotExist) {
				ix.logAttrs(ctx, slog.LevelWarn, "retrieval: old file not removed", slog.String("file", name), slog.Any("error", err))
			}
		}
	}
	ix.vf, ix.hf, ix.sf, ix.gen, ix.fileID, ix.logEnd = g.vf, g.hf, g.sf, g.gen, g.fileID, g.logEnd
}

// Rebuild replaces the whole content of the index with corpus and its
// vectors.
//
// vectors holds one vector per chunk, in the order Chunker.ChunkCorpus
// returns them for this index's chunker. m must name the same model as the
// manifest the handle was opened with, and m.CorpusDigest must equal the
// chunker's Digest of corpus; otherwise ErrManifestMismatch. A vector of
// another length is ErrManifestMismatch (Field "Dims"); a wrong count, a
// zero or non-finite vector or an invalid source is ErrInvalidCorpus. On
// any error nothing changes, in the files or in memory. An empty corpus is
// allowed (to start an index that Upsert fills).
func (ix *Index) Rebuild(ctx context.Context, corpus []Source, m Manifest, vectors [][]float32) error {
	if ix.readOnly {
		return ErrReadOnly
	}
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
	dims := m.Dims
	rows := len(p.rows) / dims
	row := 0
	for _, e := range p.entries {
		e.start = row
		row += e.n
	}
	g, err := ix.newGeneration(dims,
		func(f *os.File) ([]segment, error) { return writeRows(f, p.rows, dims, 0) },
		func(f *os.File) error { return writeHalfRows(f, p.rows, dims, 0, ix.kern) },
		func(f *os.File) (int64, error) {
			return appendRecords(f, fileHeaderBytes, nil, p.entries, func(e *entry) int { return e.start })
		})
	if err != nil {
		return fmt.Errorf("retrieval: rebuild: write files: %w", err)
	}
	// The matrix is the new file, mapped before the switch is recorded, so
	// that a failure to map changes nothing.
	var mat *matrix
	if mapsVectors() {
		f := g.vf
		if ix.half {
			f = g.hf
		}
		if mat, err = mappedMatrix(f, dims, rows, ix.half); err != nil {
			g.discard(ix.path)
			return fmt.Errorf("retrieval: rebuild: %w", err)
		}
	}
	err = ix.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM segments`); err != nil {
			return err
		}
		if err := insertSegments(ctx, tx, g.segs); err != nil {
			return err
		}
		if err := writeVectorMeta(ctx, tx, g.gen, rows, g.fileID, g.logEnd); err != nil {
			return err
		}
		return writeMeta(ctx, tx, m, ix.chunker.maxRunes(), rows)
	})
	if err != nil {
		mat.release()
		g.discard(ix.path)
		return fmt.Errorf("retrieval: rebuild: %w", err)
	}

	srcs := make(map[string]*entry, len(p.entries))
	for _, e := range p.entries {
		e.texts = nil
		srcs[e.meta.ID] = e
	}
	if mat == nil {
		mat = &matrix{dims: dims, half: ix.half}
		mat.appendRows(p.rows, ix.kern)
	}
	ix.mu.Lock()
	ix.mat.release()
	ix.switchGeneration(ctx, g)
	ix.built, ix.stored, ix.maxRunes = true, m, ix.chunker.maxRunes()
	ix.want.CorpusDigest = m.CorpusDigest
	ix.mat, ix.srcs, ix.order, ix.rows, ix.dead = mat, srcs, p.entries, rows, 0
	ix.mu.Unlock()
	ix.logAttrs(ctx, slog.LevelInfo, "retrieval index rebuilt",
		slog.Int("sources", len(p.entries)), slog.Int("chunks", rows), slog.String("corpus_digest", m.CorpusDigest))
	return nil
}

func (ix *Index) inTx(ctx context.Context, f func(tx *sql.Tx) error) error {
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	if err := f(tx); err != nil {
		return err
	}
	return tx.Commit()
}

func (ix *Index) isClosed() bool {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.closed
}

// writable checks, under the write lock, that an update may proceed, and
// returns the current manifest. It builds the map of sources by ID, which
// only writes need, when Open did not.
func (ix *Index) writable() (Manifest, error) {
	if ix.readOnly {
		return Manifest{}, ErrReadOnly
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if err := ix.usable(); err != nil {
		return Manifest{}, err
	}
	if ix.maxRunes != ix.chunker.maxRunes() {
		return Manifest{}, &MismatchError{Field: "Chunker.MaxRunes", Want: strconv.Itoa(ix.chunker.maxRunes()), Got: strconv.Itoa(ix.maxRunes)}
	}
	if ix.srcs == nil {
		ix.srcs = make(map[string]*entry, len(ix.order))
		for _, e := range ix.order {
			ix.srcs[e.meta.ID] = e
		}
	}
	return ix.stored, nil
}

// Upsert adds sources, or replaces every chunk of sources already in the
// index. vectors holds one vector per chunk in Chunker.ChunkCorpus(sources)
// order. The recorded corpus digest becomes the digest of the new content.
// Errors are those of Rebuild, plus ErrNotBuilt and ErrManifestMismatch
// when the handle's manifest (or chunker) differs from the file's, and
// ErrReadOnly; on any error nothing changes.
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

// Delete removes sources and all their chunks. An ID the index does not
// hold is ErrInvalidCorpus and nothing is deleted.
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

// apply removes the sources ids and appends p, in the files then in memory.
// The caller holds writeMu.
func (ix *Index) apply(ctx context.Context, op string, m Manifest, ids []string, p *prepared) error {
	dims := m.Dims
	// New corpus digest: the current per-source digests, minus ids, plus p.
	ix.mu.RLock()
	per := make(map[string][32]byte, len(ix.srcs)+len(p.entries))
	for id, e := range ix.srcs {
		per[id] = e.digest
	}
	oldRows := ix.rows
	chunks := oldRows - ix.dead + len(p.rows)/dims
	var dels []string
	for _, id := range ids {
		if e := ix.srcs[id]; e != nil {
			chunks -= e.n
			dels = append(dels, id)
		}
	}
	vf, hf, sf, logEnd := ix.vf, ix.hf, ix.sf, ix.logEnd
	ix.mu.RUnlock()
	for _, id := range ids {
		delete(per, id)
	}
	for _, e := range p.entries {
		per[e.meta.ID] = e.digest
	}
	pairs := make([][2]string, 0, len(per))
	for id, d := range per {
		pairs = append(pairs, [2]string{id, hex.EncodeToString(d[:])})
	}
	m.CorpusDigest = combineDigests(pairs)

	// New rows, their halves and the records go after the recorded ones;
	// bytes a failed write left there are overwritten.
	newRows := len(p.rows) / dims
	var segs []segment
	if newRows > 0 {
		var err error
		if err = vf.Truncate(vectorHeaderBytes + int64(oldRows)*int64(4*dims)); err == nil {
			if segs, err = writeRows(vf, p.rows, dims, oldRows); err == nil {
				err = vf.Sync()
			}
		}
		if err == nil {
			if err = hf.Truncate(fileHeaderBytes + int64(oldRows)*int64(2*dims)); err == nil {
				if err = writeHalfRows(hf, p.rows, dims, oldRows, ix.kern); err == nil {
					err = hf.Sync()
				}
			}
		}
		if err != nil {
			return fmt.Errorf("retrieval: %s: write vectors: %w", op, err)
		}
	}
	row := oldRows
	for _, e := range p.entries {
		e.start = row
		row += e.n
	}
	newEnd, err := func() (int64, error) {
		if err := sf.Truncate(logEnd); err != nil {
			return 0, err
		}
		end, err := appendRecords(sf, logEnd, dels, p.entries, func(e *entry) int { return e.start })
		if err != nil {
			return 0, err
		}
		return end, sf.Sync()
	}()
	if err != nil {
		return fmt.Errorf("retrieval: %s: write source log: %w", op, err)
	}
	// A mapped matrix grows by mapping the file again at its new length,
	// before the rows are recorded, so that a failure to map changes
	// nothing; the old mapping is released once no search holds it.
	var grown *matrix
	if newRows > 0 && mapsVectors() {
		f := vf
		if ix.half {
			f = hf
		}
		if grown, err = mappedMatrix(f, dims, oldRows+newRows, ix.half); err != nil {
			return fmt.Errorf("retrieval: %s: %w", op, err)
		}
	}
	err = ix.inTx(ctx, func(tx *sql.Tx) error {
		if err := insertSegments(ctx, tx, segs); err != nil {
			return err
		}
		if err := setMeta(ctx, tx, map[string]string{"vector_rows": strconv.Itoa(oldRows + newRows), "sources_bytes": strconv.FormatInt(newEnd, 10)}); err != nil {
			return err
		}
		return writeMeta(ctx, tx, m, ix.maxRunes, chunks)
	})
	if err != nil {
		grown.release()
		return fmt.Errorf("retrieval: %s: %w", op, err)
	}

	ix.mu.Lock()
	gone := map[*entry]bool{}
	for _, id := range dels {
		e := ix.srcs[id]
		ix.dead += e.n
		delete(ix.srcs, id)
		gone[e] = true
	}
	if len(gone) > 0 {
		ix.order = slices.DeleteFunc(ix.order, func(x *entry) bool { return gone[x] })
	}
	for _, e := range p.entries {
		e.texts = nil
		ix.srcs[e.meta.ID] = e
		ix.order = append(ix.order, e)
	}
	if grown != nil {
		ix.mat.release()
		ix.mat = grown
	} else if newRows > 0 {
		ix.mat.appendRows(p.rows, ix.kern)
	}
	ix.rows, ix.logEnd = oldRows+newRows, newEnd
	ix.stored = m
	if ix.want.CorpusDigest != "" {
		ix.want.CorpusDigest = m.CorpusDigest
	}
	live, dead := ix.rows-ix.dead, ix.dead
	ix.mu.Unlock()
	ix.logAttrs(ctx, slog.LevelInfo, "retrieval index updated", slog.String("op", op),
		slog.Int("sources", len(ids)), slog.Int("chunks", live), slog.String("corpus_digest", m.CorpusDigest))
	if dead > 0 && dead >= live/4 {
		if err := ix.compact(ctx, dims); err != nil {
			// The write itself is done; the rows of removed chunks stay
			// until a later write compacts them.
			ix.logAttrs(ctx, slog.LevelWarn, "retrieval index compaction failed", slog.Any("error", err))
		}
	}
	return nil
}

// compact writes the live rows, their halves and the live sources' records
// into a new generation, records it, and drops the dead rows from memory.
// The caller holds writeMu.
func (ix *Index) compact(ctx context.Context, dims int) error {
	ix.mu.RLock()
	order := slices.Clone(ix.order)
	vf, hf, sf := ix.vf, ix.hf, ix.sf
	ix.mu.RUnlock()
	ranges := make([]rowRange, 0, len(order))
	starts := make([]int, len(order))
	recs := make([]entry, len(order)) // the new records' places
	at := 0
	for i, e := range order {
		ranges = append(ranges, rowRange{e.start, e.start + e.n})
		starts[i] = at
		at += e.n
	}
	buf := make([]byte, segmentRows(dims)*4*dims)
	g, err := ix.newGeneration(dims,
		func(f *os.File) ([]segment, error) {
			for i, r := range ranges {
				if err := copyRows(f, vf, int64(4*dims), r.start, starts[i], r.end-r.start, buf); err != nil {
					return nil, err
				}
			}
			return segmentsOf(f, dims, at, buf)
		},
		func(f *os.File) error {
			for i, r := range ranges {
				if err := copyRows(f, hf, int64(2*dims), r.start, starts[i], r.end-r.start, buf); err != nil {
					return err
				}
			}
			return nil
		},
		func(f *os.File) (int64, error) {
			w := &logWriter{f: f, at: fileHeaderBytes}
			for i, e := range order {
				texts, err := readTexts(sf, e)
				if err != nil {
					return 0, err
				}
				if recs[i].rec, recs[i].recLen, err = w.put(e, texts, starts[i]); err != nil {
					return 0, err
				}
			}
			if err := w.flush(); err != nil {
				return 0, err
			}
			return w.at, nil
		})
	if err != nil {
		return err
	}
	var mapped *matrix
	if mapsVectors() {
		f := g.vf
		if ix.half {
			f = g.hf
		}
		if mapped, err = mappedMatrix(f, dims, at, ix.half); err != nil {
			g.discard(ix.path)
			return err
		}
	}
	err = ix.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM segments`); err != nil {
			return err
		}
		if err := insertSegments(ctx, tx, g.segs); err != nil {
			return err
		}
		return writeVectorMeta(ctx, tx, g.gen, at, g.fileID, g.logEnd)
	})
	if err != nil {
		mapped.release()
		g.discard(ix.path)
		return err
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.switchGeneration(ctx, g)
	if mapped != nil {
		ix.mat.release()
		ix.mat = mapped
	} else {
		ix.mat = ix.mat.compact(ranges)
	}
	for i, e := range order {
		e.start, e.rec, e.recLen = starts[i], recs[i].rec, recs[i].recLen
	}
	ix.rows, ix.dead = at, 0
	return nil
}

// segmentsOf cuts the first rows rows of f into segments and checksums
// them.
func segmentsOf(f *os.File, dims, rows int, buf []byte) ([]segment, error) {
	per := segmentRows(dims)
	var segs []segment
	for s := 0; s < rows; s += per {
		n := min(per, rows-s)
		b := buf[:n*4*dims]
		if _, err := f.ReadAt(b, vectorHeaderBytes+int64(s)*int64(4*dims)); err != nil {
			return nil, err
		}
		segs = append(segs, segment{first: s, rows: n, crc: crc32Of(b)})
	}
	return segs, nil
}
