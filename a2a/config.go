package a2a

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// EnvVar documents one environment variable read by ConfigFromEnv.
type EnvVar struct {
	Name        string
	Required    bool
	Default     string
	Description string
}

// EnvVars lists every variable ConfigFromEnv reads, in the order a help text
// shows them.
func EnvVars() []EnvVar {
	return []EnvVar{
		{"ADAPTER_AGENT_NAME", true, "", "agent name shown on the Agent Card"},
		{"ADAPTER_AGENT_DESCRIPTION", true, "", "agent description shown on the Agent Card"},
		{"ADAPTER_AGENT_VERSION", false, "1.0.0", "the agent's own version on the card"},
		{"ADAPTER_SKILL_ID", true, "", "id of the card's single skill"},
		{"ADAPTER_SKILL_NAME", true, "", "name of the skill"},
		{"ADAPTER_SKILL_DESCRIPTION", true, "", "description of the skill"},
		{"ADAPTER_SKILL_EXAMPLES", false, "", "example prompts, one per line (newline-separated)"},
		{"ADAPTER_SKILL_TAGS", false, "the skill id", "skill tags, comma-separated"},
		{"ADAPTER_WEBHOOK_URL", true, "", "absolute http(s) URL of the workflow webhook answering {\"answer\",\"escalate\"}"},
		{"ADAPTER_PUBLIC_URL", true, "", "absolute http(s) URL callers dial (the JSON-RPC endpoint), written on the card"},
		{"ADAPTER_CA_BUNDLE", false, "", "PEM file of CA certificates added to the system roots to verify the webhook (TLS is never disabled)"},
		{"ADAPTER_LISTEN_ADDR", false, ":8080", "address the adapter listens on"},
		{"ADAPTER_WEBHOOK_TIMEOUT", false, DefaultWebhookTimeout.String(), "bound on one webhook call (Go duration)"},
		{"ADAPTER_MAX_TASKS", false, strconv.Itoa(DefaultMaxTasks), "finished tasks kept for GetTask (least recently used evicted first)"},
		{"ADAPTER_TASK_TTL", false, DefaultTaskTTL.String(), "a task is forgotten this long after its last use (Go duration)"},
	}
}

// Config is the adapter's configuration, read from the environment by
// ConfigFromEnv.
type Config struct {
	Agent Agent
	// WebhookURL is the workflow webhook the default backend posts to.
	WebhookURL string
	// CABundle is the path of the PEM file named by ADAPTER_CA_BUNDLE ("" if unset).
	CABundle string
	// RootCAs holds the system roots plus the CABundle certificates; nil when
	// no bundle is configured (the system roots are used).
	RootCAs        *x509.CertPool
	ListenAddr     string
	WebhookTimeout time.Duration
	MaxTasks       int
	TaskTTL        time.Duration
}

// ConfigError reports every bad variable at once.
type ConfigError struct {
	// Problems maps each bad variable to what is wrong with it; the values
	// themselves are never repeated (they may be secret).
	Problems []VarProblem
}

// VarProblem is one bad variable.
type VarProblem struct {
	Name   string
	Reason string
}

func (e *ConfigError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.Name + " " + p.Reason
	}
	return "a2a: bad configuration: " + strings.Join(parts, "; ")
}

