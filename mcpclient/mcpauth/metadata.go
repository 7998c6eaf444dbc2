package mcpauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/candorkit/candor/internal/httpx"
)

// ResourceMetadata is an MCP server's OAuth protected resource metadata
// (RFC 9728 §2), the members this package uses.
type ResourceMetadata struct {
	Resource             string   `json:"resource"`
	AuthorizationServers []string `json:"authorization_servers"`
	ScopesSupported      []string `json:"scopes_supported"`
	// URL is where the document was read (not a member of it).
	URL string `json:"-"`
}

// ServerMetadata is an authorization server's metadata (RFC 8414 §2, or an
// OpenID provider's discovery document), the members this package uses.
type ServerMetadata struct {
	Issuer                                     string   `json:"issuer"`
	AuthorizationEndpoint                      string   `json:"authorization_endpoint"`
	TokenEndpoint                              string   `json:"token_endpoint"`
	RegistrationEndpoint                       string   `json:"registration_endpoint"`
	ScopesSupported                            []string `json:"scopes_supported"`
	ResponseTypesSupported                     []string `json:"response_types_supported"`
	GrantTypesSupported                        []string `json:"grant_types_supported"`
	CodeChallengeMethodsSupported              []string `json:"code_challenge_methods_supported"`
	TokenEndpointAuthMethodsSupported          []string `json:"token_endpoint_auth_methods_supported"`
	TokenEndpointAuthSigningAlgValuesSupported []string `json:"token_endpoint_auth_signing_alg_values_supported"`
	ClientIDMetadataDocumentSupported          bool     `json:"client_id_metadata_document_supported"`
	// URL is where the document was read; "" when no document was found
	// and the 2025-03-26 default endpoints are used (not a member).
	URL string `json:"-"`
}

// discovery is what was learnt about one MCP server's authorization.
type discovery struct {
	prm      *ResourceMetadata // nil: the server publishes none (2025-03-26 behaviour)
	as       *ServerMetadata
	resource string // the RFC 8707 resource indicator
}

// fetched reports whether a metadata request found a document (false: the
// server answered 404 or another 4xx, so the next location may be tried).
type fetchResult int

const (
	found fetchResult = iota
	absent
)

// getJSON reads a metadata document at u into v. A 4xx answer is absent;
// any other non-2xx answer, a body over the cap, or one that is not a JSON
// object is an error, never a document.
func (a *Authorizer) getJSON(ctx context.Context, u string, v any) (fetchResult, error) {
	if err := checkURL("metadata URL", u); err != nil {
		return absent, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return absent, fmt.Errorf("%w: metadata URL: %v", ErrMetadata, httpx.StripURL(err))
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("MCP-Protocol-Version", protocolVersion)
	resp, err := a.do(req, "metadata")
	if err != nil {
		return absent, &TransportError{Op: "metadata", Err: httpx.StripURL(err)}
	}
	defer resp.Body.Close()
	body, rerr := httpx.ReadAll(resp.Body, a.maxBody)
	switch {
	case resp.StatusCode >= 400 && resp.StatusCode <= 499:
		return absent, nil
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return absent, newStatusError("metadata", resp, body, nil)
	case rerr != nil:
		return absent, fmt.Errorf("%w: %s: %w", ErrMetadata, u, rerr)
	}
	if err := strictJSON(body, v); err != nil {
		return absent, &MetadataError{URL: u, Body: body, Reason: err.Error()}
	}
	return found, nil
}

// strictJSON decodes a JSON object; trailing data is an error.
func strictJSON(body []byte, v any) error {
	t := strings.TrimSpace(string(body))
	if !strings.HasPrefix(t, "{") {
		return errors.New("not a JSON object")
	}
	dec := json.NewDecoder(strings.NewReader(t))
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("data after the JSON object")
	}
	return nil
}

