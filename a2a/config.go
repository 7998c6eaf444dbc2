package a2a

import (
	"crypto/x509"
	"fmt"
	"strings"
	"time"

	"github.com/candorkit/candor/reply"
)

// Defaults of the task store.
const (
	DefaultMaxTasks = 10000
	DefaultTaskTTL  = time.Hour
)

// Config is the configuration of the webhook facade NewAdapter builds, as a
// program loads it (from flags, the environment or a file: reading them is
// the program's job). Zero fields take the defaults.
type Config struct {
	// Agent is what the card says; Agent.URL is where callers dial.
	Agent Agent
	// WebhookURL is the workflow webhook, an absolute http or https URL. Its
	// path and query may be secret (n8n's are): they are never shown to a
	// caller or logged.
	WebhookURL string
	// RootCAs verifies the webhook's TLS certificate; nil means the system
	// roots. Verification is never disabled.
	RootCAs *x509.CertPool
	// WebhookTimeout bounds one webhook call (reply.DefaultTimeout if zero).
	WebhookTimeout time.Duration
	// MaxTasks and TaskTTL bound the MemoryStore (DefaultMaxTasks and
	// DefaultTaskTTL if zero); with WithTaskStore they must be zero.
	MaxTasks int
	TaskTTL  time.Duration
}

// NewAdapter builds the webhook facade: a Server for cfg.Agent answering
// through WebhookBackend over a reply.Client for cfg.WebhookURL (verified
// against cfg.RootCAs, bounded by cfg.WebhookTimeout and
// reply.DefaultMaxResponseBytes), with a MemoryStore of cfg.MaxTasks and
// cfg.TaskTTL unless WithTaskStore gives another store (which then holds
// its own bounds: MaxTasks and TaskTTL must be zero). It takes every Option NewServer takes, plus WithHTTPClient
// for the webhook's client; WithLogger also reaches the webhook client.
// Like NewServer it needs WithVerifier (or WithUnverifiedTokens).
func NewAdapter(cfg Config, opts ...Option) (*Server, error) {
	o, err := collect(opts)
	if err != nil {
		return nil, err
	}
	var problems []string
	if cfg.WebhookTimeout < 0 {
		problems = append(problems, "WebhookTimeout must not be negative")
	}
	if cfg.MaxTasks < 0 {
		problems = append(problems, "MaxTasks must not be negative")
	}
	if cfg.TaskTTL < 0 {
		problems = append(problems, "TaskTTL must not be negative")
	}
	if o.store != nil && (cfg.MaxTasks != 0 || cfg.TaskTTL != 0) {
		problems = append(problems, "WithTaskStore excludes MaxTasks and TaskTTL")
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("a2a: NewAdapter: %s", strings.Join(problems, "; "))
	}
	timeout := cfg.WebhookTimeout
	if timeout == 0 {
		timeout = reply.DefaultTimeout
	}
	ropts := []reply.Option{reply.WithLogger(o.logger), reply.WithTracerProvider(o.tp), reply.WithMeterProvider(o.mp)}
	if o.httpClient != nil {
		ropts = append(ropts, reply.WithHTTPClient(o.httpClient))
	}
	ropts = append(ropts, o.webhookOpts...)
	ropts = append(ropts, reply.WithTimeout(timeout))
	if cfg.RootCAs != nil {
		ropts = append(ropts, reply.WithRootCAs(cfg.RootCAs))
	}
	hook, err := reply.NewClient(cfg.WebhookURL, ropts...)
	if err != nil {
		return nil, fmt.Errorf("a2a: NewAdapter: WebhookURL: %w", err)
	}
	if o.store == nil {
		maxTasks, ttl := cfg.MaxTasks, cfg.TaskTTL
		if maxTasks == 0 {
			maxTasks = DefaultMaxTasks
		}
		if ttl == 0 {
			ttl = DefaultTaskTTL
		}
		if o.store, err = NewMemoryStore(maxTasks, ttl); err != nil {
			return nil, err
		}
	}
	if timeout+time.Second > o.answerTimeout {
		o.answerTimeout = timeout + time.Second
	}
	srv, err := newServer(cfg.Agent, WebhookBackend(hook), o)
	if err != nil {
		return nil, fmt.Errorf("a2a: NewAdapter: %w", err)
	}
	return srv, nil
}
