package approval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"unicode/utf8"
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
	if hasReplacedUTF8(raw) {
		problems = append(problems, errors.New("draft holds a string that is not valid UTF-8 (JSON would alter it)"))
	}
	if !utf8.Valid(raw) {
		// A MarshalJSON method or a json.RawMessage can hand over bytes that
		// are not UTF-8; decoding would silently replace them, so the stored
		// draft would not be the one marshalled.
		problems = append(problems, errors.New("draft JSON is not valid UTF-8 (canonicalising would alter it)"))
		return nil, &InvalidDraftError{OperationID: operationID, Problems: problems}
	}
	canon, err := canonicalJSON(raw)
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

// canonicalJSON rewrites one JSON value in canonical form: object keys
// sorted (encoding/json sorts map keys by their UTF-8 bytes), numbers kept
// as written, no insignificant white space, '<', '>' and '&' not escaped.
// The result is a fixed point: canonicalJSON(canonicalJSON(x)) ==
// canonicalJSON(x).
func canonicalJSON(raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data after the JSON value")
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// hasReplacedUTF8 reports whether raw, the output of json.Marshal, holds
// the escape \ufffd. json.Marshal writes that escape only where a Go string
// held bytes that are not UTF-8 (a genuine U+FFFD is written as its UTF-8
// bytes), so its presence means marshalling silently altered the draft.
func hasReplacedUTF8(raw []byte) bool {
	needle := []byte(`\ufffd`)
	for i := 0; ; {
		j := bytes.Index(raw[i:], needle)
		if j < 0 {
			return false
		}
		at := i + j
		// The backslash starts an escape only if it is preceded by an even
		// number of backslashes.
		n := 0
		for k := at - 1; k >= 0 && raw[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return true
		}
		i = at + len(needle)
	}
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
