package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/candorkit/candor/examples/builder/internal/generate"
	"github.com/candorkit/candor/examples/builder/internal/progress"
	"github.com/candorkit/candor/examples/builder/internal/queue"
	"github.com/candorkit/candor/examples/builder/internal/secrets"
)

// config is every flag the builder takes.
type config struct {
	DB          string
	JSON        bool
	Generator   string
	Model       string
	OllamaURL   string
	OverseerCmd string

	Secrets           string // "env" or "vault"
	VaultAddr         string
	VaultRoleIDFile   string
	VaultSecretIDFile string

	NtfyServer string
	NtfyTopic  string
}

func newFlagSet(stderr io.Writer, cfg *config) *flag.FlagSet {
	fs := flag.NewFlagSet("builder", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.DB, "db", "builder.db", "queue database: a SQLite file path, or a postgres:// URL")
	fs.BoolVar(&cfg.JSON, "json", false, "print progress as one JSON object per line")
	fs.StringVar(&cfg.Generator, "generator", "ollama", `where workflows come from: "ollama" or "file:PATH"`)
	fs.StringVar(&cfg.Model, "model", generate.DefaultModel, "Ollama model")
	fs.StringVar(&cfg.OllamaURL, "ollama-url", generate.DefaultOllamaURL, "Ollama base URL")
	fs.StringVar(&cfg.OverseerCmd, "overseer-cmd", "", `review command run once per automation with the prompt on stdin (e.g. "claude -p"); default: the rules overseer`)
	fs.StringVar(&cfg.Secrets, "secrets", "env", `secret source for the n8n URL and API key: "env" or "vault"`)
	fs.StringVar(&cfg.VaultAddr, "vault-addr", os.Getenv("VAULT_ADDR"), "Vault address (default $VAULT_ADDR)")
	fs.StringVar(&cfg.VaultRoleIDFile, "vault-role-id-file", "", "file holding the AppRole role_id")
	fs.StringVar(&cfg.VaultSecretIDFile, "vault-secret-id-file", "", "file holding the AppRole secret_id")
	fs.StringVar(&cfg.NtfyServer, "ntfy-server", "https://ntfy.sh", "ntfy server")
	fs.StringVar(&cfg.NtfyTopic, "ntfy-topic", "", "ntfy topic; empty logs notifications instead")
	return fs
}

// secretSource returns the configured Source.
func (c config) secretSource() (secrets.Source, error) {
	switch c.Secrets {
	case "env":
		return secrets.Env{}, nil
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

// errNotWired marks the commands that arrive with phase two.
var errNotWired = errors.New("not wired yet: the build pipeline, approve and reject arrive with the n8n and approval packages")

func run(ctx context.Context, args []string, stdout, stderr io.Writer, lookup func(string) (string, bool)) int {
	var cfg config
	fs := newFlagSet(stderr, &cfg)
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
		src, err := cfg.secretSource()
		if err != nil {
			fmt.Fprintln(stderr, "builder:", err)
			return 2
		}
		if cfg.Secrets == "env" {
			src = secrets.Env{Lookup: lookup}
		}
		if _, err := src.N8N(ctx, secrets.Sandbox); err != nil {
			fmt.Fprintln(stderr, "builder:", err)
			printNeeds(stderr, cfg)
			return 2
		}
		fmt.Fprintln(stderr, "builder run:", errNotWired)
		return 1
	case "approve", "reject":
		if len(rest) != 1 {
			fmt.Fprintf(stderr, "builder %s: want exactly one automation id\n", cmd)
			return 2
		}
		if _, err := strconv.ParseInt(rest[0], 10, 64); err != nil {
			fmt.Fprintf(stderr, "builder %s: automation id %q is not a number\n", cmd, rest[0])
			return 2
		}
		fmt.Fprintf(stderr, "builder %s: %v\n", cmd, errNotWired)
		return 1
	case "help":
		fs.Usage()
		printNeeds(stderr, cfg)
		return 0
	}
	fmt.Fprintf(stderr, "builder: unknown command %q (init, run, approve, reject, help)\n", cmd)
	return 2
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

// printNeeds tells a first-time user what the builder needs.
func printNeeds(w io.Writer, cfg config) {
	urlVar, keyVar, emailVar, pwVar := secrets.VarNames(secrets.Sandbox)
	fmt.Fprintf(w, `
The builder needs:
  1. A sandbox n8n: %s and %s in the environment
     (optional %s and %s: an owner login, for listing credentials on n8n 1.x),
     or -secrets vault with -vault-addr, -vault-role-id-file and -vault-secret-id-file
     (KV v2 secret/sandbox/n8n with fields base_url and api_key).
     The project's local n8n: scripts/n8n-local install, then see scripts/n8n-local status.
  2. A model: Ollama at %s with model %s (-ollama-url, -model),
     or -generator file:PATH to use a workflow JSON from a file instead of a model.
  3. A queue: %s (-db; SQLite file or postgres://…). Create it with: builder init -sample
Notifications go to ntfy with -ntfy-topic (logged when unset).
`, urlVar, keyVar, emailVar, pwVar, cfg.OllamaURL, cfg.Model, cfg.DB)
}
