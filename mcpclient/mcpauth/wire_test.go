package mcpauth_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/candorkit/candor/mcpclient"
	"github.com/candorkit/candor/mcpclient/mcpauth"
)

func TestNewConfigErrors(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	login := func(context.Context, string) (string, error) { return "", nil }
	cases := map[string]func() (*mcpauth.Authorizer, error){
		"no flow":               func() (*mcpauth.Authorizer, error) { return mcpauth.New(mcpauth.Flow{}) },
		"nil option":            func() (*mcpauth.Authorizer, error) { return mcpauth.New(mcpauth.ClientCredentials(), nil) },
		"code without redirect": func() (*mcpauth.Authorizer, error) { return mcpauth.New(mcpauth.AuthorizationCode(login)) },
		"code with nil login": func() (*mcpauth.Authorizer, error) {
			return mcpauth.New(mcpauth.AuthorizationCode(nil), mcpauth.WithRedirectURL(redirectURL))
		},
		"redirect with fragment": func() (*mcpauth.Authorizer, error) {
			return mcpauth.New(mcpauth.AuthorizationCode(login), mcpauth.WithRedirectURL(redirectURL+"#x"))
		},
		"relative redirect": func() (*mcpauth.Authorizer, error) {
			return mcpauth.New(mcpauth.AuthorizationCode(login), mcpauth.WithRedirectURL("/cb"))
		},
		"empty client ID": func() (*mcpauth.Authorizer, error) {
			return mcpauth.New(mcpauth.ClientCredentials(), mcpauth.WithClient("", "s"))
		},
		"nil private key": func() (*mcpauth.Authorizer, error) {
			return mcpauth.New(mcpauth.ClientCredentials(), mcpauth.WithPrivateKey(nil, ""))
		},
		"key without client": func() (*mcpauth.Authorizer, error) {
			return mcpauth.New(mcpauth.ClientCredentials(), mcpauth.WithPrivateKey(key, "k1"))
		},
		"http metadata URL": func() (*mcpauth.Authorizer, error) {
			return mcpauth.New(mcpauth.ClientCredentials(), mcpauth.WithClientMetadataURL("http://c.example/meta"))
		},
		"metadata URL without path": func() (*mcpauth.Authorizer, error) {
			return mcpauth.New(mcpauth.ClientCredentials(), mcpauth.WithClientMetadataURL("https://c.example/"))
		},
		"nil HTTP client": func() (*mcpauth.Authorizer, error) {
			return mcpauth.New(mcpauth.ClientCredentials(), mcpauth.WithHTTPClient(nil))
		},
		"zero body cap": func() (*mcpauth.Authorizer, error) {
			return mcpauth.New(mcpauth.ClientCredentials(), mcpauth.WithMaxResponseBytes(0))
		},
		"nil assertion func": func() (*mcpauth.Authorizer, error) { return mcpauth.New(mcpauth.JWTBearer(nil)) },
		"nil token func":     func() (*mcpauth.Authorizer, error) { return mcpauth.New(mcpauth.Delegated(nil)) },
	}
	for name, build := range cases {
		t.Run(name, func(t *testing.T) {
			a, err := build()
			assert.Nil(t, a)
			assert.ErrorIs(t, err, mcpauth.ErrConfig)
			assert.Equal(t, mcpauth.KindConfig, mcpauth.Classify(err))
		})
	}
	a, err := mcpauth.New(mcpauth.ClientCredentials(), mcpauth.WithClient("id", "s"), mcpauth.WithPrivateKey(key, "k1"),
		mcpauth.WithClientName("n"), mcpauth.WithLogger(nil), mcpauth.WithRootCAs(nil), mcpauth.WithHTTPClient(&http.Client{}))
	require.NoError(t, err)
	assert.NotNil(t, a)
	tok, err := a.Token(context.Background(), "https://mcp.example/mcp")
	assert.NoError(t, err)
	assert.Nil(t, tok, "no token before the first challenge")
}

// authServer is an httptest server playing MCP server, protected resource
// metadata host and authorization server at once, recording the paths
// asked for. It reproduces the servers the conformance suite runs.
type authServer struct {
	*httptest.Server
	mu    sync.Mutex
	paths []string
	// routes answers a path; the token endpoint is /token.
	routes map[string]func(w http.ResponseWriter, r *http.Request)
}

