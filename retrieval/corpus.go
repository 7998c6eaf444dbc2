package retrieval

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
	"unsafe"
)

// Source is one document of a corpus together with the facts a CorpusPolicy
// decides on.
//
// A zero ValidFrom means "valid since always" and a zero ValidUntil means
// "never expires". The validity window is half-open: a source is valid at t
// when ValidFrom <= t and t < ValidUntil.
type Source struct {
	ID         string    // unique, non-empty, valid UTF-8, at most MaxSourceIDBytes bytes
	Title      string    // shown with hits
	Scopes     []string  // scopes the source belongs to; a source with none is in no scope
	ValidFrom  time.Time // zero: valid since always
	ValidUntil time.Time // zero: never expires; otherwise exclusive end
	Admissible bool      // false: the source never reaches a result
	Text       string    // chunked by paragraphs
}

// MaxSourceIDBytes bounds the length of a Source ID.
const MaxSourceIDBytes = 512

// Chunk is one passage of a source. Its ID is "<source id>#<n>" where n
// counts the source's chunks from 0 in text order.
type Chunk struct {
	ID     string
	Source string
	N      int
	Text   string
}

// ChunkID returns the ID of chunk n of source sourceID.
func ChunkID(sourceID string, n int) string {
	return sourceID + "#" + strconv.Itoa(n)
}

// DefaultMaxChunkRunes is the chunk size limit used when Chunker.MaxRunes is
// zero.
const DefaultMaxChunkRunes = 1200

// Chunker cuts source text into passages. The zero value uses
// DefaultMaxChunkRunes.
//
// The rule, which is deterministic and depends only on the text and MaxRunes:
//
//  1. "\r\n" and lone "\r" become "\n".
//  2. The text is split into paragraphs at blank lines (lines holding only
//     white space). Each paragraph is trimmed of surrounding white space;
//     empty paragraphs are dropped. White space inside a paragraph is kept
//     as written, so a chunk's text is a verbatim excerpt of the source.
//  3. A paragraph longer than MaxRunes runes is cut into pieces of at most
//     MaxRunes runes, each cut at the last white space inside the limit (or
//     exactly at the limit when the piece holds no white space); pieces are
//     trimmed.
//  4. Consecutive paragraphs (and pieces) are packed greedily, in order, into
//     one chunk joined by "\n\n" while the chunk stays within MaxRunes runes.
//
// Chunks are numbered from 0 in text order.
type Chunker struct {
	MaxRunes int
}

func (c Chunker) maxRunes() int {
	if c.MaxRunes <= 0 {
		return DefaultMaxChunkRunes
	}
	return c.MaxRunes
}

// Chunk cuts one source into chunks.
func (c Chunker) Chunk(s Source) []Chunk {
	limit := c.maxRunes()
	var pieces []string
	for _, p := range paragraphs(s.Text) {
		pieces = append(pieces, splitLong(p, limit)...)
	}
	var chunks []Chunk
	var cur strings.Builder
	curRunes := 0
	flush := func() {
		if cur.Len() == 0 {
			return
		}
		n := len(chunks)
		chunks = append(chunks, Chunk{ID: ChunkID(s.ID, n), Source: s.ID, N: n, Text: cur.String()})
		cur.Reset()
		curRunes = 0
	}
	for _, p := range pieces {
		r := utf8.RuneCountInString(p)
		if curRunes > 0 && curRunes+2+r > limit {
			flush()
		}
		if curRunes > 0 {
			cur.WriteString("\n\n")
			curRunes += 2
		}
		cur.WriteString(p)
		curRunes += r
	}
	flush()
	return chunks
}

// ChunkCorpus cuts every source, in the given order, and returns all chunks
// in that order. This is the order in which Index.Rebuild and Index.Upsert
// expect one vector per chunk.
func (c Chunker) ChunkCorpus(corpus []Source) []Chunk {
	var all []Chunk
	for _, s := range corpus {
		all = append(all, c.Chunk(s)...)
	}
	return all
}

