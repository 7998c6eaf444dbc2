package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"sync"

	"github.com/candorkit/candor/internal/httpx"
	"github.com/candorkit/candor/internal/scan"
)

const methodToolsList = "tools/list"

// ServerInfo is what the server said about itself in its answer to
// initialize, for the current session.
type ServerInfo struct {
	// Name, Version and Title are the initialize result's serverInfo.
	Name, Version, Title string
	// ProtocolVersion is the protocol version the server agreed to.
	ProtocolVersion string
	// Instructions are the server's instructions for the model ("" if none).
	Instructions string
	// Capabilities are what the server offers.
	Capabilities ServerCapabilities
	// Raw is the initialize result exactly as received.
	Raw json.RawMessage
}

// ServerCapabilities are the capabilities of an initialize result. A nil
// field means the server did not declare that capability.
type ServerCapabilities struct {
	Tools, Resources, Prompts, Logging, Completions *Capability
	// Raw is the capabilities object exactly as received (experimental
	// and future capabilities are there).
	Raw json.RawMessage
}

// Capability is one declared server capability.
type Capability struct {
	// ListChanged: the server sends notifications/<kind>/list_changed.
	ListChanged bool
	// Subscribe: resources can be subscribed to (resources only).
	Subscribe bool
}

// parseInitialize reads the initialize result.
func parseInitialize(raw json.RawMessage) (ServerInfo, error) {
	var init struct {
		ProtocolVersion string `json:"protocolVersion"`
		ServerInfo      struct {
			Name    string `json:"name"`
			Version string `json:"version"`
			Title   string `json:"title"`
		} `json:"serverInfo"`
		Instructions string          `json:"instructions"`
		Capabilities json.RawMessage `json:"capabilities"`
	}
	if err := json.Unmarshal(raw, &init); err != nil {
		return ServerInfo{}, fmt.Errorf("initialize result: %w", err)
	}
	info := ServerInfo{
		Name: init.ServerInfo.Name, Version: init.ServerInfo.Version, Title: init.ServerInfo.Title,
		ProtocolVersion: init.ProtocolVersion, Instructions: init.Instructions, Raw: raw,
	}
	if len(init.Capabilities) > 0 && !isNull(init.Capabilities) {
		var caps map[string]json.RawMessage
		if err := json.Unmarshal(init.Capabilities, &caps); err != nil {
			return ServerInfo{}, fmt.Errorf("initialize result: capabilities is not an object")
		}
		info.Capabilities.Raw = init.Capabilities
		for name, dst := range map[string]**Capability{
			"tools": &info.Capabilities.Tools, "resources": &info.Capabilities.Resources,
			"prompts": &info.Capabilities.Prompts, "logging": &info.Capabilities.Logging,
			"completions": &info.Capabilities.Completions,
		} {
			v, ok := caps[name]
			if !ok || isNull(v) {
				continue
			}
			var c struct {
				ListChanged bool `json:"listChanged"`
				Subscribe   bool `json:"subscribe"`
			}
			if err := json.Unmarshal(v, &c); err != nil {
				return ServerInfo{}, fmt.Errorf("initialize result: capability %q is not an object", name)
			}
			*dst = &Capability{ListChanged: c.ListChanged, Subscribe: c.Subscribe}
		}
	}
	return info, nil
}

// Tool is one tool of a tools/list answer.
type Tool struct {
	Name, Title, Description string
	// InputSchema is the JSON Schema of the arguments, exactly as received.
	InputSchema json.RawMessage
	// OutputSchema is the JSON Schema of structuredContent, exactly as
	// received, or nil when the tool declares none.
	OutputSchema json.RawMessage
	// Annotations are the tool's annotations as received (nil if none).
	Annotations json.RawMessage
	// Raw is the tool object exactly as received.
	Raw json.RawMessage
}

// ListToolsOptions are the per-call parameters of ListTools and AllTools;
// the zero value reads at most DefaultMaxPages pages and caps no items.
type ListToolsOptions struct {
	// MaxPages stops the scan after this many pages (0: DefaultMaxPages);
	// a scan stopped so is not complete.
	MaxPages int
	// MaxItems stops the scan once it has this many tools (0: no cap but
	// MaxPages); a scan stopped so is not complete.
	MaxItems int
}

