package approval

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestCanonicalJSON(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"keys sorted", `{"b":1,"a":2}`, `{"a":2,"b":1}`},
		{"nested keys sorted", `{"z":{"y":[{"b":1,"a":0}],"x":null}}`, `{"z":{"x":null,"y":[{"a":0,"b":1}]}}`},
		{"white space dropped", " { \"a\" : [ 1 , 2 ] } \n", `{"a":[1,2]}`},
		{"numbers kept as written", `{"a":1.50,"b":1e3,"c":-0}`, `{"a":1.50,"b":1e3,"c":-0}`},
		{"HTML not escaped", `{"a":"\u003cb\u003e & <i>"}`, `{"a":"<b> & <i>"}`},
		{"escapes normalised", `{"a":"\u00e9\/"}`, `{"a":"é/"}`},
		{"keys sorted by bytes", `{"é":1,"z":2,"A":3}`, `{"A":3,"z":2,"é":1}`},
		{"scalar", `"x"`, `"x"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := canonicalJSON([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Fatalf("canonicalJSON(%s) = %s, want %s", tc.in, got, tc.want)
			}
		})
	}
	for _, bad := range []string{``, `{`, `{"a":1} {"b":2}`, `{"a":1}x`, `nul`} {
		if got, err := canonicalJSON([]byte(bad)); err == nil {
			t.Errorf("canonicalJSON(%q) = %s, want an error", bad, got)
		}
	}
}

func TestHasReplacedUTF8(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{`"\ufffd"`, true},
		{`"a\\ufffd"`, false},       // an escaped backslash followed by text
		{`"a\\\ufffd"`, true},       // an escaped backslash, then the escape
		{"\"\xef\xbf\xbd\"", false}, // a genuine U+FFFD written raw
		{`"plain"`, false},
	}
	for _, tc := range tests {
		if got := hasReplacedUTF8([]byte(tc.in)); got != tc.want {
			t.Errorf("hasReplacedUTF8(%s) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// FuzzCanonicalJSON: for any JSON value, the canonical form is a fixed
// point and decodes to the same value.
func FuzzCanonicalJSON(f *testing.F) {
	for _, seed := range []string{`{"b":1,"a":[true,null,"x"]}`, `[1.0,2e5,-3]`, `"<&>"`, `{"a":{"c":{},"b":[]}}`, `0`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		c1, err := canonicalJSON(in)
		if err != nil {
			return
		}
		c2, err := canonicalJSON(c1)
		if err != nil {
			t.Fatalf("canonical form %s does not parse: %v", c1, err)
		}
		if string(c1) != string(c2) {
			t.Fatalf("not a fixed point: %s -> %s", c1, c2)
		}
		var a, b any
		if json.Unmarshal(in, &a) != nil {
			return // duplicate keys or invalid UTF-8 can differ in strictness; skip
		}
		if err := json.Unmarshal(c1, &b); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("canonical form changed the value: %s -> %s", in, c1)
		}
	})
}
