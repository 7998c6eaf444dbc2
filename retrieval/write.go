package retrieval

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
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
		p.entries = append(p.entries, &entry{meta: meta, texts: texts, digest: digestOf(meta, texts)})
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

// insertSources inserts p's sources with their chunk texts, their first
// rows counted from first.
func insertSources(ctx context.Context, tx *sql.Tx, p *prepared, first int) error {
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO sources(id,title,scopes,valid_from,valid_until,admissible,first_row,chunk_texts) VALUES(?,?,?,?,?,?,?,?)`)
	if err != nil {
		return err
	}
	defer stmt.Close()
	row := first
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
		if _, err := stmt.ExecContext(ctx, e.meta.ID, e.meta.Title, string(scopes), timeKey(e.meta.ValidFrom), timeKey(e.meta.ValidUntil), adm, row, encodeTexts(e.texts)); err != nil {
			return err
		}
		row += len(e.texts)
	}
	return nil
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

func writeVectorMeta(ctx context.Context, tx *sql.Tx, gen int64, rows int, fileID string) error {
	return setMeta(ctx, tx, map[string]string{"vector_file": strconv.FormatInt(gen, 10), "vector_rows": strconv.Itoa(rows), "vector_file_id": fileID})
}

// newGeneration writes rows into the vector file of the next generation.
// The caller records it in a transaction and then calls switchGeneration,
// or discards it.
type generation struct {
	gen    int64
	name   string
	fileID string
	f      *os.File
	segs   []segment
}

func (ix *Index) newGeneration(dims int, write func(f *os.File) ([]segment, error)) (*generation, error) {
	g := &generation{gen: ix.gen + 1}
	g.name = vectorPath(ix.path, g.gen)
	var err error
	if g.fileID, err = newFileID(); err != nil {
		return nil, err
	}
	if g.f, g.segs, err = createVectorFile(g.name, dims, g.fileID, nil); err != nil {
		return nil, err
	}
	if g.segs, err = write(g.f); err == nil {
		err = g.f.Sync()
	}
	if err != nil {
		g.discard()
		return nil, err
	}
	return g, nil
}

func (g *generation) discard() {
	_ = g.f.Close()
	_ = os.Remove(g.name)
}

// switchGeneration makes g the handle's vector file and removes the old
// one; the caller holds mu for writing.
func (ix *Index) switchGeneration(ctx context.Context, g *generation) {
	old, oldName := ix.vf, vectorPath(ix.path, ix.gen)
	ix.vf, ix.gen, ix.fileID = g.f, g.gen, g.fileID
	if old != nil {
		_ = old.Close()
		if err := os.Remove(oldName); err != nil && !errors.Is(err, os.ErrNotExist) {
			ix.logAttrs(ctx, slog.LevelWarn, "retrieval: old vector file not removed", slog.String("file", oldName), slog.Any("error", err))
		}
	}
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
	g, err := ix.newGeneration(m.Dims, func(f *os.File) ([]segment, error) { return writeRows(f, p.rows, m.Dims, 0) })
	if err != nil {
		return fmt.Errorf("retrieval: rebuild: write vector file: %w", err)
	}
	rows := len(p.rows) / m.Dims
	// A float32 matrix is the new file, mapped before the switch is
	// recorded, so that a failure to map changes nothing.
	var mat *matrix
	if mapsVectors() && !ix.half {
		if mat, err = mappedMatrix(g.f, m.Dims, rows); err != nil {
			g.discard()
			return fmt.Errorf("retrieval: rebuild: %w", err)
		}
	}
	err = ix.inTx(ctx, func(tx *sql.Tx) error {
		for _, stmt := range []string{`DELETE FROM sources`, `DELETE FROM segments`} {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return err
			}
		}
		if err := insertSources(ctx, tx, p, 0); err != nil {
			return err
		}
		if err := insertSegments(ctx, tx, g.segs); err != nil {
			return err
		}
		if err := writeVectorMeta(ctx, tx, g.gen, rows, g.fileID); err != nil {
			return err
		}
		return writeMeta(ctx, tx, m, ix.chunker.maxRunes(), rows)
	})
	if err != nil {
		mat.release()
		g.discard()
		return fmt.Errorf("retrieval: rebuild: %w", err)
	}

	srcs := make(map[string]*entry, len(p.entries))
	owner := make([]*entry, 0, rows)
	for _, e := range p.entries {
		e.start = len(owner)
		for range e.texts {
			owner = append(owner, e)
		}
		srcs[e.meta.ID] = e
	}
	if mat == nil {
		mat = &matrix{dims: m.Dims, half: ix.half}
		mat.appendRows(p.rows, ix.kern)
	}
	ix.mu.Lock()
	ix.mat.release()
	ix.switchGeneration(ctx, g)
	ix.built, ix.stored, ix.maxRunes = true, m, ix.chunker.maxRunes()
	ix.want.CorpusDigest = m.CorpusDigest
	ix.mat, ix.owner, ix.srcs, ix.order, ix.dead = mat, owner, srcs, p.entries, 0
	ix.mu.Unlock()
	ix.logAttrs(ctx, slog.LevelInfo, "retrieval index rebuilt",
		slog.Int("sources", len(p.entries)), slog.Int("chunks", len(owner)), slog.String("corpus_digest", m.CorpusDigest))
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
// returns the current manifest.
func (ix *Index) writable() (Manifest, error) {
	if ix.readOnly {
		return Manifest{}, ErrReadOnly
	}
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
	per := make(map[string]string, len(ix.srcs)+len(p.entries))
	for id, e := range ix.srcs {
		per[id] = e.digest
	}
	oldRows := len(ix.owner)
	chunks := oldRows - ix.dead + len(p.rows)/dims
	for _, id := range ids {
		if e := ix.srcs[id]; e != nil {
			chunks -= len(e.texts)
		}
	}
	vf := ix.vf
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

	// New rows go after the recorded ones; bytes a failed write left there
	// are overwritten.
	newRows := len(p.rows) / dims
	var segs []segment
	if newRows > 0 {
		var err error
		if err = vf.Truncate(vectorHeaderBytes + int64(oldRows)*int64(4*dims)); err == nil {
			if segs, err = writeRows(vf, p.rows, dims, oldRows); err == nil {
				err = vf.Sync()
			}
		}
		if err != nil {
			return fmt.Errorf("retrieval: %s: write vectors: %w", op, err)
		}
	}
	// A mapped matrix grows by mapping the file again at its new length,
	// before the rows are recorded, so that a failure to map changes
	// nothing; the old mapping is released once no search holds it.
	var grown *matrix
	if newRows > 0 && mapsVectors() && !ix.half {
		var err error
		if grown, err = mappedMatrix(vf, dims, oldRows+newRows); err != nil {
			return fmt.Errorf("retrieval: %s: %w", op, err)
		}
	}
	err := ix.inTx(ctx, func(tx *sql.Tx) error {
		for _, id := range ids {
			if _, err := tx.ExecContext(ctx, `DELETE FROM sources WHERE id=?`, id); err != nil {
				return err
			}
		}
		if err := insertSources(ctx, tx, p, oldRows); err != nil {
			return err
		}
		if err := insertSegments(ctx, tx, segs); err != nil {
			return err
		}
		if err := setMeta(ctx, tx, map[string]string{"vector_rows": strconv.Itoa(oldRows + newRows)}); err != nil {
			return err
		}
		return writeMeta(ctx, tx, m, ix.maxRunes, chunks)
	})
	if err != nil {
		grown.release()
		return fmt.Errorf("retrieval: %s: %w", op, err)
	}

	ix.mu.Lock()
	for _, id := range ids {
		e := ix.srcs[id]
		if e == nil {
			continue // an upsert of a new source
		}
		for r := e.start; r < e.start+len(e.texts); r++ {
			ix.owner[r] = nil
		}
		ix.dead += len(e.texts)
		delete(ix.srcs, id)
		ix.order = slices.DeleteFunc(ix.order, func(x *entry) bool { return x == e })
	}
	for _, e := range p.entries {
		e.start = len(ix.owner)
		for range e.texts {
			ix.owner = append(ix.owner, e)
		}
		ix.srcs[e.meta.ID] = e
		ix.order = append(ix.order, e)
	}
	if grown != nil {
		ix.mat.release()
		ix.mat = grown
	} else if newRows > 0 {
		ix.mat.appendRows(p.rows, ix.kern)
	}
	ix.stored = m
	if ix.want.CorpusDigest != "" {
		ix.want.CorpusDigest = m.CorpusDigest
	}
	live, dead := len(ix.owner)-ix.dead, ix.dead
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

// compact writes the live rows into a new vector file generation, records
// it, and drops the dead rows from memory. The caller holds writeMu.
func (ix *Index) compact(ctx context.Context, dims int) error {
	ix.mu.RLock()
	order := slices.Clone(ix.order)
	vf := ix.vf
	ix.mu.RUnlock()
	ranges := make([]rowRange, 0, len(order))
	starts := make([]int, len(order))
	at := 0
	for i, e := range order {
		ranges = append(ranges, rowRange{e.start, e.start + len(e.texts)})
		starts[i] = at
		at += len(e.texts)
	}
	g, err := ix.newGeneration(dims, func(f *os.File) ([]segment, error) {
		buf := make([]byte, segmentRows(dims)*4*dims)
		for i, r := range ranges {
			if err := copyRows(f, vf, dims, r.start, starts[i], r.end-r.start, buf); err != nil {
				return nil, err
			}
		}
		return segmentsOf(f, dims, at, buf)
	})
	if err != nil {
		return err
	}
	var mapped *matrix
	if mapsVectors() && !ix.half {
		if mapped, err = mappedMatrix(g.f, dims, at); err != nil {
			g.discard()
			return err
		}
	}
	err = ix.inTx(ctx, func(tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, `UPDATE sources SET first_row=? WHERE id=?`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for i, e := range order {
			if _, err := stmt.ExecContext(ctx, starts[i], e.meta.ID); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM segments`); err != nil {
			return err
		}
		if err := insertSegments(ctx, tx, g.segs); err != nil {
			return err
		}
		return writeVectorMeta(ctx, tx, g.gen, at, g.fileID)
	})
	if err != nil {
		mapped.release()
		g.discard()
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
	owner := make([]*entry, 0, at)
	for i, e := range order {
		e.start = starts[i]
		for range e.texts {
			owner = append(owner, e)
		}
	}
	ix.owner, ix.dead = owner, 0
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

// digestParts is Chunker.sourceDigest computed from stored parts.
func digestParts(meta Source, texts []string) string { return digestOf(meta, texts) }
