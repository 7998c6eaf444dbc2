package n8n

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/candorkit/candor/internal/canonjson"
)

// ID is an n8n identifier. n8n sends most ids as JSON strings and some as
// numbers ("id":134 on a deleted execution, "retryOf":6); ID accepts both and
// always encodes as a string. JSON null decodes to "".
type ID string

// UnmarshalJSON accepts a JSON string, an integer or null.
func (id *ID) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0:
		return errors.New("n8n: empty id")
	case string(b) == "null":
		*id = ""
		return nil
	case b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return fmt.Errorf("n8n: id: %w", err)
		}
		*id = ID(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("n8n: id %s is neither a string nor a number", clip(string(b), 40))
	}
	if _, err := n.Int64(); err != nil {
		return fmt.Errorf("n8n: id %s is not an integer", clip(string(b), 40))
	}
	*id = ID(n.String())
	return nil
}

// String returns the id.
func (id ID) String() string { return string(id) }

// Workflow is an n8n workflow as n8n's JSON represents it. Fields n8n sends
// that have no Go field here (pinData, meta, shared, activeVersion,
// versionCounter, description, …) are kept in Extra, and a field that was
// present in the input is present in the output even when empty, so decoding
// and encoding again loses nothing. Encoding sorts object keys.
type Workflow struct {
	ID     ID
	Name   string
	Active bool
	Nodes  []Node
	// Connections maps a source node name to its outputs.
	Connections Connections
	// Settings is the settings object as sent by n8n (n8n rejects unknown keys).
	Settings json.RawMessage
	// StaticData is run-time state kept by triggers.
	StaticData json.RawMessage
	// VersionID is the version of the saved definition (the draft on n8n 2.x).
	VersionID string
	// ActiveVersionID is the version that is live (published); empty or
	// absent when the workflow is inactive, and absent on older editions.
	ActiveVersionID string
	Tags            []Tag
	CreatedAt       string
	UpdatedAt       string
	// Extra holds every other top-level field verbatim.
	Extra map[string]json.RawMessage

	present []string
}

// Node is one node of a workflow.
type Node struct {
	// ID is the node's UUID.
	ID          string
	Name        string
	Type        string
	TypeVersion float64
	// Position is [x, y] on the canvas.
	Position   []float64
	Parameters json.RawMessage
	// Credentials maps a credential type to the credential used.
	Credentials map[string]CredentialRef
	// WebhookID fixes a webhook's production path; without it n8n serves the
	// path under <workflowId>/webhook/.
	WebhookID string
	Disabled  bool
	// Extra holds every other field verbatim (notes, retryOnFail, …).
	Extra map[string]json.RawMessage

	present []string
}

// CredentialRef names the credential a node uses. n8n resolves a reference
// by name alone to the first credential with that name; give the id when it
// is known.
type CredentialRef struct {
	ID   ID     `json:"id,omitempty"`
	Name string `json:"name"`
}

// Connections maps a source node name to its outputs by connection type
// ("main", "ai_tool", …); each output lists its targets.
type Connections map[string]map[string][][]Connection

// Connection is one edge to a target node's input.
type Connection struct {
	Node  string `json:"node"`
	Type  string `json:"type"`
	Index int    `json:"index"`
}

// Tag is a workflow tag.
type Tag struct {
	ID        ID     `json:"id,omitempty"`
	Name      string `json:"name"`
	CreatedAt string `json:"createdAt,omitempty"`
	UpdatedAt string `json:"updatedAt,omitempty"`
}

// Node returns the node with the given name.
func (w *Workflow) Node(name string) (*Node, bool) {
	for i := range w.Nodes {
		if w.Nodes[i].Name == name {
			return &w.Nodes[i], true
		}
	}
	return nil, false
}

