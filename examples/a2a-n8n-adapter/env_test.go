package main

import (
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/candorkit/candor/a2a"
	"github.com/candorkit/candor/reply"
)

func envFor(over map[string]string) func(string) (string, bool) {
	env := map[string]string{
		"ADAPTER_AGENT_NAME":        "Stock agent",
		"ADAPTER_AGENT_DESCRIPTION": "Answers stock questions",
		"ADAPTER_SKILL_ID":          "stock-level",
		"ADAPTER_SKILL_NAME":        "Stock level",
		"ADAPTER_SKILL_DESCRIPTION": "How many units are in stock",
		"ADAPTER_SKILL_EXAMPLES":    "How many S10_1949?\n\n  Is S18_2795 in stock?  \n",
		"ADAPTER_WEBHOOK_URL":       "https://n8n.internal/webhook/stock",
		"ADAPTER_PUBLIC_URL":        "https://agents.example/stock",
		"ADAPTER_OIDC_ISSUER":       "https://op.example/realms/candor",
		"ADAPTER_OIDC_AUDIENCE":     "stock-agent",
	}
	for k, v := range over {
		if v == "" {
			delete(env, k)
		} else {
			env[k] = v
		}
	}
	return func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}

func TestLoadConfig(t *testing.T) {
	cfg, err := loadConfig(envFor(nil))
	require.NoError(t, err)
	assert.Equal(t, "Stock agent", cfg.Agent.Name)
	assert.Equal(t, "https://agents.example/stock", cfg.Agent.URL)
	assert.Equal(t, "https://n8n.internal/webhook/stock", cfg.WebhookURL)
	assert.Equal(t, []string{"How many S10_1949?", "Is S18_2795 in stock?"}, cfg.Agent.Skill.Examples)
	assert.Nil(t, cfg.RootCAs)
	assert.Equal(t, ":8080", cfg.ListenAddr)
	assert.Equal(t, reply.DefaultTimeout, cfg.WebhookTimeout)
	assert.Equal(t, a2a.DefaultMaxTasks, cfg.MaxTasks)
	assert.Equal(t, a2a.DefaultTaskTTL, cfg.TaskTTL)
	assert.Equal(t, "https://op.example/realms/candor", cfg.Issuer)
	assert.Equal(t, "stock-agent", cfg.Audience)
	assert.False(t, cfg.Unverified)

	// Every required variable missing: one error naming each.
	_, err = loadConfig(noEnv)
	require.Error(t, err)
	for _, n := range []string{"ADAPTER_AGENT_NAME", "ADAPTER_AGENT_DESCRIPTION", "ADAPTER_SKILL_ID", "ADAPTER_SKILL_NAME",
		"ADAPTER_SKILL_DESCRIPTION", "ADAPTER_WEBHOOK_URL", "ADAPTER_PUBLIC_URL", "ADAPTER_OIDC_ISSUER", "ADAPTER_OIDC_AUDIENCE"} {
		assert.Contains(t, err.Error(), n+" is required")
	}

	// Malformed values: each named, values never repeated.
	notPEM := filepath.Join(t.TempDir(), "bundle.pem")
	require.NoError(t, os.WriteFile(notPEM, []byte("not a certificate"), 0o600))
	bad := map[string]string{
		"ADAPTER_WEBHOOK_URL":       "n8n.internal/secret-path",
		"ADAPTER_PUBLIC_URL":        "https://agents.example/stock?x=1",
		"ADAPTER_CA_BUNDLE":         notPEM,
		"ADAPTER_WEBHOOK_TIMEOUT":   "soon",
		"ADAPTER_TASK_TTL":          "-1m",
		"ADAPTER_MAX_TASKS":         "many",
		"ADAPTER_UNVERIFIED_TOKENS": "maybe",
	}
	_, err = loadConfig(envFor(bad))
	require.Error(t, err)
	for n := range bad {
		assert.Contains(t, err.Error(), n)
	}
	assert.NotContains(t, err.Error(), "secret-path")
	assert.Contains(t, err.Error(), "ADAPTER_CA_BUNDLE holds no PEM certificate")
	_, err = loadConfig(envFor(map[string]string{"ADAPTER_CA_BUNDLE": filepath.Join(t.TempDir(), "missing.pem")}))
	assert.ErrorContains(t, err, "ADAPTER_CA_BUNDLE names a file that does not exist")

	// The explicit opt-out replaces the issuer, and excludes it.
	cfg, err = loadConfig(envFor(map[string]string{"ADAPTER_UNVERIFIED_TOKENS": "true", "ADAPTER_OIDC_ISSUER": "", "ADAPTER_OIDC_AUDIENCE": ""}))
	require.NoError(t, err)
	assert.True(t, cfg.Unverified)
	_, err = loadConfig(envFor(map[string]string{"ADAPTER_UNVERIFIED_TOKENS": "true"}))
	assert.ErrorContains(t, err, "ADAPTER_OIDC_ISSUER cannot be combined")

	// Optional values.
	cfg, err = loadConfig(envFor(map[string]string{"ADAPTER_WEBHOOK_TIMEOUT": "5s", "ADAPTER_TASK_TTL": "10m", "ADAPTER_MAX_TASKS": "7",
		"ADAPTER_LISTEN_ADDR": "127.0.0.1:9000", "ADAPTER_SKILL_TAGS": "stock, inventory,", "ADAPTER_REQUIRED_SCOPES": "stock:read  a2a"}))
	require.NoError(t, err)
	assert.Equal(t, 5*time.Second, cfg.WebhookTimeout)
	assert.Equal(t, 10*time.Minute, cfg.TaskTTL)
	assert.Equal(t, 7, cfg.MaxTasks)
	assert.Equal(t, "127.0.0.1:9000", cfg.ListenAddr)
	assert.Equal(t, []string{"stock", "inventory"}, cfg.Agent.Skill.Tags)
	assert.Equal(t, []string{"stock:read", "a2a"}, cfg.Scopes)
}

