package overseer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const wf = `{"name":"Relay","nodes":[
 {"id":"a","name":"Webhook","type":"n8n-nodes-base.webhook","position":[250,300],"parameters":{}},
 {"id":"b","name":"Post to Slack","type":"n8n-nodes-base.slack","position":[450,300],"parameters":{},"credentials":{"slackApi":{"name":"Slack-sandbox"}}}],
 "connections":{"Webhook":{"main":[[{"node":"Post to Slack","type":"main","index":0}]]}}}`

// script writes an executable shell script that saves its stdin and counts its runs.
func script(t *testing.T, body string) (cmdline, dir string) {
	t.Helper()
	dir = t.TempDir()
	p := filepath.Join(dir, "reviewer.sh")
	content := "#!/bin/sh\ncat > \"$(dirname \"$0\")/prompt.txt\"\necho run >> \"$(dirname \"$0\")/runs\"\n" + body + "\n"
	if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
	return p, dir
}

func runs(t *testing.T, dir string) int {
	b, err := os.ReadFile(filepath.Join(dir, "runs"))
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "run")
}

func review(id int64) Review {
	return Review{AutomationID: id, Name: "Relay", Spec: strings.Repeat("Post every order to Slack. ", 30), Workflow: json.RawMessage(wf), Credentials: []string{"Slack-sandbox"}}
}

func TestCommandPass(t *testing.T) {
	line, dir := script(t, `echo "PASS: the workflow posts each order to Slack as the spec asks."`)
	c, err := NewCommand(line, 0)
	if err != nil {
		t.Fatal(err)
	}
	v, err := c.Review(context.Background(), review(7))
	if err != nil {
		t.Fatal(err)
	}
	if !v.Pass || v.Reason != "the workflow posts each order to Slack as the spec asks." || v.By != "command: "+line {
		t.Fatalf("verdict %+v", v)
	}
	prompt, err := os.ReadFile(filepath.Join(dir, "prompt.txt"))
	if err != nil {
		t.Fatal(err)
	}
	p := string(prompt)
	if EstimateTokens(p) >= MaxPromptTokens {
		t.Fatalf("prompt is %d estimated tokens", EstimateTokens(p))
	}
	specLine := ""
	for _, l := range strings.Split(p, "\n") {
		if strings.HasPrefix(l, "Spec: ") {
			specLine = strings.TrimPrefix(l, "Spec: ")
		}
	}
	if n := len([]rune(strings.TrimSuffix(specLine, "…"))); n != SpecChars {
		t.Fatalf("spec in prompt has %d characters; want it cut to %d", n, SpecChars)
	}
	for _, want := range []string{"PASS or FAIL", "Post to Slack [slack] uses Slack-sandbox (slackApi)", "Available credentials: Slack-sandbox"} {
		if !strings.Contains(p, want) {
			t.Fatalf("prompt lacks %q:\n%s", want, p)
		}
	}
	// A retry for the same automation does not run the command again.
	if _, err := c.Review(context.Background(), review(7)); !errors.Is(err, ErrAlreadyReviewed) {
		t.Fatalf("second review: %v; want ErrAlreadyReviewed", err)
	}
	if n := runs(t, dir); n != 1 {
		t.Fatalf("command ran %d times; want once", n)
	}
	if _, err := c.Review(context.Background(), review(8)); err != nil {
		t.Fatalf("another automation: %v", err)
	}
}