// Clone returns a deep copy of w.
func (w *Workflow) Clone() *Workflow {
	c := *w
	c.Settings = bytes.Clone(w.Settings)
	c.StaticData = bytes.Clone(w.StaticData)
	c.Tags = slices.Clone(w.Tags)
	c.Extra = cloneRaw(w.Extra)
	c.present = slices.Clone(w.present)
	if w.Nodes != nil {
		c.Nodes = make([]Node, len(w.Nodes))
		for i, n := range w.Nodes {
			n.Position = slices.Clone(n.Position)
			n.Parameters = bytes.Clone(n.Parameters)
			n.Extra = cloneRaw(n.Extra)
			n.present = slices.Clone(n.present)
			if n.Credentials != nil {
				creds := make(map[string]CredentialRef, len(n.Credentials))
				for k, v := range n.Credentials {
					creds[k] = v
				}
				n.Credentials = creds
			}
			c.Nodes[i] = n
		}
	}
	if w.Connections != nil {
		c.Connections = make(Connections, len(w.Connections))
		for src, byType := range w.Connections {
			if byType == nil {
				c.Connections[src] = nil
				continue
			}
			m := make(map[string][][]Connection, len(byType))
			for typ, outputs := range byType {
				if outputs == nil {
					m[typ] = nil
					continue
				}
				outs := make([][]Connection, len(outputs))
				for i, o := range outputs {
					outs[i] = slices.Clone(o)
				}
				m[typ] = outs
			}
			c.Connections[src] = m
		}
	}
	return &c
}

func cloneRaw(m map[string]json.RawMessage) map[string]json.RawMessage {
	if m == nil {
		return nil
	}
	out := make(map[string]json.RawMessage, len(m))
	for k, v := range m {
		out[k] = bytes.Clone(v)
	}
	return out
}

type object map[string]json.RawMessage

func splitObject(b []byte, what string) (object, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return nil, fmt.Errorf("n8n: %s is not a JSON object", what)
	}
	var o object
	if err := json.Unmarshal(b, &o); err != nil {
		return nil, fmt.Errorf("n8n: %s: %w", what, err)
	}
	return o, nil
}

// take moves key from o into dst, recording its presence.
func take(o object, key string, dst any, present *[]string, what string) error {
	raw, ok := o[key]
	if !ok {
		return nil
	}
	delete(o, key)
	*present = append(*present, key)
	if string(bytes.TrimSpace(raw)) == "null" {
		if rm, ok := dst.(*json.RawMessage); ok {
			*rm = json.RawMessage("null")
		}
		return nil
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return fmt.Errorf("n8n: %s field %q: %w", what, key, err)
	}
	return nil
}

// put sets key in o when the value is non-empty or was present in the input.
func put(o object, key string, v any, nonEmpty bool, present []string) error {
	if !nonEmpty && !slices.Contains(present, key) {
		return nil
	}
	if rm, ok := v.(json.RawMessage); ok && len(rm) == 0 {
		v = nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("n8n: encoding %q: %w", key, err)
	}
	o[key] = b
	return nil
}

func withExtra(extra map[string]json.RawMessage) object {
	o := make(object, len(extra)+12)
	for k, v := range extra {
		o[k] = v
	}
	return o
}

// UnmarshalJSON decodes n8n's workflow JSON, keeping unknown fields in Extra.
func (w *Workflow) UnmarshalJSON(b []byte) error {
	o, err := splitObject(b, "workflow")
	if err != nil {
		return err
	}
	*w = Workflow{}
	steps := []struct {
		key string
		dst any
	}{
		{"id", &w.ID}, {"name", &w.Name}, {"active", &w.Active}, {"nodes", &w.Nodes},
		{"connections", &w.Connections}, {"settings", &w.Settings}, {"staticData", &w.StaticData},
		{"versionId", &w.VersionID}, {"activeVersionId", &w.ActiveVersionID}, {"tags", &w.Tags},
		{"createdAt", &w.CreatedAt}, {"updatedAt", &w.UpdatedAt},
	}
	for _, s := range steps {
		if err := take(o, s.key, s.dst, &w.present, "workflow"); err != nil {
			return err
		}
	}
	if len(o) > 0 {
		w.Extra = o
	}
	return nil
}

// MarshalJSON encodes the workflow with its unknown fields, keys sorted.
func (w Workflow) MarshalJSON() ([]byte, error) {
	o := withExtra(w.Extra)
	steps := []struct {
		key      string
		v        any
		nonEmpty bool
	}{
		{"id", w.ID, w.ID != ""},
		{"name", w.Name, true},
		{"active", w.Active, w.Active},
		{"nodes", nonNilNodes(w.Nodes), true},
		{"connections", nonNilConnections(w.Connections), true},
		{"settings", w.Settings, len(w.Settings) > 0},
		{"staticData", w.StaticData, len(w.StaticData) > 0},
		{"versionId", w.VersionID, w.VersionID != ""},
		{"activeVersionId", w.ActiveVersionID, w.ActiveVersionID != ""},
		{"tags", w.Tags, w.Tags != nil},
		{"createdAt", w.CreatedAt, w.CreatedAt != ""},
		{"updatedAt", w.UpdatedAt, w.UpdatedAt != ""},
	}
	for _, s := range steps {
		if err := put(o, s.key, s.v, s.nonEmpty, w.present); err != nil {
			return nil, err
		}
	}
	return json.Marshal(o)
}

