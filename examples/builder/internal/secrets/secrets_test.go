package secrets

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/candorkit/candor/internal/secret"
)

const (
	roleID   = "3c9a2f4e-role-0000"
	secretID = "8f1d7e2b-secret-1111"
	token    = "hvs.CAESIJtokenvalue2222"
	apiKey   = "n8n_api_0123456789abcdef-KEY"
	password = "Owner-Passw0rd-9"
)

// fakeVault answers as Vault's HTTP API documents: AppRole login at
// POST /v1/auth/approle/login → {"auth":{"client_token":…}}, KV v2 read at
// GET /v1/secret/data/<path> → {"data":{"data":{…},"metadata":{…}}}, and
// errors as {"errors":[…]}.
type fakeVault struct {
	secrets    map[string]map[string]any // path below secret/ → fields
	logins     atomic.Int32
	reads      atomic.Int32
	revokes    atomic.Int32
	revoked    atomic.Bool // the login token was revoked
	mu         sync.Mutex
	paths      []string // escaped paths of the requests, in order
	failRevoke bool     // answer revoke-self with 500
}

func (f *fakeVault) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	f.mu.Lock()
	f.paths = append(f.paths, r.URL.EscapedPath())
	f.mu.Unlock()
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/auth/token/revoke-self":
		// Vault answers 204 with no body; a revoked token is refused after.
		if r.Header.Get("X-Vault-Token") != token || f.revoked.Load() {
			w.WriteHeader(http.StatusForbidden)
			io.WriteString(w, `{"errors":["permission denied"]}`)
			return
		}
		f.revokes.Add(1)
		if f.failRevoke {
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, `{"errors":["internal error"]}`)
			return
		}
		f.revoked.Store(true)
		w.WriteHeader(http.StatusNoContent)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/auth/approle/login":
		f.logins.Add(1)
		f.revoked.Store(false) // each login issues a fresh token (the same string here)
		var body struct {
			RoleID   string `json:"role_id"`
			SecretID string `json:"secret_id"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.RoleID != roleID || body.SecretID != secretID {
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"errors":["invalid role or secret ID"]}`)
			return
		}
		fmt.Fprintf(w, `{"request_id":"5d4b-login","lease_id":"","renewable":false,"lease_duration":0,"data":null,"wrap_info":null,"warnings":null,`+
			`"auth":{"client_token":%q,"accessor":"acc-1","policies":["default","n8n-sandbox"],"token_policies":["default","n8n-sandbox"],`+
			`"metadata":{"role_name":"builder"},"lease_duration":1200,"renewable":true,"entity_id":"e-1","token_type":"service","orphan":true}}`, token)
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/secret/data/"):
		f.reads.Add(1)
		if r.Header.Get("X-Vault-Token") != token || f.revoked.Load() {
			w.WriteHeader(http.StatusForbidden)
			io.WriteString(w, `{"errors":["permission denied"]}`)
			return
		}
		fields, ok := f.secrets[strings.TrimPrefix(r.URL.Path, "/v1/secret/data/")]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"errors":[]}`)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{
			"request_id": "7e1c-read", "lease_id": "", "renewable": false, "lease_duration": 0,
			"data": map[string]any{
				"data":     fields,
				"metadata": map[string]any{"created_time": "2026-01-02T03:04:05.678Z", "custom_metadata": nil, "deletion_time": "", "destroyed": false, "version": 3},
			},
			"wrap_info": nil, "warnings": nil, "auth": nil,
		})
	default:
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"errors":[]}`)
	}
}

func (f *fakeVault) seen() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.paths...)
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func newVault(t *testing.T, fv *fakeVault) (Vault, *httptest.Server) {
	srv := httptest.NewServer(fv)
	t.Cleanup(srv.Close)
	return Vault{Addr: srv.URL, RoleIDFile: writeFile(t, "role_id", roleID+"\n"), SecretIDFile: writeFile(t, "secret_id", secretID+"\n"), HTTPClient: srv.Client()}, srv
}

