package tokenexchange_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/candorkit/candor/internal/oidctest"
	"github.com/candorkit/candor/tokenexchange"
)

func newKey(t *testing.T) []byte {
	k := make([]byte, tokenexchange.KeySize)
	_, _ = rand.Read(k)
	return k
}

func (f *fixture) store(t *testing.T, path string, key []byte, cfg *tokenexchange.Config) *tokenexchange.MandateStore {
	t.Helper()
	if cfg == nil {
		cfg = f.config()
	}
	s, err := tokenexchange.OpenMandateStore(context.Background(), path, tokenexchange.MandateOptions{
		Key: key, Agents: map[string]*tokenexchange.Config{agentClient: cfg}, Logger: f.logger,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func sealedOf(t *testing.T, path, user string) []byte {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	must(t, err)
	defer db.Close()
	var b []byte
	must(t, db.QueryRow(`SELECT sealed FROM candor_mandates WHERE user_id = ? AND agent = ?`, user, agentClient).Scan(&b))
	return b
}

func TestMandateGrantTokenRotation(t *testing.T) {
	f := newFixture(t, oidctest.Options{}, 0)
	path := filepath.Join(t.TempDir(), "mandates.db")
	key := newKey(t)
	s := f.store(t, path, key, nil)
	ctx := context.Background()
	offline := f.offlineToken()
	must(t, f.record(s.Grant(ctx, alice, agentClient, offline)))
	sealed0 := sealedOf(t, path, alice)
	if len(sealed0) != len(offline)+28 {
		t.Errorf("sealed size %d, want plaintext+28 (nonce+tag)", len(sealed0))
	}

	// The 06:00 run: no user session, only the mandate.
	tok, err := s.Token(ctx, alice, agentClient)
	if err := f.record(err); err != nil {
		t.Fatal(err)
	}
	f.trackToken(tok)
	if tok.Subject != alice || tok.AuthorizedParty != agentClient || !slices.Equal(tok.Audience, []string{mcpServer}) {
		t.Errorf("token sub=%q azp=%q aud=%q", tok.Subject, tok.AuthorizedParty, tok.Audience)
	}
	if _, err := f.op.VerifyAccessToken(ctx, tok.AccessToken, mcpServer); err != nil {
		t.Errorf("MCP server rejects the mandate token: %v", err)
	}
	reqs := f.op.Requests()
	if len(reqs) != 2 || reqs[0].GrantType != "refresh_token" || reqs[1].GrantType != tokenexchange.GrantTypeTokenExchange {
		t.Fatalf("requests = %+v, want refresh_token then token-exchange", reqs)
	}

	// The OP rotated the refresh token: the row now holds the new one.
	sealed1 := sealedOf(t, path, alice)
	if bytes.Equal(sealed0, sealed1) {
		t.Fatal("rotated refresh token was not persisted")
	}
	// A second run works only if the persisted token is the rotated one,
	// since the OP refuses the old one from now on.
	tok2, err := s.Token(ctx, alice, agentClient)
	if err := f.record(err); err != nil {
		t.Fatalf("second run with the persisted rotated token: %v", err)
	}
	f.trackToken(tok2)

	// The original refresh token is stale at the OP.
	other := f.store(t, filepath.Join(t.TempDir(), "other.db"), key, nil)
	must(t, other.Grant(ctx, alice, agentClient, offline))
	_, err = other.Token(ctx, alice, agentClient)
	f.record(err)
	var oe *tokenexchange.Error
	if !errors.Is(err, tokenexchange.ErrMandateRejected) || !errors.Is(err, tokenexchange.ErrNoMandate) ||
		!errors.As(err, &oe) || oe.Code() != "invalid_grant" || oe.Description() != "Stale token" {
		t.Errorf("old refresh token: err = %v, want ErrMandateRejected with invalid_grant Stale token", err)
	}

	// The database file never holds the plaintext.
	for _, p := range []string{path, path + "-wal"} {
		raw, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		if bytes.Contains(raw, []byte(offline)) {
			t.Errorf("%s holds the refresh token in clear", filepath.Base(p))
		}
	}
}

func TestMandateWithoutRotation(t *testing.T) {
	f := newFixture(t, oidctest.Options{DisableRotation: true}, 0)
	path := filepath.Join(t.TempDir(), "m.db")
	s := f.store(t, path, newKey(t), nil)
	ctx := context.Background()
	must(t, s.Grant(ctx, alice, agentClient, f.offlineToken()))
	before := sealedOf(t, path, alice)
	tok, err := s.Token(ctx, alice, agentClient)
	must(t, f.record(err))
	f.trackToken(tok)
	if !bytes.Equal(before, sealedOf(t, path, alice)) {
		t.Error("the row was rewritten although the refresh token did not change")
	}
}

func TestMandateRefusedBeforeNetwork(t *testing.T) {
	f := newFixture(t, oidctest.Options{}, 0)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	key := newKey(t)
	s := f.store(t, path, key, nil)
	must(t, s.Grant(ctx, alice, agentClient, f.offlineToken()))
	must(t, s.Grant(ctx, "bob", agentClient, f.offlineToken()))

	wrongKey := f.store(t, path, newKey(t), nil)

	// Move alice's sealed token into bob's row: the additional data no longer matches.
	db, err := sql.Open("sqlite", "file:"+path)
	must(t, err)
	defer db.Close()
	_, err = db.Exec(`UPDATE candor_mandates SET sealed = (SELECT sealed FROM candor_mandates WHERE user_id = 'alice') WHERE user_id = 'bob'`)
	must(t, err)

	must(t, s.Grant(ctx, "carol", agentClient, f.offlineToken()))
	must(t, f.record(s.Revoke(ctx, "carol", agentClient)))
	must(t, f.record(s.Revoke(ctx, "carol", agentClient))) // idempotent
	if b := sealedOf(t, path, "carol"); len(b) != 0 {
		t.Errorf("revoked row still holds %d sealed bytes", len(b))
	}

	cases := []struct {
		name  string
		store *tokenexchange.MandateStore
		user  string
		agent string
		kind  error
		noMan bool
	}{
		{"no mandate", s, "dave", agentClient, tokenexchange.ErrNoMandate, true},
		{"revoked", s, "carol", agentClient, tokenexchange.ErrMandateRevoked, true},
		{"wrong key", wrongKey, alice, agentClient, tokenexchange.ErrMandateUnreadable, true},
		{"row moved", s, "bob", agentClient, tokenexchange.ErrMandateUnreadable, true},
		{"unknown agent", s, alice, "other-agent", tokenexchange.ErrUnknownAgent, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tok, err := tc.store.Token(ctx, tc.user, tc.agent)
			f.record(err)
			var me *tokenexchange.MandateError
			if tok != nil || !errors.Is(err, tc.kind) || !errors.As(err, &me) || me.User != tc.user {
				t.Fatalf("got %v, %v; want %v", tok, err, tc.kind)
			}
			if errors.Is(err, tokenexchange.ErrNoMandate) != tc.noMan {
				t.Errorf("errors.Is(err, ErrNoMandate) = %v, want %v", !tc.noMan, tc.noMan)
			}
		})
	}
	if n := f.tokenRequests(); n != 0 {
		t.Errorf("%d requests reached the OP, want 0", n)
	}
	if err := s.Revoke(ctx, "nobody", agentClient); !errors.Is(err, tokenexchange.ErrNoMandate) {
		t.Errorf("revoking a mandate that never existed: %v", err)
	}
}

func TestMandateRejectedByProvider(t *testing.T) {
	f := newFixture(t, oidctest.Options{}, 0)
	ctx := context.Background()
	s := f.store(t, filepath.Join(t.TempDir(), "m.db"), newKey(t), nil)
	must(t, s.Grant(ctx, alice, agentClient, f.offlineToken()))
	must(t, f.op.RevokeUserSessions(ctx, alice, agentClient))
	tok, err := s.Token(ctx, alice, agentClient)
	f.record(err)
	if tok != nil || !errors.Is(err, tokenexchange.ErrMandateRejected) {
		t.Fatalf("got %v, %v; want ErrMandateRejected", tok, err)
	}
	if n := f.tokenRequests(); n != 1 {
		t.Errorf("%d requests, want 1 (the refused refresh; no exchange)", n)
	}
}

// A revocation landing between the refresh and the write of the rotated
// token (another process) must not produce a token.
func TestMandateRotationNotPersisted(t *testing.T) {
	f := newFixture(t, oidctest.Options{}, 0)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	key := newKey(t)
	otherProcess := f.store(t, path, key, nil)
	cfg := f.config()
	cfg.HTTPClient = &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
		resp, err := http.DefaultTransport.RoundTrip(r)
		if err == nil {
			must(t, otherProcess.Revoke(context.Background(), alice, agentClient))
		}
		return resp, err
	})}
	s := f.store(t, path, key, cfg)
	must(t, s.Grant(ctx, alice, agentClient, f.offlineToken()))
	tok, err := s.Token(ctx, alice, agentClient)
	f.record(err)
	if tok != nil || !errors.Is(err, tokenexchange.ErrRotationNotPersisted) {
		t.Fatalf("got %v, %v; want ErrRotationNotPersisted and no token", tok, err)
	}
	if n := f.tokenRequests(); n != 1 {
		t.Errorf("%d requests, want 1: no exchange after a lost rotation", n)
	}
}

