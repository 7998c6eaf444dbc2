package mcpauth_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"

	"github.com/candorkit/candor/mcpclient"
	"github.com/candorkit/candor/mcpclient/mcpauth"
	"github.com/candorkit/candor/tokenexchange/oidctest"
)

// serveProtectedMCP starts an MCP server with one tool, "whoami", that
// publishes its protected resource metadata (authorization server: p) and
// admits only requests bearing p's access tokens for its endpoint. It
// returns the endpoint and a function that stops the server.
func serveProtectedMCP(p *oidctest.Provider) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	base := "http://" + ln.Addr().String()
	endpoint, prm := base+"/mcp", base+"/.well-known/oauth-protected-resource/mcp"
	mcp := mcpgoserver.NewMCPServer("example", "1.0.0")
	mcp.AddTool(mcpgo.NewTool("whoami"), func(ctx context.Context, _ mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		return mcpgo.NewToolResultText("you are " + ctx.Value(subjectKey{}).(string)), nil
	})
	streamable := mcpgoserver.NewStreamableHTTPServer(mcp)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"resource":%q,"authorization_servers":[%q],"scopes_supported":["mcp:read"]}`, endpoint, p.Issuer())
	})
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		token, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		claims, err := p.VerifyAccessToken(r.Context(), token, endpoint)
		if err != nil {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+prm+`"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		streamable.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), subjectKey{}, claims.Subject)))
	})
	srv := &http.Server{Handler: mux}
	go func() { _ = srv.Serve(ln) }()
	return endpoint, func() { _ = srv.Close() }, nil
}

type subjectKey struct{}

// ExampleNew_clientCredentials connects a program acting on its own
// behalf to a protected MCP server: the server's first 401 names its
// protected resource metadata, which names the authorization server (here
// the in-repo OpenID provider); the Authorizer gets a token for the
// endpoint with the client credentials grant and the request is sent
// again.
func ExampleNew_clientCredentials() {
	ctx := context.Background()
	p, err := oidctest.Start(oidctest.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close()
	endpoint, stop, err := serveProtectedMCP(p)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer stop()
	err = p.AddClient(oidctest.Client{ID: "reporter", Secret: "reporter-secret", ClientCredentials: true,
		Audiences: []string{endpoint}, OptionalScopes: []string{"mcp:read"}})
	if err != nil {
		fmt.Println(err)
		return
	}

	a, err := mcpauth.New(mcpauth.ClientCredentials(), mcpauth.WithClient("reporter", "reporter-secret"))
	if err != nil {
		fmt.Println(err)
		return
	}
	c, err := mcpclient.Dial(ctx, endpoint, mcpclient.WithAuthorizer(a))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	res, err := c.Call(ctx, "whoami", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Text())
	r := p.Requests()[0]
	fmt.Println("token requests:", len(p.Requests()), r.GrantType, r.Params)
	// Output:
	// you are service-account-reporter
	// token requests: 1 client_credentials [grant_type resource scope]
}

// ExampleAuthorizationCode runs the authorization code flow for a user.
// The LoginFunc is the browser step: a real program opens authURL in the
// user's browser and waits for the redirect to its loopback redirect URL;
// here the in-repo provider's ApproveAuthorization plays alice's browser
// over HTTP and returns where the provider redirected. A denial comes back
// as an *mcpclient.AuthorizationError whose cause is an
// *mcpauth.DeniedError.
func ExampleAuthorizationCode() {
	ctx := context.Background()
	p, err := oidctest.Start(oidctest.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close()
	endpoint, stop, err := serveProtectedMCP(p)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer stop()
	err = errors.Join(
		p.AddUser(oidctest.User{ID: "alice"}),
		// A public client: no secret, PKCE, any loopback port.
		p.AddClient(oidctest.Client{ID: "desktop-agent", RedirectURIs: []string{"http://127.0.0.1/callback"},
			Audiences: []string{endpoint}, OptionalScopes: []string{"mcp:read"}}),
	)
	if err != nil {
		fmt.Println(err)
		return
	}

	login := func(ctx context.Context, authURL string) (string, error) {
		return p.ApproveAuthorization(ctx, authURL, "alice")
	}
	a, err := mcpauth.New(mcpauth.AuthorizationCode(login),
		mcpauth.WithClient("desktop-agent", ""), mcpauth.WithRedirectURL("http://127.0.0.1:53682/callback"))
	if err != nil {
		fmt.Println(err)
		return
	}
	c, err := mcpclient.Dial(ctx, endpoint, mcpclient.WithAuthorizer(a))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	res, err := c.Call(ctx, "whoami", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Text())

	deny := func(ctx context.Context, authURL string) (string, error) { return p.DenyAuthorization(ctx, authURL) }
	refused, err := mcpauth.New(mcpauth.AuthorizationCode(deny),
		mcpauth.WithClient("desktop-agent", ""), mcpauth.WithRedirectURL("http://127.0.0.1:53682/callback"))
	if err != nil {
		fmt.Println(err)
		return
	}
	_, err = mcpclient.Dial(ctx, endpoint, mcpclient.WithAuthorizer(refused))
	var denied *mcpauth.DeniedError
	fmt.Println(errors.As(err, &denied), denied.ErrorCode, mcpauth.Classify(err))
	// Output:
	// you are alice
	// true access_denied denied
}