// assertNoSecret fails when any secret value appears in s.
func assertNoSecret(t *testing.T, where, s string) {
	t.Helper()
	for _, sec := range []string{secretID, token, apiKey, password} {
		if strings.Contains(s, sec) {
			t.Fatalf("%s reveals a secret (%q…): %s", where, sec[:6], s)
		}
	}
}

func TestVaultReadsSandboxConnection(t *testing.T) {
	fv := &fakeVault{secrets: map[string]map[string]any{
		"sandbox/n8n": {"api_key": apiKey, "base_url": "http://127.0.0.1:5678/", "email": "owner@example.test", "password": password},
	}}
	v, _ := newVault(t, fv)
	n, err := v.N8N(context.Background(), Sandbox)
	if err != nil {
		t.Fatal(err)
	}
	if n.BaseURL != "http://127.0.0.1:5678" || n.APIKey.Reveal() != apiKey || n.Email != "owner@example.test" || n.Password.Reveal() != password || n.Env != Sandbox {
		t.Fatalf("got %+v", n)
	}
	if fv.logins.Load() != 1 || fv.reads.Load() != 1 {
		t.Fatalf("%d logins, %d reads; want 1 and 1", fv.logins.Load(), fv.reads.Load())
	}
	// Nothing that prints, logs or marshals the connection shows the key.
	var logs bytes.Buffer
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("loaded", "n8n", n, "key", n.APIKey)
	slog.New(slog.NewTextHandler(&logs, nil)).Info("loaded", "n8n", n, "key", n.APIKey)
	js, _ := json.Marshal(n)
	printed := fmt.Sprintf("%v %+v %#v %s %q %x %v", n, n, n, n.APIKey, n.APIKey, n.APIKey, []any{n.Password})
	for where, s := range map[string]string{"slog": logs.String(), "json": string(js), "fmt": printed} {
		assertNoSecret(t, where, s)
		if !strings.Contains(s, secret.Redacted) && where != "slog" {
			t.Fatalf("%s does not show the redaction marker: %s", where, s)
		}
	}
	if !strings.Contains(logs.String(), `"api_key_set":true`) {
		t.Fatalf("log does not say a key is set: %s", logs.String())
	}
}

