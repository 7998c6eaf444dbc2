package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/candorkit/candor/examples/builder/internal/progress"
	"github.com/candorkit/candor/examples/builder/internal/queue"
	"github.com/candorkit/candor/examples/builder/internal/secrets"
	"github.com/candorkit/candor/examples/internal/cli"
	"github.com/candorkit/candor/examples/internal/clitest"
	"github.com/candorkit/candor/internal/pgtest"
	"github.com/candorkit/candor/internal/testproc"
	"github.com/candorkit/candor/n8n"
	"github.com/candorkit/candor/n8n/n8ntest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	// Failures go to stderr too.
	if !strings.HasPrefix(errOut.String(), "builder init: ") {
		t.Fatalf("stderr %q; want the failure", errOut.String())
	}
}

func TestNothingConfiguredPrintsNeeds(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), nil, &out, &errOut, noEnv); code != cli.ExitConfig {
		t.Fatalf("exit %d; want 3 (configuration)", code)
	}
	for _, want := range []string{"N8N_SANDBOX_URL", "N8N_SANDBOX_API_KEY", "N8N_SANDBOX_EMAIL", "N8N_PRODUCTION_URL",
		"llama3.1:8b", "scripts/n8n-local install 1", "bin/n8n start", "-generator file:PATH"} {
		if !strings.Contains(errOut.String(), want) {
			t.Fatalf("needs text lacks %q:\n%s", want, errOut.String())
		}
	}
	if out.Len() != 0 {
		t.Fatalf("something ran: %s", out.String())
	}
	// A URL and key without the owner login is not enough either.
	env := map[string]string{"N8N_SANDBOX_URL": "http://127.0.0.1:5678", "N8N_SANDBOX_API_KEY": "k"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	errOut.Reset()
	if code := run(context.Background(), nil, &out, &errOut, lookup); code != cli.ExitConfig || !strings.Contains(errOut.String(), "N8N_SANDBOX_EMAIL, N8N_SANDBOX_PASSWORD") {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
}

func TestCommandLineErrors(t *testing.T) {
	env := map[string]string{"N8N_SANDBOX_URL": "http://127.0.0.1:5678", "N8N_SANDBOX_API_KEY": "k", "USER": "alice"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	for args, want := range map[string]string{
		"approve x":        "not a positive number",
		"approve":          "exactly one automation id",
		"reject 1 2":       "exactly one automation id",
		"frobnicate":       "unknown command",
		"run extra":        "unexpected arguments",
		"-secrets sops":    "want env or vault",
		"-by= approve 3":   "flag provided but not defined",
		"approve -by= 3":   "say who decides",
		"-generator x run": "-generator", // a flag: refused before the environment (which lacks the login)
	} {
		var out, errOut bytes.Buffer
		code := run(context.Background(), strings.Fields(args), &out, &errOut, lookup)
		if code != cli.ExitUsage || !strings.Contains(errOut.String(), want) || out.Len() != 0 {
			t.Errorf("%q: exit %d, %q; want 2 and %q", args, code, errOut.String(), want)
		}
		if n := strings.Count(errOut.String(), "Usage:"); n != 1 {
			t.Errorf("%q: the usage appears %d times, want once", args, n)
		}
	}
	// The environment lacking production: configuration, exit 3.
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"approve", "3"}, &out, &errOut, lookup); code != cli.ExitConfig || !strings.Contains(errOut.String(), "N8N_PRODUCTION_URL") {
		t.Errorf("approve without production: exit %d, %q", code, errOut.String())
	}
}

// TestApprovalsDSNErrors pins that a malformed -approvals DSN is a usage
// error (exit 2) and an unreachable database a failure (exit 1), neither
// printing the password.
func TestApprovalsDSNErrors(t *testing.T) {
	env := map[string]string{"N8N_SANDBOX_URL": "http://127.0.0.1:5678", "N8N_SANDBOX_API_KEY": "k",
		"N8N_SANDBOX_EMAIL": "a@example.com", "N8N_SANDBOX_PASSWORD": "pw-sandbox-1", "USER": "alice"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	const password = "s3cret-Pa55word"
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"-approvals", "postgres://candor:" + password + "@127.0.0.1:notaport/db", "run"}, &out, &errOut, lookup)
	assert.Equal(t, cli.ExitUsage, code, errOut.String())
	assert.Contains(t, errOut.String(), "-approvals: not a valid PostgreSQL connection string")
	assert.NotContains(t, out.String()+errOut.String(), password)

	// A free port: nothing listens, the open fails (exit 1), readably.
	cluster := pgtest.Start(t)
	dsn := cluster.DSN
	cluster.Stop(t, pgtest.StopOptions{})
	out.Reset()
	errOut.Reset()
	code = run(context.Background(), []string{"-db", filepath.Join(t.TempDir(), "q.db"), "-approvals", dsn, "-generator", "file:testdata/order-confirmation.json", "run"}, &out, &errOut, lookup)
	assert.Equal(t, cli.ExitFail, code, errOut.String())
	assert.Contains(t, out.String()+errOut.String(), "unreachable")
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	pw, ok := u.User.Password()
	require.True(t, ok)
	assert.NotContains(t, out.String()+errOut.String(), pw)
}

