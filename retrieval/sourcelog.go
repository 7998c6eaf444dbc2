package retrieval

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
)

// The source log.
//
// Beside the vector file, each generation has a source log
// "<path>-sources-<generation>": a header of fileHeaderBytes (magic
// sourceMagic, dimensions, the generation's file ID, a CRC-32C of the
// header) and then records, each
//
//	[0:4)  body length L, uint32 little-endian
//	[4:8)  CRC-32C (Castagnoli) of the body
//	[8:8+L) body
//
// A body is a kind byte and then, for recordPut, the source: ID, title,
// scopes (a JSON array), valid_from and valid_until (RFC 3339, empty for
// none), each as a uvarint length and its bytes; an admissible byte; the
// first row and the chunk count as uvarints; the source's 32-byte SHA-256
// digest (Chunker's per-source digest); and last the chunk texts, each as
// a uvarint length and its bytes. A recordDelete body is a kind byte and
// the ID. Records are appended: Upsert appends a delete for every source
// it replaces and a put for every source it writes, Delete appends
// deletes, and Rebuild and compaction write a new generation holding one
// put per live source. The meta table records the log's length
// (sources_bytes); bytes after it, left by a write that failed or a
// crash, are ignored and then overwritten.
//
// Open reads the log once, sequentially, checking every record's CRC-32C
// and structure, keeps each source's metadata and where its record lies,
// and not the chunk texts: a search reads the record of each source among
// its hits again, checks its CRC-32C and its digest recomputed from the
// record, and fails with ErrCorrupt if either differs.
const (
	sourceMagic  = "candor.retrieval.sources.v1"
	recordPut    = 1
	recordDelete = 2
	recordHead   = 8
	// maxRecordBody bounds a record: a source's texts are bounded by what
	// the caller passes, and a length above this is damage.
	maxRecordBody = 1 << 30
)

func sourcesPath(path string, gen int64) string {
	return path + "-sources-" + strconv.FormatInt(gen, 10)
}

