package reply

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Reply is a decoded contract reply.
type Reply struct {
	// Answer is the workflow's text for the person; never blank.
	Answer string `json:"answer"`
	// Escalate is true when the workflow asks for a person to take over.
	Escalate bool `json:"escalate"`
}

// Decode decodes body as the contract {"answer": string, "escalate": bool}.
func Decode(body []byte) (Reply, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return Reply{}, ErrEmpty
	}
	r, reason := decode(body)
	if reason != "" {
		return Reply{}, &ContractError{Reason: reason, Raw: bytes.Clone(body)}
	}
	return r, nil
}

func decode(body []byte) (Reply, string) {
	if !utf8.Valid(body) {
		return Reply{}, "body is not valid UTF-8"
	}
	if !json.Valid(body) {
		return Reply{}, "body is not JSON"
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return Reply{}, "body is not JSON"
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return Reply{}, fmt.Sprintf("body is a JSON %s, not an object", kind(tok))
	}
	var (
		r                   Reply
		haveAnswer, haveEsc bool
	)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return Reply{}, "body is not JSON"
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return Reply{}, "body is not JSON"
		}
		switch key {
		case "answer":
			if haveAnswer {
				return Reply{}, `key "answer" appears twice`
			}
			haveAnswer = true
			if len(raw) == 0 || raw[0] != '"' {
				return Reply{}, `"answer" is not a string`
			}
			if err := json.Unmarshal(raw, &r.Answer); err != nil {
				return Reply{}, `"answer" is not a string`
			}
		case "escalate":
			if haveEsc {
				return Reply{}, `key "escalate" appears twice`
			}
			haveEsc = true
			switch string(raw) {
			case "true":
				r.Escalate = true
			case "false":
				r.Escalate = false
			default:
				return Reply{}, `"escalate" is not a boolean`
			}
		default:
			return Reply{}, fmt.Sprintf("unexpected key %q", key)
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return Reply{}, "body is not JSON"
	}
	if _, err := dec.Token(); err != io.EOF {
		return Reply{}, "data after the JSON object"
	}
	switch {
	case !haveAnswer:
		return Reply{}, `missing key "answer"`
	case !haveEsc:
		return Reply{}, `missing key "escalate"`
	case strings.TrimSpace(r.Answer) == "":
		return Reply{}, `"answer" is blank`
	}
	return r, ""
}

func kind(tok json.Token) string {
	switch tok.(type) {
	case json.Delim:
		return "array"
	case string:
		return "string"
	case json.Number:
		return "number"
	case bool:
		return "boolean"
	case nil:
		return "null"
	}
	return "value"
}
