package retrieval

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"unsafe"
)

// The files of an index.
//
// An index is the SQLite file at the path given to Open (the manifest, the
// counts, the current generation and its file ID, and the table of vector
// segments) and three files of the current generation beside it, each
// starting with a header of fileHeaderBytes:
//
//	[0:32)  magic ("candor.retrieval.vectors.v1", "candor.retrieval.halves.v1"
//	        or "candor.retrieval.sources.v1"), zero-padded
//	[32:36) dimensions, uint32 little-endian
//	[36:52) file ID: 16 random bytes, the generation's, recorded in the SQLite file
//	[52:56) CRC-32C (Castagnoli) of bytes [0:52)
//
// The vector file "<path>-vectors-<generation>" holds every vector,
// L2-normalised, as little-endian float32 rows one after the other. The
// rows are cut into segments of at most segmentBytes; the SQLite table
// segments records each one's first row, row count and CRC-32C, and is the
// vector digest Open checks: every segment's checksum is verified and every
// row's length checked, on all cores, a block at a time, over the mapped
// file (a float32 matrix where mapping is available) or as the rows are
// read (pread, from the page cache). The header is one 4096-byte page, so
// the mapped rows start page-aligned.
//
// The halves file "<path>-halves-<generation>" holds the same rows rounded
// to binary16 (see halvesPath); the source log "<path>-sources-<generation>"
// holds the sources and their chunk texts (see sourcelog.go).
//
// Rebuild and compaction write a new generation (all three files) and
// switch to it in the SQLite transaction that records it; Upsert and Delete
// append rows, halves and records to the current generation and record
// them in their transaction, so a crash leaves at most unrecorded bytes
// past the recorded ends, which are ignored and then overwritten. The files
// are guarded by the SQLite file's lock.
const (
	fileHeaderBytes   = 4096
	vectorHeaderBytes = fileHeaderBytes
	vectorMagic       = "candor.retrieval.vectors.v1"
	halvesMagic       = "candor.retrieval.halves.v1"
	segmentBytes      = 1 << 20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func vectorPath(path string, gen int64) string {
	return path + "-vectors-" + strconv.FormatInt(gen, 10)
}

// halvesPath is the generation's binary16 copy of the vector file: the
// same header (with halvesMagic) and then every row rounded to IEEE half
// precision (nearest, ties to even), little-endian. It is written with
// the vector file by every write and mapped as the matrix of a
// half-precision handle; Open in half precision checks it row by row
// against the vector file's checked rows, converted again.
func halvesPath(path string, gen int64) string {
	return path + "-halves-" + strconv.FormatInt(gen, 10)
}

type segment struct {
	first, rows int
	crc         uint32
}

func segmentRows(dims int) int { return max(1, segmentBytes/(4*dims)) }

func newFileID() (string, error) {
	var id [16]byte
	if _, err := rand.Read(id[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(id[:]), nil
}

func fileHeader(magic string, dims int, fileID string) ([]byte, error) {
	id, err := hex.DecodeString(fileID)
	if err != nil || len(id) != 16 {
		return nil, errors.New("bad vector file ID")
	}
	h := make([]byte, fileHeaderBytes)
	copy(h, magic)
	binary.LittleEndian.PutUint32(h[32:], uint32(dims))
	copy(h[36:52], id)
	binary.LittleEndian.PutUint32(h[52:], crc32.Checksum(h[:52], castagnoli))
	return h, nil
}

// floatBytes views a float32 slice as its bytes (little-endian on the
// CPUs this package's file format is written on; see decodeVector).
func floatBytes(v []float32) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), 4*len(v))
}

var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// writeRows writes rows (normalised, consecutive) at row offset first of f,
// and returns the segments that describe them.
func writeRows(f *os.File, rows []float32, dims, first int) ([]segment, error) {
	n := len(rows) / dims
	per := segmentRows(dims)
	var segs []segment
	var buf []byte
	for s := 0; s < n; s += per {
		e := min(s+per, n)
		b := rowBytes(rows[s*dims:e*dims], &buf)
		if _, err := f.WriteAt(b, vectorHeaderBytes+int64(first+s)*int64(4*dims)); err != nil {
			return nil, err
		}
		segs = append(segs, segment{first: first + s, rows: e - s, crc: crc32.Checksum(b, castagnoli)})
	}
	return segs, nil
}

