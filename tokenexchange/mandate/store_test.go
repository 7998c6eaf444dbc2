package mandate_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/candorkit/candor/tokenexchange"
	"github.com/candorkit/candor/tokenexchange/mandate"
	"github.com/candorkit/candor/tokenexchange/oidctest"
)

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestGrantTokenRotation(t *testing.T) {
	f := newFixture(t, oidctest.Options{})
	path := filepath.Join(t.TempDir(), "mandates.db")
	key := newKey(t)
	s := f.store(t, path, key, nil)
	ctx := context.Background()
	offline := f.offlineToken(alice)
	require.NoError(t, f.record(s.Grant(ctx, alice, agentClient, offline)))
	sealed0 := sealedOf(t, s, alice)
	assert.Len(t, sealed0, len(offline)+28, "sealed size: plaintext+28 (nonce+tag)")

	// The 06:00 run: no user session, only the mandate.
	tok, err := s.Token(ctx, alice, agentClient)
	require.NoError(t, f.record(err))
	f.trackToken(tok)
	assert.Equal(t, alice, tok.Subject)
	assert.Equal(t, agentClient, tok.AuthorizedParty)
	assert.Equal(t, []string{mcpServer}, tok.Audience)
	_, err = f.op.VerifyAccessToken(ctx, tok.AccessToken, mcpServer)
	assert.NoError(t, err, "the MCP server rejects the mandate token")
	reqs := f.op.Requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, "refresh_token", reqs[0].GrantType)
	assert.Equal(t, tokenexchange.GrantTypeTokenExchange, reqs[1].GrantType)

	// The OP rotated the refresh token: the row now holds the new one.
	sealed1 := sealedOf(t, s, alice)
	require.NotEqual(t, sealed0, sealed1, "rotated refresh token was not persisted")
	// A second run works only if the persisted token is the rotated one,
	// since the OP refuses the old one from now on.
	tok2, err := s.Token(ctx, alice, agentClient)
	require.NoError(t, f.record(err), "second run with the persisted rotated token")
	f.trackToken(tok2)

	// The original refresh token is stale at the OP.
	other := f.store(t, filepath.Join(t.TempDir(), "other.db"), key, nil)
	require.NoError(t, other.Grant(ctx, alice, agentClient, offline))
	_, err = other.Token(ctx, alice, agentClient)
	f.record(err)
	assert.ErrorIs(t, err, mandate.ErrRejected)
	assert.ErrorIs(t, err, mandate.ErrNoMandate)
	assert.Equal(t, mandate.KindRejected, mandate.Classify(err))
	var se *tokenexchange.StatusError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "invalid_grant", se.ErrorCode)
	assert.Equal(t, "Stale token", se.ErrorDescription)

	// The database file never holds the plaintext.
	for _, p := range []string{path, path + "-wal"} {
		raw, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		assert.False(t, bytes.Contains(raw, []byte(offline)), "%s holds the refresh token in clear", filepath.Base(p))
	}
}

func TestWithoutRotation(t *testing.T) {
	f := newFixture(t, oidctest.Options{DisableRotation: true})
	s := f.store(t, filepath.Join(t.TempDir(), "m.db"), newKey(t), nil)
	ctx := context.Background()
	require.NoError(t, s.Grant(ctx, alice, agentClient, f.offlineToken(alice)))
	before := sealedOf(t, s, alice)
	tok, err := s.Token(ctx, alice, agentClient)
	require.NoError(t, f.record(err))
	f.trackToken(tok)
	assert.Equal(t, before, sealedOf(t, s, alice), "the row was rewritten although the refresh token did not change")
}