// TestHelp pins that -h (and help, and a subcommand's -h) prints the usage,
// with the subcommands, on stdout and exits 0 (it exited 2 and listed no
// subcommand).
func TestHelp(t *testing.T) {
	bin := testproc.Build(t, ".")
	want := []string{"init [-sample]", "approve [-by NAME]", "reject [-by NAME]", "[run]", "Exit codes:", "-db string", "The builder needs:", "docs/builder-playbook.md"}
	clitest.Help(t, bin, []string{"-h"}, want...)
	clitest.Help(t, bin, []string{"help"}, want...)
	clitest.Help(t, bin, []string{"approve", "-h"}, "Flags of builder approve:", "-comment")
	clitest.Help(t, bin, []string{"init", "-h"}, "Flags of builder init:", "-sample")
	clitest.UsageError(t, bin, nil, []string{"-nope"}, "builder: flag provided but not defined: -nope", "Usage:")
	clitest.UsageError(t, bin, nil, []string{"approve", "x"}, "builder approve: automation id", "Usage:")
}

// TestCommandLineAgainstN8N runs the binary's commands as a person would:
// init -sample, run with the committed workflow file, approve twice.
func TestCommandLineAgainstN8N(t *testing.T) {
	ctx := context.Background()
	inst := n8ntest.Start(t, n8ntest.Edition1, n8ntest.Options{})
	env := map[string]string{"USER": "alice"}
	for _, e := range []secrets.Environment{secrets.Sandbox, secrets.Production} {
		u, k, em, pw := secrets.VarNames(e)
		env[u], env[k], env[em], env[pw] = inst.BaseURL, inst.APIKey, inst.Email, inst.Password
	}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	cluster := pgtest.Start(t)
	c, err := n8n.New(inst.BaseURL, inst.APIKey)
	require.NoError(t, err)
	workflows := 0
	// The approval store in a SQLite file, then in PostgreSQL (-approvals
	// DSN): the same flow, each with a queue of its own, on one n8n.
	for _, name := range []string{"sqlite", "postgres"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			approvals := filepath.Join(dir, "approvals.db")
			if name == "postgres" {
				approvals = cluster.NewDatabase(t)
			}
			commandLineFlow(t, ctx, c, lookup, inst.APIKey, inst.Password, filepath.Join(dir, "builder.db"), approvals, &workflows)
		})
	}
}

func commandLineFlow(t *testing.T, ctx context.Context, c *n8n.Client, lookup func(string) (string, bool), apiKey, password, db, approvals string, workflows *int) {
	cli := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := run(ctx, append([]string{"-db", db, "-approvals", approvals}, args...), &out, &errOut, lookup)
		return code, out.String(), errOut.String()
	}
	if code, out, errOut := cli("init", "-sample"); code != 0 {
		t.Fatalf("init: %d %s %s", code, out, errOut)
	}
	code, out, errOut := cli("-generator", "file:testdata/order-confirmation.json", "run")
	t.Logf("builder run:\n%s", out)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"(no model: the workflow is read from this file)", "level4", "READY — Order confirmation relay passed all tests", "awaiting approval: builder approve 1"} {
		if !strings.Contains(out, want) {
			t.Fatalf("run output lacks %q", want)
		}
	}
	if strings.Contains(out+errOut, apiKey) || strings.Contains(out+errOut, password) {
		t.Fatal("a secret reached the output")
	}
	code, out, errOut = cli("-json", "approve", "-comment", "ship it", "1")
	t.Logf("builder -json approve 1:\n%s", out)
	if code != 0 {
		t.Fatalf("approve: exit %d\n%s\n%s", code, out, errOut)
	}
	var last progress.Line
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || last.Step != "deploy" || last.Status != progress.OK {
		t.Fatalf("last approve line %q (%v)", lines[len(lines)-1], err)
	}
	code, out, _ = cli("approve", "1")
	if code != 0 || !strings.Contains(out, "already deployed") {
		t.Fatalf("second approve: exit %d\n%s", code, out)
	}
	s, err := queue.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	it, err := s.Get(ctx, 1)
	if err != nil || it.BuilderStatus != queue.Deployed || it.Status != queue.StatusDeployed {
		t.Fatalf("idea %+v, %v", it, err)
	}
	ws, err := c.ListWorkflows(ctx, n8n.ListWorkflowsOptions{})
	if err != nil || len(ws) != *workflows+2 {
		t.Fatalf("%d workflows (%v); want the sandbox one and one production one more than %d", len(ws), err, *workflows)
	}
	*workflows = len(ws)
	// Nothing left to build: a run says so and succeeds.
	if code, out, _ := cli("-generator", "file:testdata/order-confirmation.json", "run"); code != 0 || !strings.Contains(out, "nothing_to_build") {
		t.Fatalf("empty queue: exit %d\n%s", code, out)
	}
}

