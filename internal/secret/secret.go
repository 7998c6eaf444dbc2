package secret

import (
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Redacted is what a Secret prints and what Redact puts in place of a secret.
const Redacted = "[REDACTED]"

// Secret holds a sensitive string. Every way of printing, logging or
// marshalling it gives Redacted; Reveal returns the value. The zero value
// is the empty secret.
//
// The value sits behind a pointer: fmt prints an unexported struct field by
// reflection without calling its methods, so a Secret held in an unexported
// field of another type would otherwise print its value under %v or %+v.
// Through the pointer, reflection prints only an address.
type Secret struct{ p *string }

// New wraps v.
func New(v string) Secret { return Secret{p: &v} }

// Reveal returns the value, for the one place that must send it (a request
// header or form). Never log it or put it into an error.
func (s Secret) Reveal() string {
	if s.p == nil {
		return ""
	}
	return *s.p
}

// IsZero reports whether the secret is empty.
func (s Secret) IsZero() bool { return s.Reveal() == "" }

// Equal reports whether s and o hold the same value, in time that does not
// depend on where they differ.
func (s Secret) Equal(o Secret) bool {
	return subtle.ConstantTimeCompare([]byte(s.Reveal()), []byte(o.Reveal())) == 1
}

// String returns Redacted.
func (s Secret) String() string { return Redacted }

// GoString returns a Go-looking form without the value.
func (s Secret) GoString() string { return `secret.Secret("` + Redacted + `")` }

// Format prints Redacted for every verb (quoted for %q, GoString for %#v), so %x, %q or
// %+v cannot reveal the value.
func (s Secret) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		_, _ = f.Write([]byte(s.GoString()))
		return
	}
	if verb == 'q' {
		_, _ = f.Write([]byte(`"` + Redacted + `"`))
		return
	}
	_, _ = f.Write([]byte(Redacted))
}

// LogValue keeps the value out of log/slog output.
func (s Secret) LogValue() slog.Value { return slog.StringValue(Redacted) }

// MarshalJSON keeps the value out of JSON output.
func (s Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + Redacted + `"`), nil }

// MarshalText keeps the value out of text encodings.
func (s Secret) MarshalText() ([]byte, error) { return []byte(Redacted), nil }

// MinSubstringLen is the length, in bytes, from which a secret is redacted
// wherever it occurs; a shorter one is redacted only as a whole token.
const MinSubstringLen = 8

// Basic returns the "user:pass" pair of HTTP Basic authentication, to pass
// to Redact with the other secrets so that an echoed Authorization header
// (the pair in base64) is redacted. OAuth 2 clients send the form-escaped
// pair (RFC 6749 §2.3.1): pass Basic(url.QueryEscape(id),
// url.QueryEscape(secret)) as well.
func Basic(user, pass string) string { return user + ":" + pass }

// Redact returns text with every secret, and every encoded form of it (see
// the package documentation), replaced by Redacted. Empty secrets are
// ignored.
func Redact(text string, secrets ...string) string {
	forms := formsOf(secrets)
	if len(forms) == 0 || text == "" {
		return text
	}
	type span struct{ from, to int }
	var spans []span
	for _, f := range forms {
		for i := 0; i+len(f.s) <= len(text); {
			j := strings.Index(text[i:], f.s)
			if j < 0 {
				break
			}
			at := i + j
			end := at + len(f.s)
			if !f.short || wholeToken(text, at, end, f.s) {
				spans = append(spans, span{at, end})
			}
			i = at + 1
		}
	}
	if len(spans) == 0 {
		return text
	}
	slices.SortFunc(spans, func(a, b span) int { return a.from - b.from })
	var b strings.Builder
	last := 0
	for k := 0; k < len(spans); {
		from, to := spans[k].from, spans[k].to
		k++
		for k < len(spans) && spans[k].from < to {
			to = max(to, spans[k].to)
			k++
		}
		b.WriteString(text[last:from])
		b.WriteString(Redacted)
		last = to
	}
	b.WriteString(text[last:])
	return b.String()
}

// RedactBytes is Redact over a byte slice; it returns a new slice.
func RedactBytes(b []byte, secrets ...string) []byte {
	return []byte(Redact(string(b), secrets...))
}

type form struct {
	s     string
	short bool
}

// formsOf lists every distinct encoded form of the secrets.
func formsOf(secrets []string) []form {
	seen := map[string]bool{}
	var out []form
	for _, sec := range secrets {
		if sec == "" {
			continue
		}
		short := len(sec) < MinSubstringLen
		for _, e := range encodings(sec) {
			if e == "" || seen[e] {
				continue
			}
			seen[e] = true
			out = append(out, form{s: e, short: short})
		}
	}
	return out
}

func encodings(sec string) []string {
	q := url.QueryEscape(sec)
	p := url.PathEscape(sec)
	out := []string{sec, q, lowerHex(q), p, lowerHex(p)}
	out = append(out, jsonForms(sec)...)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		out = append(out, enc.EncodeToString([]byte(sec)))
	}
	return out
}

// jsonForms returns the body of the JSON string literal of sec as common
// encoders write it.
func jsonForms(sec string) []string {
	var out []string
	if b, err := json.Marshal(sec); err == nil { // HTML-escaped, as encoding/json writes it
		out = append(out, string(b[1:len(b)-1]))
	}
	var sb strings.Builder
	enc := json.NewEncoder(&sb)
	enc.SetEscapeHTML(false)
	if enc.Encode(sec) == nil {
		s := strings.TrimSuffix(sb.String(), "\n")
		plain := s[1 : len(s)-1]
		out = append(out, plain, strings.ReplaceAll(plain, "/", `\/`))
		out = append(out, asciiJSON(plain))
	}
	return out
}

// asciiJSON \u-escapes every non-ASCII rune of an escaped JSON string body.
func asciiJSON(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf:
			b.WriteRune(r)
		case r > 0xFFFF:
			r1, r2 := utf16Pair(r)
			fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

func utf16Pair(r rune) (rune, rune) {
	r -= 0x10000
	return 0xD800 + (r>>10)&0x3FF, 0xDC00 + r&0x3FF
}

// lowerHex lowers the hex digits of %XX escapes.
func lowerHex(s string) string {
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			b[i+1] = lowerByte(b[i+1])
			b[i+2] = lowerByte(b[i+2])
			i += 2
		}
	}
	return string(b)
}

func lowerByte(c byte) byte {
	if 'A' <= c && c <= 'F' {
		return c + ('a' - 'A')
	}
	return c
}

// wholeToken reports whether text[from:to] (an occurrence of f) is not part
// of a longer word: the characters on either side do not continue a word
// that f's first or last character belongs to.
func wholeToken(text string, from, to int, f string) bool {
	if from > 0 {
		before, _ := utf8.DecodeLastRuneInString(text[:from])
		first, _ := utf8.DecodeRuneInString(f)
		if isWord(before) && isWord(first) {
			return false
		}
	}
	if to < len(text) {
		after, _ := utf8.DecodeRuneInString(text[to:])
		last, _ := utf8.DecodeLastRuneInString(f)
		if isWord(after) && isWord(last) {
			return false
		}
	}
	return true
}

func isWord(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}