// ADAPTER_CA_BUNDLE reaches the webhook client: a TLS webhook signed by the
// bundle's CA verifies.
func TestCABundle(t *testing.T) {
	hook := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer hook.Close()
	file := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: hook.Certificate().Raw}), 0o600))
	cfg, err := loadConfig(envFor(map[string]string{"ADAPTER_CA_BUNDLE": file, "ADAPTER_WEBHOOK_URL": hook.URL + "/webhook/stock"}))
	require.NoError(t, err)
	require.NotNil(t, cfg.RootCAs)
	c, err := reply.NewClient(cfg.WebhookURL, reply.WithRootCAs(cfg.RootCAs))
	require.NoError(t, err)
	_, err = c.Call(t.Context(), "tok", nil)
	assert.ErrorIs(t, err, reply.ErrEmpty, "TLS verified; the empty 200 is the stand-in's answer")
}

// ADAPTER_TASKS_DSN selects the PostgreSQL task store; a malformed one is a
// configuration error that does not repeat the value (it holds a password).
func TestTasksDSN(t *testing.T) {
	cfg, err := loadConfig(envFor(nil))
	require.NoError(t, err)
	assert.Empty(t, cfg.TasksDSN, "absent: in memory")
	assert.Equal(t, "memory", taskStoreKind(cfg))

	dsn := "postgres://agent:pw-9c2e71aa@db.internal:5432/agents?sslmode=verify-full"
	cfg, err = loadConfig(envFor(map[string]string{"ADAPTER_TASKS_DSN": dsn}))
	require.NoError(t, err)
	assert.Equal(t, dsn, cfg.TasksDSN)
	assert.Equal(t, "postgres", taskStoreKind(cfg))

	_, err = loadConfig(envFor(map[string]string{"ADAPTER_TASKS_DSN": "postgres://agent:pw-9c2e71aa@db.internal:notaport/agents"}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ADAPTER_TASKS_DSN is not a PostgreSQL connection string")
	assert.NotContains(t, err.Error(), "pw-9c2e71aa")
}

// A task store that cannot be reached at start is exit code 1, logged
// without the password.
func TestTasksDSNUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close()) // nothing listens there now
	env := envFor(map[string]string{
		"ADAPTER_TASKS_DSN":         "postgres://agent:pw-9c2e71aa@" + addr + "/agents?sslmode=disable&connect_timeout=5",
		"ADAPTER_UNVERIFIED_TOKENS": "true", "ADAPTER_OIDC_ISSUER": "", "ADAPTER_OIDC_AUDIENCE": "",
		"ADAPTER_LISTEN_ADDR": "127.0.0.1:0",
	})
	var stdout, stderr strings.Builder
	code := run(t.Context(), func() {}, nil, env, &stdout, &stderr)
	assert.Equal(t, exitFailed, code)
	assert.Contains(t, stderr.String(), "opening the task store (ADAPTER_TASKS_DSN)")
	assert.Contains(t, stderr.String(), "PostgreSQL is unavailable")
	assert.NotContains(t, stderr.String(), "pw-9c2e71aa")
	assert.NotContains(t, stderr.String(), "a2a adapter listening")
}
