package a2a_test

import (
	"bytes"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/candorkit/candor/a2a"
	"github.com/candorkit/candor/reply"
)

func TestMapReply(t *testing.T) {
	jsonHeader := http.Header{"Content-Type": {"application/json"}}
	type want struct {
		state  a2a.State
		text   string
		raw    bool  // Raw holds the body verbatim
		is     error // errors.Is target
		reason string
	}
	cases := []struct {
		name   string
		status int
		body   string
		want   want
	}{
		{"answer", 200, `{"answer":"7305 in stock","escalate":false}`, want{a2a.Completed, "7305 in stock", false, nil, ""}},
		{"answer, keys reversed, spaces", 200, " {\"escalate\": false, \"answer\": \"ok\"}\n", want{a2a.Completed, "ok", false, nil, ""}},
		{"answer with 201", 201, `{"answer":"created","escalate":false}`, want{a2a.Completed, "created", false, nil, ""}},
		{"answer with 299", 299, `{"answer":"odd but 2xx","escalate":false}`, want{a2a.Completed, "odd but 2xx", false, nil, ""}},
		{"escalate", 200, `{"answer":"ask a person","escalate":true}`, want{a2a.Failed, "ask a person", false, a2a.ErrEscalated, ""}},
		{"empty 200", 200, ``, want{a2a.Failed, "the workflow returned no reply", false, reply.ErrEmpty, ""}},
		{"white space 200", 200, " \r\n\t", want{a2a.Failed, "the workflow returned no reply", false, reply.ErrEmpty, ""}},
		{"empty 204", 204, ``, want{a2a.Failed, "the workflow returned no reply", false, reply.ErrEmpty, ""}},
		{"empty 500", 500, ``, want{a2a.Failed, "the workflow returned no reply", false, reply.ErrEmpty, ""}},
		{"empty 404", 404, ``, want{a2a.Failed, "the workflow returned no reply", false, reply.ErrEmpty, ""}},
		{"500 JSON", 500, `{"message":"Error in workflow"}`, want{a2a.Failed, "the workflow answered HTTP 500", true, a2a.ErrStatus, ""}},
		{"404 not registered", 404, `{"code":404,"message":"The requested webhook \"POST x\" is not registered."}`, want{a2a.Failed, "the workflow answered HTTP 404", true, a2a.ErrStatus, ""}},
		{"302", 302, `<a href="/x">Found</a>`, want{a2a.Failed, "the workflow answered HTTP 302", true, a2a.ErrStatus, ""}},
		{"199", 199, `x`, want{a2a.Failed, "the workflow answered HTTP 199", true, a2a.ErrStatus, ""}},
		{"300", 300, `x`, want{a2a.Failed, "the workflow answered HTTP 300", true, a2a.ErrStatus, ""}},
		{"contract body with 500", 500, `{"answer":"ok","escalate":false}`, want{a2a.Failed, "the workflow answered HTTP 500", true, a2a.ErrStatus, ""}},
		{"missing escalate", 200, `{"answer":"ok"}`, want{a2a.Failed, "", true, nil, `missing key "escalate"`}},
		{"missing answer", 200, `{"escalate":false}`, want{a2a.Failed, "", true, nil, `missing key "answer"`}},
		{"answer not a string", 200, `{"answer":7305,"escalate":false}`, want{a2a.Failed, "", true, nil, `"answer" is not a string`}},
		{"escalate a string", 200, `{"answer":"ok","escalate":"false"}`, want{a2a.Failed, "", true, nil, `"escalate" is not a boolean`}},
		{"escalate null", 200, `{"answer":"ok","escalate":null}`, want{a2a.Failed, "", true, nil, `"escalate" is not a boolean`}},
		{"extra key", 200, `{"answer":"ok","escalate":false,"debug":1}`, want{a2a.Failed, "", true, nil, `unexpected key "debug"`}},
		{"extra nesting", 200, `{"json":{"answer":"ok","escalate":false}}`, want{a2a.Failed, "", true, nil, `unexpected key "json"`}},
		{"n8n item array", 200, `[{"answer":"ok","escalate":false}]`, want{a2a.Failed, "", true, nil, "array"}},
		{"blank answer", 200, `{"answer":" ","escalate":false}`, want{a2a.Failed, "", true, nil, "blank"}},
		{"non-JSON text", 200, `Workflow was started`, want{a2a.Failed, "", true, nil, "not JSON"}},
		{"HTML", 200, `<html><body>n8n is starting up</body></html>`, want{a2a.Failed, "", true, nil, "not JSON"}},
		{"truncated JSON", 200, `{"answer":"ok","escal`, want{a2a.Failed, "", true, nil, "not JSON"}},
		{"two objects", 200, `{"answer":"a","escalate":false}{"answer":"b","escalate":false}`, want{a2a.Failed, "", true, nil, "not JSON"}},
		{"invalid UTF-8", 200, "{\"answer\":\"\xff\",\"escalate\":false}", want{a2a.Failed, "", true, nil, "UTF-8"}},
		{"JSON null", 200, `null`, want{a2a.Failed, "", true, nil, "null"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body := []byte(tc.body)
			got := a2a.MapReply(tc.status, jsonHeader, body)
			if got.State != tc.want.state {
				t.Fatalf("state = %s, want %s", got.State, tc.want.state)
			}
			if got.State == a2a.Completed {
				if got.Err != nil || got.Raw != nil || got.Text != tc.want.text {
					t.Fatalf("completed outcome = %+v, want text %q and nothing else", got, tc.want.text)
				}
				return
			}
			var re *a2a.ReplyError
			if !errors.As(got.Err, &re) {
				t.Fatalf("error %v is not a *ReplyError", got.Err)
			}
			if re.Status != tc.status || !bytes.Equal(re.Body, body) || re.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("evidence = %d %q %v, want the reply as received", re.Status, re.Body, re.Header)
			}
			if tc.want.is != nil && !errors.Is(got.Err, tc.want.is) {
				t.Fatalf("error %v, want errors.Is %v", got.Err, tc.want.is)
			}
			if tc.want.reason != "" {
				var ce *reply.ContractError
				if !errors.As(got.Err, &ce) || !strings.Contains(ce.Reason, tc.want.reason) || !bytes.Equal(ce.Raw, body) {
					t.Fatalf("error %v, want a *reply.ContractError about %q with the raw body", got.Err, tc.want.reason)
				}
				if got.Text != "the workflow reply is off-contract: "+ce.Reason {
					t.Fatalf("text = %q", got.Text)
				}
			} else if got.Text != tc.want.text {
				t.Fatalf("text = %q, want %q", got.Text, tc.want.text)
			}
			if tc.want.raw != (got.Raw != nil) || (got.Raw != nil && !bytes.Equal(got.Raw, body)) {
				t.Fatalf("raw = %q, want verbatim body: %v", got.Raw, tc.want.raw)
			}
		})
	}
}