func Example() {
	// With nothing configured, the builder says what it needs.
	run(context.Background(), []string{"-db", "queue.db"}, os.Stdout, os.Stdout, noEnv)
	// Output:
	// builder: secrets: environment lacks N8N_SANDBOX_URL, N8N_SANDBOX_API_KEY
	//
	// The builder needs:
	//   1. A sandbox n8n: N8N_SANDBOX_URL, N8N_SANDBOX_API_KEY, N8N_SANDBOX_EMAIL and N8N_SANDBOX_PASSWORD in the environment
	//      (the owner login lists credentials and runs the smoke test; n8n 1.x allows both only in a session),
	//      or -secrets vault with -vault-addr, -vault-role-id-file and -vault-secret-id-file
	//      (KV v2 secret/sandbox/n8n with fields base_url, api_key, email, password).
	//      "builder approve" needs the same for production: N8N_PRODUCTION_URL, N8N_PRODUCTION_API_KEY, N8N_PRODUCTION_EMAIL, N8N_PRODUCTION_PASSWORD
	//      (may name the same n8n; sandbox credentials end in -sandbox, production ones do not).
	//   2. A model: Ollama at http://127.0.0.1:11434 with model llama3.1:8b (-ollama-url, -model),
	//      or -generator file:PATH to use a workflow JSON from a file instead of a model
	//      ({capture_base} in the file becomes the capture endpoint's URL).
	//   3. A queue: queue.db (-db; SQLite file or postgres://…). Create it with: builder init -sample
	//
	// The project's local n8n (n8n 1.123.81): install it with scripts/n8n-local install 1
	// (scripts/n8n-local status shows where it is), then start it on 127.0.0.1:5678 with:
	//   mkdir -p ~/.cache/candor/n8n-sandbox && cd ~/.cache/candor/n8n-sandbox && \
	//   N8N_USER_FOLDER=$PWD N8N_LISTEN_ADDRESS=127.0.0.1 N8N_HOST=127.0.0.1 N8N_PORT=5678 \
	//   N8N_RUNNERS_BROKER_LISTEN_ADDRESS=127.0.0.1 N8N_SECURE_COOKIE=false \
	//   N8N_DIAGNOSTICS_ENABLED=false N8N_VERSION_NOTIFICATIONS_ENABLED=false N8N_TEMPLATES_ENABLED=false \
	//   N8N_PERSONALIZATION_ENABLED=false N8N_COMMUNITY_PACKAGES_ENABLED=false N8N_AI_ENABLED=false \
	//   node ~/.cache/candor/n8n/edition-1/node_modules/n8n/bin/n8n start
	// Open http://127.0.0.1:5678, create the owner (N8N_SANDBOX_EMAIL, N8N_SANDBOX_PASSWORD) and an API key
	// (Settings > n8n API: N8N_SANDBOX_API_KEY); export N8N_SANDBOX_URL=http://127.0.0.1:5678. Stop it with Ctrl-C.
	// Notifications go to ntfy with -ntfy-topic (NTFY_TOKEN for a protected topic); without it they
	// appear only in the progress output.
}

func TestLocalN8NReadsOneMarker(t *testing.T) {
	root := t.TempDir()
	write := func(e, body string) {
		dir := filepath.Join(root, "n8n", "edition-"+e)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "installed.env"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// An interrupted edition 1 marker must not lend its fields to edition 2's.
	write("1", "version=1.123.81\nnode=/one/node\n")
	write("2", "n8n=/two/n8n\n")
	lookup := func(k string) (string, bool) { return root, k == "CANDOR_CACHE" }
	if v, n, b, ok := localN8N(lookup); ok {
		t.Fatalf("localN8N = %q %q %q from two incomplete markers", v, n, b)
	}
	write("2", "version=2.41.1\nnode=/two/node\nn8n=/two/n8n\n")
	if v, n, b, ok := localN8N(lookup); !ok || v != "2.41.1" || n != "/two/node" || b != "/two/n8n" {
		t.Fatalf("localN8N = %q %q %q %t; want edition 2's marker", v, n, b, ok)
	}
}