// rowBytes returns the little-endian bytes of v, without a copy on a
// little-endian CPU.
func rowBytes(v []float32, buf *[]byte) []byte {
	if littleEndian {
		return floatBytes(v)
	}
	*buf = encodeVector((*buf)[:0], v)
	return *buf
}

// createFile creates (truncating) a file of the generation with its
// header, not synced.
func createFile(name, magic string, dims int, fileID string) (*os.File, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	h, err := fileHeader(magic, dims, fileID)
	if err == nil {
		_, err = f.WriteAt(h, 0)
	}
	if err != nil {
		_ = f.Close()
		_ = os.Remove(name)
		return nil, err
	}
	return f, nil
}

// writeHalfRows writes rows (normalised, consecutive) rounded to binary16
// at row offset first of the halves file f.
func writeHalfRows(f *os.File, rows []float32, dims, first int, k kernel) error {
	n := len(rows) / dims
	per := segmentRows(dims)
	h := make([]uint16, min(n, per)*dims)
	var b []byte
	for s := 0; s < n; s += per {
		e := min(s+per, n)
		hs := h[:(e-s)*dims]
		k.toHalf(hs, rows[s*dims:e*dims])
		b = halfBytes(hs, b)
		if _, err := f.WriteAt(b, fileHeaderBytes+int64(first+s)*int64(2*dims)); err != nil {
			return err
		}
	}
	return nil
}

// halfBytes returns the little-endian bytes of h (without a copy on a
// little-endian CPU; buf is reused otherwise).
func halfBytes(h []uint16, buf []byte) []byte {
	if littleEndian {
		if len(h) == 0 {
			return nil
		}
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(h))), 2*len(h))
	}
	buf = buf[:0]
	for _, x := range h {
		buf = binary.LittleEndian.AppendUint16(buf, x)
	}
	return buf
}

// createVectorFile writes a new vector file holding rows and syncs it.
func createVectorFile(name string, dims int, fileID string, rows []float32) (*os.File, []segment, error) {
	f, err := createFile(name, vectorMagic, dims, fileID)
	if err != nil {
		return nil, nil, err
	}
	fail := func(err error) (*os.File, []segment, error) {
		_ = f.Close()
		_ = os.Remove(name)
		return nil, nil, err
	}
	segs, err := writeRows(f, rows, dims, 0)
	if err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := syncDir(filepath.Dir(name)); err != nil {
		return fail(err)
	}
	return f, segs, nil
}

// copyRows copies rows [from, from+n) of src to row to of dst, rows of rb
// bytes after the header.
func copyRows(dst, src *os.File, rb int64, from, to, n int, buf []byte) error {
	per := max(1, len(buf)/int(rb))
	for done := 0; done < n; done += per {
		c := min(per, n-done)
		b := buf[:int64(c)*rb]
		if _, err := src.ReadAt(b, vectorHeaderBytes+int64(from+done)*rb); err != nil {
			return err
		}
		if _, err := dst.WriteAt(b, vectorHeaderBytes+int64(to+done)*rb); err != nil {
			return err
		}
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return err
	}
	return nil
}

// checkVectorFile checks the header of an open vector file and that it holds
// rows rows.
func checkVectorFile(f *os.File, dims, rows int, fileID string) error {
	return checkFile(f, "vector file", vectorMagic, dims, fileID, vectorHeaderBytes+int64(rows)*int64(4*dims))
}

// checkFile checks the header of one of the generation's files (what
// names it in errors) and that it holds at least need bytes.
func checkFile(f *os.File, what, magic string, dims int, fileID string, need int64) error {
	want, err := fileHeader(magic, dims, fileID)
	if err != nil {
		return &CorruptError{What: "vector file ID " + strconv.Quote(fileID)}
	}
	got := make([]byte, 56)
	if _, err := io.ReadFull(io.NewSectionReader(f, 0, 56), got); err != nil {
		return &CorruptError{What: what + " header", Err: err}
	}
	if string(got) != string(want[:56]) {
		return &CorruptError{What: what + " header does not belong to this index (magic, dimensions, file ID or checksum)"}
	}
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if st.Size() < need {
		return &CorruptError{What: fmt.Sprintf("%s has %d bytes, the index records %d", what, st.Size(), need)}
	}
	return nil
}