func TestRefusedBeforeNetwork(t *testing.T) {
	f := newFixture(t, oidctest.Options{})
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	s := f.store(t, path, newKey(t), nil)
	require.NoError(t, s.Grant(ctx, alice, agentClient, f.offlineToken(alice)))
	require.NoError(t, s.Grant(ctx, "bob", agentClient, f.offlineToken("bob")))

	wrongKey := f.store(t, path, newKey(t), nil)

	// Move alice's sealed token into bob's row: the additional data no longer matches.
	_, err := s.DB().Exec(`UPDATE candor_mandates SET sealed = (SELECT sealed FROM candor_mandates WHERE user_id = 'alice') WHERE user_id = 'bob'`)
	require.NoError(t, err)

	require.NoError(t, s.Grant(ctx, "carol", agentClient, f.offlineToken("carol")))
	require.NoError(t, f.record(s.Revoke(ctx, "carol", agentClient)))
	require.NoError(t, f.record(s.Revoke(ctx, "carol", agentClient)), "revoking twice")
	assert.Empty(t, sealedOf(t, s, "carol"), "a revoked row still holds sealed bytes")

	cases := []struct {
		name  string
		store *mandate.Store
		user  string
		agent string
		kind  error
		class mandate.Kind
		noMan bool
	}{
		{"no mandate", s, "dave", agentClient, mandate.ErrNoMandate, mandate.KindNoMandate, true},
		{"revoked", s, "carol", agentClient, mandate.ErrRevoked, mandate.KindRevoked, true},
		{"wrong key", wrongKey, alice, agentClient, mandate.ErrUnreadable, mandate.KindUnreadable, true},
		{"row moved", s, "bob", agentClient, mandate.ErrUnreadable, mandate.KindUnreadable, true},
		{"unknown agent", s, alice, "other-agent", mandate.ErrUnknownAgent, mandate.KindUnknownAgent, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tok, err := tc.store.Token(ctx, tc.user, tc.agent)
			f.record(err)
			assert.Nil(t, tok)
			require.ErrorIs(t, err, tc.kind)
			var me *mandate.Error
			require.ErrorAs(t, err, &me)
			assert.Equal(t, tc.user, me.User)
			assert.Equal(t, tc.noMan, errors.Is(err, mandate.ErrNoMandate))
			assert.Equal(t, tc.class, mandate.Classify(err))
		})
	}
	assert.Zero(t, f.op.TokenRequests(), "requests reached the OP")
	assert.ErrorIs(t, s.Revoke(ctx, "nobody", agentClient), mandate.ErrNoMandate)
}

func TestRejectedByProvider(t *testing.T) {
	f := newFixture(t, oidctest.Options{})
	ctx := context.Background()
	s := f.store(t, filepath.Join(t.TempDir(), "m.db"), newKey(t), nil)
	require.NoError(t, s.Grant(ctx, alice, agentClient, f.offlineToken(alice)))
	require.NoError(t, f.op.RevokeUserSessions(ctx, alice, agentClient))
	tok, err := s.Token(ctx, alice, agentClient)
	f.record(err)
	assert.Nil(t, tok)
	assert.ErrorIs(t, err, mandate.ErrRejected)
	assert.EqualValues(t, 1, f.op.TokenRequests(), "the refused refresh, and no exchange")
}

// A short client secret that is also part of the OAuth error code:
// redaction must not turn invalid_grant into invalid_[REDACTED], and the
// store still reports the mandate rejected (classification reads the code
// as received).
func TestRejectedWithShortSecret(t *testing.T) {
	f := newFixture(t, oidctest.Options{})
	ctx := context.Background()
	require.NoError(t, f.op.AddClient(oidctest.Client{ID: "shorty", Secret: "grant", TokenExchange: true, Audiences: []string{mcpServer}}))
	cfg := &tokenexchange.Config{TokenURL: f.op.TokenURL(), ClientID: "shorty", ClientSecret: "grant"}
	s, err := mandate.Open(ctx, filepath.Join(t.TempDir(), "m.db"), mandate.WithKey(newKey(t)), mandate.WithAgent("shorty", cfg))
	require.NoError(t, err)
	defer s.Close()
	rt, err := f.op.OfflineToken(ctx, alice, "shorty")
	require.NoError(t, err)
	f.track(rt)
	require.NoError(t, s.Grant(ctx, alice, "shorty", rt))
	require.NoError(t, f.op.RevokeUserSessions(ctx, alice, "shorty"))

	_, err = s.Token(ctx, alice, "shorty")
	f.record(err)
	require.ErrorIs(t, err, mandate.ErrRejected)
	assert.Equal(t, mandate.KindRejected, mandate.Classify(err))
	var se *tokenexchange.StatusError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "invalid_grant", se.ErrorCode)
	assert.Contains(t, err.Error(), "invalid_grant")
	assert.NotContains(t, err.Error(), "invalid_[REDACTED]")
}