func TestMandateStoreConfig(t *testing.T) {
	ctx := context.Background()
	if _, err := tokenexchange.OpenMandateStore(ctx, filepath.Join(t.TempDir(), "m.db"), tokenexchange.MandateOptions{Key: []byte("short")}); !errors.Is(err, tokenexchange.ErrConfig) {
		t.Errorf("short key: %v", err)
	}
	k := newKey(t)
	for _, enc := range []string{
		"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		"ASNFZ4mrze8BI0VniavN7wEjRWeJq83vASNFZ4mrze8=",
	} {
		if got, err := tokenexchange.ParseKey(enc); err != nil || len(got) != tokenexchange.KeySize {
			t.Errorf("ParseKey(%q) = %d bytes, %v", enc, len(got), err)
		}
	}
	if _, err := tokenexchange.ParseKey("too-short"); !errors.Is(err, tokenexchange.ErrConfig) {
		t.Errorf("ParseKey(short) = %v", err)
	}
	s, err := tokenexchange.OpenMandateStore(ctx, filepath.Join(t.TempDir(), "m.db"), tokenexchange.MandateOptions{Key: k})
	must(t, err)
	defer s.Close()
	if err := s.Grant(ctx, alice, agentClient, ""); !errors.Is(err, tokenexchange.ErrNoMandate) {
		t.Errorf("granting an empty refresh token: %v", err)
	}
}

