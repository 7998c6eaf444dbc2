package tokenexchange_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"

	"github.com/candorkit/candor/tokenexchange"
	"github.com/candorkit/candor/tokenexchange/oidctest"
)

// A provider that echoes the request (form body and Authorization header)
// into its error answer must not get any form of a secret into the error:
// not the form-encoded client secret of client_secret_post, not the Basic
// pair of client_secret_basic, not the subject token.
func TestRedactsEncodedSecrets(t *testing.T) {
	const clientSecret = "p/ss+w&rd"
	const subject = "subject/token+value&more"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<16))
		echo := fmt.Sprintf("got %s with Authorization: %s", body, r.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Echo", r.Header.Get("Authorization")+" "+string(body))
		w.WriteHeader(http.StatusUnauthorized)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": "invalid_client", "error_description": echo, "request": string(body)})
	}))
	defer srv.Close()

	basic := base64.StdEncoding.EncodeToString([]byte("agent:" + url.QueryEscape(clientSecret)))
	forbidden := []string{
		clientSecret, url.QueryEscape(clientSecret), strings.ToLower(url.QueryEscape(clientSecret)), basic,
		subject, url.QueryEscape(subject),
	}
	for _, style := range []oauth2.AuthStyle{oauth2.AuthStyleInParams, oauth2.AuthStyleInHeader} {
		t.Run(fmt.Sprint("AuthStyle ", int(style)), func(t *testing.T) {
			cfg := &tokenexchange.Config{TokenURL: srv.URL, ClientID: "agent", ClientSecret: clientSecret, AuthStyle: style}
			_, err := cfg.Exchange(context.Background(), subject)
			var se *tokenexchange.StatusError
			require.ErrorAs(t, err, &se)
			var re *oauth2.RetrieveError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, "invalid_client", se.ErrorCode)
			assert.Equal(t, tokenexchange.KindInvalidClient, tokenexchange.Classify(err))
			assert.Contains(t, string(se.Body), "[REDACTED]")
			haystacks := map[string]string{
				"Error()":                err.Error(),
				"%+v":                    fmt.Sprintf("%+v %#v", err, err),
				"StatusError.Body":       string(se.Body),
				"ErrorDescription":       se.ErrorDescription,
				"Header":                 fmt.Sprint(se.Header),
				"RetrieveError.Error()":  re.Error(),
				"RetrieveError.Body":     string(re.Body),
				"RetrieveError.Response": fmt.Sprint(re.Response.Header),
			}
			for where, h := range haystacks {
				for _, bad := range forbidden {
					assert.NotContains(t, h, bad, "%s shows a secret", where)
				}
			}
		})
	}
}

// The error code is classified as received: a client secret that is a
// word of the code ("grant" in "invalid_grant") neither corrupts the code
// nor changes the class. The real provider refuses a revoked refresh token
// with invalid_grant.
func TestShortSecretKeepsErrorCode(t *testing.T) {
	f := newFixture(t, oidctest.Options{}, 0)
	ctx := context.Background()
	require.NoError(t, f.op.AddClient(oidctest.Client{ID: "shorty", Secret: "grant"}))
	rt, err := f.op.OfflineToken(ctx, alice, "shorty")
	require.NoError(t, err)
	f.track(rt)
	require.NoError(t, f.op.RevokeUserSessions(ctx, alice, "shorty"))

	cfg := &tokenexchange.Config{TokenURL: f.op.TokenURL(), ClientID: "shorty", ClientSecret: "grant"}
	tok, err := cfg.Refresh(ctx, rt, tokenexchange.RefreshOptions{})
	f.record(err)
	require.Nil(t, tok)
	assert.Equal(t, tokenexchange.KindInvalidGrant, tokenexchange.Classify(err))
	var se *tokenexchange.StatusError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "invalid_grant", se.ErrorCode)
	assert.Equal(t, "tokenexchange: refresh: HTTP 400 Bad Request: invalid_grant (Session not active)", err.Error())
}

// A refresh answer the client refuses (no token_type) after the provider
// rotated: Rotated sees the new refresh token before the answer is judged,
// and that token is the one the provider redeems next.
func TestRefreshRotatedBeforeJudged(t *testing.T) {
	f := newFixture(t, oidctest.Options{}, 0)
	ctx := context.Background()
	rt0 := f.offlineToken()
	cfg := f.config()
	f.op.EditRefreshAnswers(func(answer map[string]any) { delete(answer, "token_type") })
	var kept []string
	keep := tokenexchange.RefreshOptions{Rotated: func(_ context.Context, rt string) error {
		kept = append(kept, rt)
		return nil
	}}
	tok, err := cfg.Refresh(ctx, rt0, keep)
	f.record(err)
	require.Nil(t, tok)
	require.ErrorIs(t, err, tokenexchange.ErrInvalidResponse)
	require.Len(t, kept, 1)
	f.track(kept...)
	assert.NotEqual(t, rt0, kept[0])

	f.op.EditRefreshAnswers(nil)
	tok, err = cfg.Refresh(ctx, kept[0], tokenexchange.RefreshOptions{})
	require.NoError(t, f.record(err))
	f.trackToken(tok)
	assert.NotEmpty(t, tok.RefreshToken)

	// Rotated failing: no token, and the failure says why.
	_, err = cfg.Refresh(ctx, tok.RefreshToken, tokenexchange.RefreshOptions{Rotated: func(context.Context, string) error {
		return fmt.Errorf("disk full")
	}})
	f.record(err)
	assert.ErrorIs(t, err, tokenexchange.ErrRotationNotPersisted)
	assert.Equal(t, tokenexchange.KindRotationNotPersisted, tokenexchange.Classify(err))
}

