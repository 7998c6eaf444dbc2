package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/candorkit/candor/internal/testproc"
	"github.com/candorkit/candor/tokenexchange"
	"github.com/candorkit/candor/tokenexchange/oidctest"
)

// rpcAnswer is one raw JSON-RPC exchange with the agent.
type rpcAnswer struct {
	Status int
	Header http.Header
	Body   []byte
}

// rpc posts one JSON-RPC request, in A2A 1.0 (the A2A-Version header) or
// 0.3, with token as the bearer ("" sends no Authorization header).
func rpc(t *testing.T, endpoint, token, version, body string) rpcAnswer {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, endpoint, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	if version != "" {
		req.Header.Set("A2A-Version", version)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	require.NoError(t, err)
	return rpcAnswer{Status: resp.StatusCode, Header: resp.Header, Body: raw}
}

// The requests a caller can send first: a question in both wire versions,
// and a read of a task by id (a guessed one: the answer must not say
// whether it exists).
var firstRequests = []struct{ name, version, body string }{
	{"0.3 message/send", "", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m-1","role":"user","parts":[{"kind":"text","text":"Peut-on promettre S10_1949 ?"}]}}}`},
	{"1.0 SendMessage", "1.0", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"Peut-on promettre S10_1949 ?"}]}}}`},
	{"0.3 tasks/get", "", `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"7f1c2a4e-0000-4000-8000-000000000000"}}`},
	{"1.0 GetTask", "1.0", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"7f1c2a4e-0000-4000-8000-000000000000"}}`},
}

// segments splits a compact JWS and decodes its header and claims.
func segments(t *testing.T, token string) (header, claims map[string]any, parts []string) {
	t.Helper()
	parts = strings.Split(token, ".")
	require.Len(t, parts, 3, "not a compact JWS")
	for i, into := range []*map[string]any{&header, &claims} {
		raw, err := base64.RawURLEncoding.DecodeString(parts[i])
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(raw, into))
	}
	return header, claims, parts
}

func b64JSON(t *testing.T, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	require.NoError(t, err)
	return base64.RawURLEncoding.EncodeToString(raw)
}

// forgeries derives, from a valid token of the embedded provider, tokens
// that only its key could have signed: the same claims signed by another
// key under the provider's key id, the claims edited under the original
// signature (another subject), and the claims unsigned (alg "none").
func forgeries(t *testing.T, valid string) map[string]string {
	t.Helper()
	header, claims, parts := segments(t, valid)
	kid, _ := header["kid"].(string)
	require.NotEmpty(t, kid, "the provider's tokens name their key")

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", kid))
	require.NoError(t, err)
	otherKey, err := jwt.Signed(signer).Claims(claims).Serialize()
	require.NoError(t, err)

	edited := map[string]any{}
	for k, v := range claims {
		edited[k] = v
	}
	edited["sub"] = "admin"
	return map[string]string{
		"signed by another key": otherKey,
		"claims edited":         parts[0] + "." + b64JSON(t, edited) + "." + parts[2],
		"alg none":              b64JSON(t, map[string]any{"alg": "none", "typ": "JWT"}) + "." + parts[1] + ".",
		"signature cut":         parts[0] + "." + parts[1] + "." + parts[2][:len(parts[2])-4] + "AAAA",
		"not a JWT":             "not-a-token",
	}
}

// refused checks the facade's refusal: HTTP 401 with a Bearer challenge.
func refused(t *testing.T, name string, a rpcAnswer) {
	t.Helper()
	assert.Equal(t, http.StatusUnauthorized, a.Status, "%s: %s", name, a.Body)
	assert.True(t, strings.HasPrefix(a.Header.Get("WWW-Authenticate"), "Bearer"),
		"%s: WWW-Authenticate %q", name, a.Header.Get("WWW-Authenticate"))
}

// untouched checks that nothing behind the facade was asked: no token
// exchange at the provider, no request to the catalog.
func untouched(t *testing.T, st *stack) {
	t.Helper()
	for _, r := range st.emb.OP.Requests() {
		assert.NotEqual(t, tokenexchange.GrantTypeTokenExchange, r.GrantType, "a refused caller's token was exchanged: %+v", r)
	}
	assert.Zero(t, st.emb.Catalog.Requests(), "the catalog was called for a refused caller")
}

