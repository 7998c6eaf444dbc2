package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/candorkit/candor/a2a"
	"github.com/candorkit/candor/a2a/pgstore"
	"github.com/candorkit/candor/examples/internal/telemetry"
	"github.com/candorkit/candor/internal/httpx"
)

// Exit codes (CONTRIBUTING.md).
const (
	exitOK     = 0
	exitFailed = 1
	exitUsage  = 2
	exitConfig = 3
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	// After the first signal, stop restores the default handling: a second
	// SIGINT or SIGTERM ends the process at once.
	os.Exit(run(ctx, stop, os.Args[1:], os.LookupEnv, os.Stdout, os.Stderr))
}

func usage(w io.Writer) {
	fmt.Fprintf(w, `a2a-n8n-adapter serves a workflow webhook answering {"answer": string, "escalate": bool}
as an A2A agent: JSON-RPC 1.0 (A2A-Version: 1.0) and 0.3 (no header) on the path of
ADAPTER_PUBLIC_URL, the Agent Card on /.well-known/agent-card.json. Every call needs
"Authorization: Bearer <token>", verified against ADAPTER_OIDC_ISSUER's published keys
before anything is done; the token is forwarded to the webhook in X-Subject-Token.
Only a contract reply with "escalate": false completes a task; anything else fails it.
Tasks live in memory, or with ADAPTER_TASKS_DSN in PostgreSQL, shared by every replica
behind one load balancer (docs/scaling.md).

Usage: a2a-n8n-adapter [-h]    (configured by environment only)

Environment:
`)
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	for _, v := range envVars() {
		req := "optional"
		if v.Required {
			req = "required"
		} else if v.Default != "" {
			req = "default " + v.Default
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", v.Name, req, v.Description)
	}
	_ = tw.Flush()
	fmt.Fprint(w, "\n"+telemetry.Usage)
	fmt.Fprint(w, `
Endpoints besides the agent's: GET /healthz answers 200 while the process is up;
GET /readyz answers 200 when the webhook's host accepts a TCP connection (within
2s) and the task store answers (PostgreSQL: a ping), else 503 naming what failed.

Exit codes: 0 stopped after a signal, with every task in flight answered; 1 the listener,
the task store's database or a shutdown failed (tasks abandoned); 2 usage; 3 configuration.
A first SIGINT or SIGTERM drains the tasks in flight; a second one ends the process at once.
`)
}

// run is main without the process: it returns the exit code. stop is
// called once the first signal has arrived.
func run(ctx context.Context, stop func(), args []string, lookup func(string) (string, bool), stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("a2a-n8n-adapter", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(stdout)
			return exitOK
		}
		fmt.Fprintf(stderr, "a2a-n8n-adapter: %v\n", err)
		usage(stderr)
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "a2a-n8n-adapter: takes no arguments (got %q); it is configured by environment\n", fs.Args())
		usage(stderr)
		return exitUsage
	}

	cfg, err := loadConfig(lookup)
	if err != nil {
		fmt.Fprintf(stderr, "a2a-n8n-adapter: configuration: %v; see -h\n", err)
		return exitConfig
	}
	tel, err := telemetry.Setup(ctx, "a2a-n8n-adapter", lookup)
	if err != nil {
		fmt.Fprintf(stderr, "a2a-n8n-adapter: configuration: %v; see -h\n", err)
		return exitConfig
	}
	log := slog.New(slog.NewJSONHandler(stderr, nil))
	defer func() {
		flush, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := tel.Shutdown(flush); err != nil {
			log.Warn("flushing telemetry", "error", err)
		}
	}()
	opts := []a2a.Option{a2a.WithLogger(log)}
	storeReady := func(context.Context) error { return nil } // memory
	if cfg.Unverified {
		opts = append(opts, a2a.WithUnverifiedTokens())
		log.Warn("bearer tokens are not verified (ADAPTER_UNVERIFIED_TOKENS=true): the workflow must verify X-Subject-Token itself")
	} else {
		v, err := newVerifier(cfg)
		if err != nil {
			fmt.Fprintf(stderr, "a2a-n8n-adapter: configuration: %v; see -h\n", err)
			return exitConfig
		}
		opts = append(opts, a2a.WithVerifier(v))
	}
	if cfg.TasksDSN != "" {
		store, closeStore, ping, err := openTaskStore(ctx, cfg)
		if err != nil {
			var cfgErr *taskStoreConfigError
			if errors.As(err, &cfgErr) {
				fmt.Fprintf(stderr, "a2a-n8n-adapter: configuration: %v; see -h\n", err)
				return exitConfig
			}
			attrs := []any{"error", err}
			var pe *pgstore.Error
			if errors.As(err, &pe) { // the driver's account, for the operator (no password in it)
				attrs = append(attrs, "cause", pe.Err.Error())
			}
			log.Error("opening the task store (ADAPTER_TASKS_DSN)", attrs...)
			return exitFailed
		}
		defer closeStore()
		opts = append(opts, a2a.WithTaskStore(store))
		storeReady = ping
		cfg.MaxTasks, cfg.TaskTTL = 0, 0 // the store holds its bounds
	}
	srv, err := a2a.NewAdapter(cfg.Config, opts...)
	if err != nil {
		fmt.Fprintf(stderr, "a2a-n8n-adapter: configuration: %v; see -h\n", err)
		return exitConfig
	}
	hook, _ := url.Parse(cfg.WebhookURL) // validated by loadConfig
	if hook.Scheme == "http" && !httpx.IsLoopback(hook.Host) {
		log.Warn("the webhook URL is plain http: callers' tokens cross the network unencrypted", "webhook_host", hook.Host)
	}

	ln, err := net.Listen("tcp", cfg.ListenAddr)
	if err != nil {
		log.Error("listen", "addr", cfg.ListenAddr, "error", err)
		return exitFailed
	}
	hs := &http.Server{
		Handler:           withProbes(srv, hook, storeReady),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      cfg.WebhookTimeout + 30*time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	log.Info("a2a adapter listening", "addr", ln.Addr().String(), "public_url", cfg.Agent.URL,
		"webhook_host", hook.Host, "ca_bundle", cfg.CABundle != "", "skill", cfg.Agent.Skill.ID,
		"issuer", cfg.Issuer, "verified", !cfg.Unverified, "task_store", taskStoreKind(cfg),
		"telemetry", tel.Enabled, "service_name", tel.Service)

	select {
	case err := <-served:
		log.Error("serve", "error", err)
		return exitFailed
	case <-ctx.Done():
	}
	stop()
	log.Info("shutting down: finishing requests in flight (a second signal forces exit)")
	grace, cancel := context.WithTimeout(context.Background(), cfg.WebhookTimeout+5*time.Second)
	defer cancel()
	if err := hs.Shutdown(grace); err != nil {
		log.Error("shutdown", "error", err)
		return exitFailed
	}
	// Tasks sent with returnImmediately are answered after their request
	// ended: Shutdown did not wait for them.
	log.Info("waiting for the tasks still being answered")
	if err := srv.Drain(grace); err != nil {
		log.Error("shutdown: tasks still being answered were abandoned", "error", err)
		return exitFailed
	}
	log.Info("stopped")
	return exitOK
}
