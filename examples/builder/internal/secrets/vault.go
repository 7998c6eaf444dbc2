package secrets

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// Bounds on what this package reads.
const (
	MaxCredentialFile = 4 << 10  // role_id / secret_id files
	MaxVaultBody      = 64 << 10 // any Vault response body
)

// Vault reads the connection from HashiCorp Vault: AppRole login, then KV v2.
type Vault struct {
	// Addr is Vault's base URL, e.g. https://vault.internal:8200 (VAULT_ADDR).
	Addr string
	// RoleIDFile and SecretIDFile hold the AppRole role_id and secret_id.
	RoleIDFile, SecretIDFile string
	// AuthMount is the AppRole auth mount; default "approle".
	AuthMount string
	// KVMount is the KV v2 secrets engine mount; default "secret".
	KVMount string
	// Namespace, when set, is sent as X-Vault-Namespace (Vault Enterprise).
	Namespace string
	// HTTPClient defaults to a client with a 30 s timeout and the system
	// roots; give one with your CA pool for a private Vault. TLS is never
	// relaxed here.
	HTTPClient *http.Client
}

// VaultError is an unusable answer from Vault.
type VaultError struct {
	Op     string   // "login" or "read secret/sandbox/n8n"
	Status int      // HTTP status (0 when the request did not complete)
	Errors []string // Vault's "errors" list, when it sent one
	Body   string   // bounded, scrubbed body of a non-2xx answer
	Reason string   // what was wrong
	Err    error    // transport error, if any
}

func (e *VaultError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "secrets: vault %s", e.Op)
	if e.Status != 0 {
		fmt.Fprintf(&b, ": HTTP %d", e.Status)
	}
	if e.Reason != "" {
		b.WriteString(": " + e.Reason)
	}
	if len(e.Errors) > 0 {
		b.WriteString(": " + strings.Join(e.Errors, "; "))
	}
	if e.Err != nil {
		b.WriteString(": " + e.Err.Error())
	}
	return b.String()
}

func (e *VaultError) Unwrap() error { return e.Err }

// KVPath is the KV v2 path (below the mount) holding env's n8n connection.
func KVPath(env Environment) string { return string(env) + "/n8n" }

// N8N implements Source.
func (v Vault) N8N(ctx context.Context, env Environment) (N8N, error) {
	if err := checkEnv(env); err != nil {
		return N8N{}, err
	}
	base, err := url.Parse(strings.TrimRight(v.Addr, "/"))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return N8N{}, fmt.Errorf("%w: vault address %q is not an http(s) URL", ErrInvalid, v.Addr)
	}
	roleID, err := readCredentialFile("role_id", v.RoleIDFile)
	if err != nil {
		return N8N{}, err
	}
	secretID, err := readCredentialFile("secret_id", v.SecretIDFile)
	if err != nil {
		return N8N{}, err
	}
	authMount, kvMount := or(v.AuthMount, "approle"), or(v.KVMount, "secret")
	client := v.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	scrub := []string{secretID.Reveal(), roleID.Reveal()}

	// 1. AppRole login.
	loginBody, _ := json.Marshal(map[string]string{"role_id": roleID.Reveal(), "secret_id": secretID.Reveal()})
	var login struct {
		Auth *struct {
			ClientToken string `json:"client_token"`
		} `json:"auth"`
	}
	if err := v.do(ctx, client, "login", http.MethodPost, base.String()+"/v1/auth/"+authMount+"/login", "", loginBody, scrub, &login); err != nil {
		return N8N{}, err
	}
	if login.Auth == nil || login.Auth.ClientToken == "" {
		return N8N{}, &VaultError{Op: "login", Status: http.StatusOK, Reason: "answer has no auth.client_token"}
	}
	token := NewSecret(login.Auth.ClientToken)
	scrub = append(scrub, token.Reveal())

	// 2. KV v2 read.
	op := "read " + kvMount + "/" + KVPath(env)
	var kv struct {
		Data *struct {
			Data map[string]any `json:"data"`
		} `json:"data"`
	}
	if err := v.do(ctx, client, op, http.MethodGet, base.String()+"/v1/"+kvMount+"/data/"+KVPath(env), token.Reveal(), nil, scrub, &kv); err != nil {
		return N8N{}, err
	}
	if kv.Data == nil || kv.Data.Data == nil {
		return N8N{}, &VaultError{Op: op, Status: http.StatusOK, Reason: "answer has no data.data (is the mount KV version 2, and the secret not deleted?)"}
	}
	fields := kv.Data.Data
	str := func(name string) (string, bool) {
		raw, present := fields[name]
		if !present {
			return "", true
		}
		s, ok := raw.(string)
		return strings.TrimSpace(s), ok
	}
	n := N8N{Env: env}
	var missing, wrongType []string
	for _, f := range []struct {
		name     string
		required bool
		set      func(string)
	}{
		{"base_url", true, func(s string) { n.BaseURL = s }},
		{"api_key", true, func(s string) { n.APIKey = NewSecret(s) }},
		{"email", false, func(s string) { n.Email = s }},
		{"password", false, func(s string) { n.Password = NewSecret(s) }},
	} {
		s, ok := str(f.name)
		switch {
		case !ok:
			wrongType = append(wrongType, f.name)
		case s == "" && f.required:
			missing = append(missing, f.name)
		default:
			f.set(s)
		}
	}
	if len(wrongType) > 0 {
		return N8N{}, &VaultError{Op: op, Status: http.StatusOK, Reason: "fields are not strings: " + strings.Join(wrongType, ", ")}
	}
	if (n.Email == "") != n.Password.IsZero() {
		missing = append(missing, map[bool]string{true: "email", false: "password"}[n.Email == ""])
	}
	if len(missing) > 0 {
		return N8N{}, &MissingError{Source: "vault " + kvMount + "/" + KVPath(env), Names: missing}
	}
	return finish(n, "vault field base_url")
}