func newAuthServer(t *testing.T) *authServer {
	s := &authServer{routes: map[string]func(http.ResponseWriter, *http.Request){}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.paths = append(s.paths, r.URL.Path)
		h := s.routes[r.URL.Path]
		s.mu.Unlock()
		if h == nil {
			http.NotFound(w, r)
			return
		}
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *authServer) handle(path string, h func(w http.ResponseWriter, r *http.Request)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.routes[path] = h
}

func (s *authServer) json(path string, doc any, pad int) {
	b, _ := json.Marshal(doc)
	b = append(b, bytes.Repeat([]byte(" "), max(0, pad-len(b)))...)
	s.handle(path, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b)
	})
}

func (s *authServer) asked() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.paths...)
}

func unauthorized(h string) mcpclient.Challenge {
	return mcpclient.Challenge{StatusCode: http.StatusUnauthorized, Header: http.Header{"Www-Authenticate": {h}}}
}

func asMetadata(issuer string) map[string]any {
	return map[string]any{"issuer": issuer, "token_endpoint": issuer + "/token", "authorization_endpoint": issuer + "/authorize",
		"grant_types_supported": []string{"client_credentials", "authorization_code"}, "code_challenge_methods_supported": []string{"S256"},
		"token_endpoint_auth_methods_supported": []string{"client_secret_post"}}
}