// TestServeRefusesBadTokens: the served agent verifies every bearer token
// at the facade. A forged token, an expired one, one for another audience
// or issuer, and no token at all get HTTP 401 with WWW-Authenticate, in
// both wire versions, for a question and for a task read; no task is made,
// nothing is exchanged, the catalog is never called. The valid token of
// the same provider still gets its answer.
func TestServeRefusesBadTokens(t *testing.T) {
	var logs testproc.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	st, err := start(t.Context(), &options{serve: true, listen: "127.0.0.1:0"}, log)
	require.NoError(t, err)
	t.Cleanup(st.Close)
	ctx := t.Context()
	op := st.emb.OP

	// Tokens the embedded provider really issued, all for marie.
	require.NoError(t, op.AddClient(oidctest.Client{ID: "brief-web", Audiences: []string{agentClient}, AccessTokenLifetime: time.Nanosecond}))
	require.NoError(t, op.AddClient(oidctest.Client{ID: "other-web", Audiences: []string{"another-agent"}}))
	expired, err := op.UserAccessToken(ctx, demoUser, "brief-web") // expired when issued
	require.NoError(t, err)
	otherAudience, err := op.UserAccessToken(ctx, demoUser, "other-web")
	require.NoError(t, err)
	// Another provider, registering the same names, issues for another issuer.
	elsewhere := oidctest.New(t, oidctest.Options{})
	require.NoError(t, errors.Join(elsewhere.AddUser(oidctest.User{ID: demoUser}),
		elsewhere.AddClient(oidctest.Client{ID: webClient, Audiences: []string{agentClient}})))
	otherIssuer, err := elsewhere.UserAccessToken(ctx, demoUser, webClient)
	require.NoError(t, err)

	bad := forgeries(t, st.userToken)
	bad["expired"] = expired
	bad["another audience"] = otherAudience
	bad["another issuer"] = otherIssuer
	bad["no token"] = ""
	// Why the verifier refused each one (what the agent logs, never the
	// token itself).
	reasons := map[string]string{
		"signed by another key": "the signature does not verify",
		"claims edited":         "the signature does not verify",
		"alg none":              "is not accepted", // the signing algorithm

		"signature cut":    "the signature does not verify",
		"not a JWT":        "not a JWT",
		"expired":          "invalid token: expired at",
		"another audience": "is not in aud",
		"another issuer":   "key",
		"no token":         "", // refused before any verification
	}
	for name, tok := range bad {
		before := logs.Len()
		for _, r := range firstRequests {
			refused(t, name+", "+r.name, rpc(t, st.agent.Endpoint, tok, r.version, r.body))
		}
		logged := logs.String()[before:]
		if reason := reasons[name]; reason != "" {
			assert.Contains(t, logged, reason, name)
		} else {
			assert.NotContains(t, logged, "invalid token", name)
		}
		if tok != "" {
			assert.NotContains(t, logged, tok, "%s: the token was logged", name)
		}
		// The a2a-go 1.0 client gets no task either.
		ans, err := askAgent(ctx, st.agent.Base, tok, []string{"Peut-on promettre S10_1949 ?"})
		require.NoError(t, err, name)
		assert.Error(t, ans[0].Err, "%s: the 1.0 client got a task: %+v", name, ans[0])
		assert.Empty(t, ans[0].TaskID, name)
	}
	untouched(t, st)

	// The provider's own valid token still completes, in both versions.
	got, code := send03(t, st.agent.Endpoint, st.userToken, "Peut-on promettre S10_1949 ?")
	assert.Equal(t, 0, code)
	assert.Equal(t, outcome{"completed", "", yesText}, got)
	ans, err := askAgent(ctx, st.agent.Base, st.userToken, []string{"Peut-on promettre S10_1949 ?"})
	require.NoError(t, err)
	assert.Equal(t, outcome{"completed", "", yesText}, outcome{ans[0].State, ans[0].Failure, ans[0].Text}, "err %v", ans[0].Err)
}

