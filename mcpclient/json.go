package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// CallJSON calls tool and decodes its payload into T: structuredContent when
// the result has one, else its single text content item. A payload that is
// missing, not JSON, null, followed by other data, or not a T returns a
// *DecodeError carrying the raw payload; T's zero value never comes back
// with a nil error. Failures of the call itself are those of Client.Call.
//
// When T is a struct (or a pointer to one) without its own UnmarshalJSON, a
// JSON object that has none of T's fields ({} or an upstream error such as
// {"detail":"Not found."}) is not a T either: encoding/json would give a
// zero T. Decode into a map or json.RawMessage to take any object.
func CallJSON[T any](ctx context.Context, c ToolCaller, tool string, args any) (T, error) {
	var zero T
	res, err := c.Call(ctx, tool, args)
	if err != nil {
		return zero, err
	}
	payload, err := payloadOf(res)
	if err != nil {
		return zero, &DecodeError{Tool: tool, Raw: payload, Err: err}
	}
	v, err := decodeStrict[T](payload)
	if err != nil {
		return zero, &DecodeError{Tool: tool, Raw: payload, Err: err}
	}
	return v, nil
}

// payloadOf picks the JSON payload of a result.
func payloadOf(res *Result) ([]byte, error) {
	if res.Structured != nil {
		return res.Structured, nil
	}
	var texts []string
	for _, c := range res.Content {
		if c.Type == "text" {
			texts = append(texts, c.Text)
		}
	}
	switch len(texts) {
	case 0:
		return nil, errors.New("result has neither structuredContent nor text content")
	case 1:
		return []byte(texts[0]), nil
	default:
		return []byte(res.Text()), fmt.Errorf("result has %d text items and no structuredContent; expected one", len(texts))
	}
}

// decodeStrict decodes exactly one non-null JSON value into T.
func decodeStrict[T any](payload []byte) (T, error) {
	var v T
	trimmed := bytes.TrimSpace(payload)
	if len(trimmed) == 0 {
		return v, errors.New("payload is empty")
	}
	if string(trimmed) == "null" {
		return v, errors.New("payload is null")
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	if err := dec.Decode(&v); err != nil {
		return v, fmt.Errorf("payload is not a valid %T: %w", v, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return v, errors.New("payload has data after the JSON value")
	}
	if err := fillsAField(reflect.TypeFor[T](), trimmed); err != nil {
		var zero T
		return zero, err
	}
	return v, nil
}

var jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()

// fillsAField refuses a JSON object that shares no member with struct type
// t (or *t, **t, ...), which encoding/json silently decodes into the zero
// value. Members match fields case-insensitively, as in encoding/json.
func fillsAField(t reflect.Type, payload []byte) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || len(payload) == 0 || payload[0] != '{' ||
		t.Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(jsonUnmarshaler) {
		return nil
	}
	names := map[string]bool{}
	jsonFieldNames(t, names, map[reflect.Type]bool{})
	if len(names) == 0 {
		return nil // struct{}: any object is one
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(payload, &obj) != nil {
		return nil // cannot happen: payload decoded into t already
	}
	for k := range obj {
		if names[strings.ToLower(k)] {
			return nil
		}
	}
	return fmt.Errorf("payload has none of the fields of %s", t)
}

// jsonFieldNames adds the lower-cased JSON names of the fields of struct
// type t to names, following encoding/json: exported fields, the json tag's
// name, "-" skipped, untagged embedded structs flattened.
func jsonFieldNames(t reflect.Type, names map[string]bool, seen map[reflect.Type]bool) {
	if seen[t] {
		return
	}
	seen[t] = true
	for f := range t.Fields() {
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				jsonFieldNames(ft, names, seen)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		names[strings.ToLower(name)] = true
	}
}
