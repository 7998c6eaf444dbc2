package generate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const workflow = `{"name":"Order confirmation relay","nodes":[{"id":"0f8fad5b-d9cb-469f-a165-70867728950e","name":"Webhook","type":"n8n-nodes-base.webhook","typeVersion":2,"position":[250,300],"parameters":{"path":"order-received","httpMethod":"POST"}}],"connections":{},"settings":{"executionOrder":"v1"},"active":false}`

// ollamaReply is a non-streaming /api/generate answer as Ollama documents it.
func ollamaReply(model, response string) string {
	b, _ := json.Marshal(map[string]any{
		"model": model, "created_at": "2026-05-01T10:00:00.000000Z", "response": response,
		"done": true, "done_reason": "stop", "context": []int{1, 2, 3},
		"total_duration": 5043500667, "load_duration": 5025959, "prompt_eval_count": 26,
		"prompt_eval_duration": 325953000, "eval_count": 290, "eval_duration": 4709213000,
	})
	return string(b)
}

func TestOllamaGenerate(t *testing.T) {
	var got generateRequest
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/api/generate" || r.Header.Get("Content-Type") != "application/json" {
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, "404 page not found")
			return
		}
		dec := json.NewDecoder(r.Body)
		dec.DisallowUnknownFields()
		if err := dec.Decode(&got); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"error":%q}`, err.Error())
			return
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		io.WriteString(w, ollamaReply(got.Model, "Here is the workflow you asked for:\n\n```json\n"+workflow+"\n```\n\nIt starts with a webhook {trigger}."))
	}))
	defer srv.Close()

	o := Ollama{BaseURL: srv.URL + "/"}
	wf, err := o.Generate(context.Background(), "PROMPT TEXT")
	if err != nil {
		t.Fatal(err)
	}
	if string(wf) != workflow {
		t.Fatalf("extracted %s", wf)
	}
	if got.Model != "llama3.1:8b" || got.Stream || got.Prompt != "PROMPT TEXT" {
		t.Fatalf("request %+v; want model llama3.1:8b, stream false, the prompt", got)
	}
	if d := o.Describe(); d != "ollama llama3.1:8b at "+srv.URL {
		t.Fatalf("Describe = %q", d)
	}
}

func TestOllamaFailures(t *testing.T) {
	cases := []struct {
		name    string
		status  int
		body    string
		check   func(error) bool
		timeout bool
	}{
		{name: "model not found", status: 404, body: `{"error":"model 'llama3.1:8b' not found"}`, check: func(err error) bool {
			var oe *OllamaError
			return errors.As(err, &oe) && oe.Status == 404 && oe.Message == "model 'llama3.1:8b' not found"
		}},
		{name: "not an object", status: 200, body: `[1,2]`, check: func(err error) bool {
			var oe *OllamaError
			return errors.As(err, &oe) && oe.Body == "[1,2]"
		}},
		{name: "no response field", status: 200, body: `{"model":"m","done":true}`, check: func(err error) bool {
			var oe *OllamaError
			return errors.As(err, &oe)
		}},
		{name: "cut by num_predict", status: 200, body: strings.Replace(ollamaReply("m", `{"nodes":[`), `"stop"`, `"length"`, 1), check: func(err error) bool { return errors.Is(err, ErrIncomplete) }},
		{name: "not done", status: 200, body: strings.Replace(ollamaReply("m", workflow), `"done":true`, `"done":false`, 1), check: func(err error) bool { return errors.Is(err, ErrIncomplete) }},
		{name: "prose only", status: 200, body: ollamaReply("m", "I cannot build that workflow."), check: func(err error) bool {
			var ee *ExtractError
			return errors.As(err, &ee) && errors.Is(err, ErrNoWorkflow) && ee.Reply == "I cannot build that workflow."
		}},
		{name: "empty reply", status: 200, body: ollamaReply("m", ""), check: func(err error) bool { return errors.Is(err, ErrNoWorkflow) }},
		{name: "oversized", status: 200, body: ollamaReply("m", strings.Repeat("x", MaxBody)), check: func(err error) bool { return errors.Is(err, ErrTooLarge) }},
		{name: "timeout", timeout: true, check: func(err error) bool { return errors.Is(err, context.DeadlineExceeded) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if c.timeout {
					<-r.Context().Done()
					return
				}
				w.Header().Set("Content-Type", "application/json; charset=utf-8")
				w.WriteHeader(c.status)
				io.WriteString(w, c.body)
			}))
			defer srv.Close()
			o := Ollama{BaseURL: srv.URL, Model: "m"}
			if c.timeout {
				o.Timeout = 1 // nanosecond: the deadline passes at once
			}
			wf, err := o.Generate(context.Background(), "p")
			if err == nil || wf != nil || !c.check(err) {
				t.Fatalf("Generate = %s, %v", wf, err)
			}
		})
	}
}

func TestExtractWorkflow(t *testing.T) {
	ok := map[string]string{
		"bare":               workflow,
		"fenced":             "```json\n" + workflow + "\n```",
		"fence no language":  "```\n" + workflow + "\n```\n",
		"prose around":       "Sure! {not json} Here: " + workflow + " Hope that {{ $json.helps }}.",
		"with example input": "Example input: {\"order_id\": 1}\n```json\n" + workflow + "\n```",
		"braces in strings":  `{"nodes":[{"parameters":{"jsCode":"return [{json: {a: '}'}}];"}}],"connections":{}}`,
	}
	for name, reply := range ok {
		wf, err := ExtractWorkflow([]byte(reply))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !json.Valid(wf) || !bytes.Contains([]byte(reply), wf) {
			t.Errorf("%s: extracted %s", name, wf)
		}
	}
	bad := map[string]string{
		"empty":           "  \n",
		"prose":           "No workflow today.",
		"truncated":       "```json\n" + workflow[:len(workflow)-20] + "\n```",
		"comments":        strings.Replace(workflow, `"nodes":`, "// the nodes\n\"nodes\":", 1),
		"no nodes":        `{"name":"x","connections":{}}`,
		"nodes not array": `{"nodes":{},"connections":{}}`,
		"two workflows":   workflow + "\n" + workflow,
		"trailing comma":  `{"nodes":[],"connections":{},}`,
	}
	for name, reply := range bad {
		wf, err := ExtractWorkflow([]byte(reply))
		var ee *ExtractError
		if !errors.As(err, &ee) || wf != nil || ee.Reason == "" {
			t.Errorf("%s: got %s, %v; want an ExtractError", name, wf, err)
		}
	}
}

func FuzzExtractObjects(f *testing.F) {
	f.Add("```json\n" + workflow + "\n```")
	f.Add(`{"a":"}"} {"b":[{"c":1}]}`)
	f.Add(`{{{{[[[`)
	f.Add(`{"x":"\"}\\"}`)
	f.Fuzz(func(t *testing.T, s string) {
		objs := ExtractObjects([]byte(s))
		for _, o := range objs {
			if !json.Valid(o) || o[0] != '{' || !strings.Contains(s, string(o)) {
				t.Fatalf("extracted %q from %q", o, s)
			}
		}
		wf, err := ExtractWorkflow([]byte(s))
		if (err == nil) == (wf == nil) {
			t.Fatalf("ExtractWorkflow returned %q and %v", wf, err)
		}
	})
}

func TestBuildPrompt(t *testing.T) {
	p := BuildPrompt(PromptInput{
		Name:           "Order confirmation relay",
		Spec:           "When an order arrives, post a confirmation.",
		Infrastructure: "Order confirmation endpoint: POST http://127.0.0.1:9000/capture/order-confirmations",
		Credentials:    []Credential{{Name: "Slack-sandbox", Type: "slackApi"}, {Name: "Shop DB-sandbox", Type: "postgres"}},
	})
	for _, want := range []string{
		"When an order arrives, post a confirmation.",
		"POST http://127.0.0.1:9000/capture/order-confirmations",
		`name "Slack-sandbox", type "slackApi"`,
		`name "Shop DB-sandbox", type "postgres"`,
		`"active": false`,
		"[250, 300], [450, 300], [650, 300]",
		"200 px",
		"UUID",
		"No stubs",
		"exactly one JSON object",
		`"name" ("Order confirmation relay")`,
	} {
		if !strings.Contains(p, want) {
			t.Errorf("prompt lacks %q:\n%s", want, p)
		}
	}
	if q := BuildPrompt(PromptInput{Name: "x", Spec: "y"}); !strings.Contains(q, "no credentials") {
		t.Errorf("prompt without credentials does not say so:\n%s", q)
	}
}

func TestFileGenerator(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "wf.json")
	os.WriteFile(good, []byte(workflow+"\n"), 0o600)
	g, err := FromFlag("file:"+good, Ollama{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(g.Describe(), "no model") {
		t.Fatalf("Describe %q does not say no model is used", g.Describe())
	}
	wf, err := g.Generate(context.Background(), "ignored")
	if err != nil || string(wf) != workflow {
		t.Fatalf("Generate = %s, %v", wf, err)
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"nodes": [`), 0o600)
	if _, err := (File{Path: bad}).Generate(context.Background(), ""); !errors.Is(err, ErrNoWorkflow) || !strings.Contains(err.Error(), bad) {
		t.Fatalf("bad file: %v", err)
	}
	if _, err := (File{Path: filepath.Join(dir, "absent")}).Generate(context.Background(), ""); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("absent file: %v", err)
	}
	for _, v := range []string{"", "ollama"} {
		if g, err := FromFlag(v, Ollama{Model: "qwen"}); err != nil || g.(Ollama).Model != "qwen" {
			t.Fatalf("FromFlag(%q) = %v, %v", v, g, err)
		}
	}
	for _, v := range []string{"file:", "openai", "FILE:x"} {
		if _, err := FromFlag(v, Ollama{}); err == nil {
			t.Fatalf("FromFlag(%q) accepted", v)
		}
	}
}