// decodeToolsPage reads one tools/list result: {"tools": [...],
// "nextCursor": "..."}. The page is the last when nextCursor is absent,
// null or "". Each tool needs a name and an object inputSchema.
func decodeToolsPage(raw json.RawMessage) (tools []Tool, next string, err error) {
	ms, err := members(raw)
	if err != nil {
		return nil, "", errors.New("tools/list result is not a JSON object")
	}
	var rawTools, rawNext json.RawMessage
	for _, m := range ms {
		switch string(m.key) {
		case "tools":
			if rawTools != nil {
				return nil, "", errors.New(`tools/list result has "tools" twice`)
			}
			rawTools = m.value
		case "nextCursor":
			if rawNext != nil {
				return nil, "", errors.New(`tools/list result has "nextCursor" twice`)
			}
			rawNext = m.value
		}
	}
	var items []json.RawMessage
	if rawTools == nil || json.Unmarshal(rawTools, &items) != nil || items == nil {
		return nil, "", errors.New(`tools/list result has no "tools" array`)
	}
	if rawNext != nil && !isNull(rawNext) {
		if json.Unmarshal(rawNext, &next) != nil {
			return nil, "", errors.New(`tools/list "nextCursor" is neither a string nor null`)
		}
	}
	tools = make([]Tool, 0, len(items))
	for i, it := range items {
		var f struct {
			Name         *string         `json:"name"`
			Title        string          `json:"title"`
			Description  string          `json:"description"`
			InputSchema  json.RawMessage `json:"inputSchema"`
			OutputSchema json.RawMessage `json:"outputSchema"`
			Annotations  json.RawMessage `json:"annotations"`
		}
		if len(it) == 0 || it[0] != '{' || json.Unmarshal(it, &f) != nil {
			return nil, "", fmt.Errorf("tools[%d] is not a tool object", i)
		}
		if f.Name == nil || *f.Name == "" {
			return nil, "", fmt.Errorf("tools[%d] has no name", i)
		}
		if !isObject(f.InputSchema) {
			return nil, "", fmt.Errorf("tool %q has no inputSchema object", httpx.Excerpt([]byte(*f.Name), 64))
		}
		t := Tool{Name: *f.Name, Title: f.Title, Description: f.Description, InputSchema: f.InputSchema, Raw: it}
		if len(f.OutputSchema) > 0 && !isNull(f.OutputSchema) {
			if !isObject(f.OutputSchema) {
				return nil, "", fmt.Errorf("tool %q has an outputSchema that is not an object", httpx.Excerpt([]byte(t.Name), 64))
			}
			t.OutputSchema = f.OutputSchema
		}
		if len(f.Annotations) > 0 && !isNull(f.Annotations) {
			t.Annotations = f.Annotations
		}
		tools = append(tools, t)
	}
	return tools, next, nil
}

func isObject(v json.RawMessage) bool {
	var m map[string]json.RawMessage
	return len(v) > 0 && json.Unmarshal(v, &m) == nil && m != nil
}

// toolIndex is the tool list of one session, with the schemas compiled,
// as the last complete tools/list gave it.
type toolIndex struct {
	tools map[string]*toolSchemas
}

// toolState is a session's knowledge of its tools: the index of the last
// complete listing, whether a list_changed notification made it stale, and
// the lock that makes concurrent calls list the tools once.
type toolState struct {
	listMu sync.Mutex // held while listing, so that concurrent calls list once

	mu    sync.Mutex
	index *toolIndex
	stale bool
}

func (t *toolState) get() (*toolIndex, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.index, t.stale
}

func (t *toolState) set(idx *toolIndex) {
	t.mu.Lock()
	t.index, t.stale = idx, false
	t.mu.Unlock()
}

func (t *toolState) markStale() {
	t.mu.Lock()
	t.stale = true
	t.mu.Unlock()
}

// ListTools reads the server's tool list (tools/list, every page) on the
// current session. The error is nil exactly when the scan is complete: the
// last page said so (no nextCursor), within opts' caps, without a repeated
// cursor or a malformed page (a *DecodeError) or a tool listed twice.
// Otherwise the Scan holds the tools of the pages read, which are NOT the
// whole list, Reason says why, and the error reaches the cause.
//
// A complete listing also becomes the session's tool schemas: from then on
// Call checks arguments against each tool's inputSchema and
// structuredContent against its outputSchema (see WithToolSchemas).
// tools/list requests are not calls for Budget.MaxCalls; their bytes count.
func (c *Client) ListTools(ctx context.Context, opts ListToolsOptions) (Scan[Tool], error) {
	var res Scan[Tool]
	pages, err := c.scanTools(ctx, opts, func(t Tool) bool {
		res.Items = append(res.Items, t)
		return true
	})
	res.Pages = pages
	if err != nil {
		res.Reason = err.Error()
		return res, err
	}
	res.Complete = true
	return res, nil
}

