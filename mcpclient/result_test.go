package mcpclient

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestDecodeResult(t *testing.T) {
	for _, tc := range []struct {
		raw       string
		ok        bool
		isError   bool
		text      string
		structure string
	}{
		{`{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}`, true, false, "a\nb", ""},
		{`{"content":[],"structuredContent":{"n":12345678901234567890}}`, true, false, "", `{"n":12345678901234567890}`},
		{`{"content":[{"type":"text","text":"x"}],"isError":true}`, true, true, "x", ""},
		{`{"content":[{"type":"text","text":"x"}],"isError":false,"structuredContent":null}`, true, false, "x", ""},
		{`{"content":[{"type":"image","data":"AA==","mimeType":"image/png"},{"type":"resource_link","uri":"file:///a","name":"a"}]}`, true, false, "", ""},
		{`{"content":[{"type":"future-thing","payload":1}]}`, true, false, "", ""},
		{`{"content":[{"type":"text","text":"x"}],"isError":"true"}`, false, true, "", ""},
		{`{"content":[{"type":"text","text":"x"}],"isError":1}`, false, true, "", ""},
		{`{"content":[{"text":"x"}],"isError":true}`, false, true, "", ""},
		{`{"isError":true}`, false, true, "", ""},
		{`{"IsError":true,"content":[]}`, true, true, "", ""},
		{`{"is\u0045rror":true,"content":[]}`, true, true, "", ""},
		{`{"content":[],"isError":false,"is\u0045rror":true}`, false, true, "", ""},
		{` { "content" : [ {"type":"text","text":"}\"{]"} ] , "structuredContent" : {"a":[1,{"b":"]"}]} } `, true, false, "}\"{]", `{"a":[1,{"b":"]"}]}`},
		{`{"content":[],"structuredContent":1.5e3}`, true, false, "", `1.5e3`},
		{`{"content":[]} {}`, false, false, "", ""},
		{`{"content":{}}`, false, false, "", ""},
		{`{"content":[1]}`, false, false, "", ""},
		{`{"content":[{"type":"text","text":5}]}`, false, false, "", ""},
		{`{"content":[{"type":"image","data":"AA=="}]}`, false, false, "", ""},
		{`{"content":[{"type":"resource"}]}`, false, false, "", ""},
		{`null`, false, false, "", ""},
		{`"text"`, false, false, "", ""},
		{`{`, false, false, "", ""},
	} {
		res, bad := decodeResult([]byte(tc.raw))
		if tc.ok != (bad == nil) || (res == nil) == (bad == nil) {
			t.Fatalf("%s: res %v, bad %+v", tc.raw, res, bad)
		}
		if !tc.ok {
			if bad.isError != tc.isError || bad.reason == "" {
				t.Fatalf("%s: malformed %+v, want isError %t", tc.raw, bad, tc.isError)
			}
			continue
		}
		if res.IsError != tc.isError || res.Text() != tc.text || string(res.Structured) != tc.structure || string(res.Raw) != tc.raw {
			t.Fatalf("%s: %+v", tc.raw, res)
		}
		for _, c := range res.Content {
			if (c.Type == "image") != (c.MIMEType == "image/png") {
				t.Fatalf("%s: item %+v, want the image's MIME type", tc.raw, c)
			}
		}
	}
}

func TestEncodeArgs(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want string
	}{
		{nil, `{}`},
		{map[string]any(nil), `{}`},
		{(*struct{})(nil), `{}`},
		{map[string]int{"a": 1}, `{"a":1}`},
		{json.RawMessage(` {"b":2}`), `{"b":2}`},
	} {
		got, err := encodeArgs(tc.in)
		if err != nil || string(got) != tc.want {
			t.Fatalf("encodeArgs(%#v) = %s, %v", tc.in, got, err)
		}
	}
	for _, bad := range []any{[]int{1}, "s", 3, make(chan int)} {
		if _, err := encodeArgs(bad); err == nil {
			t.Fatalf("encodeArgs(%#v) accepted", bad)
		}
	}
}

func TestDecodeStrict(t *testing.T) {
	for _, bad := range []string{"", "  ", "null", `{"a":1} x`, `{"a":1}{"a":2}`, `not json`, `[1]`} {
		if _, err := decodeStrict[map[string]int]([]byte(bad)); err == nil {
			t.Fatalf("decodeStrict accepted %q", bad)
		}
	}
	v, err := decodeStrict[map[string]int]([]byte(" {\"a\":1}\n"))
	if err != nil || v["a"] != 1 {
		t.Fatalf("decodeStrict = %v, %v", v, err)
	}
}