// Digest returns the corpus digest ("sha256:<hex>") that a Manifest records.
// It covers every source's ID, title, scopes (as a set), validity window,
// admissibility and chunks (so the chunking rule is part of it), and does not
// depend on the order of the corpus. Digest does not validate the corpus.
func (c Chunker) Digest(corpus []Source) string {
	per := make([][2]string, 0, len(corpus))
	for _, s := range corpus {
		per = append(per, [2]string{s.ID, c.sourceDigest(s)})
	}
	return combineDigests(per)
}

func combineDigests(per [][2]string) string {
	slices.SortFunc(per, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
	h := sha256.New()
	writeField(h, "candor.retrieval.corpus.v1")
	for _, p := range per {
		writeField(h, p[0])
		writeField(h, p[1])
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

func (c Chunker) sourceDigest(s Source) string {
	chunks := c.Chunk(s)
	texts := make([]string, len(chunks))
	for i, ch := range chunks {
		texts[i] = ch.Text
	}
	return digestOf(s, texts)
}

// digestOf digests a source's metadata and chunk texts (not s.Text).
func digestOf(s Source, texts []string) string {
	d := digestRaw(s, texts)
	return hex.EncodeToString(d[:])
}

// digestRaw is digestOf's SHA-256, unencoded.
func digestRaw(s Source, texts []string) [sha256.Size]byte {
	b := appendDigestMeta(nil, s, len(texts))
	for _, t := range texts {
		b = appendDigestField(b, t)
	}
	return sha256.Sum256(b)
}

// appendDigestField appends what a source's digest hashes for one field:
// its length (8 bytes, big-endian) and its bytes.
func appendDigestField[T string | []byte](b []byte, s T) []byte {
	b = binary.BigEndian.AppendUint64(b, uint64(len(s)))
	return append(b, s...)
}

// appendDigestMeta appends the part of a source's digest input before its
// chunk texts: everything but the texts, and their count n.
func appendDigestMeta(b []byte, s Source, n int) []byte {
	b = appendDigestField(b, s.ID)
	b = appendDigestField(b, s.Title)
	scopes := s.Scopes
	if !strictlySorted(scopes) {
		scopes = slices.Clone(s.Scopes)
		slices.Sort(scopes)
		scopes = slices.Compact(scopes)
	}
	var num [20]byte
	b = appendDigestField(b, strconv.AppendInt(num[:0], int64(len(scopes)), 10))
	for _, sc := range scopes {
		b = appendDigestField(b, sc)
	}
	b = appendDigestField(b, timeKey(s.ValidFrom))
	b = appendDigestField(b, timeKey(s.ValidUntil))
	b = appendDigestField(b, strconv.FormatBool(s.Admissible))
	return appendDigestField(b, strconv.AppendInt(num[:0], int64(n), 10))
}

func strictlySorted(s []string) bool {
	for i := 1; i < len(s); i++ {
		if s[i-1] >= s[i] {
			return false
		}
	}
	return true
}

type fieldWriter interface{ Write([]byte) (int, error) }

func writeField(w fieldWriter, s string) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(s)))
	_, _ = w.Write(n[:]) // hash.Hash.Write never fails
	// The hash only reads the bytes: no copy of the string is needed.
	_, _ = w.Write(unsafe.Slice(unsafe.StringData(s), len(s)))
}