// matrix is the rows of the vector file as the scan reads them: float32,
// or, in half-precision mode, binary16.
//
// A matrix is, where the platform allows (canMap), the vector file (float32)
// or the halves file (half precision) itself mapped read-only (mapped):
// its pages are the page cache's,
// so Open copies nothing and touches no fresh memory, and resident memory
// is the file's pages. The mapped rows never change while mapped: a
// generation's recorded rows are never rewritten (Upsert writes past them,
// Rebuild and compaction write a new generation), and the files are only
// written by a writer that holds them exclusively. Growth maps the file
// again at its new length (remap) before the write is recorded, and the
// old mapping is released under the handle's write lock, when no search
// holds it. Where mapping is not available the matrix is ordinary memory.
type matrix struct {
	dims   int
	half   bool
	f32    []float32
	f16    []uint16
	mapped []byte // the whole mapping (header included); nil if not mapped
}

func newMatrix(dims, rows int, half bool) *matrix {
	m := &matrix{dims: dims, half: half}
	if half {
		m.f16 = make([]uint16, rows*dims)
		if len(m.f16) > 0 {
			adviseHugePages(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(m.f16))), 2*len(m.f16)))
		}
	} else {
		m.f32 = make([]float32, rows*dims)
		adviseHugePages(floatBytes(m.f32))
	}
	return m
}

// mapsVectors reports whether matrices are mappings of the vector file (or
// of the halves file): mapping is available, and the file's little-endian
// rows are the CPU's values.
func mapsVectors() bool { return mapVectorFiles && littleEndian }

// mapVectorFiles is canMap; benchmarks clear it to measure the read path
// against the mapping in the same run.
var mapVectorFiles = canMap

// mapRows maps the first rows rows of the vector file f (esize 4) or of
// the halves file (esize 2). Zero rows map nothing.
func mapRows(f *os.File, dims, rows, esize int) ([]byte, error) {
	if rows == 0 {
		return nil, nil
	}
	b, err := mapFile(f, fileHeaderBytes+int64(rows)*int64(esize*dims))
	if err != nil {
		return nil, fmt.Errorf("map %s: %w", filepath.Base(f.Name()), err)
	}
	return b, nil
}

// mappedMatrix is the matrix of the first rows rows of f, mapped: f is
// the vector file (float32) or, for half, the halves file.
func mappedMatrix(f *os.File, dims, rows int, half bool) (*matrix, error) {
	esize := 4
	if half {
		esize = 2
	}
	b, err := mapRows(f, dims, rows, esize)
	if err != nil {
		return nil, err
	}
	return mappedOf(b, dims, rows, half), nil
}

func mappedOf(b []byte, dims, rows int, half bool) *matrix {
	m := &matrix{dims: dims, half: half, mapped: b}
	if b == nil {
		return m
	}
	if half {
		m.f16 = unsafe.Slice((*uint16)(unsafe.Pointer(&b[fileHeaderBytes])), rows*dims)
	} else {
		m.f32 = unsafe.Slice((*float32)(unsafe.Pointer(&b[fileHeaderBytes])), rows*dims)
	}
	return m
}

// release unmaps a mapped matrix; the caller holds the handle's write lock
// (no search reads it). It is safe on nil and on memory matrices.
func (m *matrix) release() {
	if m == nil || m.mapped == nil {
		return
	}
	_ = unmapFile(m.mapped)
	m.mapped, m.f32, m.f16 = nil, nil, nil
}

// bytes is the size of the matrix in memory.
func (m *matrix) bytes() int64 { return int64(len(m.f32))*4 + int64(len(m.f16))*2 }

// appendRows appends normalised float32 rows.
func (m *matrix) appendRows(rows []float32, k kernel) {
	if !m.half {
		m.f32 = append(m.f32, rows...)
		return
	}
	n := len(m.f16)
	m.f16 = append(m.f16, make([]uint16, len(rows))...)
	k.toHalf(m.f16[n:], rows)
}