// The provider rotated the refresh token and then sent an answer the client
// must refuse (no token_type). The rotated token is persisted before the
// answer is judged: the next Token presents it and succeeds, where
// presenting the old one would be refused as stale and kill the mandate.
func TestRotatedTokenPersistedBeforeAnswerJudged(t *testing.T) {
	f := newFixture(t, oidctest.Options{})
	ctx := context.Background()
	s := f.store(t, filepath.Join(t.TempDir(), "m.db"), newKey(t), nil)
	require.NoError(t, s.Grant(ctx, alice, agentClient, f.offlineToken(alice)))
	before := sealedOf(t, s, alice)

	f.op.EditRefreshAnswers(func(answer map[string]any) { delete(answer, "token_type") })
	tok, err := s.Token(ctx, alice, agentClient)
	f.record(err)
	require.Nil(t, tok)
	require.ErrorIs(t, err, tokenexchange.ErrInvalidResponse)
	assert.Equal(t, mandate.Kind(tokenexchange.KindInvalidResponse), mandate.Classify(err))
	assert.NotEqual(t, before, sealedOf(t, s, alice), "the rotated refresh token was not persisted")
	assert.Equal(t, 1, f.op.ActiveRefreshTokens(alice, agentClient))

	f.op.EditRefreshAnswers(nil)
	tok, err = s.Token(ctx, alice, agentClient)
	require.NoError(t, f.record(err), "the next run must present the rotated refresh token")
	f.trackToken(tok)
	reqs := f.op.Requests()
	require.Len(t, reqs, 3, "refresh (refused answer), refresh, exchange")
	assert.Equal(t, http.StatusOK, reqs[1].Status)
}

// A revocation landing between the refresh and the write of the rotated
// token (another process) must not produce a token.
func TestRotationNotPersisted(t *testing.T) {
	f := newFixture(t, oidctest.Options{})
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	key := newKey(t)
	otherProcess := f.store(t, path, key, nil)
	cfg := f.config()
	cfg.HTTPClient = &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
		resp, err := http.DefaultTransport.RoundTrip(r)
		if err == nil {
			if err := otherProcess.Revoke(context.Background(), alice, agentClient); err != nil {
				t.Errorf("revoking from the other process: %v", err)
			}
		}
		return resp, err
	})}
	s := f.store(t, path, key, cfg)
	require.NoError(t, s.Grant(ctx, alice, agentClient, f.offlineToken(alice)))
	tok, err := s.Token(ctx, alice, agentClient)
	f.record(err)
	assert.Nil(t, tok)
	require.ErrorIs(t, err, tokenexchange.ErrRotationNotPersisted)
	assert.Equal(t, mandate.KindRotationNotPersisted, mandate.Classify(err))
	assert.EqualValues(t, 1, f.op.TokenRequests(), "no exchange after a lost rotation")
}

// The provider rotated the refresh token, then the caller's context ended
// before the new one was written: the old token is already stale at the
// provider, so dropping the write would kill the mandate. The rotated token
// is persisted anyway, no token is returned, and the next run works.
func TestRotationPersistedAfterCancel(t *testing.T) {
	f := newFixture(t, oidctest.Options{})
	path := filepath.Join(t.TempDir(), "m.db")
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
	s := f.store(t, path, newKey(t), cfg)
	require.NoError(t, s.Grant(context.Background(), alice, agentClient, f.offlineToken(alice)))
	before := sealedOf(t, s, alice)
	tok, err := s.Token(ctx, alice, agentClient)
	f.record(err)
	assert.Nil(t, tok)
	require.ErrorIs(t, err, context.Canceled)
	assert.NotErrorIs(t, err, tokenexchange.ErrRotationNotPersisted)
	assert.NotEqual(t, before, sealedOf(t, s, alice), "the rotated refresh token was not persisted")
	tok, err = s.Token(context.Background(), alice, agentClient)
	require.NoError(t, f.record(err), "next run with the persisted rotated token")
	f.trackToken(tok)
}

