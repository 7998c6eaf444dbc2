package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/candorkit/candor/approval"
	"github.com/candorkit/candor/examples/builder/internal/generate"
	"github.com/candorkit/candor/examples/builder/internal/notify"
	"github.com/candorkit/candor/examples/builder/internal/overseer"
	"github.com/candorkit/candor/examples/builder/internal/pipeline"
	"github.com/candorkit/candor/examples/builder/internal/progress"
	"github.com/candorkit/candor/examples/builder/internal/queue"
	"github.com/candorkit/candor/examples/builder/internal/secrets"
	"github.com/candorkit/candor/examples/internal/cli"
	"github.com/candorkit/candor/examples/internal/decision"
	"github.com/candorkit/candor/examples/internal/pgdsn"
	"github.com/candorkit/candor/examples/internal/telemetry"
	"github.com/candorkit/candor/internal/secret"
)

// config is every flag the builder takes.
type config struct {
	DB          string
	Approvals   string
	JSON        bool
	Generator   string
	Model       string
	OllamaURL   string
	OverseerCmd string
	CaptureAddr string

	Secrets           string // "env" or "vault"
	VaultAddr         string
	VaultRoleIDFile   string
	VaultSecretIDFile string

	NtfyServer string
	NtfyTopic  string
}

// usageText is the first part of builder -h; the flags and what the builder
// needs follow it.
const usageText = `builder takes the next automation idea from a queue, generates an n8n workflow (a local
model, or a file), has it reviewed, proves it in a sandbox n8n in four test levels, and asks
a person before anything reaches production (docs/builder-playbook.md).

Usage:
  builder [flags] init [-sample]                             create the tables (and one sample idea)
  builder [flags] [run]                                      build the next idea, up to awaiting_approval
  builder [flags] approve [-by NAME] [-comment TEXT] ID      approve it and import it into production
  builder [flags] reject [-by NAME] [-comment TEXT] ID       reject it (failed; sandbox copy deleted)
  builder help                                               this text

-by defaults to $USER, else the login name, else "operator". Deciding again: the first
decision stands; the same verdict again, by anyone, records nothing new and says who decided
(exit 0; an approval's deploy is retried, at most once); the other verdict is refused (exit 1).

Environment: N8N_SANDBOX_URL, N8N_SANDBOX_API_KEY, N8N_SANDBOX_EMAIL, N8N_SANDBOX_PASSWORD
(and N8N_PRODUCTION_* for approve) with -secrets env; VAULT_ADDR with -secrets vault;
NTFY_TOKEN for a protected ntfy topic; CANDOR_CACHE or HOME to find the local n8n; USER.

-approvals takes a SQLite file path or a PostgreSQL DSN: a value starting with postgres:// or
postgresql:// is a DSN (the store's schema is created when missing; a malformed one is a usage
error, never printed), anything else a SQLite path.

Exit codes: 0 the run ends awaiting approval, finds nothing to build or finds the idea
claimed by another builder, or a decision is recorded or already stands; 1 the build, the
deploy or the decision failed or was refused; 2 usage (bad flags or arguments); 3
configuration (the secret source lacks the n8n URL, key or login). A second SIGINT exits at
once. See docs/examples.md.
`

func newFlagSet(cfg *config, lookup func(string) (string, bool)) *flag.FlagSet {
	fs := flag.NewFlagSet("builder", flag.ContinueOnError)
	vaultAddr, _ := lookup("VAULT_ADDR")
	fs.StringVar(&cfg.DB, "db", "builder.db", "queue database: a SQLite file path, or a postgres:// URL")
	fs.StringVar(&cfg.Approvals, "approvals", "builder-approvals.db", "approval store: a SQLite file path, or a postgres:// (postgresql://) DSN")
	fs.BoolVar(&cfg.JSON, "json", false, "print progress as one JSON object per line")
	fs.StringVar(&cfg.Generator, "generator", "ollama", `where workflows come from: "ollama" or "file:PATH"`)
	fs.StringVar(&cfg.Model, "model", generate.DefaultModel, "Ollama model")
	fs.StringVar(&cfg.OllamaURL, "ollama-url", generate.DefaultOllamaURL, "Ollama base URL")
	fs.StringVar(&cfg.OverseerCmd, "overseer-cmd", "", `review command run once per automation with the prompt on stdin (e.g. "claude -p"); default: the rules overseer`)
	fs.StringVar(&cfg.CaptureAddr, "capture-addr", "127.0.0.1:0", "address of the capture endpoint the workflows under test call (n8n must reach it)")
	fs.StringVar(&cfg.Secrets, "secrets", "env", `secret source for the n8n URL, API key and login: "env" or "vault"`)
	fs.StringVar(&cfg.VaultAddr, "vault-addr", vaultAddr, "Vault address (default $VAULT_ADDR)")
	fs.StringVar(&cfg.VaultRoleIDFile, "vault-role-id-file", "", "file holding the AppRole role_id")
	fs.StringVar(&cfg.VaultSecretIDFile, "vault-secret-id-file", "", "file holding the AppRole secret_id")
	fs.StringVar(&cfg.NtfyServer, "ntfy-server", "https://ntfy.sh", "ntfy server")
	fs.StringVar(&cfg.NtfyTopic, "ntfy-topic", "", "ntfy topic; empty shows notifications in the progress output only")
	return fs
}

