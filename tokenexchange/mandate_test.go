package tokenexchange_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
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