// With a RevocationURL, Revoke erases the mandate here and revokes the
// current (rotated) refresh token at the provider, in one RFC 7009 POST.
func TestRevokeAtProvider(t *testing.T) {
	f := newFixture(t, oidctest.Options{})
	ctx := context.Background()
	cfg := f.config()
	cfg.RevocationURL = f.op.RevocationURL()
	s := f.store(t, filepath.Join(t.TempDir(), "m.db"), newKey(t), cfg)
	require.NoError(t, s.Grant(ctx, alice, agentClient, f.offlineToken(alice)))
	tok, err := s.Token(ctx, alice, agentClient) // rotates: the store now holds a new refresh token
	require.NoError(t, f.record(err))
	f.trackToken(tok)
	require.Equal(t, 1, f.op.ActiveRefreshTokens(alice, agentClient))

	require.NoError(t, f.record(s.Revoke(ctx, alice, agentClient)))
	assert.Zero(t, f.op.ActiveRefreshTokens(alice, agentClient), "refresh tokens still active at the provider")
	revs := f.op.RevocationRequests()
	require.Len(t, revs, 1)
	assert.Equal(t, []string{"token", "token_type_hint"}, revs[0].Params)
	assert.True(t, revs[0].BasicAuth)
	assert.Equal(t, agentClient, revs[0].ClientID)
	assert.Equal(t, http.StatusOK, revs[0].Status)

	before := f.op.TokenRequests()
	tok, err = s.Token(ctx, alice, agentClient)
	assert.Nil(t, tok)
	assert.ErrorIs(t, f.record(err), mandate.ErrRevoked)
	require.NoError(t, f.record(s.Revoke(ctx, alice, agentClient)), "already revoked: nothing to send")
	assert.Equal(t, before, f.op.TokenRequests())
	assert.Len(t, f.op.RevocationRequests(), 1)
}

// A revocation the provider refuses (or that cannot be read to be sent)
// leaves the mandate revoked here; the error says the provider was not told.
func TestRevokeAtProviderFails(t *testing.T) {
	f := newFixture(t, oidctest.Options{})
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	key := newKey(t)
	wrong := "wrong-secret-for-revocation"
	f.track(wrong)
	cfg := f.config()
	cfg.ClientSecret, cfg.RevocationURL = wrong, f.op.RevocationURL()
	s := f.store(t, path, key, cfg)
	require.NoError(t, s.Grant(ctx, alice, agentClient, f.offlineToken(alice)))

	err := f.record(s.Revoke(ctx, alice, agentClient))
	require.ErrorIs(t, err, mandate.ErrProviderNotRevoked)
	assert.NotErrorIs(t, err, mandate.ErrNoMandate)
	assert.Equal(t, mandate.KindProviderNotRevoked, mandate.Classify(err))
	var se *tokenexchange.StatusError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "revoke", se.Op)
	assert.Equal(t, http.StatusUnauthorized, se.StatusCode)
	assert.Equal(t, "invalid_client", se.ErrorCode)

	tok, err := s.Token(ctx, alice, agentClient)
	assert.Nil(t, tok)
	assert.ErrorIs(t, f.record(err), mandate.ErrRevoked)
	assert.Empty(t, sealedOf(t, s, alice), "the refresh token is still stored")
	assert.Equal(t, 1, f.op.ActiveRefreshTokens(alice, agentClient))
	assert.Zero(t, f.op.TokenRequests())

	// A key that cannot open the mandate: revoked here, nothing sent.
	good := f.config()
	good.RevocationURL = f.op.RevocationURL()
	require.NoError(t, s.Grant(ctx, "bob", agentClient, f.offlineToken("bob")))
	wrongKey := f.store(t, path, newKey(t), good)
	err = f.record(wrongKey.Revoke(ctx, "bob", agentClient))
	require.ErrorIs(t, err, mandate.ErrProviderNotRevoked)
	assert.Len(t, f.op.RevocationRequests(), 1, "no new revocation request")
	_, err = s.Token(ctx, "bob", agentClient)
	assert.ErrorIs(t, f.record(err), mandate.ErrRevoked)
}

// Without a RevocationURL nothing is sent to the provider.
func TestRevokeLocalOnly(t *testing.T) {
	f := newFixture(t, oidctest.Options{})
	ctx := context.Background()
	s := f.store(t, filepath.Join(t.TempDir(), "m.db"), newKey(t), nil)
	require.NoError(t, s.Grant(ctx, alice, agentClient, f.offlineToken(alice)))
	require.NoError(t, f.record(s.Revoke(ctx, alice, agentClient)))
	assert.Empty(t, f.op.RevocationRequests())
	assert.Zero(t, f.op.TokenRequests())
	assert.Equal(t, 1, f.op.ActiveRefreshTokens(alice, agentClient))
}