// ConfigFromEnv reads the ADAPTER_* variables through lookup (os.LookupEnv in
// a binary) and reads the CA bundle file. Missing or malformed variables fail
// with one *ConfigError naming every one of them.
func ConfigFromEnv(lookup func(string) (string, bool)) (Config, error) {
	var problems []VarProblem
	bad := func(name, reason string) { problems = append(problems, VarProblem{name, reason}) }
	get := func(name string) string {
		v, _ := lookup(name)
		return strings.TrimSpace(v)
	}
	required := func(name string) string {
		v := get(name)
		if v == "" {
			bad(name, "is required")
		}
		return v
	}
	httpURL := func(name string, v string) {
		if v == "" {
			return
		}
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad(name, "must be an absolute http or https URL")
			return
		}
		if name == "ADAPTER_PUBLIC_URL" && (u.RawQuery != "" || u.Fragment != "") {
			bad(name, "must not have a query or fragment")
		}
	}
	duration := func(name string, def time.Duration) time.Duration {
		v := get(name)
		if v == "" {
			return def
		}
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			bad(name, "must be a positive Go duration such as 30s or 2m")
			return def
		}
		return d
	}

	var c Config
	c.Agent.Name = required("ADAPTER_AGENT_NAME")
	c.Agent.Description = required("ADAPTER_AGENT_DESCRIPTION")
	c.Agent.Version = get("ADAPTER_AGENT_VERSION")
	c.Agent.Skill.ID = required("ADAPTER_SKILL_ID")
	c.Agent.Skill.Name = required("ADAPTER_SKILL_NAME")
	c.Agent.Skill.Description = required("ADAPTER_SKILL_DESCRIPTION")
	for _, line := range strings.Split(get("ADAPTER_SKILL_EXAMPLES"), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			c.Agent.Skill.Examples = append(c.Agent.Skill.Examples, line)
		}
	}
	for _, tag := range strings.Split(get("ADAPTER_SKILL_TAGS"), ",") {
		if tag = strings.TrimSpace(tag); tag != "" {
			c.Agent.Skill.Tags = append(c.Agent.Skill.Tags, tag)
		}
	}
	c.WebhookURL = required("ADAPTER_WEBHOOK_URL")
	httpURL("ADAPTER_WEBHOOK_URL", c.WebhookURL)
	c.Agent.URL = required("ADAPTER_PUBLIC_URL")
	httpURL("ADAPTER_PUBLIC_URL", c.Agent.URL)

	if c.CABundle = get("ADAPTER_CA_BUNDLE"); c.CABundle != "" {
		pool, reason := loadCABundle(c.CABundle)
		if reason != "" {
			bad("ADAPTER_CA_BUNDLE", reason)
		}
		c.RootCAs = pool
	}
	if c.ListenAddr = get("ADAPTER_LISTEN_ADDR"); c.ListenAddr == "" {
		c.ListenAddr = ":8080"
	}
	c.WebhookTimeout = duration("ADAPTER_WEBHOOK_TIMEOUT", DefaultWebhookTimeout)
	c.TaskTTL = duration("ADAPTER_TASK_TTL", DefaultTaskTTL)
	c.MaxTasks = DefaultMaxTasks
	if v := get("ADAPTER_MAX_TASKS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			bad("ADAPTER_MAX_TASKS", "must be a positive integer")
		} else {
			c.MaxTasks = n
		}
	}
	if len(problems) > 0 {
		return Config{}, &ConfigError{Problems: problems}
	}
	return c, nil
}

// loadCABundle returns the system roots plus the certificates of the PEM file.
func loadCABundle(file string) (*x509.CertPool, string) {
	pem, err := os.ReadFile(file)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, "names a file that does not exist"
		}
		return nil, "names a file that cannot be read: " + err.Error()
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, "holds no PEM certificate"
	}
	return pool, ""
}

// NewAdapter builds the facade the adapter binary runs: a Server for
// cfg.Agent answering through a Webhook on cfg.WebhookURL (verified against
// cfg.RootCAs, bounded by cfg.WebhookTimeout and DefaultMaxReplyBytes), with a
// Store of cfg.MaxTasks and cfg.TaskTTL. opts are applied after those.
func NewAdapter(cfg Config, opts ...Option) (*Server, error) {
	var wopts []WebhookOption
	if cfg.WebhookTimeout > 0 {
		wopts = append(wopts, WithTimeout(cfg.WebhookTimeout))
	}
	if cfg.RootCAs != nil {
		wopts = append(wopts, WithRootCAs(cfg.RootCAs))
	}
	hook, err := NewWebhook(cfg.WebhookURL, wopts...)
	if err != nil {
		return nil, err
	}
	base := []Option{WithStore(NewStore(cfg.MaxTasks, cfg.TaskTTL))}
	if cfg.WebhookTimeout > DefaultAnswerTimeout {
		base = append(base, WithAnswerTimeout(cfg.WebhookTimeout+time.Second))
	}
	srv, err := NewServer(cfg.Agent, hook, append(base, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("a2a: building the adapter: %w", err)
	}
	return srv, nil
}
