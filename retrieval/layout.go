package retrieval

import (
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

// The vector file.
//
// An index is two files: the SQLite file at the path given to Open (sources,
// chunk texts, the manifest, and the table of vector segments), and beside
// it the vector file "<path>-vectors-<generation>", which holds every
// vector, L2-normalised, as little-endian float32 rows one after the other,
// after a header of vectorHeaderBytes:
//
//	[0:32)  magic "candor.retrieval.vectors.v1", zero-padded
//	[32:36) dimensions, uint32 little-endian
//	[36:52) file ID: 16 random bytes, also recorded in the SQLite file
//	[52:56) CRC-32C (Castagnoli) of bytes [0:52)
//
// The rows are cut into segments of at most segmentBytes; the SQLite table
// segments records each one's first row, row count and CRC-32C, and is the
// vector digest Open checks: every segment's checksum is verified and every
// row's length checked, on all cores, over the mapped file (a float32
// matrix where mapping is available) or as the segment is read into the
// matrix (one copy, from the page cache). The header is one 4096-byte page,
// so the mapped rows start page-aligned.
//
// Rebuild and compaction write a new generation and switch to it in the
// SQLite transaction that records it; Upsert appends rows to the current
// generation and records them in its transaction, so a crash leaves at most
// unrecorded bytes past the recorded rows, which are ignored and then
// overwritten. The vector file is guarded by the SQLite file's lock.
const (
	vectorHeaderBytes = 4096
	vectorMagic       = "candor.retrieval.vectors.v1"
	segmentBytes      = 1 << 20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func vectorPath(path string, gen int64) string {
	return path + "-vectors-" + strconv.FormatInt(gen, 10)
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

func vectorHeader(dims int, fileID string) ([]byte, error) {
	id, err := hex.DecodeString(fileID)
	if err != nil || len(id) != 16 {
		return nil, errors.New("bad vector file ID")
	}
	h := make([]byte, vectorHeaderBytes)
	copy(h, vectorMagic)
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

// createVectorFile writes a new vector file holding rows and syncs it.
func createVectorFile(name string, dims int, fileID string, rows []float32) (*os.File, []segment, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, nil, err
	}
	fail := func(err error) (*os.File, []segment, error) {
		_ = f.Close()
		_ = os.Remove(name)
		return nil, nil, err
	}
	h, err := vectorHeader(dims, fileID)
	if err != nil {
		return fail(err)
	}
	if _, err := f.WriteAt(h, 0); err != nil {
		return fail(err)
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

// copyRows copies rows [from, from+n) of src to row to of dst.
func copyRows(dst, src *os.File, dims, from, to, n int, buf []byte) error {
	rb := int64(4 * dims)
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
	want, err := vectorHeader(dims, fileID)
	if err != nil {
		return &CorruptError{What: "vector file ID " + strconv.Quote(fileID)}
	}
	got := make([]byte, 56)
	if _, err := io.ReadFull(io.NewSectionReader(f, 0, 56), got); err != nil {
		return &CorruptError{What: "vector file header", Err: err}
	}
	if string(got) != string(want[:56]) {
		return &CorruptError{What: "vector file header does not belong to this index (magic, dimensions, file ID or checksum)"}
	}
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if need := vectorHeaderBytes + int64(rows)*int64(4*dims); st.Size() < need {
		return &CorruptError{What: fmt.Sprintf("vector file has %d bytes, the index records %d rows (%d bytes)", st.Size(), rows, need)}
	}
	return nil
}

// matrix is the rows of the vector file as the scan reads them: float32,
// or, in half-precision mode, binary16.
//
// A float32 matrix is, where the platform allows (canMap), the vector
// file itself mapped read-only (mapped): its pages are the page cache's,
// so Open copies nothing and touches no fresh memory, and resident memory
// is the file's pages. The mapped rows never change while mapped: a
// generation's recorded rows are never rewritten (Upsert writes past them,
// Rebuild and compaction write a new generation), and the files are only
// written by a writer that holds them exclusively. Growth maps the file
// again at its new length (remap) before the write is recorded, and the
// old mapping is released under the handle's write lock, when no search
// holds it. A half-precision matrix, and a float32 one where mapping is
// not available, is ordinary memory.
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

// mapsVectors reports whether float32 matrices are mappings of the vector
// file: mapping is available, and the file's little-endian rows are the
// CPU's floats.
func mapsVectors() bool { return mapVectorFiles && littleEndian }

// mapVectorFiles is canMap; benchmarks clear it to measure the read path
// against the mapping in the same run.
var mapVectorFiles = canMap

// mapRows maps the first rows rows of the vector file f. Zero rows map
// nothing.
func mapRows(f *os.File, dims, rows int) ([]byte, []float32, error) {
	if rows == 0 {
		return nil, nil, nil
	}
	b, err := mapFile(f, vectorHeaderBytes+int64(rows)*int64(4*dims))
	if err != nil {
		return nil, nil, fmt.Errorf("map vector file: %w", err)
	}
	return b, unsafe.Slice((*float32)(unsafe.Pointer(&b[vectorHeaderBytes])), rows*dims), nil
}

// mappedMatrix is the float32 matrix of the first rows rows of f, mapped.
func mappedMatrix(f *os.File, dims, rows int) (*matrix, error) {
	b, rs, err := mapRows(f, dims, rows)
	if err != nil {
		return nil, err
	}
	return &matrix{dims: dims, f32: rs, mapped: b}, nil
}

// release unmaps a mapped matrix; the caller holds the handle's write lock
// (no search reads it). It is safe on nil and on memory matrices.
func (m *matrix) release() {
	if m == nil || m.mapped == nil {
		return
	}
	_ = unmapFile(m.mapped)
	m.mapped, m.f32 = nil, nil
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
// src, a mapping of the file's rows, or, when src is nil, are read from f
// into mat (sized for them). In half mode they are converted into mat's
// halves. It runs workers goroutines and reports the failure of the first
// bad segment in file order; a fault reading the mapping (the file cut
// under it) is reported as a read error.
func readSegments(f *os.File, src []float32, segs []segment, mat *matrix, dims int, k kernel, workers int) error {
	var next atomic.Int64
	errs := make([]error, len(segs))
	faults := make([]error, max(1, min(workers, len(segs))))
	var wg sync.WaitGroup
	for w := range faults {
		wg.Go(func() {
			defer recoverFault(&faults[w], "vector file")
			defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
			var buf []float32
			self := make([]float32, 1)
			for {
				i := int(next.Add(1) - 1)
				if i >= len(segs) {
					return
				}
				s := segs[i]
				var rows []float32
				var err error
				switch {
				case src != nil:
					rows = src[s.first*dims : (s.first+s.rows)*dims]
					err = checkSegment(floatBytes(rows), s, rows, dims, k, self)
				case mat.half:
					if cap(buf) < s.rows*dims {
						buf = make([]float32, segmentRows(dims)*dims)
					}
					rows = buf[:s.rows*dims]
					err = readSegment(f, s, rows, dims, k, self)
				default:
					rows = mat.f32[s.first*dims : (s.first+s.rows)*dims]
					err = readSegment(f, s, rows, dims, k, self)
				}
				if err != nil {
					errs[i] = err
					continue
				}
				if mat.half {
					k.toHalf(mat.f16[s.first*dims:(s.first+s.rows)*dims], rows)
				}
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

func readSegment(f *os.File, s segment, dst []float32, dims int, k kernel, self []float32) error {
	var b []byte
	if littleEndian {
		b = floatBytes(dst)
	} else {
		b = make([]byte, 4*len(dst))
	}
	if _, err := f.ReadAt(b, vectorHeaderBytes+int64(s.first)*int64(4*dims)); err != nil {
		return &CorruptError{What: fmt.Sprintf("vector rows %d-%d", s.first, s.first+s.rows-1), Err: err}
	}
	if !littleEndian {
		if crc32.Checksum(b, castagnoli) != s.crc {
			return &CorruptError{What: fmt.Sprintf("vector digest: rows %d-%d fail their CRC-32C", s.first, s.first+s.rows-1)}
		}
		decodeVector(dst, b)
		b = nil
	}
	return checkSegment(b, s, dst, dims, k, self)
}

// checkSegment checks the CRC-32C of b (the segment's bytes; nil when the
// caller checked it) and the length of each of its rows.
func checkSegment(b []byte, s segment, rows []float32, dims int, k kernel, self []float32) error {
	if b != nil && crc32.Checksum(b, castagnoli) != s.crc {
		return &CorruptError{What: fmt.Sprintf("vector digest: rows %d-%d fail their CRC-32C", s.first, s.first+s.rows-1)}
	}
	lo, hi := unitBounds(dims)
	for r := range s.rows {
		row := rows[r*dims : (r+1)*dims]
		k.dots(row, row, dims, self)
		if ss := self[0]; !(ss >= lo && ss <= hi) { // also false for NaN
			return &CorruptError{What: fmt.Sprintf("vector row %d is not unit length (squared length %g)", s.first+r, ss)}
		}
	}
	return nil
}

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