func appendField(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// scopesJSON is the scopes as stored: a JSON array of strings.
func scopesJSON(scopes []string) string {
	if len(scopes) == 0 {
		return "[]"
	}
	b, err := json.Marshal(scopes)
	if err != nil { // a []string always marshals
		panic(err)
	}
	return string(b)
}

// appendPut appends the put record of e, whose chunk texts are texts and
// first row start.
func appendPut(b []byte, e *entry, texts []string, start int) []byte {
	at := len(b)
	b = append(b, make([]byte, recordHead)...)
	b = append(b, recordPut)
	b = appendField(b, e.meta.ID)
	b = appendField(b, e.meta.Title)
	b = appendField(b, scopesJSON(e.meta.Scopes))
	b = appendField(b, timeKey(e.meta.ValidFrom))
	b = appendField(b, timeKey(e.meta.ValidUntil))
	adm := byte(0)
	if e.meta.Admissible {
		adm = 1
	}
	b = append(b, adm)
	b = binary.AppendUvarint(b, uint64(start))
	b = binary.AppendUvarint(b, uint64(len(texts)))
	b = append(b, e.digest[:]...)
	for _, t := range texts {
		b = appendField(b, t)
	}
	return sealRecord(b, at)
}

func appendDelete(b []byte, id string) []byte {
	at := len(b)
	b = append(b, make([]byte, recordHead)...)
	b = append(b, recordDelete)
	b = appendField(b, id)
	return sealRecord(b, at)
}

// sealRecord fills in the length and checksum of the record at b[at:].
func sealRecord(b []byte, at int) []byte {
	body := b[at+recordHead:]
	binary.LittleEndian.PutUint32(b[at:], uint32(len(body)))
	binary.LittleEndian.PutUint32(b[at+4:], crc32.Checksum(body, castagnoli))
	return b
}

// record is one decoded record; for a put, texts is the packed chunk
// texts, unparsed.
type record struct {
	kind  byte
	e     entry
	texts []byte
}

// recordReader decodes a record body.
type recordReader struct {
	b   []byte
	bad bool
}

func (r *recordReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.bad = true
		r.b = nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *recordReader) bytes() []byte {
	n := r.uvarint()
	if r.bad || n > uint64(len(r.b)) {
		r.bad = true
		r.b = nil
		return nil
	}
	s := r.b[:n]
	r.b = r.b[n:]
	return s
}

func (r *recordReader) byte1() byte {
	if len(r.b) == 0 {
		r.bad = true
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

// parseRecord decodes a record body (checksum already checked). Strings
// are copied out of body, but for the texts, which alias it. scopes
// interns identical scope lists, so that sources sharing them share one
// slice (never modified).
func parseRecord(body []byte, scopes map[string][]string) (record, error) {
	var rec record
	r := recordReader{b: body}
	rec.kind = r.byte1()
	switch rec.kind {
	case recordDelete:
		rec.e.meta.ID = string(r.bytes())
		if r.bad || len(r.b) != 0 || rec.e.meta.ID == "" {
			return rec, fmt.Errorf("malformed delete record")
		}
		return rec, nil
	case recordPut:
	default:
		return rec, fmt.Errorf("unknown record kind %d", rec.kind)
	}
	e := &rec.e
	id := r.bytes()
	title := r.bytes()
	sc := r.bytes()
	from := r.bytes()
	until := r.bytes()
	adm := r.byte1()
	first := r.uvarint()
	n := r.uvarint()
	if r.bad || len(r.b) < sha256.Size || len(id) == 0 || adm > 1 || first > math.MaxInt32 || n < 1 || n > math.MaxInt32 {
		return rec, fmt.Errorf("malformed source record")
	}
	e.meta.ID = string(id)
	if len(title) > 0 {
		e.meta.Title = string(title)
	}
	var ok bool
	if e.meta.Scopes, ok = scopes[string(sc)]; !ok {
		parsed, err := parseScopes(sc)
		if err != nil {
			return rec, fmt.Errorf("scopes of source %q: %w", e.meta.ID, err)
		}
		if scopes != nil && len(scopes) < 1<<12 {
			scopes[string(sc)] = parsed
		}
		e.meta.Scopes = parsed
	}
	var err error
	if e.meta.ValidFrom, err = parseTime(string(from)); err != nil {
		return rec, fmt.Errorf("valid_from of source %q: %w", e.meta.ID, err)
	}
	if e.meta.ValidUntil, err = parseTime(string(until)); err != nil {
		return rec, fmt.Errorf("valid_until of source %q: %w", e.meta.ID, err)
	}
	e.meta.Admissible = adm == 1
	e.start, e.n = int(first), int(n)
	copy(e.digest[:], r.b)
	rec.texts = r.b[sha256.Size:]
	return rec, nil
}

// splitTexts unpacks n chunk texts that fill packed exactly; with keep
// false it only checks them.
func splitTexts(packed []byte, n int, keep bool) ([]string, bool) {
	var out []string
	if keep {
		out = make([]string, 0, n)
	}
	r := recordReader{b: packed}
	for range n {
		t := r.bytes()
		if r.bad {
			return nil, false
		}
		if keep {
			out = append(out, string(t))
		}
	}
	return out, len(r.b) == 0
}

// logReader reads the records of a source log in order, checking each
// one's checksum.
type logReader struct {
	f        *os.File
	off, end int64
	buf      []byte
	at, n    int // buf[at:n] is unread, from file offset off-(n-at)
}

func newLogReader(f *os.File, end int64) *logReader {
	return &logReader{f: f, off: fileHeaderBytes, end: end, buf: make([]byte, 1<<20)}
}

// pos is the file offset of the next unread byte.
func (lr *logReader) pos() int64 { return lr.off - int64(lr.n-lr.at) }

// fill makes at least want bytes available in buf[at:n], or fails.
func (lr *logReader) fill(want int) error {
	if lr.n-lr.at >= want {
		return nil
	}
	if want > len(lr.buf) {
		nb := make([]byte, want)
		lr.n = copy(nb, lr.buf[lr.at:lr.n])
		lr.buf, lr.at = nb, 0
	} else {
		lr.n = copy(lr.buf, lr.buf[lr.at:lr.n])
		lr.at = 0
	}
	for lr.n < want {
		room := min(int64(len(lr.buf)-lr.n), lr.end-lr.off)
		if room <= 0 {
			return io.ErrUnexpectedEOF
		}
		m, err := lr.f.ReadAt(lr.buf[lr.n:lr.n+int(room)], lr.off)
		lr.n += m
		lr.off += int64(m)
		if err != nil && lr.n < want {
			return err
		}
	}
	return nil
}

// next returns the next record's offset and body (valid until the next
// call), or io.EOF at the recorded end.
func (lr *logReader) next() (int64, []byte, error) {
	at := lr.pos()
	if at == lr.end {
		return at, nil, io.EOF
	}
	if err := lr.fill(recordHead); err != nil {
		return at, nil, &CorruptError{What: fmt.Sprintf("source log record at byte %d is cut", at), Err: err}
	}
	h := lr.buf[lr.at : lr.at+recordHead]
	l := int64(binary.LittleEndian.Uint32(h))
	sum := binary.LittleEndian.Uint32(h[4:])
	if l > maxRecordBody || l > lr.end-at-recordHead {
		return at, nil, &CorruptError{What: fmt.Sprintf("source log record at byte %d claims %d bytes past the recorded end", at, l)}
	}
	if err := lr.fill(recordHead + int(l)); err != nil {
		return at, nil, &CorruptError{What: fmt.Sprintf("source log record at byte %d", at), Err: err}
	}
	body := lr.buf[lr.at+recordHead : lr.at+recordHead+int(l)]
	lr.at += recordHead + int(l)
	if crc32.Checksum(body, castagnoli) != sum {
		return at, nil, &CorruptError{What: fmt.Sprintf("source log record at byte %d fails its CRC-32C", at)}
	}
	return at, body, nil
}

// readLog replays the source log: the live sources in log order (each
// with where its record lies), the dead records' count, and the map of
// live sources by ID when the log holds deletes (nil otherwise: then every
// source is live, and a duplicate ID is found by checkCorpusDigest).
func readLog(f *os.File, end int64, rows int) ([]*entry, map[string]*entry, error) {
	lr := newLogReader(f, end)
	scopes := map[string][]string{}
	var live []*entry
	var byID map[string]*entry
	var block []entry // entries are allocated in blocks
	var hb []byte
	for {
		at, body, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		rec, err := parseRecord(body, scopes)
		if err != nil {
			return nil, nil, &CorruptError{What: fmt.Sprintf("source log record at byte %d", at), Err: err}
		}
		if rec.kind == recordDelete {
			if byID == nil {
				byID = make(map[string]*entry, len(live))
				for _, e := range live {
					if byID[e.meta.ID] != nil {
						return nil, nil, &CorruptError{What: "source " + strconv.Quote(e.meta.ID) + " is recorded twice"}
					}
					byID[e.meta.ID] = e
				}
			}
			e := byID[rec.e.meta.ID]
			if e == nil {
				return nil, nil, &CorruptError{What: "source log deletes source " + strconv.Quote(rec.e.meta.ID) + ", which it does not hold"}
			}
			delete(byID, e.meta.ID)
			e.n = -1 // marks it dead until live is compacted below
			continue
		}
		if d, ok := digestPacked(&hb, rec.e.meta, rec.texts, rec.e.n); !ok {
			return nil, nil, &CorruptError{What: "chunk texts of source " + strconv.Quote(rec.e.meta.ID)}
		} else if d != rec.e.digest {
			return nil, nil, &CorruptError{What: "source " + strconv.Quote(rec.e.meta.ID) + " does not match its digest (recomputed from its stored metadata and chunk texts)"}
		}
		if rec.e.start+rec.e.n > rows {
			return nil, nil, &CorruptError{What: fmt.Sprintf("rows %d-%d of source %q lie past the %d rows", rec.e.start, rec.e.start+rec.e.n-1, rec.e.meta.ID, rows)}
		}
		if len(block) == cap(block) {
			block = make([]entry, 0, 1024)
		}
		block = append(block, rec.e)
		e := &block[len(block)-1]
		e.rec, e.recLen = at, recordHead+len(body)
		if byID != nil {
			if byID[e.meta.ID] != nil {
				return nil, nil, &CorruptError{What: "source " + strconv.Quote(e.meta.ID) + " is recorded twice"}
			}
			byID[e.meta.ID] = e
		}
		live = append(live, e)
	}
	if byID != nil {
		live = slices.DeleteFunc(live, func(e *entry) bool { return e.n < 0 })
	}
	return live, byID, nil
}

// checkCorpusDigest combines the sources' stored digests and compares the
// result with m's corpus digest; it also finds a source ID recorded twice.
func checkCorpusDigest(order []*entry, m Manifest) error {
	byID := slices.Clone(order)
	slices.SortFunc(byID, func(a, b *entry) int { return strings.Compare(a.meta.ID, b.meta.ID) })
	for i := 1; i < len(byID); i++ {
		if byID[i].meta.ID == byID[i-1].meta.ID {
			return &CorruptError{What: "source " + strconv.Quote(byID[i].meta.ID) + " is recorded twice"}
		}
	}
	if d := combineSorted(byID); d != m.CorpusDigest {
		return &CorruptError{What: fmt.Sprintf("corpus digest of stored content is %s, manifest records %s", d, m.CorpusDigest)}
	}
	return nil
}

// combineSorted is combineDigests over entries sorted by ID.
func combineSorted(byID []*entry) string {
	h := sha256.New()
	writeField(h, "candor.retrieval.corpus.v1")
	var hx [2 * sha256.Size]byte
	for _, e := range byID {
		writeField(h, e.meta.ID)
		hex.Encode(hx[:], e.digest[:])
		writeField(h, string(hx[:]))
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// digestPacked is digestRaw of a source whose n chunk texts are packed as
// in a put record, computed with h (reset first) without unpacking them;
// ok is false when the texts are not n that fill packed exactly.
func digestPacked(buf *[]byte, meta Source, packed []byte, n int) (sum [sha256.Size]byte, ok bool) {
	b := appendDigestMeta((*buf)[:0], meta, n)
	r := recordReader{b: packed}
	for range n {
		t := r.bytes()
		if r.bad {
			return sum, false
		}
		b = appendDigestField(b, t)
	}
	*buf = b
	return sha256.Sum256(b), len(r.b) == 0
}

// readTexts reads the chunk texts of e from the source log f, checking the
// record's CRC-32C, that it is e's, and e's digest recomputed from it.
func readTexts(f *os.File, e *entry) ([]string, error) {
	fail := func(why string) ([]string, error) {
		return nil, &CorruptError{What: fmt.Sprintf("source log record of source %q at byte %d %s", e.meta.ID, e.rec, why)}
	}
	b := make([]byte, e.recLen)
	if _, err := f.ReadAt(b, e.rec); err != nil {
		return nil, &CorruptError{What: fmt.Sprintf("source log record of source %q at byte %d could not be read", e.meta.ID, e.rec), Err: err}
	}
	body := b[recordHead:]
	if int(binary.LittleEndian.Uint32(b)) != len(body) || crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(b[4:]) {
		return fail("fails its CRC-32C")
	}
	rec, err := parseRecord(body, nil)
	if err != nil || rec.kind != recordPut || rec.e.meta.ID != e.meta.ID || rec.e.n != e.n {
		return fail("is not the record read at Open")
	}
	texts, ok := splitTexts(rec.texts, e.n, true)
	if !ok {
		return fail("holds malformed chunk texts")
	}
	if digestRaw(e.meta, texts) != e.digest {
		return fail("does not match its digest")
	}
	return texts, nil
}
