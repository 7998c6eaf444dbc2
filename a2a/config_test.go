package a2a_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/candorkit/candor/a2a"
)

func TestConfigFromEnv(t *testing.T) {
	cfg, err := a2a.ConfigFromEnv(envFor("https://n8n.internal/webhook/stock", "https://agents.example/stock", ""))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Agent.Name != "Stock agent" || cfg.Agent.URL != "https://agents.example/stock" || cfg.WebhookURL != "https://n8n.internal/webhook/stock" ||
		!reflect.DeepEqual(cfg.Agent.Skill.Examples, []string{"How many S10_1949?", "Is S18_2795 in stock?"}) ||
		cfg.RootCAs != nil || cfg.ListenAddr != ":8080" || cfg.WebhookTimeout != a2a.DefaultWebhookTimeout ||
		cfg.MaxTasks != a2a.DefaultMaxTasks || cfg.TaskTTL != a2a.DefaultTaskTTL {
		t.Fatalf("config = %+v", cfg)
	}

	// Every required variable missing: one error naming each.
	_, err = a2a.ConfigFromEnv(func(string) (string, bool) { return "", false })
	var ce *a2a.ConfigError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v, want *ConfigError", err)
	}
	var names []string
	for _, p := range ce.Problems {
		names = append(names, p.Name)
	}
	want := []string{"ADAPTER_AGENT_NAME", "ADAPTER_AGENT_DESCRIPTION", "ADAPTER_SKILL_ID", "ADAPTER_SKILL_NAME",
		"ADAPTER_SKILL_DESCRIPTION", "ADAPTER_WEBHOOK_URL", "ADAPTER_PUBLIC_URL"}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("problems name %v, want %v", names, want)
	}
	for _, n := range want {
		if !strings.Contains(err.Error(), n) {
			t.Fatalf("message %q does not name %s", err, n)
		}
	}

	// Malformed values: each named, values never repeated.
	notPEM := filepath.Join(t.TempDir(), "bundle.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		"ADAPTER_WEBHOOK_URL":     "n8n.internal/secret-path",
		"ADAPTER_PUBLIC_URL":      "https://agents.example/stock?x=1",
		"ADAPTER_CA_BUNDLE":       notPEM,
		"ADAPTER_WEBHOOK_TIMEOUT": "soon",
		"ADAPTER_TASK_TTL":        "-1m",
		"ADAPTER_MAX_TASKS":       "many",
	}
	base := envFor("", "", "")
	_, err = a2a.ConfigFromEnv(func(k string) (string, bool) {
		if v, ok := env[k]; ok {
			return v, true
		}
		return base(k)
	})
	if !errors.As(err, &ce) {
		t.Fatalf("error %v", err)
	}
	got := map[string]string{}
	for _, p := range ce.Problems {
		got[p.Name] = p.Reason
	}
	for n := range env {
		if got[n] == "" {
			t.Errorf("%s not reported: %v", n, err)
		}
	}
	if len(got) != len(env) || strings.Contains(err.Error(), "secret-path") {
		t.Fatalf("problems = %v", got)
	}
	if !strings.Contains(got["ADAPTER_CA_BUNDLE"], "no PEM certificate") {
		t.Fatalf("CA bundle reason %q", got["ADAPTER_CA_BUNDLE"])
	}

	_, err = a2a.ConfigFromEnv(envFor("http://h/x", "http://h/a2a", filepath.Join(t.TempDir(), "missing.pem")))
	if !errors.As(err, &ce) || ce.Problems[0].Name != "ADAPTER_CA_BUNDLE" {
		t.Fatalf("missing bundle: %v", err)
	}

	// Optional values.
	env = map[string]string{"ADAPTER_WEBHOOK_TIMEOUT": "5s", "ADAPTER_TASK_TTL": "10m", "ADAPTER_MAX_TASKS": "7",
		"ADAPTER_LISTEN_ADDR": "127.0.0.1:9000", "ADAPTER_SKILL_TAGS": "stock, inventory,"}
	base = envFor("http://h/x", "http://h/a2a", "")
	cfg, err = a2a.ConfigFromEnv(func(k string) (string, bool) {
		if v, ok := env[k]; ok {
			return v, true
		}
		return base(k)
	})
	if err != nil || cfg.WebhookTimeout != 5*time.Second || cfg.TaskTTL != 10*time.Minute || cfg.MaxTasks != 7 ||
		cfg.ListenAddr != "127.0.0.1:9000" || !reflect.DeepEqual(cfg.Agent.Skill.Tags, []string{"stock", "inventory"}) {
		t.Fatalf("config = %+v, %v", cfg, err)
	}

	// Every variable read is documented.
	documented := map[string]bool{}
	for _, v := range a2a.EnvVars() {
		documented[v.Name] = v.Description != ""
	}
	for _, n := range append(want, "ADAPTER_CA_BUNDLE", "ADAPTER_SKILL_EXAMPLES", "ADAPTER_LISTEN_ADDR", "ADAPTER_WEBHOOK_TIMEOUT",
		"ADAPTER_TASK_TTL", "ADAPTER_MAX_TASKS", "ADAPTER_SKILL_TAGS", "ADAPTER_AGENT_VERSION") {
		if !documented[n] {
			t.Errorf("%s is not documented by EnvVars", n)
		}
	}
}