// MandateOptions holds the mandate key: no rendering of it may show the key
// (in any of the ways fmt prints a []byte) or an agent's client secret.
func TestMandateOptionsRedacted(t *testing.T) {
	key := newKey(t)
	const clientSecret = "agent-client-secret-value"
	opts := tokenexchange.MandateOptions{Key: key, Agents: map[string]*tokenexchange.Config{
		"agent": {TokenURL: "https://idp.example.com/token", ClientID: "agent", ClientSecret: clientSecret},
	}}
	forbidden := []string{
		fmt.Sprint(key), fmt.Sprintf("%x", key), fmt.Sprintf("%X", key), fmt.Sprintf("% x", key), string(key),
		fmt.Sprintf("%q", key), base64.StdEncoding.EncodeToString(key), fmt.Sprintf("%#v", key), clientSecret,
	}
	var logs bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logs, nil))
	var out []string
	for _, v := range []any{opts, &opts} {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "% x", "%d"} {
			out = append(out, fmt.Sprintf(verb, v))
		}
		logger.Info("opts", "opts", v)
	}
	out = append(out, logs.String())
	for _, s := range out {
		for _, bad := range forbidden {
			if strings.Contains(s, bad) {
				t.Fatalf("a rendering of MandateOptions shows a secret (%.12q…): %q", bad, s)
			}
		}
	}
	if s := fmt.Sprint(opts); !strings.Contains(s, `"agent"`) || !strings.Contains(s, "[REDACTED]") {
		t.Errorf("String() = %q, want the agent names and a redaction marker", s)
	}
}