// do sends one request and decodes a 2xx JSON answer into out.
func (v Vault) do(ctx context.Context, client *http.Client, op, method, u, token string, body []byte, scrub []string, out any) error {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return &VaultError{Op: op, Reason: "build request", Err: err}
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("X-Vault-Token", token)
	}
	if v.Namespace != "" {
		req.Header.Set("X-Vault-Namespace", v.Namespace)
	}
	resp, err := client.Do(req)
	if err != nil {
		return &VaultError{Op: op, Err: scrubErr(err, scrub)}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, MaxVaultBody+1))
	if err != nil {
		return &VaultError{Op: op, Status: resp.StatusCode, Reason: "read body", Err: scrubErr(err, scrub)}
	}
	if len(raw) > MaxVaultBody {
		return &VaultError{Op: op, Status: resp.StatusCode, Reason: fmt.Sprintf("body larger than %d bytes", MaxVaultBody)}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		e := &VaultError{Op: op, Status: resp.StatusCode, Body: scrubString(string(raw), scrub)}
		var ve struct {
			Errors []string `json:"errors"`
		}
		if json.Unmarshal(raw, &ve) == nil {
			for _, m := range ve.Errors {
				e.Errors = append(e.Errors, scrubString(m, scrub))
			}
		}
		if len(e.Errors) == 0 {
			e.Reason = "no error message"
		}
		return e
	}
	if err := json.Unmarshal(raw, out); err != nil {
		// The body of a 2xx answer may carry secrets: describe it, do not keep it.
		return &VaultError{Op: op, Status: resp.StatusCode, Reason: fmt.Sprintf("answer is not the expected JSON (%d bytes)", len(raw))}
	}
	return nil
}

func readCredentialFile(what, path string) (Secret, error) {
	if path == "" {
		return Secret{}, &MissingError{Source: "vault AppRole", Names: []string{what + " file"}}
	}
	f, err := os.Open(path)
	if err != nil {
		return Secret{}, fmt.Errorf("secrets: %s file: %w", what, err)
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, MaxCredentialFile+1))
	if err != nil {
		return Secret{}, fmt.Errorf("secrets: read %s file %s: %w", what, path, err)
	}
	if len(raw) > MaxCredentialFile {
		return Secret{}, fmt.Errorf("%w: %s file %s is larger than %d bytes", ErrInvalid, what, path, MaxCredentialFile)
	}
	v := strings.TrimSpace(string(raw))
	if v == "" || strings.ContainsAny(v, "\r\n") {
		return Secret{}, fmt.Errorf("%w: %s file %s must hold exactly one non-empty line", ErrInvalid, what, path)
	}
	return NewSecret(v), nil
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

func scrubString(s string, secrets []string) string {
	for _, sec := range secrets {
		if sec != "" {
			s = strings.ReplaceAll(s, sec, redacted)
		}
	}
	return s
}

func scrubErr(err error, secrets []string) error {
	if msg := err.Error(); scrubString(msg, secrets) != msg {
		return errors.New(scrubString(msg, secrets))
	}
	return err
}
