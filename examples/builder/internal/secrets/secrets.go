package secrets

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"

	"github.com/candorkit/candor/internal/secret"
)

// Environment names an n8n instance.
type Environment string

const (
	Sandbox    Environment = "sandbox"
	Production Environment = "production"
)

// N8N is how to reach one n8n instance.
type N8N struct {
	Env      Environment
	BaseURL  string        // e.g. http://127.0.0.1:5678 (no trailing slash)
	APIKey   secret.Secret // header X-N8N-API-KEY
	Email    string        // optional owner login for n8n's session-only endpoints
	Password secret.Secret // optional, with Email
}

// LogValue logs the URL and whether a key is present, never the key.
func (n N8N) LogValue() slog.Value {
	return slog.GroupValue(slog.String("env", string(n.Env)), slog.String("base_url", n.BaseURL),
		slog.Bool("api_key_set", !n.APIKey.IsZero()), slog.Bool("login_set", n.Email != "" && !n.Password.IsZero()))
}

// Source gives the connection to one n8n environment.
type Source interface {
	N8N(ctx context.Context, env Environment) (N8N, error)
}

// Sentinel errors; see the package documentation.
var (
	ErrMissing = errors.New("secrets: missing")
	ErrInvalid = errors.New("secrets: invalid")
)

// MissingError names the absent variables or fields.
type MissingError struct {
	Source string   // "environment" or "vault secret/sandbox/n8n"
	Names  []string // variable or field names
}

func (e *MissingError) Error() string {
	return fmt.Sprintf("secrets: %s lacks %s", e.Source, strings.Join(e.Names, ", "))
}

func (e *MissingError) Unwrap() error { return ErrMissing }

// Env reads the connection from environment variables (see the package
// documentation for the names).
type Env struct {
	// Lookup replaces os.LookupEnv (tests); nil uses os.LookupEnv.
	Lookup func(string) (string, bool)
}

// VarNames returns the variable names Env reads for env: URL, API key, email,
// password.
func VarNames(env Environment) (urlVar, keyVar, emailVar, passwordVar string) {
	p := "N8N_" + strings.ToUpper(string(env)) + "_"
	return p + "URL", p + "API_KEY", p + "EMAIL", p + "PASSWORD"
}

// N8N implements Source.
func (e Env) N8N(_ context.Context, env Environment) (N8N, error) {
	if err := checkEnv(env); err != nil {
		return N8N{}, err
	}
	lookup := e.Lookup
	if lookup == nil {
		lookup = os.LookupEnv
	}
	get := func(name string) string { v, _ := lookup(name); return strings.TrimSpace(v) }
	uv, kv, ev, pv := VarNames(env)
	n := N8N{Env: env, BaseURL: get(uv), APIKey: secret.New(get(kv)), Email: get(ev), Password: secret.New(get(pv))}
	var missing []string
	if n.BaseURL == "" {
		missing = append(missing, uv)
	}
	if n.APIKey.IsZero() {
		missing = append(missing, kv)
	}
	if (n.Email == "") != n.Password.IsZero() {
		if n.Email == "" {
			missing = append(missing, ev)
		} else {
			missing = append(missing, pv)
		}
	}
	if len(missing) > 0 {
		return N8N{}, &MissingError{Source: "environment", Names: missing}
	}
	return finish(n, uv)
}

func checkEnv(env Environment) error {
	if env != Sandbox && env != Production {
		return fmt.Errorf("%w: unknown n8n environment %q", ErrInvalid, env)
	}
	return nil
}

// finish validates and normalises the base URL.
func finish(n N8N, field string) (N8N, error) {
	u, err := url.Parse(n.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" {
		return N8N{}, fmt.Errorf("%w: %s is not an http(s) URL without credentials or query: %q", ErrInvalid, field, n.BaseURL)
	}
	n.BaseURL = strings.TrimRight(n.BaseURL, "/")
	return n, nil
}