// TestTokenlessTasksOptIn: -tokenless-tasks answers a message without a
// token with a task that fails "no identity", and reads nothing; a token
// that is present is still verified and a bad one still refused with 401.
func TestTokenlessTasksOptIn(t *testing.T) {
	st, err := start(t.Context(), &options{listen: "127.0.0.1:0", tokenless: true}, discard)
	require.NoError(t, err)
	t.Cleanup(st.Close)
	ctx := t.Context()

	noToken := outcome{"failed", "no_identity", "no identity: the request carried no bearer token"}
	got, code := send03(t, st.agent.Endpoint, "", "Peut-on promettre S10_1949 ?")
	assert.Equal(t, 0, code)
	assert.Equal(t, noToken, got)
	answers, err := askAgent(ctx, st.agent.Base, "", []string{"Peut-on promettre S10_1949 ?"})
	require.NoError(t, err)
	assert.NoError(t, answers[0].Err)
	assert.NotEmpty(t, answers[0].TaskID)
	assert.Equal(t, noToken, outcome{answers[0].State, answers[0].Failure, answers[0].Text})

	for name, tok := range forgeries(t, st.userToken) {
		for _, r := range firstRequests {
			refused(t, name+", "+r.name, rpc(t, st.agent.Endpoint, tok, r.version, r.body))
		}
	}
	untouched(t, st)
}

// TestServeTokenFile runs -serve -token-file as a conformance kit would:
// the file (an older one at the same path replaced) holds a fresh token of
// the demo user, mode 0600, that completes a question, while the same
// request without it or with it altered gets 401; the file is gone after
// the server stops, and the token was never printed.
func TestServeTokenFile(t *testing.T) {
	tokenFile := filepath.Join(t.TempDir(), "kit-token")
	require.NoError(t, os.WriteFile(tokenFile, []byte("stale token of an earlier run"), 0o644))

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	pr, pw := io.Pipe()
	var errOut testproc.Buffer
	exit := make(chan int, 1)
	go func() {
		code := run(ctx, []string{"-serve", "-token-file", tokenFile}, noEnv, pw, &errOut)
		pw.Close()
		exit <- code
	}()
	lines := bufio.NewScanner(pr)
	var endpoint, printed string
	var out bytes.Buffer
	for lines.Scan() {
		line := lines.Text()
		out.WriteString(line + "\n")
		if v, ok := strings.CutPrefix(line, "JSON-RPC:   "); ok {
			endpoint, _, _ = strings.Cut(v, " ")
		}
		if v, ok := strings.CutPrefix(line, "demo token: "); ok {
			printed, _, _ = strings.Cut(v, " ")
		}
		if line == "serving until SIGINT or SIGTERM" {
			break
		}
	}
	require.NotEmpty(t, endpoint, "no endpoint printed; stderr %s", errOut.String())
	assert.Equal(t, tokenFile, printed)
	info, err := os.Stat(tokenFile)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	token, err := os.ReadFile(tokenFile)
	require.NoError(t, err)
	_, claims, _ := segments(t, string(token))
	assert.Equal(t, demoUser, claims["sub"])

	got, code := send03(t, endpoint, string(token), "Peut-on promettre S10_1949 ?")
	assert.Equal(t, 0, code)
	assert.Equal(t, outcome{"completed", "", yesText}, got)
	for name, tok := range map[string]string{"no token": "", "signature cut": forgeries(t, string(token))["signature cut"]} {
		refused(t, name, rpc(t, endpoint, tok, "", firstRequests[0].body))
	}

	cancel()
	rest, _ := io.ReadAll(pr)
	out.Write(rest)
	assert.Equal(t, 0, <-exit, "stderr %s", errOut.String())
	assert.Contains(t, string(rest), "stopped")
	_, err = os.Stat(tokenFile)
	assert.ErrorIs(t, err, os.ErrNotExist, "the token file outlived the server")
	assert.NotContains(t, out.String()+errOut.String(), string(token), "the token was printed")
	// The temporary file the token was written through is gone too.
	left, err := os.ReadDir(filepath.Dir(tokenFile))
	require.NoError(t, err)
	assert.Empty(t, left)
}

// revokeAccessToken revokes token at the provider's RFC 7009 endpoint, as
// the agent's client (the provider accepts any client's revocation of an
// access token it issued).
func revokeAccessToken(t *testing.T, w interface {
	RevocationURL() string
}, agentSecret, token string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, w.RevocationURL(),
		strings.NewReader(url.Values{"token": {token}, "token_type_hint": {"access_token"}}.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(agentClient, agentSecret)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	require.Equal(t, http.StatusOK, resp.StatusCode, "revocation: %s", body)
}