// compact keeps the row ranges given, in order.
func (m *matrix) compact(ranges []rowRange) *matrix {
	live := 0
	for _, r := range ranges {
		live += r.end - r.start
	}
	out := newMatrix(m.dims, live, m.half)
	at := 0
	for _, r := range ranges {
		if m.half {
			copy(out.f16[at*m.dims:], m.f16[r.start*m.dims:r.end*m.dims])
		} else {
			copy(out.f32[at*m.dims:], m.f32[r.start*m.dims:r.end*m.dims])
		}
		at += r.end - r.start
	}
	return out
}

// readSegments checks every segment of the vector file f (sized for segs):
// each segment's CRC-32C and each row's length. The float32 rows come from
// mat when it is the mapped float32 matrix, and are otherwise read from f
// with pread: into mat when it is a float32 matrix in memory, or into a
// buffer per worker in half precision, where they are then converted to
// binary16, into mat (in memory) or compared with mat (the mapped halves
// file). It runs workers goroutines and reports the failure of the first
// bad segment in file order; a fault reading a mapping (the file cut
// under it) is reported as a read error.
func readSegments(f *os.File, segs []segment, mat *matrix, dims int, k kernel, workers int) error {
	var next atomic.Int64
	errs := make([]error, len(segs))
	faults := make([]error, max(1, min(workers, len(segs))))
	var wg sync.WaitGroup
	for w := range faults {
		wg.Go(func() {
			defer recoverFault(&faults[w], "vector file")
			defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
			c := newSegmentChecker(f, dims, k)
			for {
				i := int(next.Add(1) - 1)
				if i >= len(segs) {
					return
				}
				errs[i] = c.check(segs[i], mat)
			}
		})
	}
	wg.Wait()
	for _, err := range append(faults, errs...) {
		if err != nil {
			return err
		}
	}
	return nil
}

// segmentChecker checks segments a block of rows at a time, so that each
// block is read from memory once and then checked from the cache.
type segmentChecker struct {
	f    *os.File
	dims int
	k    kernel
	self []float32 // a block's squared lengths
	buf  []float32 // a block of rows read with pread
	raw  []byte    // its bytes, on a big-endian CPU
	half []uint16  // a block converted
}

func newSegmentChecker(f *os.File, dims int, k kernel) *segmentChecker {
	n := checkBlockRows(dims)
	return &segmentChecker{f: f, dims: dims, k: k, self: make([]float32, n)}
}

// check checks segment s against mat (see readSegments), or, with mat
// nil, only reads and checks it; then is given each block of checked
// rows (row offset in the segment, rows) when not nil.
func (c *segmentChecker) check(s segment, mat *matrix) error {
	return c.checkThen(s, mat, nil)
}

