package mcptest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// Names of the tools every test server offers, with the same behaviour on
// both server implementations except where a tool's comment says otherwise.
const (
	// ToolEcho answers with the exact JSON arguments it received, as text
	// content and (when they form an object) as structuredContent.
	ToolEcho = "echo"
	// ToolFail answers with isError: true and the text FailText.
	ToolFail = "fail"
	// ToolGoError returns a Go error from its handler. mcp-go turns it into
	// a JSON-RPC error (-32603); go-sdk turns it into an isError result.
	ToolGoError = "go-error"
	// ToolText answers with the text NonJSONText, which is not JSON.
	ToolText = "text"
	// ToolList pages over the Items of the server following the candor MCP
	// paging convention (arguments "limit" and "cursor", or "limit" and
	// "offset"). The argument "fault" makes it misbehave on purpose:
	// "missing-next" omits nextCursor from the second page on,
	// "repeat-cursor" always answers with the first page's cursor,
	// "short-total" reports a total one larger than the data.
	ToolList = "list"
	// ToolBig answers with a text content of "bytes" (argument) letters.
	ToolBig = "big"
	// ToolBlock signals Server.Entered and then waits until the request's
	// context ends or the server shuts down; it is for cancellation tests.
	ToolBlock = "block"
	// ToolElicit asks the client for a confirmation (elicitation/create,
	// form mode) in the middle of the call and answers with the text
	// "elicitation: <action>", or an isError result "elicitation failed:
	// <error>" when the request fails. mcp-go sends the request on the
	// call's event stream whatever the client declared; go-sdk refuses
	// without sending it when the client did not declare elicitation.
	ToolElicit = "elicit"
)

// FailText is the text of ToolFail's isError result: the exact failure
// that an agent once read as a product.
const FailText = `HTTP call failed with status 404: {"detail":"Not found."}`

// NonJSONText is the text ToolText answers with.
const NonJSONText = "Products: S10_1949, S10_4757 (plain text, not JSON)"

// GoErrorText is the message of the Go error ToolGoError returns.
const GoErrorText = "inventory backend unreachable"

// Item is one element of the paged data set served by ToolList.
type Item struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
}

// Result is what a tool answers: one text content item, an optional
// structuredContent and the isError flag.
type Result struct {
	Text       string
	Structured json.RawMessage // structuredContent as sent; nil for none
	IsError    bool
}

// Tool is a tool of the caller's, added to a test server with WithTools.
// Both server implementations offer it the same way.
type Tool struct {
	Name        string
	Description string
	// InputSchema is the JSON Schema the server lists for the arguments
	// (nil: {"type":"object"}); it must be an object schema of type
	// "object". The servers do not enforce it: Handle gets what was sent.
	InputSchema json.RawMessage
	// OutputSchema is the JSON Schema the server lists for
	// structuredContent (nil: none); the servers do not enforce it either.
	OutputSchema json.RawMessage
	// Handle answers a call with the arguments exactly as received (nil
	// when the request carried none). A non-nil error is a Go error of the
	// handler: mcp-go answers it with JSON-RPC error -32603, go-sdk with an
	// isError result holding its text (as go-sdk's typed handlers do).
	Handle func(ctx context.Context, args json.RawMessage) (Result, error)
}

// tools implements the built-in tools, shared by both servers, and holds
// the caller's.
type tools struct {
	items   []Item
	entered chan string
	done    <-chan struct{}
	mu      sync.Mutex // guards custom, which AddTools changes while serving
	custom  map[string]Tool
	// elicit sends elicitation/create to the client of the call in ctx and
	// returns the action it answered.
	elicit func(ctx context.Context) (string, error)
}

// names lists the tools in registration order: the built-in ones a caller
// tool does not replace, then the caller's.
func (t *tools) names(order []string) []string {
	var out []string
	for _, n := range builtinNames() {
		if _, ok := t.custom[n]; !ok {
			out = append(out, n)
		}
	}
	return append(out, order...)
}

// get returns the caller's tool of that name.
func (t *tools) get(name string) (Tool, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ct, ok := t.custom[name]
	return ct, ok
}

// put adds or replaces a caller's tool.
func (t *tools) put(ct Tool) {
	t.mu.Lock()
	t.custom[ct.Name] = ct
	t.mu.Unlock()
}

// schemas returns the input and output schemas listed for the tool.
func (t *tools) schemas(name string) (in, out json.RawMessage) {
	in = json.RawMessage(`{"type":"object"}`)
	if ct, ok := t.get(name); ok {
		if ct.InputSchema != nil {
			in = ct.InputSchema
		}
		out = ct.OutputSchema
	}
	return in, out
}

