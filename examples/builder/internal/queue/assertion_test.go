package queue

import (
	"errors"
	"reflect"
	"testing"
)

func TestParseAssertion(t *testing.T) {
	good := `{"sql":[{"query":"SELECT 1"}],"http":[{"capture":"crm-hook","method":"POST","body_contains":"ok"}]}`
	a, err := ParseAssertion(good)
	if err != nil {
		t.Fatal(err)
	}
	if a.SQL[0].Query != "SELECT 1" || a.HTTP[0].Capture != "crm-hook" || a.HTTP[0].BodyContains != "ok" {
		t.Fatalf("decoded %+v", a)
	}
	bad := map[string]string{
		"not json":        `{sql:`,
		"unknown key":     `{"sql":[{"query":"SELECT 1","db":"x"}]}`,
		"no checks":       `{}`,
		"empty query":     `{"sql":[{"query":"  "}]}`,
		"bad capture":     `{"http":[{"capture":"../x"}]}`,
		"bad method":      `{"http":[{"capture":"x","method":"TRACE"}]}`,
		"trailing data":   `{"sql":[{"query":"SELECT 1"}]} {}`,
		"array":           `[{"query":"SELECT 1"}]`,
		"wrong type":      `{"sql":"SELECT 1"}`,
		"missing capture": `{"http":[{"method":"POST"}]}`,
		"null trigger":    `{"sql":[{"query":"SELECT 1"}],"trigger":[null]}`,
		"scalar trigger":  `{"sql":[{"query":"SELECT 1"}],"trigger":[1]}`,
		"sql only":        `{"sql":[{"query":"SELECT 1"}]}`,
		"http only":       `{"http":[{"capture":"crm-hook"}]}`,
	}
	for name, raw := range bad {
		_, err := ParseAssertion(raw)
		var ae *AssertionError
		if !errors.As(err, &ae) || ae.Raw != raw || ae.Reason == "" {
			t.Errorf("%s: %v; want *AssertionError keeping the raw text", name, err)
		}
	}
	for _, blank := range []string{"", "  \n"} {
		if _, err := ParseAssertion(blank); !errors.Is(err, ErrNoAssertion) {
			t.Errorf("blank %q: %v; want ErrNoAssertion", blank, err)
		}
	}
}

func FuzzParseAssertion(f *testing.F) {
	f.Add(`{"sql":[{"query":"SELECT 1"}],"http":[{"capture":"crm-hook","method":"POST"}]}`)
	f.Add(`{"http":[{"capture":"a"}]}`)
	f.Add(`{"sql":[]}`)
	f.Add(`{"sql":[{"query":"SELECT 1"}],"trigger":[{"body":{"order_id":1001}}]}`)
	f.Add(`null`)
	f.Add(`{"sql":[{"query":"SELECT 1"}]}x`)
	f.Fuzz(func(t *testing.T, raw string) {
		a, err := ParseAssertion(raw)
		if err != nil {
			return
		}
		if a.Validate() != nil {
			t.Fatalf("accepted an invalid spec %q", raw)
		}
		enc, err := a.Encode()
		if err != nil {
			t.Fatalf("accepted spec does not encode: %v", err)
		}
		b, err := ParseAssertion(enc)
		if err != nil {
			t.Fatalf("encoded spec %q does not parse: %v", enc, err)
		}
		enc2, err := b.Encode()
		if err != nil || enc2 != enc || !reflect.DeepEqual(a.SQL, b.SQL) && len(a.SQL)+len(b.SQL) > 0 {
			t.Fatalf("round trip of %q changed it: %s vs %s (%v)", raw, enc, enc2, err)
		}
	})
}