func TestCommandFailures(t *testing.T) {
	cases := []struct {
		name  string
		body  string
		check func(Verdict, error) bool
	}{
		{"fail with reason", `printf 'FAIL — the Slack node posts a placeholder text.\nMore detail.\n'`, func(v Verdict, err error) bool {
			return err == nil && !v.Pass && v.Reason == "the Slack node posts a placeholder text."
		}},
		{"fail reason on next line", `printf '**FAIL**\n\nNo trigger node.\n'`, func(v Verdict, err error) bool {
			return err == nil && !v.Pass && v.Reason == "No trigger node."
		}},
		{"neither", `echo "Looks fine to me"`, func(v Verdict, err error) bool {
			var oe *OutputError
			return errors.As(err, &oe) && oe.Output == "Looks fine to me\n"
		}},
		{"empty output", `true`, func(v Verdict, err error) bool {
			var oe *OutputError
			return errors.As(err, &oe)
		}},
		{"non-zero exit", `echo PASS; echo "rate limited" >&2; exit 3`, func(v Verdict, err error) bool {
			var ce *CommandError
			return errors.As(err, &ce) && ce.ExitCode == 3 && ce.Stderr == "rate limited"
		}},
		{"too much output", `yes PASS | head -c 70000`, func(v Verdict, err error) bool {
			var ce *CommandError
			return errors.As(err, &ce) && strings.Contains(ce.Error(), "larger than")
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			line, _ := script(t, c.body)
			o, _ := NewCommand(line, 0)
			v, err := o.Review(context.Background(), review(1))
			if !c.check(v, err) {
				t.Fatalf("verdict %+v, err %v", v, err)
			}
			if err != nil && v.Pass {
				t.Fatal("an error came with a PASS")
			}
		})
	}
	t.Run("timeout", func(t *testing.T) {
		line, _ := script(t, `exec sleep 60`)
		o, _ := NewCommand(line, time.Millisecond)
		_, err := o.Review(context.Background(), review(1))
		var ce *CommandError
		if !errors.As(err, &ce) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v; want a CommandError for the deadline", err)
		}
	})
	t.Run("not a workflow", func(t *testing.T) {
		line, dir := script(t, `echo PASS`)
		o, _ := NewCommand(line, 0)
		r := review(1)
		r.Workflow = json.RawMessage(`{"name":"x"}`)
		if _, err := o.Review(context.Background(), r); err == nil {
			t.Fatal("a workflow without nodes was reviewed")
		}
		if runs(t, dir) != 0 {
			t.Fatal("the command ran for an unusable workflow")
		}
	})
	if _, err := NewCommand("  ", 0); err == nil {
		t.Fatal("empty command accepted")
	}
}

func TestCommandPromptFitsBudget(t *testing.T) {
	var nodes []string
	for i := 0; i < 300; i++ {
		nodes = append(nodes, fmt.Sprintf(`{"name":"Node number %d with a rather long descriptive name","type":"n8n-nodes-base.httpRequest","credentials":{"httpHeaderAuth":{"name":"Header auth %d-sandbox"}}}`, i, i))
	}
	r := Review{AutomationID: 1, Name: strings.Repeat("Long name ", 40), Spec: strings.Repeat("é", 5000),
		Workflow: json.RawMessage(`{"nodes":[` + strings.Join(nodes, ",") + `],"connections":{}}`), Credentials: []string{strings.Repeat("c", 1000)}}
	p, err := CommandPrompt(r)
	if err != nil {
		t.Fatal(err)
	}
	if EstimateTokens(p) >= MaxPromptTokens {
		t.Fatalf("prompt is %d estimated tokens (%d bytes)", EstimateTokens(p), len(p))
	}
	if !strings.Contains(p, "Nodes in order (300)") || !strings.Contains(p, "more node(s)") {
		t.Fatalf("prompt does not say nodes were left out:\n%s", p)
	}
	if strings.Count(p, "é") != SpecChars {
		t.Fatalf("spec not cut to %d characters", SpecChars)
	}
}

func TestParseVerdict(t *testing.T) {
	cases := map[string]struct {
		ok, pass bool
		reason   string
	}{
		"PASS":                         {true, true, "(no reason given)"},
		"pass: fine.":                  {true, true, "fine."},
		"\n\n## FAIL: no trigger.\n":   {true, false, "no trigger."},
		"`PASS` - good":                {true, true, "good"},
		"PASSED all checks":            {false, false, ""},
		"FAILURE":                      {false, false, ""},
		"The verdict is PASS":          {false, false, ""},
		"":                             {false, false, ""},
		"FAIL\r\nbecause it is a stub": {true, false, "because it is a stub"},
	}
	for in, want := range cases {
		v, ok := ParseVerdict(in)
		if ok != want.ok || (ok && (v.Pass != want.pass || v.Reason != want.reason)) {
			t.Errorf("ParseVerdict(%q) = %+v, %v; want pass=%v reason=%q ok=%v", in, v, ok, want.pass, want.reason, want.ok)
		}
	}
}