// Without resource_metadata the path-aware PRM location is asked before
// the root one; for an issuer with a path the RFC 8414 and OpenID
// locations are tried in the path-aware order and the root metadata
// location is never asked.
func TestDiscoveryOrder(t *testing.T) {
	ctx := context.Background()
	s := newAuthServer(t)
	issuer := s.URL + "/tenant1"
	s.json("/.well-known/oauth-protected-resource", map[string]any{"resource": s.URL, "authorization_servers": []string{issuer}}, 0)
	s.json("/.well-known/oauth-authorization-server", asMetadata(s.URL), 0) // a trap: the root is never asked
	md := asMetadata(issuer)
	md["token_endpoint"] = s.URL + "/token"
	s.json("/tenant1/.well-known/openid-configuration", md, 0)
	var form url.Values
	s.handle("/token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		form = r.PostForm
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"access_token":"at-1","token_type":"Bearer","expires_in":300}`)
	})
	a, err := mcpauth.New(mcpauth.ClientCredentials(), mcpauth.WithClient("cid", "csecret"))
	require.NoError(t, err)
	ch := unauthorized(`Bearer realm="mcp"`)
	ch.Endpoint = s.URL + "/api/mcp"
	require.NoError(t, a.Authorize(ctx, ch))
	assert.Equal(t, []string{
		"/.well-known/oauth-protected-resource/api/mcp",
		"/.well-known/oauth-protected-resource",
		"/.well-known/oauth-authorization-server/tenant1",
		"/.well-known/openid-configuration/tenant1",
		"/tenant1/.well-known/openid-configuration",
		"/token",
	}, s.asked())
	assert.Equal(t, s.URL, form.Get("resource"), "the PRM's resource, which covers the endpoint")
	assert.Equal(t, "cid", form.Get("client_id"), "client_secret_post, the one method offered")
	tok, err := a.Token(ctx, ch.Endpoint)
	require.NoError(t, err)
	assert.Equal(t, "at-1", tok.AccessToken)
}

// An MCP server without protected resource metadata is its own
// authorization server (2025-03-26): with no metadata either, the default
// /token endpoint is used, for the endpoint's canonical URI.
func TestLegacyFallback(t *testing.T) {
	ctx := context.Background()
	s := newAuthServer(t)
	var form url.Values
	var basic bool
	s.handle("/token", func(w http.ResponseWriter, r *http.Request) {
		_, _, basic = r.BasicAuth()
		_ = r.ParseForm()
		form = r.PostForm
		_, _ = io.WriteString(w, `{"access_token":"at-legacy","token_type":"bearer"}`)
	})
	a, err := mcpauth.New(mcpauth.ClientCredentials(), mcpauth.WithClient("cid", "csecret"))
	require.NoError(t, err)
	ch := unauthorized(`Bearer`)
	ch.Endpoint = s.URL + "/mcp?x=1"
	require.NoError(t, a.Authorize(ctx, ch))
	assert.Equal(t, []string{
		"/.well-known/oauth-protected-resource/mcp",
		"/.well-known/oauth-protected-resource",
		"/.well-known/oauth-authorization-server",
		"/.well-known/openid-configuration",
		"/token",
	}, s.asked())
	assert.Equal(t, s.URL+"/mcp", form.Get("resource"))
	assert.True(t, basic, "no metadata: client_secret_basic")
}

// A metadata host's 5xx is an error, not a missing document: discovery
// stops there.
func TestMetadataServerError(t *testing.T) {
	s := newAuthServer(t)
	s.handle("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "down", http.StatusBadGateway)
	})
	a, err := mcpauth.New(mcpauth.ClientCredentials(), mcpauth.WithClient("cid", "csecret"))
	require.NoError(t, err)
	ch := unauthorized(`Bearer`)
	ch.Endpoint = s.URL + "/mcp"
	err = a.Authorize(context.Background(), ch)
	se, ok := errors.AsType[*mcpauth.StatusError](err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, http.StatusBadGateway, se.StatusCode)
	assert.Equal(t, []string{"/.well-known/oauth-protected-resource/mcp"}, s.asked())
}

// WithMaxResponseBytes is exact: documents of exactly the cap are read;
// one byte more is an error, never a document or a token.
func TestMaxResponseBytesExact(t *testing.T) {
	const size = 600
	for _, over := range []string{"", "prm", "as", "token"} {
		t.Run("over="+over, func(t *testing.T) {
			s := newAuthServer(t)
			pad := func(which string) int {
				if which == over {
					return size + 1
				}
				return size
			}
			s.json("/prm", map[string]any{"resource": s.URL + "/mcp", "authorization_servers": []string{s.URL}}, pad("prm"))
			s.json("/.well-known/oauth-authorization-server", asMetadata(s.URL), pad("as"))
			s.json("/token", map[string]any{"access_token": "AT-" + strings.Repeat("x", 40), "token_type": "Bearer"}, pad("token"))
			a, err := mcpauth.New(mcpauth.ClientCredentials(), mcpauth.WithClient("cid", "csecret"), mcpauth.WithMaxResponseBytes(size))
			require.NoError(t, err)
			ch := unauthorized(`Bearer resource_metadata="` + s.URL + `/prm"`)
			ch.Endpoint = s.URL + "/mcp"
			err = a.Authorize(context.Background(), ch)
			tok, _ := a.Token(context.Background(), ch.Endpoint)
			switch over {
			case "":
				require.NoError(t, err)
				require.NotNil(t, tok)
				assert.True(t, strings.HasPrefix(tok.AccessToken, "AT-"))
			case "token":
				assert.ErrorIs(t, err, mcpauth.ErrToken)
				assert.Nil(t, tok)
			default:
				assert.ErrorIs(t, err, mcpauth.ErrMetadata)
				assert.Nil(t, tok)
				assert.NotContains(t, s.asked(), "/token")
			}
		})
	}
}

// echoingTokenEndpoint answers every token request with a 400 whose body
// and header repeat the request's form and Authorization header.
func echoingTokenEndpoint(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	form, _ := url.ParseQuery(string(raw))
	desc := string(raw) + " " + r.Header.Get("Authorization") + " " + strings.Join(mapValues(form), " ")
	w.Header().Set("X-Echo", desc)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": "invalid_grant", "error_description": desc})
}

func mapValues(v url.Values) []string {
	var out []string
	for _, vs := range v {
		out = append(out, vs...)
	}
	return out
}

func assertNoSecret(t *testing.T, err error, secrets ...string) {
	t.Helper()
	require.Error(t, err)
	se, ok := errors.AsType[*mcpauth.StatusError](err)
	require.True(t, ok, "%v", err)
	var hdr strings.Builder
	_ = se.Header.Write(&hdr)
	for _, s := range secrets {
		assert.NotContains(t, err.Error(), s)
		assert.NotContains(t, string(se.Body), s)
		assert.NotContains(t, hdr.String(), s)
		assert.NotContains(t, string(se.RetrieveError().Body), s)
	}
	assert.NotEmpty(t, se.Body, "the evidence is kept, blanked")
}

// A token endpoint that echoes the request in its error never gets the
// client secret (basic or post), the JWT bearer assertion, the code or
// its verifier, or a refresh token into an error or a log.
func TestSecretsNeverInErrors(t *testing.T) {
	ctx := context.Background()
	const secret = "s3cr3t+/= value&x"
	setup := func(t *testing.T, methods []string) (*authServer, mcpclient.Challenge) {
		s := newAuthServer(t)
		s.json("/prm", map[string]any{"resource": s.URL + "/mcp", "authorization_servers": []string{s.URL}}, 0)
		md := asMetadata(s.URL)
		md["token_endpoint_auth_methods_supported"] = methods
		md["grant_types_supported"] = []string{"client_credentials", "authorization_code", mcpauth.GrantJWTBearer, "refresh_token"}
		s.json("/.well-known/oauth-authorization-server", md, 0)
		s.handle("/token", echoingTokenEndpoint)
		ch := unauthorized(`Bearer resource_metadata="` + s.URL + `/prm"`)
		ch.Endpoint = s.URL + "/mcp"
		return s, ch
	}
	for _, method := range []string{mcpauth.AuthMethodBasic, mcpauth.AuthMethodPost} {
		t.Run("client secret "+method, func(t *testing.T) {
			_, ch := setup(t, []string{method})
			a, err := mcpauth.New(mcpauth.ClientCredentials(), mcpauth.WithClient("cid", secret))
			require.NoError(t, err)
			err = a.Authorize(ctx, ch)
			assertNoSecret(t, err, secret, url.QueryEscape(secret))
			assert.Contains(t, err.Error(), "invalid_grant")
		})
	}
	t.Run("private key and assertion", func(t *testing.T) {
		_, ch := setup(t, []string{mcpauth.AuthMethodPrivateKeyJWT})
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		require.NoError(t, err)
		const assertion = "eyJhbGciOiJub25lIn0.eyJzdWIiOiJhbGljZSJ9.assertion-signature"
		a, err := mcpauth.New(mcpauth.JWTBearer(func(context.Context, mcpauth.Target) (string, error) { return assertion, nil }),
			mcpauth.WithClient("cid", ""), mcpauth.WithPrivateKey(key, "k1"))
		require.NoError(t, err)
		err = a.Authorize(ctx, ch)
		assertNoSecret(t, err, assertion, "eyJ")
	})
	t.Run("code, verifier and refresh token", func(t *testing.T) {
		s, ch := setup(t, []string{mcpauth.AuthMethodNone})
		const code = "the-authorization-code-123"
		const refresh = "the-refresh-token-456"
		var verifier string
		var issued atomic.Bool
		s.handle("/token", func(w http.ResponseWriter, r *http.Request) {
			if issued.CompareAndSwap(false, true) {
				_ = r.ParseForm()
				verifier = r.PostForm.Get("code_verifier")
				_, _ = fmt.Fprintf(w, `{"access_token":"at","token_type":"Bearer","expires_in":60,"refresh_token":%q}`, refresh)
				return
			}
			echoingTokenEndpoint(w, r)
		})
		login := func(_ context.Context, authURL string) (string, error) {
			u, err := url.Parse(authURL)
			if err != nil {
				return "", err
			}
			return redirectURL + "?code=" + code + "&state=" + url.QueryEscape(u.Query().Get("state")), nil
		}
		var logs bytes.Buffer // written by the calls below, on this goroutine
		var clock atomic.Int64
		clock.Store(time.Now().UnixNano())
		a, err := mcpauth.New(mcpauth.AuthorizationCode(login), mcpauth.WithClient("cid", ""), mcpauth.WithRedirectURL(redirectURL),
			mcpauth.WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))),
			mcpauth.WithClock(func() time.Time { return time.Unix(0, clock.Load()) }))
		require.NoError(t, err)
		require.NoError(t, a.Authorize(ctx, ch))
		require.NotEmpty(t, verifier)
		clock.Add(int64(time.Hour))
		_, err = a.Token(ctx, ch.Endpoint) // refresh refused (logged), then a new code is refused too
		assertNoSecret(t, err, code, verifier, refresh)
		assert.Contains(t, logs.String(), "refresh failed")
		for _, s := range []string{code, verifier, refresh} {
			assert.NotContains(t, logs.String(), s)
		}
	})
}

// Each discovery failure is classified, and nothing is sent to a server
// that fails the checks.
func TestClassifiedFailures(t *testing.T) {
	ctx := context.Background()
	assert.Equal(t, mcpauth.KindNone, mcpauth.Classify(nil))
	var assertion mcpauth.AssertionFunc = func(context.Context, mcpauth.Target) (string, error) { return "a", nil }
	var login mcpauth.LoginFunc = func(context.Context, string) (string, error) { return "", errors.New("no browser") }
	run := func(t *testing.T, s *authServer, flow mcpauth.Flow, opts ...mcpauth.Option) error {
		t.Helper()
		a, err := mcpauth.New(flow, opts...)
		require.NoError(t, err)
		ch := unauthorized(`Bearer resource_metadata="` + s.URL + `/prm"`)
		ch.Endpoint = s.URL + "/mcp"
		return a.Authorize(ctx, ch)
	}
	t.Run("insecure authorization server", func(t *testing.T) {
		s := newAuthServer(t)
		s.json("/prm", map[string]any{"resource": s.URL + "/mcp", "authorization_servers": []string{"http://as.example"}}, 0)
		err := run(t, s, mcpauth.ClientCredentials(), mcpauth.WithClient("c", "s"))
		assert.ErrorIs(t, err, mcpauth.ErrInsecure)
		assert.Equal(t, mcpauth.KindInsecure, mcpauth.Classify(err))
	})
	t.Run("no authorization server metadata", func(t *testing.T) {
		s := newAuthServer(t)
		s.json("/prm", map[string]any{"resource": s.URL + "/mcp", "authorization_servers": []string{s.URL + "/as"}}, 0)
		err := run(t, s, mcpauth.ClientCredentials(), mcpauth.WithClient("c", "s"))
		assert.ErrorIs(t, err, mcpauth.ErrNoMetadata)
		assert.Equal(t, mcpauth.KindMetadata, mcpauth.Classify(err))
		me, ok := errors.AsType[*mcpauth.MetadataError](err)
		require.True(t, ok)
		assert.Equal(t, s.URL+"/as", me.URL)
	})
	t.Run("no client identity", func(t *testing.T) {
		s := newAuthServer(t)
		s.json("/prm", map[string]any{"resource": s.URL + "/mcp", "authorization_servers": []string{s.URL}}, 0)
		s.json("/.well-known/oauth-authorization-server", asMetadata(s.URL), 0)
		err := run(t, s, mcpauth.JWTBearer(assertion))
		assert.ErrorIs(t, err, mcpauth.ErrNoClient)
		assert.Equal(t, mcpauth.KindNoClient, mcpauth.Classify(err))
		assert.NotContains(t, s.asked(), "/token")
	})
	t.Run("login fails", func(t *testing.T) {
		s := newAuthServer(t)
		s.json("/prm", map[string]any{"resource": s.URL + "/mcp", "authorization_servers": []string{s.URL}}, 0)
		s.json("/.well-known/oauth-authorization-server", asMetadata(s.URL), 0)
		err := run(t, s, mcpauth.AuthorizationCode(login), mcpauth.WithClient("c", ""), mcpauth.WithRedirectURL(redirectURL))
		assert.ErrorContains(t, err, "no browser")
		assert.NotContains(t, s.asked(), "/token")
	})
	t.Run("token endpoint unreachable", func(t *testing.T) {
		s := newAuthServer(t)
		dead := httptest.NewServer(http.NotFoundHandler())
		deadURL := dead.URL
		dead.Close()
		md := asMetadata(s.URL)
		md["token_endpoint"] = deadURL + "/token?secret=q"
		s.json("/prm", map[string]any{"resource": s.URL + "/mcp", "authorization_servers": []string{s.URL}}, 0)
		s.json("/.well-known/oauth-authorization-server", md, 0)
		err := run(t, s, mcpauth.ClientCredentials(), mcpauth.WithClient("c", "client-secret-x"))
		te, ok := errors.AsType[*mcpauth.TransportError](err)
		require.True(t, ok, "%v", err)
		assert.Equal(t, "token", te.Op)
		assert.Error(t, te.Err)
		assert.Equal(t, mcpauth.KindTransport, mcpauth.Classify(err))
		assert.NotContains(t, err.Error(), "secret=q", "no query in a transport error")
		assert.NotContains(t, err.Error(), "client-secret-x")
	})
}