func TestOpenOptions(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	good := &tokenexchange.Config{TokenURL: "https://idp.example.com/token", ClientID: "agent", ClientSecret: "agent-secret-value"}
	cases := map[string][]mandate.Option{
		"no key":         nil,
		"short key":      {mandate.WithKey([]byte("short"))},
		"nil option":     {mandate.WithKey(newKey(t)), nil},
		"agent twice":    {mandate.WithKey(newKey(t)), mandate.WithAgent("a", good), mandate.WithAgent("a", good)},
		"empty agent":    {mandate.WithKey(newKey(t)), mandate.WithAgent("", good)},
		"nil config":     {mandate.WithKey(newKey(t)), mandate.WithAgent("a", nil)},
		"invalid config": {mandate.WithKey(newKey(t)), mandate.WithAgent("a", &tokenexchange.Config{TokenURL: "http://idp.example.com/token", ClientID: "a", ClientSecret: "b"})},
	}
	for name, opts := range cases {
		t.Run(name, func(t *testing.T) {
			s, err := mandate.Open(ctx, filepath.Join(dir, "m.db"), opts...)
			assert.Nil(t, s)
			assert.ErrorIs(t, err, tokenexchange.ErrConfig)
			assert.Equal(t, mandate.KindConfig, mandate.Classify(err))
		})
	}
	_, err := mandate.Open(ctx, "", mandate.WithKey(newKey(t)))
	assert.ErrorIs(t, err, tokenexchange.ErrConfig, "empty path")
	_, err = mandate.OpenDB(ctx, nil, mandate.WithKey(newKey(t)))
	assert.ErrorIs(t, err, tokenexchange.ErrConfig, "nil db")

	for _, enc := range []string{
		"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		"ASNFZ4mrze8BI0VniavN7wEjRWeJq83vASNFZ4mrze8=",
		"ASNFZ4mrze8BI0VniavN7wEjRWeJq83vASNFZ4mrze8",
	} {
		got, err := mandate.ParseKey(enc)
		assert.NoError(t, err, enc)
		assert.Len(t, got, mandate.KeySize, enc)
	}
	_, err = mandate.ParseKey("too-short")
	assert.ErrorIs(t, err, tokenexchange.ErrConfig)

	s, err := mandate.Open(ctx, filepath.Join(dir, "ok.db"), mandate.WithKey(newKey(t)))
	require.NoError(t, err)
	defer s.Close()
	assert.ErrorIs(t, s.Grant(ctx, alice, agentClient, ""), mandate.ErrNoMandate, "granting an empty refresh token")
	assert.ErrorIs(t, s.Grant(ctx, "", agentClient, "rt"), tokenexchange.ErrConfig, "granting for no user")
}

// The Store holds the key and the agents' client secrets: no rendering of
// it (in any of the ways fmt prints a []byte) and no log line shows them.
func TestStoreRedacted(t *testing.T) {
	key := newKey(t)
	const clientSecret = "agent-client-secret-value"
	var logs bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logs, nil))
	text := slog.New(slog.NewTextHandler(&logs, nil))
	s, err := mandate.Open(context.Background(), filepath.Join(t.TempDir(), "m.db"), mandate.WithKey(key),
		mandate.WithAgent("agent", &tokenexchange.Config{TokenURL: "https://idp.example.com/token", ClientID: "agent", ClientSecret: clientSecret}),
		mandate.WithLogger(logger))
	require.NoError(t, err)
	defer s.Close()
	forbidden := []string{
		fmt.Sprint(key), fmt.Sprintf("%x", key), fmt.Sprintf("%X", key), fmt.Sprintf("% x", key), string(key),
		fmt.Sprintf("%q", key), base64.StdEncoding.EncodeToString(key), fmt.Sprintf("%#v", key), clientSecret,
		fmt.Sprintf("%x", clientSecret),
	}
	var out []string
	for _, v := range []any{s, []*mandate.Store{s}, map[string]any{"s": s}} {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "% x", "%d"} {
			out = append(out, fmt.Sprintf(verb, v))
		}
		logger.Info("store", "store", v)
		text.Info("store", "store", v)
	}
	out = append(out, logs.String())
	for _, o := range out {
		for _, bad := range forbidden {
			require.NotContains(t, o, bad, "a rendering of the Store shows a secret")
		}
	}
}
