// Command mcpconformance is the MCP client that the MCP conformance
// suite's client scenarios drive (scripts/mcp-conformance): the suite
// starts a scenario's servers, runs this command with the server URL as
// its last argument, MCP_CONFORMANCE_SCENARIO naming the scenario and, for
// some, MCP_CONFORMANCE_CONTEXT holding credentials as JSON; then it
// judges what it saw on the wire.
//
// The client does what an agent built on mcpclient and mcpauth does:
// dial (authorizing when challenged), list the tools, call each with
// arguments made from its input schema, answer elicitations with the
// requested schema's defaults, and close. It exits 0 when every step
// succeeded, 1 otherwise, with what failed on stderr.
package main

import (
	"context"
	"crypto"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/candorkit/candor/internal/httpx"
	"github.com/candorkit/candor/mcpclient"
	"github.com/candorkit/candor/mcpclient/mcpauth"
	"github.com/candorkit/candor/tokenexchange"
)

// The conformance suite's client ID metadata document URL and redirect
// URI; the suite's authorization servers redirect to the latter without
// anything listening there.
const (
	metadataURL = "https://conformance-test.local/client-metadata.json"
	redirectURL = "http://localhost:3000/callback"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: mcpconformance <server-url>")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	if err := run(ctx, os.Args[len(os.Args)-1], os.Getenv("MCP_CONFORMANCE_SCENARIO"), os.Getenv("MCP_CONFORMANCE_CONTEXT")); err != nil {
		fmt.Fprintln(os.Stderr, "mcpconformance:", err)
		os.Exit(1)
	}
}

// scenarioContext is MCP_CONFORMANCE_CONTEXT.
type scenarioContext struct {
	ClientID         string `json:"client_id"`
	ClientSecret     string `json:"client_secret"`
	PrivateKeyPEM    string `json:"private_key_pem"`
	IDPClientID      string `json:"idp_client_id"`
	IDPIDToken       string `json:"idp_id_token"`
	IDPTokenEndpoint string `json:"idp_token_endpoint"`
}

