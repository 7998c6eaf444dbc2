package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/candorkit/candor/internal/httpx"
)

// maxViolation bounds the text of one schema violation.
const maxViolation = 256

// toolSchemas are the compiled schemas of one listed tool. A schema that
// cannot be compiled (a remote $ref, an unsupported draft) is kept as the
// reason: calls to that tool are refused rather than sent unchecked.
type toolSchemas struct {
	tool    Tool
	in, out *compiled
}

// compiled is one resolved schema, with the resolved schema of each
// top-level property (when it resolves on its own) to list every property
// that does not match, where the validator stops at its first finding.
type compiled struct {
	root     *jsonschema.Resolved
	required []string
	props    map[string]*jsonschema.Resolved
	err      error // why the schema cannot be used
}

func compile(raw json.RawMessage) *compiled {
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return &compiled{err: fmt.Errorf("it does not decode: %v", err)}
	}
	// No loader: a remote $ref is never fetched, it makes the schema unusable.
	r, err := s.Resolve(nil)
	if err != nil {
		return &compiled{err: err}
	}
	c := &compiled{root: r, required: s.Required}
	if len(s.Properties) > 0 {
		c.props = make(map[string]*jsonschema.Resolved, len(s.Properties))
		for name, ps := range s.Properties {
			one := &jsonschema.Schema{
				Schema: s.Schema, ID: s.ID, Defs: s.Defs, Definitions: s.Definitions,
				Properties: map[string]*jsonschema.Schema{name: ps},
			}
			if pr, err := one.Resolve(nil); err == nil {
				c.props[name] = pr
			}
		}
	}
	return c
}

// violations validates the JSON value raw and returns what does not match
// (nil when it matches).
func (c *compiled) violations(raw []byte) []string {
	if c.err != nil {
		return []string{excerpt("the schema cannot be used to validate: " + c.err.Error())}
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return []string{excerpt("the value is not JSON: " + err.Error())}
	}
	err := c.root.Validate(v)
	if err == nil {
		return nil
	}
	var out []string
	if obj, ok := v.(map[string]any); ok {
		for _, name := range c.required {
			if _, ok := obj[name]; !ok {
				out = append(out, excerpt(fmt.Sprintf("required property %q is missing", name)))
			}
		}
		names := make([]string, 0, len(c.props))
		for name := range c.props {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			if _, present := obj[name]; !present {
				continue
			}
			if perr := c.props[name].Validate(obj); perr != nil {
				out = append(out, excerpt(fmt.Sprintf("property %q: %v", name, perr)))
			}
		}
	}
	if len(out) == 0 {
		out = append(out, excerpt(err.Error()))
	}
	return out
}

// excerpt bounds a violation's text, without the validator's prefix that
// names the root schema.
func excerpt(s string) string {
	s = strings.Replace(s, "validating root: ", "", 1)
	return httpx.Excerpt([]byte(s), maxViolation)
}

// buildIndex compiles the schemas of a complete tool list.
func buildIndex(tools []Tool) (*toolIndex, error) {
	idx := &toolIndex{tools: make(map[string]*toolSchemas, len(tools))}
	for _, t := range tools {
		ts := &toolSchemas{tool: t, in: compile(t.InputSchema)}
		if t.OutputSchema != nil {
			ts.out = compile(t.OutputSchema)
		}
		idx.tools[t.Name] = ts
	}
	return idx, nil
}

// checksSchemas reports whether calls on s are checked against the
// tools' schemas: with WithToolSchemas, or once a complete ListTools gave
// the session its list.
func (c *Client) checksSchemas(s *session) bool {
	if c.cfg.toolSchemas {
		return true
	}
	idx, _ := s.tools.get()
	return idx != nil
}

// schemasFor returns the schemas of tool on session s, listing the tools
// first when the session has no list yet or a list_changed notification
// made it stale, and once more when the tool is not in a list read earlier.
// A tool not in a fresh list is ErrUnknownTool.
func (c *Client) schemasFor(ctx context.Context, s *session, tool string) (*toolSchemas, error) {
	idx, stale := s.tools.get()
	if idx != nil && !stale {
		if ts := idx.tools[tool]; ts != nil {
			return ts, nil
		}
	}
	s.tools.listMu.Lock()
	defer s.tools.listMu.Unlock()
	if nidx, nstale := s.tools.get(); nidx != idx || nstale != stale {
		// Another call listed the tools meanwhile.
		if nidx != nil && !nstale {
			if ts := nidx.tools[tool]; ts != nil {
				return ts, nil
			}
			return nil, unknownTool(tool)
		}
	}
	var all []Tool
	ls, _, err := c.listTools(ctx, s, ListToolsOptions{}, func(t Tool) bool {
		all = append(all, t)
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("mcpclient: tool %q: listing the tools to check its schemas: %w", tool, err)
	}
	nidx, err := buildIndex(all)
	if err != nil {
		return nil, err
	}
	ls.tools.set(nidx)
	if ts := nidx.tools[tool]; ts != nil {
		return ts, nil
	}
	return nil, unknownTool(tool)
}

func unknownTool(tool string) error {
	return &usageError{msg: fmt.Sprintf("mcpclient: tool %q: not in the server's tool list (nothing was sent)", tool), err: ErrUnknownTool}
}

// checkArgs validates the encoded arguments against the tool's inputSchema.
func (ts *toolSchemas) checkArgs(args json.RawMessage) error {
	if v := ts.in.violations(args); v != nil {
		return &SchemaError{Tool: ts.tool.Name, Schema: "inputSchema", Violations: v}
	}
	return nil
}

// checkResult validates a successful result against the tool's
// outputSchema: a tool that declares one must answer a structuredContent
// that matches it.
func (ts *toolSchemas) checkResult(res *Result) error {
	if ts == nil || ts.out == nil {
		return nil
	}
	if res.Structured == nil {
		return &MalformedResultError{Tool: ts.tool.Name, Raw: res.Raw, Reason: "the tool declares an outputSchema but the result has no structuredContent",
			Err: &SchemaError{Tool: ts.tool.Name, Schema: "outputSchema", Violations: []string{"structuredContent is missing"}}}
	}
	if v := ts.out.violations(res.Structured); v != nil {
		se := &SchemaError{Tool: ts.tool.Name, Schema: "outputSchema", Violations: v}
		return &MalformedResultError{Tool: ts.tool.Name, Raw: res.Raw, Reason: "structuredContent does not match the tool's outputSchema", Err: se}
	}
	return nil
}
