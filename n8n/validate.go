package n8n

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/candorkit/candor/internal/canonjson"
)

// Problem is one rule a workflow breaks. Path is a JSON path into the
// workflow document: fixed field names as .name, array indexes as [i], and
// keys that come from the document (node names, connection types,
// credential types) as ["key"], JSON-quoted; for example
// $.nodes[2].position or $.connections["Webhook"]["main"][0][0].node.
type Problem struct {
	Path    string
	Message string
}

func (p Problem) String() string { return p.Path + ": " + p.Message }

var uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// Validate checks wf against the rules n8n enforces late or not at all:
//
//   - name, nodes and connections are present; settings, when present, is an object;
//   - every node has an id that is a UUID and unique, a non-blank name that is
//     unique, a type ("package.node"), a positive typeVersion, a position [x, y]
//     of two finite numbers and a parameters object;
//   - every connection starts at an existing node and names an existing target
//     node, a connection type and a non-negative input index;
//   - webhook-like nodes carry a webhookId (else n8n serves them under
//     <workflowId>/webhook/<path>, which changes with the workflow);
//   - credentials are referenced by a non-blank name, and by a non-blank id
//     when an id is given.
//
// Problems are sorted by path. An empty result means none of these rules is
// broken, not that n8n will accept the workflow (unknown node types and taken
// webhook paths show up only at activation).
func Validate(wf *Workflow) []Problem {
	if wf == nil {
		return []Problem{{Path: "$", Message: "workflow is nil"}}
	}
	data, err := json.Marshal(wf)
	if err != nil {
		return []Problem{{Path: "$", Message: "workflow cannot be encoded: " + err.Error()}}
	}
	return ValidateJSON(data)
}

// ValidateJSON applies Validate's rules to workflow JSON, reporting a
// document that is not even a workflow as problems too.
//
// The document must be one strict JSON value: data after it (a stray "}"
// or "]" included), a key repeated in an object, or a lone surrogate escape
// is a problem at "$", because readers disagree on what such a document
// means.
func ValidateJSON(data []byte) []Problem {
	if _, err := canonjson.Canonicalize(data); err != nil {
		var ce *canonjson.Error
		if errors.As(err, &ce) {
			return []Problem{{Path: "$", Message: fmt.Sprintf("not strict JSON at byte %d: %s", ce.Offset, ce.Reason)}}
		}
		return []Problem{{Path: "$", Message: "not strict JSON: " + err.Error()}}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return []Problem{{Path: "$", Message: "not JSON: " + err.Error()}}
	}
	if dec.More() {
		return []Problem{{Path: "$", Message: "data after the JSON document"}}
	}
	v := &validator{}
	v.workflow(doc)
	sort.SliceStable(v.problems, func(i, j int) bool { return v.problems[i].Path < v.problems[j].Path })
	return v.problems
}

type validator struct {
	problems []Problem
}

func (v *validator) add(path, format string, args ...any) {
	v.problems = append(v.problems, Problem{Path: path, Message: fmt.Sprintf(format, args...)})
}

func (v *validator) workflow(doc any) {
	root, ok := doc.(map[string]any)
	if !ok {
		v.add("$", "workflow is %s, not an object", kindOf(doc))
		return
	}
	if name, ok := root["name"]; !ok {
		v.add("$.name", "required")
	} else if s, ok := name.(string); !ok || strings.TrimSpace(s) == "" {
		v.add("$.name", "must be a non-blank string")
	}
	if s, ok := root["settings"]; ok {
		if _, ok := s.(map[string]any); !ok {
			v.add("$.settings", "must be an object, not %s", kindOf(s))
		}
	}
	names := map[string]bool{}
	rawNodes, ok := root["nodes"]
	switch nodes, isArr := rawNodes.([]any); {
	case !ok:
		v.add("$.nodes", "required")
	case !isArr:
		v.add("$.nodes", "must be an array, not %s", kindOf(rawNodes))
	default:
		ids := map[string]int{}
		firstName := map[string]int{}
		for i, n := range nodes {
			v.node(fmt.Sprintf("$.nodes[%d]", i), n, i, ids, firstName)
		}
		for n := range firstName {
			names[n] = true
		}
	}
	rawConn, ok := root["connections"]
	switch conns, isObj := rawConn.(map[string]any); {
	case !ok:
		v.add("$.connections", "required")
	case !isObj:
		v.add("$.connections", "must be an object, not %s", kindOf(rawConn))
	default:
		v.connections(conns, names)
	}
}

