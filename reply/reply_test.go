package reply_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/candorkit/candor/reply"
)

func TestDecode(t *testing.T) {
	ok := []struct {
		body string
		want reply.Reply
	}{
		{`{"answer":"yes","escalate":false}`, reply.Reply{Answer: "yes"}},
		{`{"escalate":true,"answer":"ask a person"}`, reply.Reply{Answer: "ask a person", Escalate: true}},
		{" \n{ \"answer\" : \"caf\\u00e9\" , \"escalate\" : false }\n", reply.Reply{Answer: "café"}},
	}
	for _, c := range ok {
		got, err := reply.Decode([]byte(c.body))
		if err != nil || got != c.want {
			t.Errorf("Decode(%s) = %+v, %v; want %+v", c.body, got, err, c.want)
		}
	}

	for _, body := range []string{"", "   ", "\n\t"} {
		if _, err := reply.Decode([]byte(body)); !errors.Is(err, reply.ErrEmpty) {
			t.Errorf("Decode(%q) error = %v, want ErrEmpty", body, err)
		}
	}

	bad := map[string]string{
		`not json`:                                        "not JSON",
		`[{"answer":"a","escalate":false}]`:               "array",
		`"answer"`:                                        "string",
		`null`:                                            "null",
		`{"answer":"a"}`:                                  `missing key "escalate"`,
		`{"escalate":false}`:                              `missing key "answer"`,
		`{"answer":1,"escalate":false}`:                   `"answer" is not a string`,
		`{"answer":null,"escalate":false}`:                `"answer" is not a string`,
		`{"answer":"a","escalate":"false"}`:               `"escalate" is not a boolean`,
		`{"answer":"a","escalate":0}`:                     `"escalate" is not a boolean`,
		`{"answer":"a","escalate":false,"extra":1}`:       `unexpected key "extra"`,
		`{"Answer":"a","escalate":false}`:                 `unexpected key "Answer"`,
		`{"answer":"a","answer":"b","escalate":false}`:    `appears twice`,
		`{"answer":"a","escalate":false,"escalate":true}`: `appears twice`,
		`{"answer":"  ","escalate":false}`:                `blank`,
		`{"answer":"a","escalate":false} {}`:              "not JSON",
		`{"data":{"answer":"a","escalate":false}}`:        `unexpected key "data"`,
		"{\"answer\":\"\xff\",\"escalate\":false}":        "UTF-8",
	}
	for body, want := range bad {
		_, err := reply.Decode([]byte(body))
		var ce *reply.ContractError
		if !errors.As(err, &ce) {
			t.Errorf("Decode(%s) error = %v, want *ContractError", body, err)
			continue
		}
		if string(ce.Raw) != body {
			t.Errorf("Decode(%s): Raw = %q, want the body verbatim", body, ce.Raw)
		}
		if !strings.Contains(ce.Reason, want) {
			t.Errorf("Decode(%s): reason %q, want it to mention %q", body, ce.Reason, want)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"answer":"yes","escalate":false}`))
	f.Add([]byte(`{"answer":"a","escalate":true}`))
	f.Add([]byte(``))
	f.Add([]byte(`{"answer":"a","escalate":false,"x":1}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := reply.Decode(body)
		if err != nil {
			var ce *reply.ContractError
			if !errors.Is(err, reply.ErrEmpty) && !errors.As(err, &ce) {
				t.Fatalf("untyped error %T %v", err, err)
			}
			if r != (reply.Reply{}) {
				t.Fatalf("error with a non-zero reply %+v", r)
			}
			return
		}
		if r.Answer == "" {
			t.Fatalf("accepted a blank answer from %q", body)
		}
	})
}

func ExampleDecode() {
	r, err := reply.Decode([]byte(`{"answer":"7305 in stock","escalate":false}`))
	fmt.Println(r.Answer, r.Escalate, err)

	_, err = reply.Decode(nil)
	fmt.Println(errors.Is(err, reply.ErrEmpty))

	_, err = reply.Decode([]byte(`{"answer":"ok"}`))
	var ce *reply.ContractError
	fmt.Println(errors.As(err, &ce), ce.Reason)
	// Output:
	// 7305 in stock false <nil>
	// true
	// true missing key "escalate"
}
