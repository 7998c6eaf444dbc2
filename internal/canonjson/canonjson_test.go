package canonjson_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/candorkit/candor/internal/canonjson"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCanonicalizeAccepts(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"keys sorted", `{"b":1,"a":2}`, `{"a":2,"b":1}`},
		{"nested and spaced", " {\n\t\"z\" : [ 1 , {\"y\":null,\"x\":true} ],\r\n\"a\":false } ", `{"a":false,"z":[1,{"x":true,"y":null}]}`},
		{"numbers as written", `[1.0,1e2,-0,12345678901234567890,1E+2,0.5e-3]`, `[1.0,1e2,-0,12345678901234567890,1E+2,0.5e-3]`},
		{"html not escaped", `"<a&b>"`, `"<a&b>"`},
		{"escapes decoded", `"\u00e9\/\t\"\\"`, `"é/\t\"\\"`},
		{"lowercase fffd escape", `{"s":"\ufffd"}`, `{"s":"` + "\uFFFD" + `"}`},
		{"uppercase FFFD escape", `{"s":"\uFFFD"}`, `{"s":"` + "\uFFFD" + `"}`},
		{"raw U+FFFD", "\"\uFFFD\"", "\"\uFFFD\""},
		{"surrogate pair", `"\ud83d\ude00"`, "\"\U0001F600\""},
		{"surrogate pair mixed case", `"\uD83D\uDe00"`, "\"\U0001F600\""},
		{"control escaped", `"\u0001\u001f"`, `"\u0001\u001f"`},
		{"line separator", `"\u2028"`, `"\u2028"`},
		{"scalar", ` 42 `, `42`},
		{"empty containers", `{"a":{},"b":[]}`, `{"a":{},"b":[]}`},
		{"keys sorted by bytes", `{"é":1,"z":2,"Z":3}`, `{"Z":3,"z":2,"é":1}`},
		{"escaped key sorted by value", `{"\u0062":1,"a":2}`, `{"a":2,"b":1}`},
		{"same key in different objects", `[{"a":1},{"a":2}]`, `[{"a":1},{"a":2}]`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := canonjson.Canonicalize([]byte(c.in))
			require.NoError(t, err)
			assert.Equal(t, c.want, string(got))
			again, err := canonjson.Canonicalize(got)
			require.NoError(t, err)
			assert.Equal(t, string(got), string(again), "fixed point")
		})
	}
}

func TestCanonicalizeRefuses(t *testing.T) {
	cases := []struct {
		name, in string
		offset   int64
		reason   string
	}{
		{"lone high surrogate", `{"s":"\ud800"}`, 6, "lone surrogate"},
		{"lone low surrogate", `{"s":"\udfff"}`, 6, "lone surrogate"},
		{"high then non-surrogate", `"\ud800\u0041"`, 1, "lone surrogate"},
		{"high then high", `"\ud800\ud800"`, 1, "lone surrogate"},
		{"reversed pair", `"\ude00\ud83d"`, 1, "lone surrogate"},
		{"trailing brace", `{"a":1}}`, 7, "data after"},
		{"trailing bracket", `[1]]`, 3, "data after"},
		{"second value", `{} {}`, 3, "data after"},
		{"trailing garbage", `1 x`, 2, "data after"},
		{"duplicate key", `{"a":1,"a":2}`, 7, `duplicate key "a"`},
		{"duplicate key via escape", `{"a":1,"\u0061":2}`, 7, `duplicate key "a"`},
		{"duplicate isError", `{"isError":true,"isError":false}`, 16, "duplicate key"},
		{"invalid utf8", "\"a\xffb\"", 2, "invalid UTF-8"},
		{"encoded surrogate bytes", "\"\xed\xa0\x80\"", 1, "invalid UTF-8"},
		{"raw newline in string", "\"a\nb\"", 2, "control character"},
		{"empty", ``, 0, "no JSON value"},
		{"only space", `   `, 3, "no JSON value"},
		{"leading zero", `01`, 1, "data after"},
		{"bare dot", `1.`, 2, "digit"},
		{"bad exponent", `1e`, 2, "digit"},
		{"plus sign", `+1`, 0, "unexpected"},
		{"bad literal", `tru`, 0, "literal"},
		{"bad escape", `"\x"`, 1, "invalid escape"},
		{"short unicode escape", `"\u12"`, 1, `\u`},
		{"unterminated string", `"abc`, 4, "unterminated"},
		{"trailing comma", `[1,]`, 3, "unexpected"},
		{"trailing comma object", `{"a":1,}`, 7, "object key"},
		{"missing colon", `{"a" 1}`, 5, "':'"},
		{"unclosed", `{"a":1`, 6, "end of input"},
		{"single quotes", `{'a':1}`, 1, "object key"},
		{"NaN", `NaN`, 0, "unexpected"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := canonjson.Canonicalize([]byte(c.in))
			var ce *canonjson.Error
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, c.offset, ce.Offset, "offset")
			assert.Contains(t, ce.Reason, c.reason)
			assert.Contains(t, err.Error(), "canonjson: at offset")
		})
	}
}