func run(ctx context.Context, endpoint, scenario, rawContext string) error {
	var sc scenarioContext
	if rawContext != "" {
		if err := json.Unmarshal([]byte(rawContext), &sc); err != nil {
			return fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
	}
	opts := []mcpclient.Option{
		mcpclient.WithClientInfo("candor-mcpconformance", "1.0.0"),
		mcpclient.WithElicitationHandler(acceptDefaults),
	}
	if strings.HasPrefix(scenario, "auth/") {
		a, err := authorizer(scenario, sc)
		if err != nil {
			return err
		}
		opts = append(opts, mcpclient.WithAuthorizer(a))
	}
	c, err := mcpclient.Dial(ctx, endpoint, opts...)
	if err != nil {
		return fmt.Errorf("dial: %w", err)
	}
	defer c.Close()
	tools, err := c.ListTools(ctx, mcpclient.ListToolsOptions{})
	if err != nil {
		return fmt.Errorf("tools/list: %w", err)
	}
	for _, t := range tools.Items {
		res, err := c.Call(ctx, t.Name, argumentsFor(t.InputSchema))
		if err != nil {
			return fmt.Errorf("tools/call %s: %w", t.Name, err)
		}
		fmt.Printf("%s: %s\n", t.Name, res.Text())
	}
	return c.Close()
}

// authorizer builds the flow a scenario's credentials call for: client
// credentials (a private key or a secret) for the client credentials
// scenarios, the JWT bearer grant over an identity assertion obtained by
// token exchange when an identity provider is given, and otherwise the
// authorization code flow (pre-registered when credentials are given,
// else by client ID metadata document or dynamic registration).
func authorizer(scenario string, sc scenarioContext) (*mcpauth.Authorizer, error) {
	opts := []mcpauth.Option{mcpauth.WithClientName("candor-mcpconformance")}
	switch {
	case sc.PrivateKeyPEM != "":
		key, err := parseKey(sc.PrivateKeyPEM)
		if err != nil {
			return nil, err
		}
		return mcpauth.New(mcpauth.ClientCredentials(), append(opts, mcpauth.WithClient(sc.ClientID, ""), mcpauth.WithPrivateKey(key, ""))...)
	case strings.HasPrefix(scenario, "auth/client-credentials"):
		return mcpauth.New(mcpauth.ClientCredentials(), append(opts, mcpauth.WithClient(sc.ClientID, sc.ClientSecret))...)
	case sc.IDPIDToken != "":
		idToken := sc.IDPIDToken
		assert := func(ctx context.Context, t mcpauth.Target) (string, error) {
			cfg := &tokenexchange.Config{
				TokenURL:           sc.IDPTokenEndpoint,
				ClientID:           sc.IDPClientID,
				Audience:           []string{t.Issuer},
				Resource:           []string{t.Resource},
				SubjectTokenType:   tokenexchange.TokenTypeIDToken,
				RequestedTokenType: "urn:ietf:params:oauth:token-type:id-jag",
			}
			tok, err := cfg.Exchange(ctx, idToken)
			if err != nil {
				return "", err
			}
			return tok.AccessToken, nil
		}
		return mcpauth.New(mcpauth.JWTBearer(assert), append(opts, mcpauth.WithClient(sc.ClientID, sc.ClientSecret))...)
	}
	opts = append(opts, mcpauth.WithRedirectURL(redirectURL), mcpauth.WithClientMetadataURL(metadataURL), mcpauth.WithOfflineAccess())
	if sc.ClientID != "" {
		opts = append(opts, mcpauth.WithClient(sc.ClientID, sc.ClientSecret))
	}
	return mcpauth.New(mcpauth.AuthorizationCode(follow), opts...)
}

// follow is the user agent: the suite's authorization servers approve at
// once, so the browser step is one GET whose redirect is the callback.
func follow(ctx context.Context, authURL string) (string, error) {
	hc := httpx.NoRedirectClient(&http.Client{Timeout: 10 * time.Second})
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return "", err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return "", err
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode < 300 || resp.StatusCode > 399 || loc == "" {
		return "", fmt.Errorf("authorization endpoint answered %d without a redirect", resp.StatusCode)
	}
	return loc, nil
}

func parseKey(p string) (crypto.Signer, error) {
	block, _ := pem.Decode([]byte(p))
	if block == nil {
		return nil, errors.New("private_key_pem: no PEM block")
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("private_key_pem: %w", err)
	}
	s, ok := k.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("private_key_pem: %T is not a signing key", k)
	}
	return s, nil
}

// schema is the part of a JSON Schema used to make arguments.
type schema struct {
	Type       any                `json:"type"`
	Properties map[string]*schema `json:"properties"`
	Required   []string           `json:"required"`
	Enum       []any              `json:"enum"`
	Default    any                `json:"default"`
}

// argumentsFor makes an arguments object with a value for each required
// property of an input schema.
func argumentsFor(raw json.RawMessage) map[string]any {
	var s schema
	args := map[string]any{}
	if json.Unmarshal(raw, &s) != nil {
		return args
	}
	for _, name := range s.Required {
		args[name] = valueFor(s.Properties[name])
	}
	return args
}

func valueFor(s *schema) any {
	switch {
	case s == nil:
		return "x"
	case s.Default != nil:
		return s.Default
	case len(s.Enum) > 0:
		return s.Enum[0]
	}
	switch t, _ := s.Type.(string); t {
	case "number", "integer":
		return 2
	case "boolean":
		return true
	case "object":
		return argumentsFor(mustJSON(s))
	case "array":
		return []any{}
	}
	return "x"
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// acceptDefaults answers elicitation/create by accepting with the default
// of every property of the requested schema that has one.
func acceptDefaults(_ context.Context, req mcpclient.ServerRequest) (json.RawMessage, error) {
	var p struct {
		RequestedSchema schema `json:"requestedSchema"`
	}
	if err := json.Unmarshal(req.Params, &p); err != nil {
		return nil, err
	}
	content := map[string]any{}
	for name, prop := range p.RequestedSchema.Properties {
		if prop != nil && prop.Default != nil {
			content[name] = prop.Default
		}
	}
	return json.Marshal(map[string]any{"action": "accept", "content": content})
}