// Classify on failures the real provider does not produce: each is a wire
// behaviour or a fault.
func TestClassifyFaults(t *testing.T) {
	answer := func(status int, body string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_, _ = io.WriteString(w, body)
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := "http://" + ln.Addr().String()
	require.NoError(t, ln.Close())
	hang := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-hang }))
	t.Cleanup(func() { close(hang); slow.Close() })

	cases := []struct {
		name string
		url  string
		ctx  func() (context.Context, context.CancelFunc)
		want tokenexchange.Kind
	}{
		{"unsupported grant", answer(400, `{"error":"unsupported_grant_type"}`), nil, tokenexchange.KindOAuthError},
		{"invalid target", answer(400, `{"error":"invalid_target"}`), nil, tokenexchange.KindInvalidTarget},
		{"server error", answer(500, `{"error":"server_error"}`), nil, tokenexchange.KindUnavailable},
		{"401 without code", answer(401, `nope`), nil, tokenexchange.KindUnauthorized},
		{"429", answer(429, ``), nil, tokenexchange.KindUnavailable},
		{"404", answer(404, `not here`), nil, tokenexchange.KindHTTPStatus},
		{"not JSON", answer(200, `<html>`), nil, tokenexchange.KindInvalidResponse},
		{"error in a 200", answer(200, `{"error":"invalid_request"}`), nil, tokenexchange.KindInvalidRequest},
		{"too large", answer(200, `{"access_token":"`+strings.Repeat("a", tokenexchange.MaxResponseBytes)+`"}`), nil, tokenexchange.KindInvalidResponse},
		{"refused connection", closed, nil, tokenexchange.KindTransport},
		{"deadline", slow.URL, func() (context.Context, context.CancelFunc) {
			return context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
		}, tokenexchange.KindTimeout},
		{"canceled", slow.URL, func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx, cancel
		}, tokenexchange.KindCanceled},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.Background(), context.CancelFunc(func() {})
			if tc.ctx != nil {
				ctx, cancel = tc.ctx()
			}
			defer cancel()
			cfg := &tokenexchange.Config{TokenURL: tc.url, ClientID: "agent", ClientSecret: "agent-secret-123"}
			tok, err := cfg.Exchange(ctx, "subject-token-value")
			assert.Nil(t, tok)
			require.Error(t, err)
			assert.Equal(t, tc.want, tokenexchange.Classify(err), "%v", err)
			assert.NotContains(t, err.Error(), tc.url, "the error names the endpoint URL")
		})
	}
	assert.Equal(t, tokenexchange.KindUnknown, tokenexchange.Classify(io.EOF))
	assert.Equal(t, tokenexchange.KindNoSubjectToken, tokenexchange.Classify(tokenexchange.ErrNoSubjectToken))
}

// Importing tokenexchange must not compile the SQLite driver (or anything
// else outside the standard library, golang.org/x/oauth2, the
// OpenTelemetry API with what it imports, and the module's own internal
// packages): the mandate store lives in tokenexchange/mandate. The
// OpenTelemetry SDK is never compiled in.
func TestCoreDependencies(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		gobin = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	}
	out, err := exec.Command(gobin, "list", "-deps", "github.com/candorkit/candor/tokenexchange").CombinedOutput()
	require.NoError(t, err, "%s", out)
	var foreign []string
	for _, pkg := range strings.Fields(string(out)) {
		first, _, _ := strings.Cut(pkg, "/")
		switch {
		case !strings.Contains(first, "."): // standard library
		case pkg == "golang.org/x/oauth2" || strings.HasPrefix(pkg, "golang.org/x/oauth2/"):
		case strings.HasPrefix(pkg, "github.com/candorkit/candor/internal/"), pkg == "github.com/candorkit/candor/tokenexchange":
		case otelAPI(pkg):
		default:
			foreign = append(foreign, pkg)
		}
	}
	assert.NotContains(t, string(out), "modernc.org/sqlite")
	assert.NotContains(t, string(out), "go.opentelemetry.io/otel/sdk")
	assert.Empty(t, foreign, "tokenexchange depends on more than x/oauth2, the OpenTelemetry API and the standard library")
}

// otelAPI reports whether pkg is part of the OpenTelemetry API or one of
// the packages the API itself imports (its logger and hash, the
// auto-instrumentation hook of otel/trace).
func otelAPI(pkg string) bool {
	if strings.HasPrefix(pkg, "go.opentelemetry.io/otel/sdk") {
		return false
	}
	for _, p := range []string{"go.opentelemetry.io/otel", "go.opentelemetry.io/auto/sdk", "github.com/go-logr/", "github.com/cespare/xxhash/"} {
		if strings.HasPrefix(pkg, p) {
			return true
		}
	}
	return false
}

// A TokenSource hit allocates nothing: the Config was validated and its
// URL parsed when the source was made, and the cached *oauth2.Token is
// returned as is.
func TestTokenSourceHitAllocatesNothing(t *testing.T) {
	f := newFixture(t, oidctest.Options{}, 5*time.Minute)
	ts := f.config().TokenSource(context.Background(), f.userToken())
	first, err := ts.Token()
	require.NoError(t, f.record(err))
	f.track(first.AccessToken)
	allocs := testing.AllocsPerRun(100, func() {
		if tok, err := ts.Token(); err != nil || tok != first {
			t.Fatalf("hit: %v, %v", tok, err)
		}
	})
	assert.Zero(t, allocs)
	assert.EqualValues(t, 1, f.tokenRequests())
}
