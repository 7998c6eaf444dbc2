package mcpauth

import (
	"net/http"
	"strings"
)

// challenge is one challenge of a WWW-Authenticate header (RFC 9110
// §11.6.1): a scheme with either auth-params or a token68.
type challenge struct {
	scheme  string            // lower case
	params  map[string]string // names lower case
	token68 string
}

// bearerParams returns the parameters of the first Bearer challenge in h,
// and whether there is one.
func bearerParams(h http.Header) (map[string]string, bool) {
	for _, c := range parseChallenges(h.Values("WWW-Authenticate")) {
		if c.scheme == "bearer" {
			return c.params, true
		}
	}
	return nil, false
}

// parseChallenges reads every challenge of the given header values. What
// cannot be parsed ends the value it is in; nothing is guessed.
func parseChallenges(values []string) []challenge {
	var out []challenge
	for _, v := range values {
		p := &hdrParser{s: v}
		for {
			p.skip(" \t,")
			if p.done() {
				break
			}
			scheme := p.token()
			if scheme == "" {
				break
			}
			c := challenge{scheme: strings.ToLower(scheme), params: map[string]string{}}
			p.skip(" \t")
			if t, ok := p.token68(); ok {
				c.token68 = t
				out = append(out, c)
				continue
			}
			for {
				mark := p.i
				p.skip(" \t,")
				name := p.token()
				if name == "" {
					p.i = mark
					break
				}
				p.skip(" \t")
				if p.peek() != '=' {
					p.i = mark // the next challenge's scheme
					break
				}
				p.i++
				p.skip(" \t")
				var val string
				if p.peek() == '"' {
					var ok bool
					if val, ok = p.quoted(); !ok {
						out = append(out, c)
						return out
					}
				} else {
					val = p.token()
				}
				c.params[strings.ToLower(name)] = val
				p.skip(" \t")
				if p.peek() == ',' {
					p.i++
					continue
				}
				if !p.done() {
					// Neither a separator nor the end: the value is malformed.
					out = append(out, c)
					return out
				}
			}
			out = append(out, c)
		}
	}
	return out
}

type hdrParser struct {
	s string
	i int
}

func (p *hdrParser) done() bool { return p.i >= len(p.s) }

func (p *hdrParser) peek() byte {
	if p.done() {
		return 0
	}
	return p.s[p.i]
}

func (p *hdrParser) skip(set string) {
	for !p.done() && strings.IndexByte(set, p.s[p.i]) >= 0 {
		p.i++
	}
}

// tchar is RFC 9110's token character.
func tchar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

func (p *hdrParser) token() string {
	start := p.i
	for !p.done() && tchar(p.s[p.i]) {
		p.i++
	}
	return p.s[start:p.i]
}

// token68 reads a token68 (RFC 9110 §11.2) when what follows the scheme is
// one: token68 characters, then optional '=' padding, then the end or a
// comma. Otherwise it reads nothing.
func (p *hdrParser) token68() (string, bool) {
	j := p.i
	for j < len(p.s) && (tchar68(p.s[j])) {
		j++
	}
	if j == p.i {
		return "", false
	}
	k := j
	for k < len(p.s) && p.s[k] == '=' {
		k++
	}
	rest := k
	for rest < len(p.s) && (p.s[rest] == ' ' || p.s[rest] == '\t') {
		rest++
	}
	if rest < len(p.s) && p.s[rest] != ',' {
		return "", false // an auth-param list ("name=value")
	}
	if k == j && rest < len(p.s) && p.s[rest] == ',' {
		// "Scheme word, next=..." is ambiguous; a bare word followed by a
		// comma is read as a token68 only when nothing else is possible.
		return "", false
	}
	t := p.s[p.i:k]
	p.i = k
	return t, true
}

func tchar68(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("-._~+/", c) >= 0
}

// quoted reads a quoted-string with backslash escapes.
func (p *hdrParser) quoted() (string, bool) {
	p.i++ // opening quote
	var b strings.Builder
	for !p.done() {
		c := p.s[p.i]
		switch c {
		case '"':
			p.i++
			return b.String(), true
		case '\\':
			p.i++
			if p.done() {
				return "", false
			}
			c = p.s[p.i]
		}
		b.WriteByte(c)
		p.i++
	}
	return "", false
}

// scopeList splits a space-separated scope value.
func scopeList(s string) []string { return strings.Fields(s) }
