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

	"github.com/candorkit/candor/internal/httpx"
	"github.com/candorkit/candor/internal/secret"
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
	Op     string   // "login", "read secret/sandbox/n8n" or "revoke login token"
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

// revokeTimeout bounds the token revocation, which runs even when ctx has
// ended.
const revokeTimeout = 10 * time.Second

// revoke revokes the login token (POST /v1/auth/token/revoke-self, which
// Vault answers 204).
func (v Vault) revoke(ctx context.Context, client *http.Client, base string, token secret.Secret, scrub []string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), revokeTimeout)
	defer cancel()
	return v.do(ctx, client, "revoke login token", http.MethodPost, base+"/v1/auth/token/revoke-self", token.Reveal(), []byte("{}"), scrub, nil)
}

// escapeMount path-escapes each segment of a mount path ("kv/team" has two)
// and refuses an empty, "." or ".." segment, which would name another path.
func escapeMount(what, mount string) (string, error) {
	for _, seg := range strings.Split(strings.Trim(mount, "/"), "/") {
		if seg == "" || seg == "." || seg == ".." {
			return "", fmt.Errorf("%w: vault %s %q has an empty, \".\" or \"..\" segment", ErrInvalid, what, mount)
		}
	}
	return escapeSegments(strings.Trim(mount, "/")), nil
}

// escapeSegments path-escapes each "/"-separated segment of p.
func escapeSegments(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// N8N implements Source. It logs in with AppRole, reads the KV v2 secret
// and revokes the login token before returning; a revocation that fails is
// an error (a *VaultError, joined to the read's own error if any). Mount
// and path segments are path-escaped.
func (v Vault) N8N(ctx context.Context, env Environment) (n N8N, err error) {
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
	authMount, err := escapeMount("auth mount", or(v.AuthMount, "approle"))
	if err != nil {
		return N8N{}, err
	}
	kvMountPath, err := escapeMount("KV mount", or(v.KVMount, "secret"))
	if err != nil {
		return N8N{}, err
	}
	kvMount := or(v.KVMount, "secret")
	// Redirects are never followed: the login token travels in a header
	// that Go would forward to the redirect's target.
	client := v.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	client = httpx.NoRedirectClient(client)
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
	token := secret.New(login.Auth.ClientToken)
	scrub = append(scrub, token.Reveal())
	// The login token is needed for one read: revoke it however the read
	// ends, so that no live token outlives this call.
	defer func() {
		if rerr := v.revoke(ctx, client, base.String(), token, scrub); rerr != nil {
			n, err = N8N{}, errors.Join(err, rerr)
		}
	}()

	// 2. KV v2 read.
	op := "read " + kvMount + "/" + KVPath(env)
	var kv struct {
		Data *struct {
			Data map[string]any `json:"data"`
		} `json:"data"`
	}
	if err := v.do(ctx, client, op, http.MethodGet, base.String()+"/v1/"+kvMountPath+"/data/"+escapeSegments(KVPath(env)), token.Reveal(), nil, scrub, &kv); err != nil {
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
	n = N8N{Env: env}
	var missing, wrongType []string
	for _, f := range []struct {
		name     string
		required bool
		set      func(string)
	}{
		{"base_url", true, func(s string) { n.BaseURL = s }},
		{"api_key", true, func(s string) { n.APIKey = secret.New(s) }},
		{"email", false, func(s string) { n.Email = s }},
		{"password", false, func(s string) { n.Password = secret.New(s) }},
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
	raw, err := httpx.ReadAll(resp.Body, MaxVaultBody)
	if errors.Is(err, httpx.ErrTooLarge) {
		return &VaultError{Op: op, Status: resp.StatusCode, Reason: fmt.Sprintf("body larger than %d bytes", MaxVaultBody)}
	}
	if err != nil {
		return &VaultError{Op: op, Status: resp.StatusCode, Reason: "read body", Err: scrubErr(err, scrub)}
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
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		// The body of a 2xx answer may carry secrets: describe it, do not keep it.
		return &VaultError{Op: op, Status: resp.StatusCode, Reason: fmt.Sprintf("answer is not the expected JSON (%d bytes)", len(raw))}
	}
	return nil
}

func readCredentialFile(what, path string) (secret.Secret, error) {
	if path == "" {
		return secret.Secret{}, &MissingError{Source: "vault AppRole", Names: []string{what + " file"}}
	}
	f, err := os.Open(path)
	if err != nil {
		return secret.Secret{}, fmt.Errorf("secrets: %s file: %w", what, err)
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, MaxCredentialFile+1))
	if err != nil {
		return secret.Secret{}, fmt.Errorf("secrets: read %s file %s: %w", what, path, err)
	}
	if len(raw) > MaxCredentialFile {
		return secret.Secret{}, fmt.Errorf("%w: %s file %s is larger than %d bytes", ErrInvalid, what, path, MaxCredentialFile)
	}
	v := strings.TrimSpace(string(raw))
	if v == "" || strings.ContainsAny(v, "\r\n") {
		return secret.Secret{}, fmt.Errorf("%w: %s file %s must hold exactly one non-empty line", ErrInvalid, what, path)
	}
	return secret.New(v), nil
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

func scrubString(s string, secrets []string) string {
	return secret.Redact(s, secrets...)
}

func scrubErr(err error, secrets []string) error {
	if msg := err.Error(); scrubString(msg, secrets) != msg {
		return errors.New(scrubString(msg, secrets))
	}
	return err
}