// MapReply is pure: it does not keep or change its arguments.
func TestMapReplyCopies(t *testing.T) {
	body := []byte(`{"answer":"a","escalate":true}`)
	h := http.Header{"X-N8n": {"1"}}
	out := a2a.MapReply(200, h, body)
	body[2] = 'X'
	h.Set("X-N8n", "2")
	var re *a2a.ReplyError
	if !errors.As(out.Err, &re) || re.Body[2] != 'a' || re.Header.Get("X-N8n") != "1" {
		t.Fatalf("the outcome shares memory with its arguments: %+v", re)
	}
}

func FuzzMapReply(f *testing.F) {
	for _, s := range []string{
		`{"answer":"ok","escalate":false}`, `{"answer":"ok","escalate":true}`, ``, ` `,
		`{"answer":"ok"}`, `[{"answer":"ok","escalate":false}]`, `{"answer":"ok","escalate":false,"x":1}`,
		`Workflow was started`, `{"answer":"","escalate":false}`,
	} {
		for _, status := range []int{200, 204, 302, 404, 500} {
			f.Add(status, []byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		out := a2a.MapReply(status, nil, body)
		r, err := reply.Decode(body)
		exact := err == nil && !r.Escalate && status >= 200 && status <= 299
		switch out.State {
		case a2a.Completed:
			if !exact {
				t.Fatalf("completed for status %d body %q", status, body)
			}
			if out.Text != r.Answer || out.Err != nil || strings.TrimSpace(out.Text) == "" {
				t.Fatalf("completed outcome %+v for %q", out, body)
			}
		case a2a.Failed:
			if exact {
				t.Fatalf("failed for an exact contract reply %q: %+v", body, out)
			}
			var re *a2a.ReplyError
			if !errors.As(out.Err, &re) || !bytes.Equal(re.Body, body) || re.Status != status {
				t.Fatalf("failure without the evidence: %+v", out.Err)
			}
		default:
			t.Fatalf("state %q", out.State)
		}
	})
}