func timeKey(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// Chunks cuts a corpus with the default Chunker; see Chunker.ChunkCorpus.
func Chunks(corpus []Source) []Chunk { return Chunker{}.ChunkCorpus(corpus) }

// CorpusDigest digests a corpus with the default Chunker; see Chunker.Digest.
func CorpusDigest(corpus []Source) string { return Chunker{}.Digest(corpus) }

func paragraphs(text string) []string {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	var out []string
	var cur []string
	end := func() {
		p := strings.TrimSpace(strings.Join(cur, "\n"))
		if p != "" {
			out = append(out, p)
		}
		cur = cur[:0]
	}
	for line := range strings.SplitSeq(text, "\n") {
		if strings.TrimSpace(line) == "" {
			end()
			continue
		}
		cur = append(cur, line)
	}
	end()
	return out
}

func splitLong(p string, limit int) []string {
	var out []string
	for utf8.RuneCountInString(p) > limit {
		// Byte offset just past the first limit runes.
		cut, n := 0, 0
		lastSpace := -1
		for i, r := range p {
			if n == limit {
				cut = i
				break
			}
			if unicode.IsSpace(r) && n > 0 {
				lastSpace = i
			}
			n++
		}
		if r, _ := utf8.DecodeRuneInString(p[cut:]); unicode.IsSpace(r) {
			lastSpace = cut
		}
		if lastSpace > 0 {
			cut = lastSpace
		}
		piece := strings.TrimSpace(p[:cut])
		if piece != "" {
			out = append(out, piece)
		}
		p = strings.TrimSpace(p[cut:])
	}
	if p != "" {
		out = append(out, p)
	}
	return out
}

// CorpusPolicy decides which sources may reach a search result. It is applied to
// sources before any ranking: a chunk of a source the policy refuses is never
// scored.
type CorpusPolicy struct {
	AsOf  time.Time // required: the date the answer is for
	Scope string    // required: a source must list this scope
}

// Exclusion says why a policy refuses a source. The zero value means the
// source is admitted.
type Exclusion string

// Reasons a CorpusPolicy refuses a source.
const (
	Admitted      Exclusion = ""
	NotAdmissible Exclusion = "inadmissible"
	NotYetValid   Exclusion = "not yet valid"
	Expired       Exclusion = "expired"
	OutOfScope    Exclusion = "out of scope"
	PolicyInvalid Exclusion = "invalid policy" // the policy itself fails Validate
)

// Validate reports whether the policy can decide anything: AsOf and Scope
// are both required, so a caller that forgot either gets an error instead of
// an unfiltered result.
func (p CorpusPolicy) Validate() error {
	if p.AsOf.IsZero() {
		return &CorpusPolicyError{Reason: "AsOf is zero"}
	}
	if strings.TrimSpace(p.Scope) == "" {
		return &CorpusPolicyError{Reason: "Scope is empty"}
	}
	return nil
}

// Check returns why the policy refuses s, or Admitted.
func (p CorpusPolicy) Check(s Source) Exclusion {
	if p.Validate() != nil {
		return PolicyInvalid
	}
	return p.check(s)
}

// check is Check for a policy already validated.
func (p CorpusPolicy) check(s Source) Exclusion {
	switch {
	case !s.Admissible:
		return NotAdmissible
	case !s.ValidFrom.IsZero() && p.AsOf.Before(s.ValidFrom):
		return NotYetValid
	case !s.ValidUntil.IsZero() && !p.AsOf.Before(s.ValidUntil):
		return Expired
	case !slices.Contains(s.Scopes, p.Scope):
		return OutOfScope
	}
	return Admitted
}

// validateSource checks what Rebuild and Upsert require of a source.
func validateSource(s Source, c Chunker) error {
	switch {
	case s.ID == "":
		return &CorpusError{Reason: "source ID is empty"}
	case len(s.ID) > MaxSourceIDBytes:
		return &CorpusError{SourceID: s.ID[:64] + "…", Reason: fmt.Sprintf("source ID longer than %d bytes", MaxSourceIDBytes)}
	case !utf8.ValidString(s.ID) || strings.ContainsFunc(s.ID, unicode.IsControl):
		return &CorpusError{SourceID: s.ID, Reason: "source ID is not printable UTF-8"}
	case !utf8.ValidString(s.Text) || !utf8.ValidString(s.Title):
		return &CorpusError{SourceID: s.ID, Reason: "title or text is not valid UTF-8"}
	case !s.ValidFrom.IsZero() && !s.ValidUntil.IsZero() && !s.ValidFrom.Before(s.ValidUntil):
		return &CorpusError{SourceID: s.ID, Reason: "ValidUntil is not after ValidFrom"}
	}
	for _, sc := range s.Scopes {
		if strings.TrimSpace(sc) == "" {
			return &CorpusError{SourceID: s.ID, Reason: "empty scope"}
		}
	}
	if len(c.Chunk(s)) == 0 {
		return &CorpusError{SourceID: s.ID, Reason: "text has no paragraph to index"}
	}
	return nil
}