func TestRules(t *testing.T) {
	ctx := context.Background()
	if _, err := (Rules{}).Review(ctx, review(1)); !errors.Is(err, ErrNotWired) {
		t.Fatalf("unwired rules: %v", err)
	}
	var seen json.RawMessage
	ok := Rules{Structure: func(w json.RawMessage) []string { seen = w; return nil }}
	v, err := ok.Review(ctx, review(1))
	if err != nil || !v.Pass || v.By != "rules" || len(v.NotPerformed) != 1 || v.NotPerformed[0] != CheckLogicNotPerformed {
		t.Fatalf("verdict %+v, %v", v, err)
	}
	if string(seen) != wf {
		t.Fatal("the structure check did not see the workflow")
	}
	cases := map[string]struct {
		mutate func(Review) Review
		rules  Rules
		reason string
	}{
		"structure": {func(r Review) Review { return r }, Rules{Structure: func(json.RawMessage) []string {
			return []string{"$.nodes[0].id: not a UUID", "$.nodes[1].id: not a UUID"}
		}}, "Check 1 (structure) failed: $.nodes[0].id: not a UUID (and 1 more problem(s))"},
		"unknown credential": {func(r Review) Review { r.Credentials = []string{"Slack"}; return r }, ok,
			`Check 2 (credentials) failed: node "Post to Slack" references credential "Slack-sandbox", which is not one of the available credentials.`},
		"noop": {func(r Review) Review {
			r.Workflow = json.RawMessage(strings.Replace(wf, "n8n-nodes-base.slack", "n8n-nodes-base.noOp", 1))
			return r
		}, ok, `Check 3 (no stubs) failed: node "Post to Slack" is a No Operation node.`},
		"placeholder": {func(r Review) Review {
			r.Workflow = json.RawMessage(strings.Replace(wf, `"parameters":{},"credentials"`, `"parameters":{"url":"https://api.example.com/orders"},"credentials"`, 1))
			return r
		}, ok, `Check 3 (no stubs) failed: node "Post to Slack" has placeholder text "example.com" in its parameters.`},
		"disabled": {func(r Review) Review {
			r.Workflow = json.RawMessage(strings.Replace(wf, `"id":"a",`, `"id":"a","disabled":true,`, 1))
			return r
		}, ok, `Check 3 (no stubs) failed: node "Webhook" is disabled.`},
	}
	for name, c := range cases {
		v, err := c.rules.Review(ctx, c.mutate(review(1)))
		if err != nil || v.Pass || v.Reason != c.reason || len(v.NotPerformed) != 1 {
			t.Errorf("%s: verdict %+v, %v; want FAIL %q", name, v, err, c.reason)
		}
	}
	if v.String() != "PASS: "+v.Reason {
		t.Fatalf("String = %q", v.String())
	}
}

func TestPlaceholderText(t *testing.T) {
	for _, s := range []string{`"TODO: call the API"`, `"https://example.com/x"`, `"Bearer YOUR_API_KEY"`, `"<api key>"`, `"<your_token>"`, `"Lorem ipsum"`} {
		if placeholderRE.FindString(s) == "" {
			t.Errorf("%s not flagged", s)
		}
	}
	for _, s := range []string{`"Create a todo item"`, `"<p>Hello</p><table><tr>"`, `"https://shop.internal/orders"`, `"={{ $json.order_id }}"`} {
		if m := placeholderRE.FindString(s); m != "" {
			t.Errorf("%s flagged as placeholder (%q)", s, m)
		}
	}
}

func TestNewRulesUsesN8NValidation(t *testing.T) {
	ctx := context.Background()
	// wf's node ids are not UUIDs and its webhook has no webhookId: n8n's
	// validation finds both, so check 1 fails.
	v, err := NewRules().Review(ctx, review(1))
	if err != nil || v.Pass || !strings.HasPrefix(v.Reason, "Check 1 (structure) failed: $.nodes[0]") {
		t.Fatalf("verdict %+v, %v; want a check 1 FAIL naming $.nodes[0]", v, err)
	}
	good := `{"name":"Relay","nodes":[
 {"id":"0f8fad5b-d9cb-469f-a165-70867728950e","name":"Webhook","type":"n8n-nodes-base.webhook","typeVersion":2,"webhookId":"7c9e6679-7425-40de-944b-e07fc1f90ae7","position":[250,300],"parameters":{"path":"x"}},
 {"id":"9b2d3c4e-1f0a-4b5c-8d7e-6f5a4b3c2d1e","name":"Post to Slack","type":"n8n-nodes-base.slack","typeVersion":2,"position":[450,300],"parameters":{},"credentials":{"slackApi":{"name":"Slack-sandbox"}}}],
 "connections":{"Webhook":{"main":[[{"node":"Post to Slack","type":"main","index":0}]]}},"settings":{}}`
	r := review(1)
	r.Workflow = json.RawMessage(good)
	if v, err := NewRules().Review(ctx, r); err != nil || !v.Pass {
		t.Fatalf("valid workflow: %+v, %v", v, err)
	}
	if got := N8NStructure(json.RawMessage(`[]`)); len(got) == 0 {
		t.Fatal("a JSON array passed the structure check")
	}
}