// The provider rotated the refresh token, then the caller's context ended
// before the new one was written: the old token is already stale at the
// provider, so dropping the write would kill the mandate. The rotated token
// is persisted anyway, no token is returned, and the next run works.
func TestMandateRotationPersistedAfterCancel(t *testing.T) {
	f := newFixture(t, oidctest.Options{}, 0)
	path := filepath.Join(t.TempDir(), "m.db")
	key := newKey(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := f.config()
	cfg.HTTPClient = &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
		resp, err := http.DefaultTransport.RoundTrip(r)
		if err == nil {
			cancel() // the refresh answer is in; the caller gives up now
		}
		return resp, err
	})}
	s := f.store(t, path, key, cfg)
	must(t, s.Grant(context.Background(), alice, agentClient, f.offlineToken()))
	before := sealedOf(t, path, alice)
	tok, err := s.Token(ctx, alice, agentClient)
	f.record(err)
	if tok != nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, %v; want no token and context.Canceled", tok, err)
	}
	if errors.Is(err, tokenexchange.ErrRotationNotPersisted) || bytes.Equal(before, sealedOf(t, path, alice)) {
		t.Fatalf("the rotated refresh token was not persisted: %v", err)
	}
	tok, err = s.Token(context.Background(), alice, agentClient)
	if err := f.record(err); err != nil {
		t.Fatalf("next run with the persisted rotated token: %v", err)
	}
	f.trackToken(tok)
}

// With a RevocationURL, Revoke erases the mandate here and revokes the
// current (rotated) refresh token at the provider, in one RFC 7009 POST.
func TestMandateRevokeAtProvider(t *testing.T) {
	f := newFixture(t, oidctest.Options{}, 0)
	ctx := context.Background()
	cfg := f.config()
	cfg.RevocationURL = f.op.RevocationURL()
	s := f.store(t, filepath.Join(t.TempDir(), "m.db"), newKey(t), cfg)
	must(t, s.Grant(ctx, alice, agentClient, f.offlineToken()))
	tok, err := s.Token(ctx, alice, agentClient) // rotates: the store now holds a new refresh token
	must(t, f.record(err))
	f.trackToken(tok)
	if n := f.op.ActiveRefreshTokens(alice, agentClient); n != 1 {
		t.Fatalf("%d active refresh tokens at the provider before Revoke, want 1", n)
	}

	must(t, f.record(s.Revoke(ctx, alice, agentClient)))
	if n := f.op.ActiveRefreshTokens(alice, agentClient); n != 0 {
		t.Errorf("%d refresh tokens still active at the provider after Revoke", n)
	}
	revs := f.op.RevocationRequests()
	want := []string{"token", "token_type_hint"}
	if len(revs) != 1 || !slices.Equal(revs[0].Params, want) || !revs[0].BasicAuth || revs[0].ClientID != agentClient || revs[0].Status != http.StatusOK {
		t.Fatalf("revocation requests = %+v, want one Basic-authenticated POST with %q", revs, want)
	}

	before := f.tokenRequests()
	if tok, err := s.Token(ctx, alice, agentClient); tok != nil || !errors.Is(f.record(err), tokenexchange.ErrMandateRevoked) {
		t.Errorf("Token after Revoke: %v, %v", tok, err)
	}
	must(t, f.record(s.Revoke(ctx, alice, agentClient))) // already revoked: nothing to send
	if n := f.tokenRequests() - before; n != 0 || len(f.op.RevocationRequests()) != 1 {
		t.Errorf("after Revoke: %d token requests, %d revocation requests; want 0 and 1", n, len(f.op.RevocationRequests()))
	}
}