// discover finds the authorization server of the MCP server at endpoint:
// the protected resource metadata named by the challenge's
// resource_metadata, else at the path-aware then the root well-known
// location (RFC 9728 §3.1); then that server's metadata (RFC 8414 §3.1 and
// OpenID discovery, path-aware). A server that publishes no protected
// resource metadata is treated as the 2025-03-26 specification says: the
// MCP server's origin is the authorization server, with its metadata or,
// failing that, the default endpoints.
func (a *Authorizer) discover(ctx context.Context, endpoint *url.URL, params map[string]string) (*discovery, error) {
	var candidates []string
	if rm := params["resource_metadata"]; rm != "" {
		candidates = []string{rm}
	} else {
		candidates = wellKnown(endpoint, "oauth-protected-resource")
	}
	var prm *ResourceMetadata
	for _, u := range candidates {
		var m ResourceMetadata
		r, err := a.getJSON(ctx, u, &m)
		if err != nil {
			return nil, err
		}
		if r == found {
			m.URL = u
			prm = &m
			break
		}
	}
	if prm == nil && params["resource_metadata"] != "" {
		return nil, &MetadataError{URL: params["resource_metadata"], Reason: "the resource_metadata of the challenge was not found"}
	}
	d := &discovery{prm: prm, resource: canonical(endpoint)}
	if prm == nil {
		as, err := a.legacyServer(ctx, endpoint)
		if err != nil {
			return nil, err
		}
		d.as = as
		return d, nil
	}
	if err := matchResource(prm.Resource, endpoint); err != nil {
		return nil, &MetadataError{URL: prm.URL, Reason: err.Error(), err: ErrResourceMismatch}
	}
	d.resource = prm.Resource
	if len(prm.AuthorizationServers) == 0 {
		return nil, &MetadataError{URL: prm.URL, Reason: "no authorization_servers"}
	}
	as, err := a.serverMetadata(ctx, prm.AuthorizationServers[0])
	if err != nil {
		return nil, err
	}
	d.as = as
	return d, nil
}

// serverMetadata reads the metadata of the authorization server whose
// issuer identifier is issuer, trying in order the RFC 8414 location and
// the two OpenID discovery locations; its issuer member must be issuer.
func (a *Authorizer) serverMetadata(ctx context.Context, issuer string) (*ServerMetadata, error) {
	iu, err := url.Parse(issuer)
	if err != nil || iu.Host == "" || iu.RawQuery != "" || iu.Fragment != "" {
		return nil, &MetadataError{URL: issuer, Reason: "authorization server is not an absolute URL without query or fragment"}
	}
	if err := checkURL("authorization server", issuer); err != nil {
		return nil, err
	}
	path := strings.TrimSuffix(iu.EscapedPath(), "/")
	origin := iu.Scheme + "://" + iu.Host
	candidates := []string{
		origin + "/.well-known/oauth-authorization-server" + path,
		origin + "/.well-known/openid-configuration" + path,
	}
	if path != "" {
		candidates = append(candidates, origin+path+"/.well-known/openid-configuration")
	}
	m, err := a.firstServerMetadata(ctx, candidates, issuer)
	if err == nil && m == nil {
		err = &MetadataError{URL: issuer, Reason: "the authorization server publishes no metadata", err: ErrNoMetadata}
	}
	return m, err
}

// firstServerMetadata reads the first of candidates that exists (nil when
// none does). Its issuer must be issuer, unless issuer is "" (the
// 2025-03-26 case), and its endpoints must be usable.
func (a *Authorizer) firstServerMetadata(ctx context.Context, candidates []string, issuer string) (*ServerMetadata, error) {
	for _, u := range candidates {
		var m ServerMetadata
		r, err := a.getJSON(ctx, u, &m)
		if err != nil {
			return nil, err
		}
		if r != found {
			continue
		}
		m.URL = u
		if issuer != "" && strings.TrimSuffix(m.Issuer, "/") != strings.TrimSuffix(issuer, "/") {
			return nil, &MetadataError{URL: u, Reason: fmt.Sprintf("issuer %q is not the authorization server %q", httpx.Excerpt([]byte(m.Issuer), 200), issuer)}
		}
		if err := m.check(); err != nil {
			return nil, &MetadataError{URL: u, Reason: err.Error()}
		}
		return &m, nil
	}
	return nil, nil
}