func (c *segmentChecker) checkThen(s segment, mat *matrix, then func(r int, rows []float32) error) error {
	dims := c.dims
	lo, hi := unitBounds(dims)
	per := len(c.self)
	var sum uint32
	bad, mismatch := -1, -1
	var badSS float32
	mapped := mat != nil && !mat.half && mat.mapped != nil
	var chunk []float32 // rows read with pread, from row chunkAt of the segment
	var chunkRaw []byte
	chunkAt := 0
	for r := 0; r < s.rows; r += per {
		n := min(per, s.rows-r)
		at := (s.first + r) * dims
		var blk []float32
		var raw []byte
		if mapped {
			blk = mat.f32[at : at+n*dims]
			raw = floatBytes(blk)
		} else {
			if r >= chunkAt+len(chunk)/dims {
				// Read the next readBlocks blocks at once (fewer system
				// calls); they are then checked a block at a time.
				cn := min(readBlocks*per, s.rows-r)
				if mat != nil && !mat.half {
					chunk = mat.f32[at : at+cn*dims]
				} else {
					if c.buf == nil {
						c.buf = make([]float32, readBlocks*per*dims)
					}
					chunk = c.buf[:cn*dims]
				}
				chunkRaw = floatBytes(chunk)
				if !littleEndian {
					if c.raw == nil {
						c.raw = make([]byte, 4*readBlocks*per*dims)
					}
					chunkRaw = c.raw[:4*cn*dims]
				}
				if _, err := c.f.ReadAt(chunkRaw, vectorHeaderBytes+int64(at)*4); err != nil {
					return &CorruptError{What: fmt.Sprintf("vector rows %d-%d", s.first, s.first+s.rows-1), Err: err}
				}
				if !littleEndian {
					decodeVector(chunk, chunkRaw)
				}
				chunkAt = r
			}
			o := (r - chunkAt) * dims
			blk = chunk[o : o+n*dims]
			raw = chunkRaw[4*o : 4*(o+n*dims)]
		}
		// The length check first: its loads stream the block into the
		// cache faster than the checksum's, which then reads it from there.
		if bad < 0 {
			selfDots(c.k, blk, dims, c.self[:n])
			for i, ss := range c.self[:n] {
				if !(ss >= lo && ss <= hi) { // also false for NaN
					bad, badSS = r+i, ss
					break
				}
			}
		}
		sum = crc32.Update(sum, castagnoli, raw)
		if mat != nil && mat.half {
			dst := mat.f16[at : at+n*dims]
			if mat.mapped == nil {
				c.k.toHalf(dst, blk)
			} else if mismatch < 0 {
				if c.half == nil {
					c.half = make([]uint16, per*dims)
				}
				h := c.half[:n*dims]
				c.k.toHalf(h, blk)
				if !bytes.Equal(halfBytes(h, nil), halfBytes(dst, nil)) {
					mismatch = r
					for mismatch < r+n-1 && bytes.Equal(halfBytes(h[(mismatch-r)*dims:(mismatch-r+1)*dims], nil), halfBytes(dst[(mismatch-r)*dims:(mismatch-r+1)*dims], nil)) {
						mismatch++
					}
				}
			}
		}
		if then != nil {
			if err := then(r, blk); err != nil {
				return err
			}
		}
	}
	switch {
	case sum != s.crc:
		return &CorruptError{What: fmt.Sprintf("vector digest: rows %d-%d fail their CRC-32C", s.first, s.first+s.rows-1)}
	case bad >= 0:
		return &CorruptError{What: fmt.Sprintf("vector row %d is not unit length (squared length %g)", s.first+bad, badSS)}
	case mismatch >= 0:
		return &CorruptError{What: fmt.Sprintf("half-precision copy of vector row %d differs from the vector file", s.first+mismatch)}
	}
	return nil
}

// readBlocks is how many blocks of rows a segmentChecker reads with one
// pread.
const readBlocks = 4

// selfDots sets out[i] to the kernel's squared length of row i of blk.
func selfDots(k kernel, blk []float32, dims int, out []float32) {
	for i := range out {
		row := blk[i*dims : (i+1)*dims]
		k.dots(row, row, dims, out[i:i+1])
	}
}

// checkBlockRows is how many rows a segmentChecker checks at a time: a
// block small enough to stay in the second-level cache between its length
// check and its checksum (64 KiB measured best, with 128 KiB, among 32 KiB
// to 256 KiB at 1M rows).
func checkBlockRows(dims int) int { return max(1, (64<<10)/(4*dims)) }

// recoverFault turns a memory fault (reading a mapping whose file was cut
// or failed under it; debug.SetPanicOnFault makes it a panic) into an
// error in *dst, and lets any other panic through. Deferred by every
// goroutine that reads a mapped matrix.
func recoverFault(dst *error, what string) {
	r := recover()
	if r == nil {
		return
	}
	if _, ok := r.(interface{ Addr() uintptr }); ok {
		*dst = &CorruptError{What: what + " could not be read (cut or damaged while in use)", Err: fmt.Errorf("%v", r)}
		return
	}
	panic(r)
}

func crc32Of(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// checkHalfRow checks a candidate's float32 row, read again from the
// vector file in half-precision mode: unit length, and the row the
// half-precision copy h was made from.
func checkHalfRow(r int, row []float32, h []uint16, k kernel, scratch []uint16) error {
	dims := len(row)
	lo, hi := unitBounds(dims)
	var ss [1]float32
	k.dots(row, row, dims, ss[:])
	if !(ss[0] >= lo && ss[0] <= hi) {
		return &CorruptError{What: fmt.Sprintf("vector row %d is not unit length (squared length %g)", r, ss[0])}
	}
	k.toHalf(scratch[:dims], row)
	if !bytes.Equal(halfBytes(scratch[:dims], nil), halfBytes(h, nil)) {
		return &CorruptError{What: fmt.Sprintf("vector row %d differs from its half-precision copy", r)}
	}
	return nil
}