// checkTool refuses a Tool the servers cannot list.
func checkTool(t Tool) error {
	if t.Name == "" || t.Handle == nil {
		return fmt.Errorf("tool %q needs a name and a Handle function", t.Name)
	}
	if t.InputSchema != nil {
		var m map[string]any
		if err := json.Unmarshal(t.InputSchema, &m); err != nil || m["type"] != "object" {
			return fmt.Errorf("tool %q: InputSchema must be a JSON object schema with \"type\": \"object\"", t.Name)
		}
	}
	if t.OutputSchema != nil && !json.Valid(t.OutputSchema) {
		return fmt.Errorf("tool %q: OutputSchema is not JSON", t.Name)
	}
	return nil
}

func (t *tools) description(name string) string {
	if ct, ok := t.get(name); ok && ct.Description != "" {
		return ct.Description
	}
	return "mcptest tool " + name
}

func (t *tools) call(ctx context.Context, name string, args json.RawMessage) (Result, error) {
	if ct, ok := t.get(name); ok {
		return ct.Handle(ctx, args)
	}
	switch name {
	case ToolEcho:
		text := string(args)
		if text == "" {
			text = "null"
		}
		o := Result{Text: text}
		if strings.HasPrefix(strings.TrimSpace(text), "{") {
			o.Structured = json.RawMessage(text)
		}
		return o, nil
	case ToolFail:
		return Result{Text: FailText, IsError: true}, nil
	case ToolGoError:
		return Result{}, errors.New(GoErrorText)
	case ToolText:
		return Result{Text: NonJSONText}, nil
	case ToolBig:
		var a struct {
			Bytes int `json:"bytes"`
		}
		if err := json.Unmarshal(args, &a); err != nil || a.Bytes < 0 || a.Bytes > 64<<20 {
			return Result{Text: "big: want {\"bytes\": 0..67108864}", IsError: true}, nil
		}
		return Result{Text: strings.Repeat("x", a.Bytes)}, nil
	case ToolBlock:
		select {
		case t.entered <- name:
		default:
		}
		select {
		case <-ctx.Done():
			return Result{Text: "cancelled", IsError: true}, nil
		case <-t.done:
			return Result{Text: "server shut down", IsError: true}, nil
		}
	case ToolList:
		return t.list(args), nil
	case ToolElicit:
		action, err := t.elicit(ctx)
		if err != nil {
			return Result{Text: "elicitation failed: " + err.Error(), IsError: true}, nil
		}
		return Result{Text: "elicitation: " + action}, nil
	}
	return Result{Text: "unknown tool " + name, IsError: true}, nil
}

func (t *tools) list(args json.RawMessage) Result {
	var a struct {
		Limit  *int    `json:"limit"`
		Cursor *string `json:"cursor"`
		Offset *int    `json:"offset"`
		Fault  string  `json:"fault"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return Result{Text: "list: bad arguments: " + err.Error(), IsError: true}
	}
	if a.Limit == nil || *a.Limit <= 0 || *a.Limit > 100 {
		return Result{Text: "list: limit must be 1..100", IsError: true}
	}
	start := 0
	switch {
	case a.Cursor != nil && a.Offset != nil:
		return Result{Text: "list: cursor and offset are exclusive", IsError: true}
	case a.Cursor != nil:
		n, err := decodeCursor(*a.Cursor)
		if err != nil || n > len(t.items) {
			return Result{Text: "list: invalid cursor", IsError: true}
		}
		start = n
	case a.Offset != nil:
		if *a.Offset < 0 {
			return Result{Text: "list: negative offset", IsError: true}
		}
		start = min(*a.Offset, len(t.items))
	}
	end := min(start+*a.Limit, len(t.items))
	page := map[string]any{
		"items": t.items[start:end],
		"total": len(t.items),
	}
	if end < len(t.items) {
		page["nextCursor"] = encodeCursor(end)
	} else {
		page["nextCursor"] = nil
	}
	switch a.Fault {
	case "missing-next":
		if start > 0 {
			delete(page, "nextCursor")
		}
	case "repeat-cursor":
		page["nextCursor"] = encodeCursor(min(*a.Limit, len(t.items)))
	case "short-total":
		page["total"] = len(t.items) + 1
	}
	data, err := json.Marshal(page)
	if err != nil {
		return Result{Text: err.Error(), IsError: true}
	}
	return Result{Text: string(data), Structured: data}
}

func encodeCursor(n int) string {
	return base64.RawURLEncoding.EncodeToString([]byte("offset:" + strconv.Itoa(n)))
}

func decodeCursor(s string) (int, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return 0, err
	}
	v, ok := strings.CutPrefix(string(b), "offset:")
	if !ok {
		return 0, fmt.Errorf("bad cursor")
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("bad cursor")
	}
	return n, nil
}

func makeItems(n int) []Item {
	items := make([]Item, n)
	for i := range items {
		items[i] = Item{ID: i + 1, Name: fmt.Sprintf("item-%03d", i+1)}
	}
	return items
}

// builtinNames lists the built-in tools in registration order.
func builtinNames() []string {
	return []string{ToolEcho, ToolFail, ToolGoError, ToolText, ToolList, ToolBig, ToolBlock, ToolElicit}
}