func (v *validator) node(path string, raw any, i int, ids, names map[string]int) {
	n, ok := raw.(map[string]any)
	if !ok {
		v.add(path, "node is %s, not an object", kindOf(raw))
		return
	}
	switch id, ok := n["id"]; {
	case !ok:
		v.add(path+".id", "required (a UUID)")
	default:
		s, isStr := id.(string)
		switch {
		case !isStr:
			v.add(path+".id", "must be a string UUID, not %s", kindOf(id))
		case !uuidRE.MatchString(s):
			v.add(path+".id", "%q is not a UUID", clip(s, 60))
		default:
			key := strings.ToLower(s)
			if j, dup := ids[key]; dup {
				v.add(path+".id", "duplicates the id of $.nodes[%d]", j)
			} else {
				ids[key] = i
			}
		}
	}
	switch name, ok := n["name"]; {
	case !ok:
		v.add(path+".name", "required")
	default:
		s, isStr := name.(string)
		switch {
		case !isStr || strings.TrimSpace(s) == "":
			v.add(path+".name", "must be a non-blank string")
		default:
			if j, dup := names[s]; dup {
				v.add(path+".name", "%q is also the name of $.nodes[%d]; names must be unique", clip(s, 60), j)
			} else {
				names[s] = i
			}
		}
	}
	typ, _ := n["type"].(string)
	switch t, ok := n["type"]; {
	case !ok:
		v.add(path+".type", "required")
	case typ == "":
		v.add(path+".type", "must be a non-blank string, not %s", kindOf(t))
	case !strings.Contains(strings.Trim(typ, "."), "."):
		v.add(path+".type", "%q is not a node type (want package.node, e.g. n8n-nodes-base.webhook)", clip(typ, 60))
	}
	switch tv, ok := n["typeVersion"]; {
	case !ok:
		v.add(path+".typeVersion", "required")
	default:
		f, isNum := number(tv)
		if !isNum || f <= 0 {
			v.add(path+".typeVersion", "must be a positive number, not %s", show(tv))
		}
	}
	switch pos, ok := n["position"]; {
	case !ok:
		v.add(path+".position", "required ([x, y])")
	default:
		arr, isArr := pos.([]any)
		if !isArr || len(arr) != 2 {
			v.add(path+".position", "must be [x, y], not %s", show(pos))
			break
		}
		for k, c := range arr {
			if _, isNum := number(c); !isNum {
				v.add(fmt.Sprintf("%s.position[%d]", path, k), "must be a finite number, not %s", show(c))
			}
		}
	}
	switch p, ok := n["parameters"]; {
	case !ok:
		v.add(path+".parameters", "required (an object, {} when empty)")
	default:
		if _, isObj := p.(map[string]any); !isObj {
			v.add(path+".parameters", "must be an object, not %s", kindOf(p))
		}
	}
	if isWebhookType(typ) {
		if w, ok := n["webhookId"].(string); !ok || strings.TrimSpace(w) == "" {
			v.add(path+".webhookId", "a %s node needs a webhookId, else its production path changes with the workflow id", typ)
		}
	} else if w, ok := n["webhookId"]; ok {
		if _, isStr := w.(string); !isStr {
			v.add(path+".webhookId", "must be a string, not %s", kindOf(w))
		}
	}
	if c, ok := n["credentials"]; ok {
		creds, isObj := c.(map[string]any)
		if !isObj {
			v.add(path+".credentials", "must be an object, not %s", kindOf(c))
			return
		}
		for _, typ := range sortedKeys(creds) {
			cp := path + ".credentials" + member(typ)
			ref, isObj := creds[typ].(map[string]any)
			if !isObj {
				v.add(cp, "must be an object {id?, name}, not %s", kindOf(creds[typ]))
				continue
			}
			if name, ok := ref["name"].(string); !ok || strings.TrimSpace(name) == "" {
				v.add(cp+".name", "a credential is referenced by a non-blank name")
			}
			if id, ok := ref["id"]; ok && id != nil {
				s, isStr := id.(string)
				if _, isNum := id.(json.Number); isNum {
					isStr, s = true, id.(json.Number).String()
				}
				if !isStr || strings.TrimSpace(s) == "" {
					v.add(cp+".id", "must be a non-blank id when given, not %s", show(id))
				}
			}
		}
	}
}

func (v *validator) connections(conns map[string]any, names map[string]bool) {
	for _, src := range sortedKeys(conns) {
		sp := "$.connections" + member(src)
		if !names[src] {
			v.add(sp, "source node %q does not exist", clip(src, 60))
		}
		byType, ok := conns[src].(map[string]any)
		if !ok {
			v.add(sp, "must be an object of connection types, not %s", kindOf(conns[src]))
			continue
		}
		for _, ct := range sortedKeys(byType) {
			tp := sp + member(ct)
			outputs, ok := byType[ct].([]any)
			if !ok {
				v.add(tp, "must be an array of outputs, not %s", kindOf(byType[ct]))
				continue
			}
			for oi, out := range outputs {
				op := fmt.Sprintf("%s[%d]", tp, oi)
				if out == nil {
					continue // an output with no targets may be null
				}
				targets, ok := out.([]any)
				if !ok {
					v.add(op, "must be an array of targets, not %s", kindOf(out))
					continue
				}
				for ti, t := range targets {
					v.target(fmt.Sprintf("%s[%d]", op, ti), t, names)
				}
			}
		}
	}
}

func (v *validator) target(path string, raw any, names map[string]bool) {
	t, ok := raw.(map[string]any)
	if !ok {
		v.add(path, "target must be an object {node, type, index}, not %s", kindOf(raw))
		return
	}
	if node, ok := t["node"].(string); !ok || node == "" {
		v.add(path+".node", "must name the target node")
	} else if !names[node] {
		v.add(path+".node", "target node %q does not exist", clip(node, 60))
	}
	if typ, ok := t["type"].(string); !ok || typ == "" {
		v.add(path+".type", "must be a connection type such as \"main\"")
	}
	idx, ok := t["index"].(json.Number)
	if !ok {
		v.add(path+".index", "must be a non-negative integer, not %s", show(t["index"]))
		return
	}
	if n, err := idx.Int64(); err != nil || n < 0 {
		v.add(path+".index", "must be a non-negative integer, not %s", idx)
	}
}

func number(x any) (float64, bool) {
	n, ok := x.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

func kindOf(x any) string {
	switch x.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "a value"
}

func show(x any) string {
	switch t := x.(type) {
	case json.Number:
		return t.String()
	case string:
		return strconv.Quote(clip(t, 40))
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(t)
	}
	return kindOf(x)
}

// member formats an object key as a JSON path step.
func member(key string) string {
	b, _ := json.Marshal(key) // a string always encodes
	return "[" + string(b) + "]"
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
