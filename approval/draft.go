package approval

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/candorkit/candor/internal/canonjson"
)

// canonicalDraft validates d and returns its canonical JSON, or an
// *InvalidDraftError listing every problem found.
func canonicalDraft(operationID string, d Draft, maxBytes int) (json.RawMessage, error) {
	if isNil(d) {
		return nil, &InvalidDraftError{OperationID: operationID, Problems: []error{errors.New("draft is nil")}}
	}
	var problems []error
	for _, p := range d.Validate() {
		if p != nil {
			problems = append(problems, p)
		}
	}
	raw, err := json.Marshal(d)
	if err != nil {
		problems = append(problems, fmt.Errorf("draft does not marshal to JSON: %w", err))
		return nil, &InvalidDraftError{OperationID: operationID, Problems: problems}
	}
	if bytes.Equal(raw, []byte("null")) {
		problems = append(problems, errors.New("draft marshals to JSON null"))
	}
	if at, bad := invalidString(reflect.ValueOf(d), "draft", 0); bad {
		// json.Marshal replaces bytes that are not UTF-8 in a Go string with
		// U+FFFD, silently: the stored draft would not be the caller's.
		problems = append(problems, fmt.Errorf("%s holds a string that is not valid UTF-8 (JSON would alter it)", at))
	}
	if !utf8.Valid(raw) {
		// A MarshalJSON method or a json.RawMessage can hand over bytes that
		// are not UTF-8, which json.Marshal copies as they are.
		problems = append(problems, errors.New("draft JSON is not valid UTF-8 (canonicalising would alter it)"))
		return nil, &InvalidDraftError{OperationID: operationID, Problems: problems}
	}
	canon, err := canonjson.Canonicalize(raw)
	if err != nil {
		problems = append(problems, fmt.Errorf("draft JSON cannot be canonicalised: %w", err))
	} else if len(canon) > maxBytes {
		problems = append(problems, fmt.Errorf("draft is %d bytes of canonical JSON, more than the bound of %d", len(canon), maxBytes))
	}
	if len(problems) > 0 {
		return nil, &InvalidDraftError{OperationID: operationID, Problems: problems}
	}
	return canon, nil
}

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// maxWalkDepth bounds invalidString's descent; json.Marshal refuses deeper
// cycles before that.
const maxWalkDepth = 1000

// invalidString walks v the way encoding/json marshals it and reports the
// path of the first string that is not UTF-8 (map keys and MarshalText
// output included). A value with a MarshalJSON method is not entered: its
// output is raw JSON, checked whole by the caller. Unlike scanning the
// marshalled bytes for the escape json.Marshal writes in place of such
// bytes, this cannot confuse them with a \ufffd the draft wrote on purpose.
// It may look at more fields than json.Marshal writes (a shadowed embedded
// field), never at fewer.
func invalidString(v reflect.Value, at string, depth int) (string, bool) {
	if !v.IsValid() || depth > maxWalkDepth {
		return "", false
	}
	t := v.Type()
	if t.Kind() == reflect.Pointer && v.IsNil() {
		return "", false
	}
	if t.Implements(jsonMarshaler) || (v.CanAddr() && reflect.PointerTo(t).Implements(jsonMarshaler)) {
		return "", false
	}
	tm := t.Implements(textMarshaler)
	if !tm && v.CanAddr() && reflect.PointerTo(t).Implements(textMarshaler) {
		v, tm = v.Addr(), true
	}
	if tm && !(t.Kind() == reflect.Interface && v.IsNil()) {
		text, err := v.Interface().(encoding.TextMarshaler).MarshalText()
		return at, err == nil && !utf8.Valid(text)
	}
	switch t.Kind() {
	case reflect.String:
		return at, !utf8.ValidString(v.String())
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			return "", false
		}
		return invalidString(v.Elem(), at, depth+1)
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if (!f.IsExported() && !f.Anonymous) || f.Tag.Get("json") == "-" {
				continue
			}
			name := f.Name
			if tag, _, _ := strings.Cut(f.Tag.Get("json"), ","); tag != "" {
				name = tag
			}
			if p, bad := invalidString(v.Field(i), at+"."+name, depth+1); bad {
				return p, true
			}
		}
	case reflect.Map:
		iter := v.MapRange()
		for iter.Next() {
			k := iter.Key()
			key := fmt.Sprint(k.Interface())
			if badKey(k) {
				return at + " key " + strconv.Quote(key), true
			}
			if p, bad := invalidString(iter.Value(), at+"["+strconv.Quote(key)+"]", depth+1); bad {
				return p, true
			}
		}
	case reflect.Slice, reflect.Array:
		if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 &&
			!t.Elem().Implements(jsonMarshaler) && !t.Elem().Implements(textMarshaler) &&
			!reflect.PointerTo(t.Elem()).Implements(jsonMarshaler) && !reflect.PointerTo(t.Elem()).Implements(textMarshaler) {
			return "", false // written as base64
		}
		for i := range v.Len() {
			if p, bad := invalidString(v.Index(i), at+"["+strconv.Itoa(i)+"]", depth+1); bad {
				return p, true
			}
		}
	}
	return "", false
}

// badKey reports whether json.Marshal would alter map key k: a string kind
// is written as it is, another key through its MarshalText.
func badKey(k reflect.Value) bool {
	if k.Kind() == reflect.String {
		return !utf8.ValidString(k.String())
	}
	if tm, ok := k.Interface().(encoding.TextMarshaler); ok && !(k.Kind() == reflect.Pointer && k.IsNil()) {
		text, err := tm.MarshalText()
		return err == nil && !utf8.Valid(text)
	}
	return false
}

func isNil(d Draft) bool {
	if d == nil {
		return true
	}
	v := reflect.ValueOf(d)
	switch v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface, reflect.Func, reflect.Chan:
		return v.IsNil()
	}
	return false
}