func TestVaultFailures(t *testing.T) {
	ctx := context.Background()
	fv := &fakeVault{secrets: map[string]map[string]any{
		"sandbox/n8n":    {"api_key": apiKey},
		"production/n8n": {"api_key": 42, "base_url": "http://127.0.0.1:5678"},
	}}

	t.Run("wrong secret id", func(t *testing.T) {
		v, _ := newVault(t, fv)
		v.SecretIDFile = writeFile(t, "secret_id", "not-the-secret")
		_, err := v.N8N(ctx, Sandbox)
		var ve *VaultError
		if !errors.As(err, &ve) || ve.Op != "login" || ve.Status != 400 || len(ve.Errors) != 1 || ve.Errors[0] != "invalid role or secret ID" {
			t.Fatalf("err = %#v", err)
		}
		if strings.Contains(err.Error(), "not-the-secret") {
			t.Fatalf("error shows the secret id: %v", err)
		}
	})
	t.Run("missing field", func(t *testing.T) {
		v, _ := newVault(t, fv)
		_, err := v.N8N(ctx, Sandbox)
		var me *MissingError
		if !errors.Is(err, ErrMissing) || !errors.As(err, &me) || len(me.Names) != 1 || me.Names[0] != "base_url" {
			t.Fatalf("err = %v; want base_url missing", err)
		}
		assertNoSecret(t, "error", err.Error())
	})
	t.Run("field of the wrong type", func(t *testing.T) {
		v, _ := newVault(t, fv)
		_, err := v.N8N(ctx, Production)
		var ve *VaultError
		if !errors.As(err, &ve) || !strings.Contains(ve.Reason, "api_key") || ve.Body != "" {
			t.Fatalf("err = %v; want a VaultError naming api_key and keeping no body", err)
		}
	})
	t.Run("secret not found", func(t *testing.T) {
		empty := &fakeVault{}
		v, _ := newVault(t, empty)
		_, err := v.N8N(ctx, Sandbox)
		var ve *VaultError
		if !errors.As(err, &ve) || ve.Status != 404 || ve.Op != "read secret/sandbox/n8n" {
			t.Fatalf("err = %v", err)
		}
		assertNoSecret(t, "error", fmt.Sprintf("%v %+v", err, ve))
	})
	t.Run("credential files", func(t *testing.T) {
		fv := &fakeVault{}
		v, _ := newVault(t, fv)
		for name, content := range map[string]string{"empty": " \n", "two lines": "a\nb\n", "huge": strings.Repeat("s", MaxCredentialFile+1)} {
			v.SecretIDFile = writeFile(t, "secret_id", content)
			_, err := v.N8N(ctx, Sandbox)
			if !errors.Is(err, ErrInvalid) || strings.Contains(err.Error(), "sss") {
				t.Fatalf("%s secret_id file: %v; want ErrInvalid without the content", name, err)
			}
		}
		v.SecretIDFile = filepath.Join(t.TempDir(), "absent")
		if _, err := v.N8N(ctx, Sandbox); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("absent file: %v", err)
		}
		if fv.logins.Load() != 0 {
			t.Fatalf("logged in %d times with unusable credential files", fv.logins.Load())
		}
	})
	t.Run("oversized answer", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"auth":{"client_token":"`+strings.Repeat("t", MaxVaultBody)+`"}}`)
		}))
		t.Cleanup(srv.Close)
		v, _ := newVault(t, fv)
		v.Addr = srv.URL
		_, err := v.N8N(ctx, Sandbox)
		var ve *VaultError
		if !errors.As(err, &ve) || !strings.Contains(ve.Reason, "larger than") {
			t.Fatalf("err = %v; want a bounded-read error", err)
		}
	})
	t.Run("login without token", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"auth":null,"warnings":["nope"]}`)
		}))
		t.Cleanup(srv.Close)
		v, _ := newVault(t, fv)
		v.Addr = srv.URL
		_, err := v.N8N(ctx, Sandbox)
		var ve *VaultError
		if !errors.As(err, &ve) || !strings.Contains(ve.Reason, "client_token") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("bad address and environment", func(t *testing.T) {
		if _, err := (Vault{Addr: "vault:8200"}).N8N(ctx, Sandbox); !errors.Is(err, ErrInvalid) {
			t.Fatalf("bad address: %v", err)
		}
		if _, err := (Vault{Addr: "http://127.0.0.1:1"}).N8N(ctx, "staging"); !errors.Is(err, ErrInvalid) {
			t.Fatalf("unknown environment: %v", err)
		}
	})
}

func TestEnv(t *testing.T) {
	vars := map[string]string{
		"N8N_SANDBOX_URL":     "http://127.0.0.1:5678/",
		"N8N_SANDBOX_API_KEY": apiKey,
	}
	src := Env{Lookup: func(k string) (string, bool) { v, ok := vars[k]; return v, ok }}
	n, err := src.N8N(context.Background(), Sandbox)
	if err != nil {
		t.Fatal(err)
	}
	if n.BaseURL != "http://127.0.0.1:5678" || n.APIKey.Reveal() != apiKey {
		t.Fatalf("got %+v", n)
	}
	_, err = src.N8N(context.Background(), Production)
	var me *MissingError
	if !errors.As(err, &me) || strings.Join(me.Names, ",") != "N8N_PRODUCTION_URL,N8N_PRODUCTION_API_KEY" {
		t.Fatalf("production: %v", err)
	}
	vars["N8N_SANDBOX_EMAIL"] = "owner@example.test"
	if _, err := src.N8N(context.Background(), Sandbox); !errors.Is(err, ErrMissing) || !strings.Contains(err.Error(), "N8N_SANDBOX_PASSWORD") {
		t.Fatalf("email without password: %v", err)
	}
	delete(vars, "N8N_SANDBOX_EMAIL")
	for _, bad := range []string{"127.0.0.1:5678", "ftp://x", "http://user:pw@127.0.0.1", "http://127.0.0.1?x=1"} {
		vars["N8N_SANDBOX_URL"] = bad
		_, err := src.N8N(context.Background(), Sandbox)
		if !errors.Is(err, ErrInvalid) {
			t.Fatalf("URL %q: %v; want ErrInvalid", bad, err)
		}
		assertNoSecret(t, "error", err.Error())
	}
}

