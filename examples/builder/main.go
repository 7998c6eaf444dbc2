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
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/candorkit/candor/approval"
	"github.com/candorkit/candor/examples/builder/internal/generate"
	"github.com/candorkit/candor/examples/builder/internal/notify"
	"github.com/candorkit/candor/examples/builder/internal/overseer"
	"github.com/candorkit/candor/examples/builder/internal/pipeline"
	"github.com/candorkit/candor/examples/builder/internal/progress"
	"github.com/candorkit/candor/examples/builder/internal/queue"
	"github.com/candorkit/candor/examples/builder/internal/secrets"
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

func newFlagSet(stderr io.Writer, cfg *config, lookup func(string) (string, bool)) *flag.FlagSet {
	fs := flag.NewFlagSet("builder", flag.ContinueOnError)
	fs.SetOutput(stderr)
	vaultAddr, _ := lookup("VAULT_ADDR")
	fs.StringVar(&cfg.DB, "db", "builder.db", "queue database: a SQLite file path, or a postgres:// URL")
	fs.StringVar(&cfg.Approvals, "approvals", "builder-approvals.db", "approval store (a SQLite file)")
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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.LookupEnv))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer, lookup func(string) (string, bool)) int {
	var cfg config
	fs := newFlagSet(stderr, &cfg, lookup)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cmd, rest := "run", fs.Args()
	if len(rest) > 0 {
		cmd, rest = rest[0], rest[1:]
	}
	switch cmd {
	case "init":
		return cmdInit(ctx, cfg, rest, stdout, stderr)
	case "run":
		if len(rest) != 0 {
			fmt.Fprintf(stderr, "builder run: unexpected arguments %q\n", rest)
			return 2
		}
		return cmdRun(ctx, cfg, stdout, stderr, lookup)
	case "approve", "reject":
		return cmdDecide(ctx, cfg, cmd, rest, stdout, stderr, lookup)
	case "help":
		fs.Usage()
		printNeeds(stderr, cfg, lookup)
		return 0
	}
	fmt.Fprintf(stderr, "builder: unknown command %q (init, run, approve, reject, help)\n", cmd)
	return 2
}

// preflight checks an environment secret source before anything is opened,
// so a first run without configuration only prints what is needed. Vault is
// read by the pipeline itself (after the claim, as the playbook orders).
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
func open(ctx context.Context, cfg config, rep *progress.Reporter, logger *slog.Logger) (*queue.Store, *approval.Store, error) {
	var (
		store     *queue.Store
		approvals *approval.Store
	)
	err := rep.Run("open", func() (string, error) {
		var err error
		if store, err = queue.Open(ctx, cfg.DB); err != nil {
			return "", err
		}
		if approvals, err = approval.Open(ctx, cfg.Approvals, approval.WithLogger(logger), approval.WithMaxDraftBytes(generate.MaxBody)); err != nil {
			store.Close()
			return "", err
		}
		return fmt.Sprintf("queue on %s; approvals in %s", store.Dialect(), cfg.Approvals), nil
	})
	return store, approvals, err
}

func cmdRun(ctx context.Context, cfg config, stdout, stderr io.Writer, lookup func(string) (string, bool)) int {
	src, err := cfg.secretSource(lookup)
	if err != nil {
		fmt.Fprintln(stderr, "builder:", err)
		return 2
	}
	if err := preflight(ctx, cfg, secrets.Sandbox, lookup); err != nil {
		fmt.Fprintln(stderr, "builder:", err)
		printNeeds(stderr, cfg, lookup)
		return 2
	}
	gen, err := generate.FromFlag(cfg.Generator, generate.Ollama{BaseURL: cfg.OllamaURL, Model: cfg.Model})
	if err != nil {
		fmt.Fprintln(stderr, "builder:", err)
		return 2
	}
	var ov overseer.Overseer = overseer.NewRules()
	if cfg.OverseerCmd != "" {
		if ov, err = overseer.NewCommand(cfg.OverseerCmd, 0); err != nil {
			fmt.Fprintln(stderr, "builder:", err)
			return 2
		}
	}
	logger := newLogger(stderr)
	rep := progress.New(stdout, progress.JSON(cfg.JSON))
	store, approvals, err := open(ctx, cfg, rep, logger)
	if err != nil {
		return 1
	}
	defer store.Close()
	defer approvals.Close()
	var capture *pipeline.CaptureServer
	if rep.Run("capture", func() (string, error) {
		var err error
		if capture, err = pipeline.StartCaptureServer(store, cfg.CaptureAddr, logger); err != nil {
			return "", err
		}
		return "capture endpoint " + capture.Base() + "/capture/{name}", nil
	}) != nil {
		return 1
	}
	defer capture.Close()
	b, err := pipeline.New(pipeline.Config{
		Queue: store, Approvals: approvals, Secrets: src, Generator: gen, Overseer: ov,
		Notifier: notifier(cfg, lookup, logger), Progress: rep, Logger: logger, CaptureBase: capture.Base(),
	})
	if err != nil {
		fmt.Fprintln(stderr, "builder:", err)
		return 1
	}
	out, err := b.Run(ctx)
	st := rep.Start("result")
	switch {
	case err != nil:
		st.Fail(err)
		return 1
	case out.Result == pipeline.ResultAwaitingApproval:
		st.OK(fmt.Sprintf("automation %d awaiting approval: builder approve %d (or reject %d)", out.AutomationID, out.AutomationID, out.AutomationID))
	default:
		st.OK(string(out.Result))
	}
	return 0
}