// secretSource returns the configured Source.
func (c config) secretSource(lookup func(string) (string, bool)) (secrets.Source, error) {
	switch c.Secrets {
	case "env":
		return secrets.Env{Lookup: lookup}, nil
	case "vault":
		return secrets.Vault{Addr: c.VaultAddr, RoleIDFile: c.VaultRoleIDFile, SecretIDFile: c.VaultSecretIDFile}, nil
	}
	return nil, fmt.Errorf("-secrets %q: want env or vault", c.Secrets)
}

func main() {
	cli.Main(func(ctx context.Context) int {
		return run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.LookupEnv)
	})
}

// usage writes the usage, the flags of fs (the global ones, or a
// subcommand's) and what the builder needs.
func usage(global *flag.FlagSet, cfg *config, lookup func(string) (string, bool), sub *flag.FlagSet) func(io.Writer) {
	return func(w io.Writer) {
		fmt.Fprint(w, usageText)
		fmt.Fprintln(w, "\nFlags (before the command):")
		cli.Defaults(w, global)
		if sub != nil {
			fmt.Fprintf(w, "\nFlags of %s:\n", sub.Name())
			cli.Defaults(w, sub)
		}
		fmt.Fprint(w, "\n"+telemetry.Usage)
		printNeeds(w, *cfg, lookup)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer, lookup func(string) (string, bool)) int {
	var cfg config
	fs := newFlagSet(&cfg, lookup)
	use := usage(fs, &cfg, lookup, nil)
	if code, ok := cli.Parse(fs, args, stdout, stderr, use); !ok {
		return code
	}
	if pgdsn.IsDSN(cfg.Approvals) {
		if err := pgdsn.Check(approvalsFlag, cfg.Approvals); err != nil {
			return cli.UsageError(stderr, use, "builder", "%v", err)
		}
	}
	cmd, rest := "run", fs.Args()
	if len(rest) > 0 {
		cmd, rest = rest[0], rest[1:]
	}
	if cmd != "help" {
		// OTEL_* set: every package exports through the global providers;
		// none set: nothing is exported; a bad value is exit 3.
		tel, err := telemetry.Setup(ctx, "builder", lookup)
		if err != nil {
			fmt.Fprintf(stderr, "builder: configuration: %v\n", err)
			return cli.ExitConfig
		}
		defer func() {
			flush, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := tel.Shutdown(flush); err != nil {
				fmt.Fprintf(stderr, "builder: flushing telemetry: %v\n", err)
			}
		}()
	}
	switch cmd {
	case "init":
		return cmdInit(ctx, fs, &cfg, rest, stdout, stderr, lookup)
	case "run":
		if len(rest) != 0 {
			return cli.UsageError(stderr, use, "builder run", "unexpected arguments %q", rest)
		}
		return cmdRun(ctx, fs, &cfg, stdout, stderr, lookup)
	case "approve", "reject":
		return cmdDecide(ctx, fs, &cfg, cmd, rest, stdout, stderr, lookup)
	case "help":
		use(stdout)
		return cli.ExitOK
	}
	return cli.UsageError(stderr, use, "builder", "unknown command %q (init, run, approve, reject, help)", cmd)
}

// preflight checks an environment secret source before anything is opened,
// so a first run without configuration only prints what is needed. Vault is
// read by the pipeline itself, after the claim (docs/builder-playbook.md).
func preflight(ctx context.Context, cfg config, env secrets.Environment, lookup func(string) (string, bool)) error {
	if cfg.Secrets != "env" {
		return nil
	}
	conn, err := secrets.Env{Lookup: lookup}.N8N(ctx, env)
	if err != nil {
		return err
	}
	if conn.Email == "" {
		_, _, ev, pv := secrets.VarNames(env)
		return fmt.Errorf("%w: environment lacks %s, %s (the n8n owner login)", pipeline.ErrNoLogin, ev, pv)
	}
	return nil
}

func newLogger(stderr io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// open opens the queue and the approval store as one progress step.
func open(ctx context.Context, cfg config, rep *progress.Reporter, logger *slog.Logger) (*queue.Store, *approval.Store, func(), error) {
	var (
		store     *queue.Store
		approvals *approval.Store
		closeA    func()
	)
	err := rep.Run("open", func() (string, error) {
		var err error
		if store, err = queue.Open(ctx, cfg.DB); err != nil {
			return "", err
		}
		if approvals, closeA, err = openApprovals(ctx, cfg.Approvals, logger); err != nil {
			store.Close()
			return "", err
		}
		return fmt.Sprintf("queue on %s; approvals in %s", store.Dialect(), approvalsPlace(cfg.Approvals)), nil
	})
	return store, approvals, closeA, err
}

func cmdRun(ctx context.Context, global *flag.FlagSet, pcfg *config, stdout, stderr io.Writer, lookup func(string) (string, bool)) int {
	cfg := *pcfg
	use := usage(global, pcfg, lookup, nil)
	// Flags first: nothing of the environment is read before they are valid.
	src, err := cfg.secretSource(lookup)
	if err != nil {
		return cli.UsageError(stderr, use, "builder", "%v", err)
	}
	gen, err := generate.FromFlag(cfg.Generator, generate.Ollama{BaseURL: cfg.OllamaURL, Model: cfg.Model})
	if err != nil {
		return cli.UsageError(stderr, use, "builder", "%v", err)
	}
	var ov overseer.Overseer = overseer.NewRules()
	if cfg.OverseerCmd != "" {
		if ov, err = overseer.NewCommand(cfg.OverseerCmd, 0); err != nil {
			return cli.UsageError(stderr, use, "builder", "%v", err)
		}
	}
	if err := preflight(ctx, cfg, secrets.Sandbox, lookup); err != nil {
		fmt.Fprintln(stderr, "builder:", err)
		printNeeds(stderr, cfg, lookup)
		return cli.ExitConfig
	}
	logger := newLogger(stderr)
	rep := progress.New(stdout, progress.JSON(cfg.JSON))
	store, approvals, closeApprovals, err := open(ctx, cfg, rep, logger)
	if err != nil {
		return failed(stderr, "builder", err)
	}
	defer store.Close()
	defer closeApprovals()
	var capture *pipeline.CaptureServer
	if err := rep.Run("capture", func() (string, error) {
		var err error
		if capture, err = pipeline.StartCaptureServer(store, cfg.CaptureAddr, logger); err != nil {
			return "", err
		}
		return "capture endpoint " + capture.Base() + "/capture/{name}", nil
	}); err != nil {
		return failed(stderr, "builder", err)
	}
	defer capture.Close()
	b, err := pipeline.New(pipeline.Config{
		Queue: store, Approvals: approvals, Secrets: src, Generator: gen, Overseer: ov,
		Notifier: notifier(cfg, lookup, logger), Progress: rep, Logger: logger, CaptureBase: capture.Base(),
	})
	if err != nil {
		return failed(stderr, "builder", err)
	}
	out, err := b.Run(ctx)
	st := rep.Start("result")
	switch {
	case err != nil:
		st.Fail(err)
		return failed(stderr, "builder run", err)
	case out.Result == pipeline.ResultAwaitingApproval:
		st.OK(fmt.Sprintf("automation %d awaiting approval: builder approve %d (or reject %d)", out.AutomationID, out.AutomationID, out.AutomationID))
	default:
		st.OK(string(out.Result))
	}
	return cli.ExitOK
}

func notifier(cfg config, lookup func(string) (string, bool), logger *slog.Logger) notify.Notifier {
	if cfg.NtfyTopic == "" {
		return notify.Log{Logger: slog.New(slog.DiscardHandler)} // shown by the "notify" progress lines
	}
	token, _ := lookup("NTFY_TOKEN")
	return notify.Ntfy{Server: cfg.NtfyServer, Topic: cfg.NtfyTopic, Token: secret.New(token)}
}

func cmdDecide(ctx context.Context, global *flag.FlagSet, pcfg *config, cmd string, args []string, stdout, stderr io.Writer, lookup func(string) (string, bool)) int {
	cfg := *pcfg
	fs := flag.NewFlagSet("builder "+cmd, flag.ContinueOnError)
	by := fs.String("by", decision.DefaultDecider(lookup), `who decides (default $USER, else the login name, else "operator")`)
	comment := fs.String("comment", "", "a comment kept with the decision")
	use := usage(global, pcfg, lookup, fs)
	if code, ok := cli.Parse(fs, args, stdout, stderr, use); !ok {
		return code
	}
	if fs.NArg() != 1 {
		return cli.UsageError(stderr, use, fs.Name(), "want exactly one automation id, got %d argument(s)", fs.NArg())
	}
	id, err := strconv.ParseInt(fs.Arg(0), 10, 64)
	if err != nil || id <= 0 {
		return cli.UsageError(stderr, use, fs.Name(), "automation id %q is not a positive number", fs.Arg(0))
	}
	if strings.TrimSpace(*by) == "" {
		return cli.UsageError(stderr, use, fs.Name(), "say who decides with -by NAME")
	}
	src, err := cfg.secretSource(lookup)
	if err != nil {
		return cli.UsageError(stderr, use, "builder", "%v", err)
	}
	env := secrets.Production
	if cmd == "reject" {
		env = secrets.Sandbox // to delete the rejected sandbox workflow
	}
	if err := preflight(ctx, cfg, env, lookup); err != nil && (cmd == "approve" || errors.Is(err, secrets.ErrMissing)) {
		fmt.Fprintf(stderr, "builder %s: %v\n", cmd, err)
		return cli.ExitConfig
	}
	logger := newLogger(stderr)
	rep := progress.New(stdout, progress.JSON(cfg.JSON))
	store, approvals, closeApprovals, err := open(ctx, cfg, rep, logger)
	if err != nil {
		return failed(stderr, "builder", err)
	}
	defer store.Close()
	defer closeApprovals()
	b, err := pipeline.New(pipeline.Config{Queue: store, Approvals: approvals, Secrets: src, Progress: rep, Logger: logger})
	if err != nil {
		return failed(stderr, "builder", err)
	}
	if cmd == "reject" {
		if _, err := b.Reject(ctx, id, *by, *comment); err != nil {
			return failed(stderr, fs.Name(), err)
		}
		return cli.ExitOK
	}
	if _, err := b.Approve(ctx, id, *by, *comment); err != nil {
		return failed(stderr, fs.Name(), err)
	}
	return cli.ExitOK
}

func cmdInit(ctx context.Context, global *flag.FlagSet, pcfg *config, args []string, stdout, stderr io.Writer, lookup func(string) (string, bool)) int {
	cfg := *pcfg
	fs := flag.NewFlagSet("builder init", flag.ContinueOnError)
	sample := fs.Bool("sample", false, "also insert one ready idea with an assertion")
	use := usage(global, pcfg, lookup, fs)
	if code, ok := cli.Parse(fs, args, stdout, stderr, use); !ok {
		return code
	}
	if fs.NArg() != 0 {
		return cli.UsageError(stderr, use, fs.Name(), "unexpected arguments %q", fs.Args())
	}
	rep := progress.New(stdout, progress.JSON(cfg.JSON))
	var store *queue.Store
	err := rep.Run("open", func() (string, error) {
		var err error
		store, err = queue.Open(ctx, cfg.DB)
		if err != nil {
			return "", err
		}
		return store.Dialect().String(), nil
	})
	if err != nil {
		return failed(stderr, fs.Name(), err)
	}
	defer store.Close()
	if err := rep.Run("init", func() (string, error) {
		return "tables automation_ideas, agent_test_results, http_captures", store.Init(ctx)
	}); err != nil {
		return failed(stderr, fs.Name(), err)
	}
	if *sample {
		if err := rep.Run("sample", func() (string, error) {
			id, err := store.InsertSample(ctx)
			return fmt.Sprintf("idea %d %q ready to build", id, queue.Sample().Name), err
		}); err != nil {
			return failed(stderr, fs.Name(), err)
		}
	}
	return cli.ExitOK
}

// failed writes a failure, also shown as a failed progress line, to stderr
// and returns exit 1.
func failed(stderr io.Writer, name string, err error) int {
	fmt.Fprintf(stderr, "%s: %v\n", name, err)
	return cli.ExitFail
}

// localN8N describes the project's installed n8n edition 1 (or 2), read from
// the marker scripts/n8n-local writes; ok is false when none is installed.
func localN8N(lookup func(string) (string, bool)) (version, node, n8nBin string, ok bool) {
	root, _ := lookup("CANDOR_CACHE")
	if root == "" {
		home, found := lookup("HOME")
		if !found || home == "" {
			return "", "", "", false
		}
		root = filepath.Join(home, ".cache", "candor")
	}
	for _, e := range []string{"1", "2"} {
		f, err := os.Open(filepath.Join(root, "n8n", "edition-"+e, "installed.env"))
		if err != nil {
			continue
		}
		version, node, n8nBin = "", "", "" // nothing carries over from another edition's marker
		sc := bufio.NewScanner(io.LimitReader(f, 64<<10))
		for sc.Scan() {
			k, v, _ := strings.Cut(sc.Text(), "=")
			switch k {
			case "version":
				version = v
			case "node":
				node = v
			case "n8n":
				n8nBin = v
			}
		}
		f.Close()
		if version != "" && node != "" && n8nBin != "" {
			return version, node, n8nBin, true
		}
	}
	return "", "", "", false
}

// printNeeds tells a first-time user what the builder needs.
func printNeeds(w io.Writer, cfg config, lookup func(string) (string, bool)) {
	urlVar, keyVar, emailVar, pwVar := secrets.VarNames(secrets.Sandbox)
	purl, pkey, pemail, ppw := secrets.VarNames(secrets.Production)
	version, node, n8nBin, installed := localN8N(lookup)
	if !installed {
		version, node, n8nBin = "1.123.81", "node", "~/.cache/candor/n8n/edition-1/node_modules/n8n/bin/n8n"
	}
	fmt.Fprintf(w, `
The builder needs:
  1. A sandbox n8n: %s, %s, %s and %s in the environment
     (the owner login lists credentials and runs the smoke test; n8n 1.x allows both only in a session),
     or -secrets vault with -vault-addr, -vault-role-id-file and -vault-secret-id-file
     (KV v2 secret/sandbox/n8n with fields base_url, api_key, email, password).
     "builder approve" needs the same for production: %s, %s, %s, %s
     (may name the same n8n; sandbox credentials end in -sandbox, production ones do not).
  2. A model: Ollama at %s with model %s (-ollama-url, -model),
     or -generator file:PATH to use a workflow JSON from a file instead of a model
     ({capture_base} in the file becomes the capture endpoint's URL).
  3. A queue: %s (-db; SQLite file or postgres://…). Create it with: builder init -sample

The project's local n8n (n8n %s): install it with scripts/n8n-local install 1
(scripts/n8n-local status shows where it is), then start it on 127.0.0.1:5678 with:
  mkdir -p ~/.cache/candor/n8n-sandbox && cd ~/.cache/candor/n8n-sandbox && \
  N8N_USER_FOLDER=$PWD N8N_LISTEN_ADDRESS=127.0.0.1 N8N_HOST=127.0.0.1 N8N_PORT=5678 \
  N8N_RUNNERS_BROKER_LISTEN_ADDRESS=127.0.0.1 N8N_SECURE_COOKIE=false \
  N8N_DIAGNOSTICS_ENABLED=false N8N_VERSION_NOTIFICATIONS_ENABLED=false N8N_TEMPLATES_ENABLED=false \
  N8N_PERSONALIZATION_ENABLED=false N8N_COMMUNITY_PACKAGES_ENABLED=false N8N_AI_ENABLED=false \
  %s %s start
Open http://127.0.0.1:5678, create the owner (%s, %s) and an API key
(Settings > n8n API: %s); export %s=http://127.0.0.1:5678. Stop it with Ctrl-C.
Notifications go to ntfy with -ntfy-topic (NTFY_TOKEN for a protected topic); without it they
appear only in the progress output.
`, urlVar, keyVar, emailVar, pwVar, purl, pkey, pemail, ppw, cfg.OllamaURL, cfg.Model, cfg.DB,
		version, node, n8nBin, emailVar, pwVar, keyVar, urlVar)
}
