package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/candorkit/candor/examples/builder/internal/pgtest"
	"github.com/candorkit/candor/examples/builder/internal/progress"
	"github.com/candorkit/candor/examples/builder/internal/queue"
)

func noEnv(string) (string, bool) { return "", false }

func TestInitSample(t *testing.T) {
	cluster := pgtest.Start(t)
	for name, dsn := range map[string]string{
		"sqlite":   filepath.Join(t.TempDir(), "builder.db"),
		"postgres": cluster.NewDatabase(t),
	} {
		t.Run(name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			if code := run(context.Background(), []string{"-db", dsn, "-json", "init", "-sample"}, &out, &errOut, noEnv); code != 0 {
				t.Fatalf("exit %d: %s %s", code, out.String(), errOut.String())
			}
			var steps []string
			for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
				var l progress.Line
				if err := json.Unmarshal([]byte(line), &l); err != nil || l.Status != progress.OK {
					t.Fatalf("progress line %q (%v)", line, err)
				}
				steps = append(steps, l.Step)
			}
			if strings.Join(steps, ",") != "open,init,sample" {
				t.Fatalf("steps %v", steps)
			}
			s, err := queue.Open(context.Background(), dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			idea, err := s.Pick(context.Background())
			if err != nil {
				t.Fatalf("no ready idea after init -sample: %v", err)
			}
			if _, err := idea.Assertion(); err != nil {
				t.Fatalf("sample idea without a valid assertion: %v", err)
			}
			// init again is harmless and adds no second idea without -sample.
			if code := run(context.Background(), []string{"-db", dsn, "init"}, &out, &errOut, noEnv); code != 0 {
				t.Fatalf("second init exit %d: %s", code, errOut.String())
			}
			var n int
			if err := s.DB().QueryRow(`SELECT count(*) FROM automation_ideas`).Scan(&n); err != nil || n != 1 {
				t.Fatalf("%d ideas (%v); want 1", n, err)
			}
		})
	}
}

func TestInitReportsFailure(t *testing.T) {
	var out, errOut bytes.Buffer
	dsn := filepath.Join(t.TempDir(), "missing-dir", "builder.db")
	if code := run(context.Background(), []string{"-db", dsn, "init"}, &out, &errOut, noEnv); code != 1 {
		t.Fatalf("exit %d; want 1", code)
	}
	if !strings.Contains(out.String(), "open") || !strings.Contains(out.String(), "fail") {
		t.Fatalf("failure not shown as a failed step: %q", out.String())
	}
}

func TestNothingConfiguredPrintsNeeds(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), nil, &out, &errOut, noEnv); code != 2 {
		t.Fatalf("exit %d; want 2", code)
	}
	for _, want := range []string{"N8N_SANDBOX_URL", "N8N_SANDBOX_API_KEY", "llama3.1:8b", "scripts/n8n-local", "-generator file:PATH"} {
		if !strings.Contains(errOut.String(), want) {
			t.Fatalf("needs text lacks %q:\n%s", want, errOut.String())
		}
	}
}

func TestPhaseTwoCommandsSayTheyAreNotWired(t *testing.T) {
	env := map[string]string{"N8N_SANDBOX_URL": "http://127.0.0.1:5678", "N8N_SANDBOX_API_KEY": "k"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	for args, want := range map[string]int{"run": 1, "approve 3": 1, "reject 3": 1, "approve x": 2, "approve": 2, "frobnicate": 2} {
		var out, errOut bytes.Buffer
		code := run(context.Background(), strings.Fields(args), &out, &errOut, lookup)
		if code != want {
			t.Errorf("%q: exit %d; want %d (%s)", args, code, want, errOut.String())
		}
		if code == 1 && !strings.Contains(errOut.String(), "not wired yet") {
			t.Errorf("%q: %s", args, errOut.String())
		}
	}
}

func Example() {
	// With nothing configured, the builder says what it needs.
	run(context.Background(), []string{"-db", "queue.db"}, os.Stdout, os.Stdout, noEnv)
	// Output:
	// builder: secrets: environment lacks N8N_SANDBOX_URL, N8N_SANDBOX_API_KEY
	//
	// The builder needs:
	//   1. A sandbox n8n: N8N_SANDBOX_URL and N8N_SANDBOX_API_KEY in the environment
	//      (optional N8N_SANDBOX_EMAIL and N8N_SANDBOX_PASSWORD: an owner login, for listing credentials on n8n 1.x),
	//      or -secrets vault with -vault-addr, -vault-role-id-file and -vault-secret-id-file
	//      (KV v2 secret/sandbox/n8n with fields base_url and api_key).
	//      The project's local n8n: scripts/n8n-local install, then see scripts/n8n-local status.
	//   2. A model: Ollama at http://127.0.0.1:11434 with model llama3.1:8b (-ollama-url, -model),
	//      or -generator file:PATH to use a workflow JSON from a file instead of a model.
	//   3. A queue: queue.db (-db; SQLite file or postgres://…). Create it with: builder init -sample
	// Notifications go to ntfy with -ntfy-topic (logged when unset).
}