func nonNilNodes(n []Node) []Node {
	if n == nil {
		return []Node{}
	}
	return n
}

func nonNilConnections(c Connections) Connections {
	if c == nil {
		return Connections{}
	}
	return c
}

// UnmarshalJSON decodes a node, keeping unknown fields in Extra.
func (n *Node) UnmarshalJSON(b []byte) error {
	o, err := splitObject(b, "node")
	if err != nil {
		return err
	}
	*n = Node{}
	steps := []struct {
		key string
		dst any
	}{
		{"id", &n.ID}, {"name", &n.Name}, {"type", &n.Type}, {"typeVersion", &n.TypeVersion},
		{"position", &n.Position}, {"parameters", &n.Parameters}, {"credentials", &n.Credentials},
		{"webhookId", &n.WebhookID}, {"disabled", &n.Disabled},
	}
	for _, s := range steps {
		if err := take(o, s.key, s.dst, &n.present, "node"); err != nil {
			return err
		}
	}
	if len(o) > 0 {
		n.Extra = o
	}
	return nil
}

// MarshalJSON encodes the node with its unknown fields, keys sorted.
func (n Node) MarshalJSON() ([]byte, error) {
	o := withExtra(n.Extra)
	params := n.Parameters
	if len(params) == 0 && !slices.Contains(n.present, "parameters") {
		params = json.RawMessage("{}")
	}
	steps := []struct {
		key      string
		v        any
		nonEmpty bool
	}{
		{"id", n.ID, n.ID != ""},
		{"name", n.Name, true},
		{"type", n.Type, true},
		{"typeVersion", n.TypeVersion, true},
		{"position", n.Position, n.Position != nil},
		{"parameters", params, true},
		{"credentials", n.Credentials, n.Credentials != nil},
		{"webhookId", n.WebhookID, n.WebhookID != ""},
		{"disabled", n.Disabled, n.Disabled},
	}
	for _, s := range steps {
		if err := put(o, s.key, s.v, s.nonEmpty, n.present); err != nil {
			return nil, err
		}
	}
	return json.Marshal(o)
}

// ParseWorkflow decodes workflow JSON. The document must be one strict JSON
// value (no data after it, no repeated key, no lone surrogate escape: a
// error naming the byte offset). It checks the JSON shape
// only; use Validate for n8n's rules.
func ParseWorkflow(data []byte) (*Workflow, error) {
	if _, err := canonjson.Canonicalize(data); err != nil {
		var ce *canonjson.Error
		if errors.As(err, &ce) {
			return nil, fmt.Errorf("n8n: workflow JSON at byte %d: %s", ce.Offset, ce.Reason)
		}
		return nil, fmt.Errorf("n8n: workflow JSON: %w", err)
	}
	var w Workflow
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, err
	}
	return &w, nil
}

// canonicalJSON is the one strict canonical form of the module
// (internal/canonjson: one value and nothing after it, no duplicate keys,
// no lone surrogates, keys sorted, numbers verbatim, no HTML escaping),
// indented by two spaces with a final newline, so equal documents have
// equal bytes and a file diffs line by line.
func canonicalJSON(data []byte) ([]byte, error) {
	c, err := canonjson.Canonicalize(data)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, c, "", "  "); err != nil {
		return nil, err
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}

// isWebhookType reports node types whose production URL comes from webhookId.
func isWebhookType(t string) bool {
	switch t {
	case "n8n-nodes-base.webhook", "n8n-nodes-base.formTrigger",
		"@n8n/n8n-nodes-langchain.chatTrigger", "@n8n/n8n-nodes-langchain.mcpTrigger":
		return true
	}
	return strings.HasSuffix(strings.ToLower(t), ".webhook")
}
