package mcpauth_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"

	"github.com/candorkit/candor/a2a/jwtauth"
	"github.com/candorkit/candor/internal/httpstatus"
	"github.com/candorkit/candor/tokenexchange/oidctest"
)

// Scopes of the protected MCP server: echo needs scopeRead, admin needs
// scopeAdmin too.
const (
	scopeRead  = "mcp:read"
	scopeAdmin = "mcp:admin"
)

// seen is one request as the protected server saw it.
type seen struct {
	Method   string // HTTP method
	RPC      string // JSON-RPC method of a POST
	Tool     string // the tool of a tools/call
	Token    string // the bearer, "" if none
	Status   int    // what the server answered
	Subject  string
	Audience []string
	Scopes   []string
}

// protectedServer is a real MCP server (mcp-go, streamable HTTP) that
// publishes its protected resource metadata and admits a request only
// with an access token of the provider for its endpoint: the signature
// checked against the provider's JWKS, iss, aud and exp.
type protectedServer struct {
	URL    string // the MCP endpoint
	PRM    string // its protected resource metadata
	verify *jwtauth.Verifier
	srv    *http.Server
	done   chan struct{}

	resource       string   // the PRM's resource (default URL)
	scopes         []string // the PRM's scopes_supported
	challengeScope string   // the scope of a 401's challenge ("" none)
	refuseAll      bool     // answer 401 even to a valid token

	adminRuns atomic.Int64
	mu        sync.Mutex
	log       []seen
}

type serverOption func(*protectedServer)

// withResource makes the PRM name another resource.
func withResource(r string) serverOption { return func(s *protectedServer) { s.resource = r } }

// withChallengeScope sets the scope of the 401 challenge.
func withChallengeScope(sc string) serverOption {
	return func(s *protectedServer) { s.challengeScope = sc }
}

// refusingAll makes the server answer 401 to every POST, token or not.
func refusingAll() serverOption { return func(s *protectedServer) { s.refuseAll = true } }

// startProtected starts a protected MCP server whose tokens come from the
// provider with issuer; it stops when the test ends.
func startProtected(tb testing.TB, issuer string, opts ...serverOption) *protectedServer {
	tb.Helper()
	s, err := newProtected(issuer, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Close)
	return s
}

func newProtected(issuer string, opts ...serverOption) (*protectedServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	base := "http://" + ln.Addr().String()
	s := &protectedServer{URL: base + "/mcp", PRM: base + "/.well-known/oauth-protected-resource/mcp",
		scopes: []string{scopeRead, scopeAdmin}, done: make(chan struct{})}
	s.resource = s.URL
	for _, o := range opts {
		o(s)
	}
	if s.verify, err = jwtauth.New(issuer, s.URL); err != nil {
		ln.Close()
		return nil, err
	}
	mcp := mcpgoserver.NewMCPServer("protected", "1.0.0", mcpgoserver.WithToolCapabilities(true))
	mcp.AddTool(mcpgo.NewTool("echo", mcpgo.WithDescription("echoes its text"), mcpgo.WithString("text")),
		func(_ context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			return mcpgo.NewToolResultText("echo: " + req.GetString("text", "")), nil
		})
	mcp.AddTool(mcpgo.NewTool("admin", mcpgo.WithDescription("needs mcp:admin")),
		func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			return mcpgo.NewToolResultText(fmt.Sprintf("admin run %d", s.adminRuns.Add(1))), nil
		})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"resource": s.resource, "authorization_servers": []string{issuer}, "scopes_supported": s.scopes,
		})
	})
	mux.Handle("/mcp", s.guard(mcpgoserver.NewStreamableHTTPServer(mcp, mcpgoserver.WithStreamableHTTPLogger(slog.New(slog.DiscardHandler)))))
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln)
	}()
	return s, nil
}

// Close stops the server.
func (s *protectedServer) Close() {
	_ = s.srv.Close()
	<-s.done
}

// guard admits a request with a valid token and the scope its tool needs.
func (s *protectedServer) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := seen{Method: r.Method}
		if r.Method == http.MethodPost {
			body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
			if err != nil {
				http.Error(w, "unreadable body", http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			var msg struct {
				Method string `json:"method"`
				Params struct {
					Name string `json:"name"`
				} `json:"params"`
			}
			_ = json.Unmarshal(body, &msg)
			rec.RPC, rec.Tool = msg.Method, msg.Params.Name
		}
		if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
			rec.Token = tok
		}
		challenge := `Bearer resource_metadata="` + s.PRM + `"`
		if s.challengeScope != "" {
			challenge += `, scope="` + s.challengeScope + `"`
		}
		refuse := func(status int, header string) {
			rec.Status = status
			s.record(rec)
			w.Header().Set("WWW-Authenticate", header)
			http.Error(w, http.StatusText(status), status)
		}
		if rec.Token == "" {
			refuse(http.StatusUnauthorized, challenge)
			return
		}
		caller, err := s.verify.Verify(r.Context(), rec.Token)
		if err != nil || (s.refuseAll && r.Method == http.MethodPost) {
			refuse(http.StatusUnauthorized, challenge+`, error="invalid_token"`)
			return
		}
		rec.Subject, rec.Audience, rec.Scopes = caller.Subject, caller.Audience, caller.Scopes
		if !slices.Contains(caller.Scopes, scopeRead) || (rec.Tool == "admin" && !slices.Contains(caller.Scopes, scopeAdmin)) {
			refuse(http.StatusForbidden, `Bearer error="insufficient_scope", scope="`+scopeRead+" "+scopeAdmin+`", resource_metadata="`+s.PRM+`"`)
			return
		}
		sw := &httpstatus.Recorder{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		rec.Status = sw.Status
		s.record(rec)
	})
}

func (s *protectedServer) record(r seen) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = append(s.log, r)
}

// Seen returns the requests the server received, in order.
func (s *protectedServer) Seen() []seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.log)
}

// Posts counts the POSTs the server received.
func (s *protectedServer) Posts() int {
	n := 0
	for _, r := range s.Seen() {
		if r.Method == http.MethodPost {
			n++
		}
	}
	return n
}

// startProvider starts the in-repo OpenID provider with the user alice, a
// confidential service client (client credentials) and a public client
// with a loopback redirect URI (authorization code), both allowed the MCP
// scopes for the given MCP endpoints.
func startProvider(tb testing.TB, endpoints ...string) *oidctest.Provider {
	tb.Helper()
	p := oidctest.New(tb, oidctest.Options{})
	if err := setUpProvider(p, []string{scopeRead, scopeAdmin}, endpoints...); err != nil {
		tb.Fatal(err)
	}
	return p
}

const (
	serviceID     = "mcp-service"
	serviceSecret = "mcp-service-secret-value"
	publicID      = "mcp-cli"
	redirectURL   = "http://127.0.0.1:8976/callback"
)

func setUpProvider(p *oidctest.Provider, allowed []string, endpoints ...string) error {
	return errors.Join(
		p.AddUser(oidctest.User{ID: "alice", Username: "alice"}),
		p.AddClient(oidctest.Client{ID: serviceID, Secret: serviceSecret, ClientCredentials: true, Audiences: endpoints, OptionalScopes: allowed}),
		p.AddClient(oidctest.Client{ID: publicID, RedirectURIs: []string{"http://127.0.0.1/callback"}, Audiences: endpoints, OptionalScopes: allowed}),
	)
}
