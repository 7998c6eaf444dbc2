package mcptest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
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

// outcome is what a tool produced, independent of the server library.
type outcome struct {
	text       string
	structured json.RawMessage // nil when the tool has no structured output
	isError    bool
	goErr      error
}

// tools implements the tool behaviours shared by both servers.
type tools struct {
	items   []Item
	entered chan string
	done    <-chan struct{}
}

func (t *tools) call(ctx context.Context, name string, args json.RawMessage) outcome {
	switch name {
	case ToolEcho:
		text := string(args)
		if text == "" {
			text = "null"
		}
		o := outcome{text: text}
		if strings.HasPrefix(strings.TrimSpace(text), "{") {
			o.structured = json.RawMessage(text)
		}
		return o
	case ToolFail:
		return outcome{text: FailText, isError: true}
	case ToolGoError:
		return outcome{goErr: errors.New(GoErrorText)}
	case ToolText:
		return outcome{text: NonJSONText}
	case ToolBig:
		var a struct {
			Bytes int `json:"bytes"`
		}
		if err := json.Unmarshal(args, &a); err != nil || a.Bytes < 0 || a.Bytes > 64<<20 {
			return outcome{text: "big: want {\"bytes\": 0..67108864}", isError: true}
		}
		return outcome{text: strings.Repeat("x", a.Bytes)}
	case ToolBlock:
		select {
		case t.entered <- name:
		default:
		}
		select {
		case <-ctx.Done():
			return outcome{text: "cancelled", isError: true}
		case <-t.done:
			return outcome{text: "server shut down", isError: true}
		}
	case ToolList:
		return t.list(args)
	}
	return outcome{text: "unknown tool " + name, isError: true}
}

func (t *tools) list(args json.RawMessage) outcome {
	var a struct {
		Limit  *int    `json:"limit"`
		Cursor *string `json:"cursor"`
		Offset *int    `json:"offset"`
		Fault  string  `json:"fault"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return outcome{text: "list: bad arguments: " + err.Error(), isError: true}
	}
	if a.Limit == nil || *a.Limit <= 0 || *a.Limit > 100 {
		return outcome{text: "list: limit must be 1..100", isError: true}
	}
	start := 0
	switch {
	case a.Cursor != nil && a.Offset != nil:
		return outcome{text: "list: cursor and offset are exclusive", isError: true}
	case a.Cursor != nil:
		n, err := decodeCursor(*a.Cursor)
		if err != nil || n > len(t.items) {
			return outcome{text: "list: invalid cursor", isError: true}
		}
		start = n
	case a.Offset != nil:
		if *a.Offset < 0 {
			return outcome{text: "list: negative offset", isError: true}
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
		return outcome{text: err.Error(), isError: true}
	}
	return outcome{text: string(data), structured: data}
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

// toolNames lists the tools in registration order.
func toolNames() []string {
	return []string{ToolEcho, ToolFail, ToolGoError, ToolText, ToolList, ToolBig, ToolBlock}
}
