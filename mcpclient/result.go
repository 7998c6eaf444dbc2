package mcpclient

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/candorkit/candor/internal/httpx"
)

// Result is a successful tools/call result (isError absent or false).
type Result struct {
	Content []Content
	// Structured is structuredContent exactly as received (big integers
	// survive), or nil when the result has none.
	Structured json.RawMessage
	// IsError is true only on the Result carried by a *ToolError.
	IsError bool
	// Raw is the whole result object exactly as received.
	Raw json.RawMessage
}

// Text joins the text of the text content items with "\n".
func (r *Result) Text() string {
	var b strings.Builder
	n := 0
	for _, c := range r.Content {
		if c.Type != "text" {
			continue
		}
		if n > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(c.Text)
		n++
	}
	return b.String()
}

// Content is one content item. Type is always set; Text for "text" items;
// MIMEType for "image" and "audio" items; Raw holds the exact item, so item
// types this package does not model (resource, resource_link, future ones)
// lose nothing.
type Content struct {
	Type     string
	Text     string
	MIMEType string
	Raw      json.RawMessage
}

// malformed is the reason a result could not be decoded.
type malformed struct {
	reason  string
	isError bool
}

// decodeResult decodes a tools/call result. It never panics; on failure it
// reports the reason and whether isError was set in the raw bytes.
func decodeResult(raw []byte) (*Result, *malformed) {
	ms, err := members(raw)
	if err != nil {
		return nil, &malformed{reason: "result is not a JSON object", isError: isErrorSet(raw)}
	}
	res := &Result{Raw: json.RawMessage(raw)}

	// isError is matched case-insensitively (as encoding/json and mcp-go
	// do), so that no spelling of it can turn a failure into data; given
	// twice, whatever the values and their order, the result is malformed.
	var isErrors int
	var rawContent, structured json.RawMessage
	var hasContent, hasStructured bool
	var dup string
	for _, m := range ms {
		switch {
		case bytes.EqualFold(m.key, []byte("isError")):
			isErrors++
			switch string(bytes.TrimSpace(m.value)) {
			case "true":
				res.IsError = true
			case "false", "null":
			default:
				return nil, &malformed{reason: "isError is not a boolean: " + httpx.Excerpt(m.value, 64), isError: true}
			}
		case string(m.key) == "content":
			if hasContent {
				dup = "content"
			}
			rawContent, hasContent = m.value, true
		case string(m.key) == "structuredContent":
			if hasStructured {
				dup = "structuredContent"
			}
			structured, hasStructured = m.value, true
		}
	}
	fail := func(reason string) (*Result, *malformed) {
		return nil, &malformed{reason: reason, isError: res.IsError}
	}
	switch {
	case isErrors > 1:
		return fail(fmt.Sprintf("isError is given %d times", isErrors))
	case dup != "":
		return fail(dup + " is given twice")
	}

	if hasStructured && !isNull(structured) {
		res.Structured = structured
	}

	if !hasContent {
		return fail("content is missing")
	}
	var items []json.RawMessage
	if err := json.Unmarshal(rawContent, &items); err != nil || items == nil {
		return fail("content is not an array")
	}
	res.Content = make([]Content, 0, len(items))
	for i, item := range items {
		c, err := decodeContent(item)
		if err != nil {
			return fail(fmt.Sprintf("content[%d]: %v", i, err))
		}
		res.Content = append(res.Content, c)
	}
	return res, nil
}

// isErrorSet reports whether bytes that are not a valid result object still
// carry an isError member set to something other than false or null, as
// far as they can be read.
func isErrorSet(raw []byte) bool {
	var top map[string]json.RawMessage
	if json.Unmarshal(raw, &top) != nil {
		return false
	}
	for k, v := range top {
		if strings.EqualFold(k, "isError") {
			switch string(bytes.TrimSpace(v)) {
			case "false", "null":
			default:
				return true
			}
		}
	}
	return false
}

func decodeContent(item json.RawMessage) (Content, error) {
	var f struct {
		Type     *string         `json:"type"`
		Text     *string         `json:"text"`
		Data     *string         `json:"data"`
		MIMEType *string         `json:"mimeType"`
		URI      *string         `json:"uri"`
		Resource json.RawMessage `json:"resource"`
	}
	if len(bytes.TrimSpace(item)) == 0 || bytes.TrimSpace(item)[0] != '{' {
		return Content{}, fmt.Errorf("item is not an object")
	}
	if err := json.Unmarshal(item, &f); err != nil {
		return Content{}, fmt.Errorf("item does not decode: %v", err)
	}
	if f.Type == nil || *f.Type == "" {
		return Content{}, fmt.Errorf("item has no type")
	}
	c := Content{Type: *f.Type, Raw: item}
	switch c.Type {
	case "text":
		if f.Text == nil {
			return Content{}, fmt.Errorf("text item without text")
		}
		c.Text = *f.Text
	case "image", "audio":
		if f.Data == nil || f.MIMEType == nil {
			return Content{}, fmt.Errorf("%s item without data or mimeType", c.Type)
		}
		c.MIMEType = *f.MIMEType
	case "resource":
		if len(f.Resource) == 0 || f.Resource[0] != '{' {
			return Content{}, fmt.Errorf("resource item without a resource object")
		}
	case "resource_link":
		if f.URI == nil {
			return Content{}, fmt.Errorf("resource_link item without uri")
		}
	}
	return c, nil
}

func isNull(v json.RawMessage) bool {
	return string(bytes.TrimSpace(v)) == "null"
}