// TestVaultRevokesLoginToken pins that the AppRole login token is revoked
// (auth/token/revoke-self) after the read, whether the read succeeded or
// failed, and that a failed revocation is an error.
func TestVaultRevokesLoginToken(t *testing.T) {
	ctx := context.Background()
	conn := map[string]any{"base_url": "https://n8n.example", "api_key": apiKey}
	fv := &fakeVault{secrets: map[string]map[string]any{"sandbox/n8n": conn}}
	v, _ := newVault(t, fv)
	_, err := v.N8N(ctx, Sandbox)
	require.NoError(t, err)
	assert.EqualValues(t, 1, fv.revokes.Load())
	assert.True(t, fv.revoked.Load())

	missing := &fakeVault{}
	v, _ = newVault(t, missing)
	_, err = v.N8N(ctx, Sandbox)
	require.Error(t, err)
	assert.EqualValues(t, 1, missing.revokes.Load(), "revoked after a failed read too")

	failing := &fakeVault{secrets: map[string]map[string]any{"sandbox/n8n": conn}, failRevoke: true}
	v, _ = newVault(t, failing)
	_, err = v.N8N(ctx, Sandbox)
	var ve *VaultError
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, "revoke login token", ve.Op)
	assertNoSecret(t, "revoke error", err.Error())
}

// TestVaultEscapesMounts pins that mount segments are path-escaped and that
// a segment that would name another path is refused before any request.
func TestVaultEscapesMounts(t *testing.T) {
	ctx := context.Background()
	fv := &fakeVault{}
	v, _ := newVault(t, fv)
	v.KVMount = "team kv/a?b#c"
	v.AuthMount = "app role"
	_, err := v.N8N(ctx, Sandbox)
	require.Error(t, err) // the fake serves only secret/ and approle
	require.NotEmpty(t, fv.seen())
	assert.Equal(t, "/v1/auth/app%20role/login", fv.seen()[0])

	fv = &fakeVault{}
	v, _ = newVault(t, fv)
	v.KVMount = "team kv/a?b#c"
	v.AuthMount = ""
	_, err = v.N8N(ctx, Sandbox)
	require.Error(t, err)
	require.Len(t, fv.seen(), 3, "login, read, revoke")
	assert.Equal(t, "/v1/team%20kv/a%3Fb%23c/data/sandbox/n8n", fv.seen()[1])

	for _, bad := range []string{"..", "kv/../sys", "a//b", "."} {
		fv = &fakeVault{}
		v, _ = newVault(t, fv)
		v.KVMount = bad
		_, err = v.N8N(ctx, Sandbox)
		assert.ErrorIs(t, err, ErrInvalid, bad)
		assert.Empty(t, fv.seen(), "%q: a request was sent", bad)
	}
}

// TestVaultNeverFollowsRedirects: Vault's token travels in X-Vault-Token, a
// header Go forwards on a redirect, so a redirect is answered as an error
// and the other host sees nothing.
func TestVaultNeverFollowsRedirects(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
	}))
	t.Cleanup(other.Close)
	fv := &fakeVault{secrets: map[string]map[string]any{"sandbox/n8n": {"base_url": "https://n8n.example", "api_key": apiKey}}}
	v, _ := newVault(t, fv)
	redirecting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/data/") {
			http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
			return
		}
		fv.ServeHTTP(w, r)
	}))
	t.Cleanup(redirecting.Close)
	v.Addr = redirecting.URL
	_, err := v.N8N(context.Background(), Sandbox)
	var ve *VaultError
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, http.StatusTemporaryRedirect, ve.Status)
	assert.Zero(t, elsewhere.Load(), "the redirect was followed")
}