func notifier(cfg config, lookup func(string) (string, bool), logger *slog.Logger) notify.Notifier {
	if cfg.NtfyTopic == "" {
		return notify.Log{Logger: slog.New(slog.DiscardHandler)} // shown by the "notify" progress lines
	}
	token, _ := lookup("NTFY_TOKEN")
	return notify.Ntfy{Server: cfg.NtfyServer, Topic: cfg.NtfyTopic, Token: secrets.NewSecret(token)}
}

func cmdDecide(ctx context.Context, cfg config, cmd string, args []string, stdout, stderr io.Writer, lookup func(string) (string, bool)) int {
	fs := flag.NewFlagSet("builder "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	user, _ := lookup("USER")
	by := fs.String("by", user, "who decides (default $USER)")
	comment := fs.String("comment", "", "a comment kept with the decision")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		fmt.Fprintf(stderr, "builder %s: want exactly one automation id\n", cmd)
		return 2
	}
	id, err := strconv.ParseInt(fs.Arg(0), 10, 64)
	if err != nil || id <= 0 {
		fmt.Fprintf(stderr, "builder %s: automation id %q is not a positive number\n", cmd, fs.Arg(0))
		return 2
	}
	if strings.TrimSpace(*by) == "" {
		fmt.Fprintf(stderr, "builder %s: say who decides with -by (no $USER)\n", cmd)
		return 2
	}
	src, err := cfg.secretSource(lookup)
	if err != nil {
		fmt.Fprintln(stderr, "builder:", err)
		return 2
	}
	env := secrets.Production
	if cmd == "reject" {
		env = secrets.Sandbox // to delete the rejected sandbox workflow
	}
	if err := preflight(ctx, cfg, env, lookup); err != nil && (cmd == "approve" || errors.Is(err, secrets.ErrMissing)) {
		fmt.Fprintf(stderr, "builder %s: %v\n", cmd, err)
		return 2
	}
	logger := newLogger(stderr)
	rep := progress.New(stdout, progress.JSON(cfg.JSON))
	store, approvals, err := open(ctx, cfg, rep, logger)
	if err != nil {
		return 1
	}
	defer store.Close()
	defer approvals.Close()
	b, err := pipeline.New(pipeline.Config{Queue: store, Approvals: approvals, Secrets: src, Progress: rep, Logger: logger})
	if err != nil {
		fmt.Fprintln(stderr, "builder:", err)
		return 1
	}
	if cmd == "reject" {
		if _, err := b.Reject(ctx, id, *by, *comment); err != nil {
			return 1
		}
		return 0
	}
	if _, err := b.Approve(ctx, id, *by, *comment); err != nil {
		return 1
	}
	return 0
}

func cmdInit(ctx context.Context, cfg config, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("builder init", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sample := fs.Bool("sample", false, "also insert one ready idea with an assertion")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 0 {
		fmt.Fprintf(stderr, "builder init: unexpected arguments %q\n", fs.Args())
		return 2
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
		return 1
	}
	defer store.Close()
	if rep.Run("init", func() (string, error) {
		return "tables automation_ideas, agent_test_results, http_captures", store.Init(ctx)
	}) != nil {
		return 1
	}
	if *sample {
		if rep.Run("sample", func() (string, error) {
			id, err := store.InsertSample(ctx)
			return fmt.Sprintf("idea %d %q ready to build", id, queue.Sample().Name), err
		}) != nil {
			return 1
		}
	}
	return 0
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
