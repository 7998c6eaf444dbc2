package canonjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxDepth is the deepest nesting of arrays and objects accepted.
const MaxDepth = 1000

// Error reports input that is not one strict JSON value.
type Error struct {
	// Offset is the byte offset in the input where the problem was found.
	Offset int64
	// Reason says what is wrong, for example "duplicate key \"a\"".
	Reason string
}

func (e *Error) Error() string {
	return fmt.Sprintf("canonjson: at offset %d: %s", e.Offset, e.Reason)
}

// Canonicalize returns the canonical form of the one JSON value in raw (see
// the package documentation), or a *Error.
func Canonicalize(raw []byte) ([]byte, error) {
	p := &parser{in: raw}
	p.skipSpace()
	if p.pos == len(p.in) {
		return nil, p.fail("no JSON value")
	}
	var out bytes.Buffer
	if err := p.value(&out, 0); err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos != len(p.in) {
		return nil, p.fail(fmt.Sprintf("data after the JSON value (%s)", quoteByte(p.in[p.pos])))
	}
	return out.Bytes(), nil
}

// Equal reports whether a and b have the same canonical form. An error
// names the argument that is not strict JSON.
func Equal(a, b []byte) (bool, error) {
	ca, err := Canonicalize(a)
	if err != nil {
		return false, fmt.Errorf("first value: %w", err)
	}
	cb, err := Canonicalize(b)
	if err != nil {
		return false, fmt.Errorf("second value: %w", err)
	}
	return bytes.Equal(ca, cb), nil
}

type parser struct {
	in  []byte
	pos int
}

func (p *parser) fail(reason string) *Error {
	return &Error{Offset: int64(p.pos), Reason: reason}
}

func (p *parser) failAt(pos int, reason string) *Error {
	return &Error{Offset: int64(pos), Reason: reason}
}

