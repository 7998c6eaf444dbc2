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
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.LookupEnv, os.Stdout, os.Stderr))
}

func usage(w io.Writer) {
	fmt.Fprintf(w, `a2a-n8n-adapter serves a workflow webhook answering {"answer": string, "escalate": bool}
as an A2A agent: JSON-RPC 1.0 (A2A-Version: 1.0) and 0.3 (no header) on the path of
ADAPTER_PUBLIC_URL, the Agent Card on /.well-known/agent-card.json. Callers send
"Authorization: Bearer <token>"; the token is forwarded to the webhook in X-Subject-Token.
Only a contract reply with "escalate": false completes a task; anything else fails it.

Usage: a2a-n8n-adapter    (configured by environment only)

Environment:
`)
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	for _, v := range a2a.EnvVars() {
		req := "optional"
		if v.Required {
			req = "required"
		} else if v.Default != "" {
			req = "default " + v.Default
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", v.Name, req, v.Description)
	}
	_ = tw.Flush()
}

// run is main without the process: it returns the exit code.
func run(ctx context.Context, args []string, lookup func(string) (string, bool), stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("a2a-n8n-adapter", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { usage(stdout) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "a2a-n8n-adapter takes no arguments (got %q); it is configured by environment, see -h\n", fs.Args())
		return 2
	}
	log := slog.New(slog.NewJSONHandler(stderr, nil))

	cfg, err := a2a.ConfigFromEnv(lookup)
	if err != nil {
		log.Error("configuration", "error", err)
		return 2
	}
	srv, err := a2a.NewAdapter(cfg, a2a.WithLogger(log))
	if err != nil {
		log.Error("configuration", "error", err)
		return 2
	}
	hook, _ := url.Parse(cfg.WebhookURL) // validated by ConfigFromEnv
	if hook.Scheme == "http" && !isLoopback(hook.Hostname()) {
		log.Warn("the webhook URL is plain http: callers' tokens cross the network unencrypted", "webhook_host", hook.Host)
	}

	ln, err := net.Listen("tcp", cfg.ListenAddr)
	if err != nil {
		log.Error("listen", "addr", cfg.ListenAddr, "error", err)
		return 1
	}
	hs := &http.Server{
		Handler:           srv,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      cfg.WebhookTimeout + 30*time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	log.Info("a2a adapter listening", "addr", ln.Addr().String(), "public_url", cfg.Agent.URL,
		"webhook_host", hook.Host, "ca_bundle", cfg.CABundle != "", "skill", cfg.Agent.Skill.ID)

	select {
	case err := <-served:
		log.Error("serve", "error", err)
		return 1
	case <-ctx.Done():
	}
	log.Info("shutting down: finishing requests in flight")
	grace, cancel := context.WithTimeout(context.Background(), cfg.WebhookTimeout+5*time.Second)
	defer cancel()
	if err := hs.Shutdown(grace); err != nil {
		log.Error("shutdown", "error", err)
		return 1
	}
	// Tasks sent with returnImmediately are answered after their request
	// ended: Shutdown did not wait for them.
	log.Info("waiting for the tasks still being answered")
	if err := srv.Drain(grace); err != nil {
		log.Error("shutdown: tasks still being answered were abandoned", "error", err)
		return 1
	}
	log.Info("stopped")
	return 0
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