// A revocation the provider refuses (or that cannot be read to be sent)
// leaves the mandate revoked here; the error says the provider was not told.
func TestMandateRevokeAtProviderFails(t *testing.T) {
	f := newFixture(t, oidctest.Options{}, 0)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	key := newKey(t)
	wrong := "wrong-secret-for-revocation"
	f.track(wrong)
	cfg := f.config()
	cfg.ClientSecret, cfg.RevocationURL = wrong, f.op.RevocationURL()
	s := f.store(t, path, key, cfg)
	must(t, s.Grant(ctx, alice, agentClient, f.offlineToken()))

	err := f.record(s.Revoke(ctx, alice, agentClient))
	var oe *tokenexchange.Error
	if !errors.Is(err, tokenexchange.ErrProviderNotRevoked) || errors.Is(err, tokenexchange.ErrNoMandate) ||
		!errors.As(err, &oe) || oe.Op != "revoke" || oe.StatusCode != http.StatusUnauthorized || oe.Code() != "invalid_client" {
		t.Fatalf("Revoke refused by the provider: %v; want ErrProviderNotRevoked wrapping 401 invalid_client", err)
	}
	if tok, err := s.Token(ctx, alice, agentClient); tok != nil || !errors.Is(f.record(err), tokenexchange.ErrMandateRevoked) {
		t.Errorf("Token after a half-failed Revoke: %v, %v; want ErrMandateRevoked", tok, err)
	}
	if b := sealedOf(t, path, alice); len(b) != 0 {
		t.Errorf("the refresh token is still stored (%d bytes)", len(b))
	}
	if n := f.op.ActiveRefreshTokens(alice, agentClient); n != 1 || f.tokenRequests() != 0 {
		t.Errorf("provider: %d active refresh tokens, %d token requests; want 1 and 0", n, f.tokenRequests())
	}

	// A key that cannot open the mandate: revoked here, nothing sent.
	good := f.config()
	good.RevocationURL = f.op.RevocationURL()
	must(t, s.Grant(ctx, "bob", agentClient, f.offlineToken()))
	wrongKey := f.store(t, path, newKey(t), good)
	err = f.record(wrongKey.Revoke(ctx, "bob", agentClient))
	if !errors.Is(err, tokenexchange.ErrProviderNotRevoked) || len(f.op.RevocationRequests()) != 1 {
		t.Fatalf("Revoke with a wrong key: %v, %d revocation requests; want ErrProviderNotRevoked and no new request", err, len(f.op.RevocationRequests()))
	}
	if _, err := s.Token(ctx, "bob", agentClient); !errors.Is(f.record(err), tokenexchange.ErrMandateRevoked) {
		t.Errorf("Token after Revoke with a wrong key: %v", err)
	}
}

// Without a RevocationURL nothing is sent to the provider.
func TestMandateRevokeLocalOnly(t *testing.T) {
	f := newFixture(t, oidctest.Options{}, 0)
	ctx := context.Background()
	s := f.store(t, filepath.Join(t.TempDir(), "m.db"), newKey(t), nil)
	must(t, s.Grant(ctx, alice, agentClient, f.offlineToken()))
	must(t, f.record(s.Revoke(ctx, alice, agentClient)))
	if n := len(f.op.RevocationRequests()); n != 0 || f.tokenRequests() != 0 || f.op.ActiveRefreshTokens(alice, agentClient) != 1 {
		t.Errorf("local-only Revoke reached the provider (%d revocations, %d token requests)", n, f.tokenRequests())
	}
}