// FuzzDecodeResult checks the result decoder's contract on any input: no
// panic; success keeps the exact bytes and never hides isError; failure is
// reported (by Call) with the raw bytes and an isError flag that is set
// whenever the input plainly says isError: true.
func FuzzDecodeResult(f *testing.F) {
	for _, seed := range []string{
		`{"content":[{"type":"text","text":"ok"}]}`,
		`{"content":[{"type":"text","text":"HTTP call failed with status 404: {\"detail\":\"Not found.\"}"}],"isError":true}`,
		`{"content":[{"text":"x"}],"isError":true}`,
		`{"content":[],"isError":"true","structuredContent":{"a":[1,2]}}`,
		`{"content":[{"type":"image","data":"AA==","mimeType":"image/png"}]}`,
		`{"content":[{"type":"resource","resource":{"uri":"a","text":"b"}}]}`,
		`{"isError":null,"content":null}`,
		`[]`, `null`, `1e400`, "\xff", `{"content":[{"type":""}]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		res, bad := decodeResult(raw)
		if (res == nil) == (bad == nil) {
			t.Fatalf("exactly one of result and failure must be set: %v %v", res, bad)
		}
		var probe map[string]json.RawMessage
		saysTrue := false
		if json.Unmarshal(raw, &probe) == nil {
			for k, v := range probe {
				if strings.EqualFold(k, "isError") && string(bytes.TrimSpace(v)) == "true" {
					saysTrue = true
				}
			}
		}
		if bad != nil {
			if bad.reason == "" {
				t.Fatal("failure without a reason")
			}
			if saysTrue && !bad.isError {
				t.Fatalf("isError:true lost on malformed input %q", raw)
			}
			err := &MalformedResultError{Tool: "t", Raw: raw, IsError: bad.isError, Reason: bad.reason}
			if !bytes.Equal(err.Raw, raw) || err.Error() == "" {
				t.Fatal("raw bytes not kept")
			}
			return
		}
		if !bytes.Equal(res.Raw, raw) {
			t.Fatal("Raw differs from the input")
		}
		if saysTrue != res.IsError {
			t.Fatalf("IsError = %t for %q", res.IsError, raw)
		}
		if !json.Valid(raw) {
			t.Fatalf("invalid JSON decoded successfully: %q", raw)
		}
		for _, c := range res.Content {
			if c.Type == "" || len(c.Raw) == 0 {
				t.Fatalf("content item without type or raw: %+v", c)
			}
		}
	})
}

type shapeInner struct{ A int }
type shapeOuter struct {
	shapeInner
	B      int `json:"b,omitempty"`
	Skip   int `json:"-"`
	hidden int
}
type shapeCustom struct{ v string }

func (s *shapeCustom) UnmarshalJSON(b []byte) error { s.v = string(b); return nil }

func TestDecodeStrictNeedsOneFieldOfAStruct(t *testing.T) {
	for _, ok := range []string{`{"a":0}`, `{"B":1,"x":2}`, `{"b":0}`} {
		if _, err := decodeStrict[shapeOuter]([]byte(ok)); err != nil {
			t.Errorf("%s refused: %v", ok, err)
		}
		if _, err := decodeStrict[**shapeOuter]([]byte(ok)); err != nil {
			t.Errorf("%s refused as **T: %v", ok, err)
		}
	}
	for _, bad := range []string{`{}`, `{"c":1}`, `{"Skip":1}`, `{"hidden":1}`, `{"shapeInner":{"A":1}}`} {
		v, err := decodeStrict[shapeOuter]([]byte(bad))
		if err == nil || v != (shapeOuter{}) || v.hidden != 0 {
			t.Errorf("%s accepted as %+v", bad, v)
		}
	}
	if v, err := decodeStrict[shapeCustom]([]byte(`{"anything":1}`)); err != nil || v.v == "" {
		t.Errorf("custom UnmarshalJSON: %+v, %v", v, err)
	}
	if _, err := decodeStrict[struct{}]([]byte(`{"x":1}`)); err != nil {
		t.Errorf("struct{}: %v", err)
	}
}

// FuzzMembers checks the member scanner against encoding/json's tokenizer:
// for every JSON object, the same names (unescaped) and values, in order,
// duplicates included; anything else is refused.
func FuzzMembers(f *testing.F) {
	for _, s := range []string{
		`{}`, ` {"a":1} `, `{"a":1,"a":2}`, `{"is\u0045rror":true,"b":[1,{"c":"}"}]}`,
		`{"s":"\"\\","n":-1.5e10,"t":true,"f":false,"z":null}`, `[1]`, `{"a":1}{}`, `{"a"}`, `"x"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, err := members(raw)
		var want []member
		dec := json.NewDecoder(bytes.NewReader(raw))
		ok := json.Valid(raw)
		if ok {
			if tok, _ := dec.Token(); tok != json.Delim('{') {
				ok = false
			}
		}
		for ok && dec.More() {
			k, _ := dec.Token()
			var v json.RawMessage
			if dec.Decode(&v) != nil {
				t.Fatalf("valid JSON failed to decode: %q", raw)
			}
			want = append(want, member{key: []byte(k.(string)), value: v})
		}
		if !ok {
			if err == nil {
				t.Fatalf("members(%q) accepted what is not one JSON object", raw)
			}
			return
		}
		if err != nil || len(got) != len(want) {
			t.Fatalf("members(%q) = %d members, %v; want %d", raw, len(got), err, len(want))
		}
		for i := range want {
			if !bytes.Equal(got[i].key, want[i].key) || !bytes.Equal(got[i].value, want[i].value) {
				t.Fatalf("members(%q)[%d] = %q:%q, want %q:%q", raw, i, got[i].key, got[i].value, want[i].key, want[i].value)
			}
		}
	})
}
