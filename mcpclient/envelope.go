package mcpclient

import (
	"bytes"
	"encoding/json"
	"errors"
	"unicode/utf8"
)

// member is one member of a JSON object, in the order received: its name
// (unescaped) and its value, both slices of the object's bytes unless the
// name had escapes.
type member struct {
	key   []byte
	value json.RawMessage
}

var errNotObject = errors.New("not a JSON object")

// members splits the JSON object raw into its members, in order,
// duplicates included: a map would keep only the last of two equal names.
// raw must be one JSON object (surrounding white space allowed).
func members(raw []byte) ([]member, error) {
	if !json.Valid(raw) {
		return nil, errNotObject
	}
	// raw is valid JSON: the scan below only has to find the boundaries.
	i := skipSpace(raw, 0)
	if raw[i] != '{' {
		return nil, errNotObject
	}
	i++
	out := make([]member, 0, 8)
	for {
		i = skipSpace(raw, i)
		switch raw[i] {
		case '}':
			return out, nil
		case ',':
			i = skipSpace(raw, i+1)
		}
		kend := skipString(raw, i)
		key := raw[i+1 : kend-1]
		if bytes.IndexByte(key, '\\') >= 0 || !utf8.Valid(key) {
			// Unescape as encoding/json does (invalid UTF-8 becomes U+FFFD).
			var k string
			if err := json.Unmarshal(raw[i:kend], &k); err != nil {
				return nil, errNotObject
			}
			key = []byte(k)
		}
		i = skipSpace(raw, kend) + 1 // the colon
		i = skipSpace(raw, i)
		vend := skipValue(raw, i)
		out = append(out, member{key: key, value: raw[i:vend]})
		i = vend
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] ('"').
func skipString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(b)
}

// skipValue returns the index after the value starting at b[i].
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = skipString(b, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return len(b)
	}
	j := i // a number, true, false or null
	for ; j < len(b); j++ {
		switch b[j] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return j
		}
	}
	return j
}

// envelope is a JSON-RPC response message.
type envelope struct {
	id        json.RawMessage
	result    json.RawMessage
	errObj    json.RawMessage
	hasResult bool
	hasError  bool
}

// parseEnvelope reads a JSON-RPC response strictly. mcp-go, like
// encoding/json, matches member names case-insensitively and keeps the
// last of two equal ones, so a second "result" or "error" member could
// replace the first unseen: every spelling of id, result and error counts,
// and any of them given twice is refused, as is a response with both a
// result and an error or with neither.
func parseEnvelope(raw []byte) (envelope, string) {
	ms, err := members(raw)
	if err != nil {
		return envelope{}, "response: " + err.Error()
	}
	var env envelope
	var seenID, seenResult, seenError bool
	twice := func(name string) (envelope, string) {
		return envelope{}, "response has the member " + name + " twice"
	}
	for _, m := range ms {
		switch {
		case bytes.EqualFold(m.key, []byte("id")):
			if seenID {
				return twice("id")
			}
			seenID, env.id = true, m.value
		case bytes.EqualFold(m.key, []byte("result")):
			if seenResult {
				return twice("result")
			}
			seenResult = true
			env.result, env.hasResult = m.value, !isNull(m.value)
		case bytes.EqualFold(m.key, []byte("error")):
			if seenError {
				return twice("error")
			}
			seenError = true
			env.errObj, env.hasError = m.value, !isNull(m.value)
		}
	}
	switch {
	case env.hasResult && env.hasError:
		return envelope{}, "response has both a result and an error"
	case !env.hasResult && !env.hasError:
		return envelope{}, "response has neither a result nor an error"
	}
	return env, ""
}

// rpcError decodes the error member of a response; Data keeps its exact
// bytes.
func rpcError(raw json.RawMessage) (code int, message string, data json.RawMessage, ok bool) {
	var e struct {
		Code    *int            `json:"code"`
		Message *string         `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	if json.Unmarshal(raw, &e) != nil || e.Code == nil {
		return 0, "", nil, false
	}
	if e.Message != nil {
		message = *e.Message
	}
	if len(e.Data) > 0 && !isNull(e.Data) {
		data = e.Data
	}
	return *e.Code, message, data, true
}