func TestDepthLimit(t *testing.T) {
	ok := strings.Repeat("[", canonjson.MaxDepth) + strings.Repeat("]", canonjson.MaxDepth)
	_, err := canonjson.Canonicalize([]byte(ok))
	require.NoError(t, err)
	deep := strings.Repeat("[", canonjson.MaxDepth+1) + strings.Repeat("]", canonjson.MaxDepth+1)
	_, err = canonjson.Canonicalize([]byte(deep))
	var ce *canonjson.Error
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, int64(canonjson.MaxDepth), ce.Offset)
}

// Two lone surrogates used to collapse into the same U+FFFD; now neither is
// accepted, so neither can stand in for the other.
func TestLoneSurrogatesDoNotCollide(t *testing.T) {
	_, errA := canonjson.Canonicalize([]byte(`{"s":"\ud800"}`))
	_, errB := canonjson.Canonicalize([]byte(`{"s":"\udfff"}`))
	assert.Error(t, errA)
	assert.Error(t, errB)
}

func TestEqual(t *testing.T) {
	eq, err := canonjson.Equal([]byte(`{"a":1,"b":[true]}`), []byte(` { "b" : [ true ] , "a" : 1 } `))
	require.NoError(t, err)
	assert.True(t, eq)

	eq, err = canonjson.Equal([]byte(`{"a":1.0}`), []byte(`{"a":1}`))
	require.NoError(t, err)
	assert.False(t, eq, "numbers are compared as written")

	_, err = canonjson.Equal([]byte(`{}`), []byte(`{}}`))
	var ce *canonjson.Error
	require.ErrorAs(t, err, &ce)
	assert.Contains(t, err.Error(), "second value")
	_, err = canonjson.Equal([]byte(`[`), []byte(`{}`))
	assert.Contains(t, err.Error(), "first value")
}

// reference is the encoding/json-based canonicaliser the module used
// before: when both accept an input they must agree on every byte, so
// stored canonical forms stay valid.
func reference(raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data")
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func FuzzCanonicalize(f *testing.F) {
	for _, s := range []string{
		`{"b":1,"a":[1,2,{"c":"\u00e9"}]}`, `{"s":"\ud800"}`, `{"s":"\ufffd"}`, `{"a":1}}`,
		`[1.5e3,-0,null,true,false]`, `"\ud83d\ude00"`, `{"a":1,"a":2}`, "\"\xff\"", `{"<":"&"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := canonjson.Canonicalize(in)
		if err != nil {
			var ce *canonjson.Error
			require.ErrorAs(t, err, &ce)
			assert.GreaterOrEqual(t, ce.Offset, int64(0))
			assert.LessOrEqual(t, ce.Offset, int64(len(in)))
			return
		}
		require.True(t, json.Valid(in), "accepted invalid JSON %q", in)
		again, err := canonjson.Canonicalize(got)
		require.NoError(t, err)
		require.Equal(t, string(got), string(again), "not a fixed point")
		ref, err := reference(in)
		require.NoError(t, err, "reference refused %q", in)
		require.Equal(t, string(ref), string(got))
		a, b := decode(t, in), decode(t, got)
		require.True(t, reflect.DeepEqual(a, b))
	})
}

func decode(t *testing.T, b []byte) any {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	require.NoError(t, dec.Decode(&v))
	return v
}