// AllTools is ListTools as an iterator: it yields each tool as its page
// arrives, and a scan that cannot finish yields a final (zero, err), never
// a silent end. Breaking out of the loop stops the scan without another
// request (and the partial list does not become the session's schemas).
func (c *Client) AllTools(ctx context.Context, opts ListToolsOptions) iter.Seq2[Tool, error] {
	return func(yield func(Tool, error) bool) {
		stopped := false
		_, err := c.scanTools(ctx, opts, func(t Tool) bool {
			if !yield(t, nil) {
				stopped = true
				return false
			}
			return true
		})
		if err != nil && !stopped {
			yield(Tool{}, err)
		}
	}
}

// scanTools lists the tools, handing each to accept. A complete listing
// (accept never said stop) becomes the session's schemas.
func (c *Client) scanTools(ctx context.Context, opts ListToolsOptions, accept func(Tool) bool) (int, error) {
	if opts.MaxPages < 0 || opts.MaxItems < 0 {
		return 0, usagef("mcpclient: tools/list: caps must not be negative (MaxPages %d, MaxItems %d)", opts.MaxPages, opts.MaxItems)
	}
	if err := checkHeader(ctx); err != nil {
		return 0, err
	}
	s, err := c.current()
	if err != nil {
		return 0, err
	}
	var all []Tool
	s, pages, err := c.listTools(ctx, s, ListToolsOptions{MaxPages: opts.MaxPages, MaxItems: opts.MaxItems}, func(t Tool) bool {
		all = append(all, t)
		return accept(t)
	})
	if err != nil {
		return pages, err
	}
	if s != nil {
		idx, ierr := buildIndex(all)
		if ierr != nil {
			return pages, ierr
		}
		s.tools.set(idx)
	}
	return pages, nil
}

// listTools runs the scan on session s (re-initializing once if the
// server ended it) and returns the session the complete list belongs to,
// or nil when accept stopped the scan.
func (c *Client) listTools(ctx context.Context, s *session, opts ListToolsOptions, accept func(Tool) bool) (*session, int, error) {
	pages := 0
	reconnected := false
	seen := map[string]bool{}
	fetch := func(ctx context.Context, cursor string) (page scan.Page[Tool], err error) {
		ctx, o := c.cfg.tel.begin(ctx, methodToolsList, "")
		defer func() { o.end(err) }()
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		raw, err := c.send(ctx, o, s, methodToolsList, "", params)
		if errors.Is(err, ErrSessionExpired) && !reconnected {
			reconnected = true
			ns, rerr := c.reconnect(ctx, s)
			if rerr != nil {
				return scan.Page[Tool]{}, fmt.Errorf("re-initialize after session expiry: %w", rerr)
			}
			s = ns
			raw, err = c.send(ctx, o, s, methodToolsList, "", params)
		}
		if err != nil {
			return scan.Page[Tool]{}, err
		}
		tools, next, derr := decodeToolsPage(raw)
		if derr != nil {
			return scan.Page[Tool]{}, &DecodeError{Raw: raw, Err: derr}
		}
		for _, t := range tools {
			if seen[t.Name] {
				return scan.Page[Tool]{}, &DecodeError{Raw: raw, Err: fmt.Errorf("tool %q is listed twice", httpx.Excerpt([]byte(t.Name), 64))}
			}
			seen[t.Name] = true
		}
		pages++
		return scan.Page[Tool]{Items: tools, Next: next, Total: scan.UnknownTotal}, nil
	}
	maxPages := opts.MaxPages
	if maxPages == 0 {
		maxPages = DefaultMaxPages
	}
	for t, err := range scan.Seq(ctx, fetch, scan.Limits{MaxPages: maxPages, MaxItems: opts.MaxItems}) {
		if err != nil {
			return nil, pages, fmt.Errorf("mcpclient: tools/list: %w", err)
		}
		if !accept(t) {
			return nil, pages, nil
		}
	}
	return s, pages, nil
}