func (p *parser) skipSpace() {
	for p.pos < len(p.in) {
		switch p.in[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func quoteByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return fmt.Sprintf("%q", rune(c))
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

func (p *parser) unexpected(what string) *Error {
	if p.pos >= len(p.in) {
		return p.fail("unexpected end of input, want " + what)
	}
	return p.fail(fmt.Sprintf("unexpected %s, want %s", quoteByte(p.in[p.pos]), what))
}

func (p *parser) value(out *bytes.Buffer, depth int) error {
	if p.pos >= len(p.in) {
		return p.unexpected("a value")
	}
	switch c := p.in[p.pos]; {
	case c == '{':
		if depth >= MaxDepth {
			return p.fail(fmt.Sprintf("nesting deeper than %d", MaxDepth))
		}
		return p.object(out, depth+1)
	case c == '[':
		if depth >= MaxDepth {
			return p.fail(fmt.Sprintf("nesting deeper than %d", MaxDepth))
		}
		return p.array(out, depth+1)
	case c == '"':
		s, err := p.str()
		if err != nil {
			return err
		}
		writeString(out, s)
		return nil
	case c == '-' || ('0' <= c && c <= '9'):
		return p.number(out)
	case c == 't':
		return p.literal(out, "true")
	case c == 'f':
		return p.literal(out, "false")
	case c == 'n':
		return p.literal(out, "null")
	default:
		return p.unexpected("a value")
	}
}

func (p *parser) literal(out *bytes.Buffer, lit string) error {
	if !bytes.HasPrefix(p.in[p.pos:], []byte(lit)) {
		return p.fail("invalid literal, want " + lit)
	}
	p.pos += len(lit)
	out.WriteString(lit)
	return nil
}

type member struct {
	key    string
	keyPos int
	val    []byte
}

func (p *parser) object(out *bytes.Buffer, depth int) error {
	p.pos++ // '{'
	var ms []member
	p.skipSpace()
	if p.pos < len(p.in) && p.in[p.pos] == '}' {
		p.pos++
		out.WriteString("{}")
		return nil
	}
	for {
		p.skipSpace()
		if p.pos >= len(p.in) || p.in[p.pos] != '"' {
			return p.unexpected("an object key")
		}
		keyPos := p.pos
		k, err := p.str()
		if err != nil {
			return err
		}
		p.skipSpace()
		if p.pos >= len(p.in) || p.in[p.pos] != ':' {
			return p.unexpected("':'")
		}
		p.pos++
		p.skipSpace()
		var v bytes.Buffer
		if err := p.value(&v, depth); err != nil {
			return err
		}
		ms = append(ms, member{key: k, keyPos: keyPos, val: v.Bytes()})
		p.skipSpace()
		if p.pos >= len(p.in) {
			return p.unexpected("',' or '}'")
		}
		if c := p.in[p.pos]; c == ',' {
			p.pos++
			continue
		} else if c == '}' {
			p.pos++
			break
		}
		return p.unexpected("',' or '}'")
	}
	slices.SortStableFunc(ms, func(a, b member) int { return strings.Compare(a.key, b.key) })
	for i := 1; i < len(ms); i++ {
		if ms[i].key == ms[i-1].key {
			at := max(ms[i].keyPos, ms[i-1].keyPos)
			return p.failAt(at, fmt.Sprintf("duplicate key %q", ms[i].key))
		}
	}
	out.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			out.WriteByte(',')
		}
		writeString(out, m.key)
		out.WriteByte(':')
		out.Write(m.val)
	}
	out.WriteByte('}')
	return nil
}

func (p *parser) array(out *bytes.Buffer, depth int) error {
	p.pos++ // '['
	out.WriteByte('[')
	p.skipSpace()
	if p.pos < len(p.in) && p.in[p.pos] == ']' {
		p.pos++
		out.WriteByte(']')
		return nil
	}
	for first := true; ; first = false {
		if !first {
			out.WriteByte(',')
		}
		p.skipSpace()
		if err := p.value(out, depth); err != nil {
			return err
		}
		p.skipSpace()
		if p.pos >= len(p.in) {
			return p.unexpected("',' or ']'")
		}
		if c := p.in[p.pos]; c == ',' {
			p.pos++
			continue
		} else if c == ']' {
			p.pos++
			out.WriteByte(']')
			return nil
		}
		return p.unexpected("',' or ']'")
	}
}

// number checks the RFC 8259 number grammar and copies it as written.
func (p *parser) number(out *bytes.Buffer) error {
	start := p.pos
	in := p.in
	digits := func() int {
		n := 0
		for p.pos < len(in) && '0' <= in[p.pos] && in[p.pos] <= '9' {
			p.pos++
			n++
		}
		return n
	}
	if in[p.pos] == '-' {
		p.pos++
	}
	switch {
	case p.pos < len(in) && in[p.pos] == '0':
		p.pos++
	case digits() == 0:
		return p.unexpected("a digit")
	}
	if p.pos < len(in) && in[p.pos] == '.' {
		p.pos++
		if digits() == 0 {
			return p.unexpected("a digit after '.'")
		}
	}
	if p.pos < len(in) && (in[p.pos] == 'e' || in[p.pos] == 'E') {
		p.pos++
		if p.pos < len(in) && (in[p.pos] == '+' || in[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			return p.unexpected("a digit in the exponent")
		}
	}
	out.Write(in[start:p.pos])
	return nil
}

// str reads a string literal and returns its value.
func (p *parser) str() (string, error) {
	p.pos++ // '"'
	var b strings.Builder
	for {
		if p.pos >= len(p.in) {
			return "", p.fail("unterminated string")
		}
		c := p.in[p.pos]
		switch {
		case c == '"':
			p.pos++
			return b.String(), nil
		case c == '\\':
			if err := p.escape(&b); err != nil {
				return "", err
			}
		case c < 0x20:
			return "", p.fail(fmt.Sprintf("control character 0x%02x in a string", c))
		case c < utf8.RuneSelf:
			b.WriteByte(c)
			p.pos++
		default:
			r, size := utf8.DecodeRune(p.in[p.pos:])
			if r == utf8.RuneError && size == 1 {
				return "", p.fail("invalid UTF-8 in a string")
			}
			b.Write(p.in[p.pos : p.pos+size])
			p.pos += size
		}
	}
}

func (p *parser) escape(b *strings.Builder) error {
	at := p.pos
	if p.pos+1 >= len(p.in) {
		return p.fail("unterminated escape")
	}
	c := p.in[p.pos+1]
	p.pos += 2
	switch c {
	case '"', '\\', '/':
		b.WriteByte(c)
	case 'b':
		b.WriteByte('\b')
	case 'f':
		b.WriteByte('\f')
	case 'n':
		b.WriteByte('\n')
	case 'r':
		b.WriteByte('\r')
	case 't':
		b.WriteByte('\t')
	case 'u':
		r, ok := p.hex4()
		if !ok {
			return p.failAt(at, `invalid \u escape`)
		}
		switch {
		case utf16.IsSurrogate(r) && r < 0xDC00:
			// A high surrogate must be followed by an escaped low one.
			if p.pos+1 < len(p.in) && p.in[p.pos] == '\\' && p.in[p.pos+1] == 'u' {
				save := p.pos
				p.pos += 2
				r2, ok := p.hex4()
				if ok && 0xDC00 <= r2 && r2 <= 0xDFFF {
					b.WriteRune(utf16.DecodeRune(r, r2))
					return nil
				}
				p.pos = save
			}
			return p.failAt(at, fmt.Sprintf(`lone surrogate escape \u%04x`, r))
		case utf16.IsSurrogate(r):
			return p.failAt(at, fmt.Sprintf(`lone surrogate escape \u%04x`, r))
		}
		b.WriteRune(r)
	default:
		return p.failAt(at, fmt.Sprintf("invalid escape %s", quoteByte(c)))
	}
	return nil
}

func (p *parser) hex4() (rune, bool) {
	if p.pos+4 > len(p.in) {
		return 0, false
	}
	var r rune
	for _, c := range p.in[p.pos : p.pos+4] {
		var d byte
		switch {
		case '0' <= c && c <= '9':
			d = c - '0'
		case 'a' <= c && c <= 'f':
			d = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(d)
	}
	p.pos += 4
	return r, true
}

// writeString writes s as encoding/json does with HTML escaping off, so
// that canonical forms stay what they were when encoding/json made them.
func writeString(out *bytes.Buffer, s string) {
	plain := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			plain = false
			break
		}
	}
	if plain {
		out.WriteByte('"')
		out.WriteString(s)
		out.WriteByte('"')
		return
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a valid UTF-8 string always encodes
	out.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}
