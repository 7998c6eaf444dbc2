package main

import (
	"crypto/x509"
	"errors"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	pgxdriver "github.com/jackc/pgx/v5"

	"github.com/candorkit/candor/a2a"
	"github.com/candorkit/candor/reply"
)

// envVar documents one environment variable the adapter reads.
type envVar struct {
	Name        string
	Required    bool
	Default     string
	Description string
}

// envVars lists every variable loadConfig reads, in the order -h shows them.
func envVars() []envVar {
	return []envVar{
		{"ADAPTER_AGENT_NAME", true, "", "agent name shown on the Agent Card"},
		{"ADAPTER_AGENT_DESCRIPTION", true, "", "agent description shown on the Agent Card"},
		{"ADAPTER_AGENT_VERSION", false, "1.0.0", "the agent's own version on the card"},
		{"ADAPTER_SKILL_ID", true, "", "id of the card's single skill"},
		{"ADAPTER_SKILL_NAME", true, "", "name of the skill"},
		{"ADAPTER_SKILL_DESCRIPTION", true, "", "description of the skill"},
		{"ADAPTER_SKILL_EXAMPLES", false, "", "example prompts, one per line (newline-separated)"},
		{"ADAPTER_SKILL_TAGS", false, "the skill id", "skill tags, comma-separated"},
		{"ADAPTER_WEBHOOK_URL", true, "", "absolute http(s) URL of the workflow webhook answering {\"answer\",\"escalate\"}; its path and query are never shown or logged"},
		{"ADAPTER_PUBLIC_URL", true, "", "absolute http(s) URL callers dial (the JSON-RPC endpoint), written on the card"},
		{"ADAPTER_OIDC_ISSUER", true, "", "issuer whose published keys verify every caller's bearer token (JWT signature, issuer, audience, expiry)"},
		{"ADAPTER_OIDC_AUDIENCE", true, "", "audience a caller's token must carry"},
		{"ADAPTER_REQUIRED_SCOPES", false, "", "scopes a caller's token must carry, space-separated"},
		{"ADAPTER_UNVERIFIED_TOKENS", false, "false", "true: accept bearer tokens without verification (only when the workflow verifies X-Subject-Token itself); replaces ADAPTER_OIDC_*"},
		{"ADAPTER_CA_BUNDLE", false, "", "PEM file of CA certificates added to the system roots to verify the webhook and the issuer (TLS is never disabled)"},
		{"ADAPTER_LISTEN_ADDR", false, ":8080", "address the adapter listens on"},
		{"ADAPTER_WEBHOOK_TIMEOUT", false, reply.DefaultTimeout.String(), "bound on one webhook call (Go duration)"},
		{"ADAPTER_MAX_TASKS", false, strconv.Itoa(a2a.DefaultMaxTasks), "finished tasks kept for GetTask (least recently used evicted first)"},
		{"ADAPTER_TASK_TTL", false, a2a.DefaultTaskTTL.String(), "a task is forgotten this long after its last use (Go duration)"},
		{"ADAPTER_TASKS_DSN", false, "", "PostgreSQL connection string (postgres://... or key=value) of a task store shared by every replica (schema candor_a2a, created on first use); absent: tasks live in this process's memory. Never logged"},
	}
}

// config is what the adapter runs with: the library's a2a.Config plus what
// only the program needs.
type config struct {
	a2a.Config
	CABundle   string
	ListenAddr string
	Issuer     string
	Audience   string
	Scopes     []string
	Unverified bool
	// TasksDSN is the PostgreSQL task store's connection string; empty
	// means the in-memory store. It holds a password: never print it.
	TasksDSN string
}

// configError reports every bad variable at once; the values themselves are
// never repeated (a webhook URL's path is secret).
type configError struct {
	problems []string
}

func (e *configError) Error() string { return strings.Join(e.problems, "; ") }

// loadConfig reads the ADAPTER_* variables through lookup (os.LookupEnv in
// the binary) and the CA bundle file.
func loadConfig(lookup func(string) (string, bool)) (config, error) {
	var problems []string
	bad := func(name, reason string) { problems = append(problems, name+" "+reason) }
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
	httpURL := func(name, v string, noQuery bool) {
		if v == "" {
			return
		}
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad(name, "must be an absolute http or https URL")
			return
		}
		if u.User != nil {
			bad(name, "must not hold user information")
		}
		if noQuery && (u.RawQuery != "" || u.Fragment != "") {
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

	var c config
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
	httpURL("ADAPTER_WEBHOOK_URL", c.WebhookURL, false)
	c.Agent.URL = required("ADAPTER_PUBLIC_URL")
	httpURL("ADAPTER_PUBLIC_URL", c.Agent.URL, true)

	switch v := strings.ToLower(get("ADAPTER_UNVERIFIED_TOKENS")); v {
	case "", "false", "0":
	case "true", "1":
		c.Unverified = true
	default:
		bad("ADAPTER_UNVERIFIED_TOKENS", "must be true or false")
	}
	if c.Unverified {
		for _, name := range []string{"ADAPTER_OIDC_ISSUER", "ADAPTER_OIDC_AUDIENCE", "ADAPTER_REQUIRED_SCOPES"} {
			if get(name) != "" {
				bad(name, "cannot be combined with ADAPTER_UNVERIFIED_TOKENS=true")
			}
		}
	} else {
		c.Issuer = required("ADAPTER_OIDC_ISSUER")
		httpURL("ADAPTER_OIDC_ISSUER", c.Issuer, true)
		c.Audience = required("ADAPTER_OIDC_AUDIENCE")
		c.Scopes = strings.Fields(get("ADAPTER_REQUIRED_SCOPES"))
	}

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
	c.WebhookTimeout = duration("ADAPTER_WEBHOOK_TIMEOUT", reply.DefaultTimeout)
	c.TaskTTL = duration("ADAPTER_TASK_TTL", a2a.DefaultTaskTTL)
	c.MaxTasks = a2a.DefaultMaxTasks
	if v := get("ADAPTER_MAX_TASKS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			bad("ADAPTER_MAX_TASKS", "must be a positive integer")
		} else {
			c.MaxTasks = n
		}
	}
	if c.TasksDSN = get("ADAPTER_TASKS_DSN"); c.TasksDSN != "" {
		if _, err := pgxdriver.ParseConfig(c.TasksDSN); err != nil {
			bad("ADAPTER_TASKS_DSN", "is not a PostgreSQL connection string") // the value holds a password: not repeated
		}
	}
	if len(problems) > 0 {
		return config{}, &configError{problems: problems}
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
		return nil, "names a file that cannot be read"
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