// legacyServer is the authorization server of an MCP server without
// protected resource metadata: its origin, with the metadata found there
// or the default endpoints /authorize, /token and /register.
func (a *Authorizer) legacyServer(ctx context.Context, endpoint *url.URL) (*ServerMetadata, error) {
	origin := endpoint.Scheme + "://" + endpoint.Host
	// The document is the MCP server's own, from its own origin; the
	// 2025-03-26 specification names no issuer rule for it.
	m, err := a.firstServerMetadata(ctx, []string{origin + "/.well-known/oauth-authorization-server", origin + "/.well-known/openid-configuration"}, "")
	if err != nil || m != nil {
		return m, err
	}
	return &ServerMetadata{
		Issuer:                origin,
		AuthorizationEndpoint: origin + "/authorize",
		TokenEndpoint:         origin + "/token",
		RegistrationEndpoint:  origin + "/register",
	}, nil
}

// check verifies the endpoints the flows may use.
func (m *ServerMetadata) check() error {
	if m.TokenEndpoint == "" {
		return errors.New("no token_endpoint")
	}
	for name, u := range map[string]string{"token_endpoint": m.TokenEndpoint, "authorization_endpoint": m.AuthorizationEndpoint, "registration_endpoint": m.RegistrationEndpoint} {
		if u == "" {
			continue
		}
		if err := checkURL(name, u); err != nil {
			return err
		}
	}
	return nil
}

// wellKnown returns the path-aware then the root well-known URLs of name
// for endpoint (RFC 9728 §3.1, RFC 8414 §3.1).
func wellKnown(endpoint *url.URL, name string) []string {
	origin := endpoint.Scheme + "://" + endpoint.Host
	path := strings.TrimSuffix(endpoint.EscapedPath(), "/")
	if path == "" {
		return []string{origin + "/.well-known/" + name}
	}
	return []string{origin + "/.well-known/" + name + path, origin + "/.well-known/" + name}
}

// canonical is the canonical URI of the MCP server (RFC 8707 §2): the
// endpoint without query or fragment, scheme and host in lower case.
func canonical(u *url.URL) string {
	c := url.URL{Scheme: strings.ToLower(u.Scheme), Host: strings.ToLower(u.Host), Path: u.Path, RawPath: u.RawPath}
	return c.String()
}

// matchResource checks that the resource a protected resource metadata
// document names is the MCP server at endpoint (RFC 9728 §3.3): same
// scheme, host and port, and a path that is the endpoint's or one of its
// parents.
func matchResource(resource string, endpoint *url.URL) error {
	r, err := url.Parse(resource)
	if err != nil || r.Host == "" {
		return fmt.Errorf("resource %q is not an absolute URL", httpx.Excerpt([]byte(resource), 200))
	}
	if r.Fragment != "" {
		return fmt.Errorf("resource %q has a fragment", httpx.Excerpt([]byte(resource), 200))
	}
	if !strings.EqualFold(r.Scheme, endpoint.Scheme) || !sameHost(r, endpoint) {
		return fmt.Errorf("resource %q is not the MCP server %s", httpx.Excerpt([]byte(resource), 200), canonical(endpoint))
	}
	rp, ep := strings.TrimSuffix(r.Path, "/"), strings.TrimSuffix(endpoint.Path, "/")
	if rp != "" && rp != ep && !strings.HasPrefix(ep, rp+"/") {
		return fmt.Errorf("resource %q does not cover the MCP server's path %s", httpx.Excerpt([]byte(resource), 200), endpoint.Path)
	}
	return nil
}

func sameHost(a, b *url.URL) bool {
	return strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if strings.EqualFold(u.Scheme, "https") {
		return "443"
	}
	return "80"
}

// checkURL accepts an absolute https URL, or http to a loopback host.
func checkURL(what, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return fmt.Errorf("%w: %s is not an absolute URL", ErrInsecure, what)
	}
	switch {
	case u.Scheme == "https":
		return nil
	case u.Scheme == "http" && httpx.IsLoopback(u.Host):
		return nil
	}
	return fmt.Errorf("%w: %s %s://%s is neither https nor loopback http", ErrInsecure, what, u.Scheme, u.Host)
}
