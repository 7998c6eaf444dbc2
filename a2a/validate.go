package a2a

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// checkSendParams checks the params of a SendMessage (1.0) or message/send
// (0.3) call before a2a-go decodes them, so that a message missing a field
// the spec requires is -32602 Invalid params in both versions (a2a-go
// answers some of them as a parse error or as an unsupported content type).
// It returns "" when the params are acceptable, else the reason.
func checkSendParams(params json.RawMessage, v10 bool) string {
	var p map[string]json.RawMessage
	if !isObject(params) || json.Unmarshal(params, &p) != nil {
		return "params must be an object holding a message"
	}
	raw, ok := p["message"]
	if !ok || !isObject(raw) {
		return `params.message is required and must be an object`
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return `params.message must be an object`
	}
	if !isNonEmptyString(m["messageId"]) {
		return "message.messageId is required"
	}
	var role string
	_ = json.Unmarshal(m["role"], &role)
	if v10 {
		if role != "ROLE_USER" && role != "ROLE_AGENT" {
			return `message.role must be "ROLE_USER" or "ROLE_AGENT"`
		}
	} else {
		if k, has := m["kind"]; has && string(bytes.TrimSpace(k)) != `"message"` {
			return `message.kind must be "message"`
		}
		if role != "user" && role != "agent" {
			return `message.role must be "user" or "agent"`
		}
	}
	var parts []json.RawMessage
	if json.Unmarshal(m["parts"], &parts) != nil || parts == nil {
		return "message.parts is required and must be an array"
	}
	if len(parts) == 0 {
		return "message.parts must hold at least one part"
	}
	for i, part := range parts {
		if reason := checkPart(part, v10); reason != "" {
			return fmt.Sprintf("message.parts[%d]: %s", i, reason)
		}
	}
	return ""
}

func checkPart(raw json.RawMessage, v10 bool) string {
	var p map[string]json.RawMessage
	if !isObject(raw) || json.Unmarshal(raw, &p) != nil {
		return "a part must be an object"
	}
	if v10 {
		n := 0
		for _, k := range []string{"text", "raw", "url", "data"} {
			if _, has := p[k]; has {
				n++
			}
		}
		if n != 1 {
			return `a part holds exactly one of "text", "raw", "url" and "data"`
		}
		if t, has := p["text"]; has && !isString(t) {
			return `"text" must be a string`
		}
		return ""
	}
	var kind string
	if json.Unmarshal(p["kind"], &kind) != nil || kind == "" {
		return `"kind" is required ("text", "file" or "data")`
	}
	switch kind {
	case "text":
		if !isString(p["text"]) {
			return `a text part needs a string "text"`
		}
	case "file":
		if !isObject(p["file"]) {
			return `a file part needs an object "file"`
		}
	case "data":
		if !isObject(p["data"]) {
			return `a data part needs an object "data"`
		}
	default:
		return fmt.Sprintf(`unknown part kind %q`, kind)
	}
	return ""
}

func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}

func isString(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '"'
}

func isNonEmptyString(raw json.RawMessage) bool {
	var s string
	return isString(raw) && json.Unmarshal(raw, &s) == nil && s != ""
}

// isRead reports the methods whose params may carry historyLength.
func isRead(method string) bool {
	switch method {
	case "tasks/get", "GetTask", "ListTasks", "tasks/list":
		return true
	}
	return false
}

// checkHistoryLength refuses a negative historyLength, which no task can
// honour (a2a-go would read it as "everything").
func checkHistoryLength(params json.RawMessage) string {
	var p struct {
		HistoryLength *json.Number `json:"historyLength"`
	}
	if !isObject(params) || json.Unmarshal(params, &p) != nil || p.HistoryLength == nil {
		return ""
	}
	if n, err := p.HistoryLength.Int64(); err == nil && n < 0 {
		return "historyLength must not be negative"
	}
	return ""
}
