package generate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// ErrNoWorkflow is matched by every *ExtractError.
var ErrNoWorkflow = errors.New("generate: no workflow JSON in the reply")

// maxEvidence bounds the reply text kept in an ExtractError.
const maxEvidence = 64 << 10

// scanBudget bounds the bytes extraction examines over all '{' positions it
// tries, so a hostile reply cannot make it quadratic.
const scanBudget = 32 << 20

// ExtractError says why no single workflow object could be taken from a reply.
type ExtractError struct {
	Reason string
	Reply  string // the reply, cut to 64 KiB
}

func (e *ExtractError) Error() string { return "generate: " + e.Reason }
func (e *ExtractError) Unwrap() error { return ErrNoWorkflow }

func extractErr(reason string, reply []byte) *ExtractError {
	if len(reply) > maxEvidence {
		reply = reply[:maxEvidence]
	}
	return &ExtractError{Reason: reason, Reply: string(reply)}
}

// ExtractObjects returns every top-level JSON object found in text, in order:
// prose and Markdown fences around them are ignored, and an object nested in
// another is part of it, not a separate result. An object must parse in full.
func ExtractObjects(text []byte) []json.RawMessage {
	var out []json.RawMessage
	budget := scanBudget
	for i := 0; i < len(text) && budget > 0; i++ {
		if text[i] != '{' {
			continue
		}
		end, scanned, ok := matchObject(text, i)
		budget -= scanned
		if !ok {
			continue
		}
		obj := text[i:end]
		if json.Valid(obj) {
			out = append(out, json.RawMessage(bytes.Clone(obj)))
			i = end - 1
		}
	}
	return out
}

// matchObject finds the end (exclusive) of the brace-balanced span starting at
// text[start] == '{', treating braces inside JSON strings as text, and how
// many bytes it examined.
func matchObject(text []byte, start int) (end, scanned int, ok bool) {
	depth, inString, escaped := 0, false, false
	for j := start; j < len(text); j++ {
		c := text[j]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return j + 1, j + 1 - start, c == '}'
			}
		}
	}
	return 0, len(text) - start, false
}

// ExtractWorkflow takes the one workflow object from a model's reply: a JSON
// object that parses and has "nodes" (an array) and "connections" (an
// object). None, or more than one, is an *ExtractError.
func ExtractWorkflow(reply []byte) (json.RawMessage, error) {
	if len(bytes.TrimSpace(reply)) == 0 {
		return nil, extractErr("the reply is empty", reply)
	}
	objs := ExtractObjects(reply)
	if len(objs) == 0 {
		return nil, extractErr("the reply holds no JSON object that parses", reply)
	}
	var found []json.RawMessage
	for _, o := range objs {
		var shape struct {
			Nodes       json.RawMessage `json:"nodes"`
			Connections json.RawMessage `json:"connections"`
		}
		if json.Unmarshal(o, &shape) != nil {
			continue
		}
		n, c := bytes.TrimSpace(shape.Nodes), bytes.TrimSpace(shape.Connections)
		if len(n) > 0 && n[0] == '[' && len(c) > 0 && c[0] == '{' {
			found = append(found, o)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return nil, extractErr(fmt.Sprintf("none of the %d JSON object(s) in the reply has a \"nodes\" array and a \"connections\" object", len(objs)), reply)
	default:
		return nil, extractErr(fmt.Sprintf("the reply holds %d workflow objects; expected exactly one", len(found)), reply)
	}
}
