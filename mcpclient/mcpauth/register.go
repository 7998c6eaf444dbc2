package mcpauth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/candorkit/candor/internal/httpx"
	"github.com/candorkit/candor/internal/secret"
)

// clientFor returns this program's identity at the authorization server
// as: the pre-registered client (WithClient), else the client ID metadata
// document URL (WithClientMetadataURL) when the server accepts those, else
// a client registered dynamically (RFC 7591) when it offers registration.
// A registered client is kept for the server's issuer.
func (a *Authorizer) clientFor(ctx context.Context, as *ServerMetadata) (*client, error) {
	hasKey := a.key != nil
	if a.clientID != "" {
		m, err := authMethod(as.TokenEndpointAuthMethodsSupported, !a.clientSecret.IsZero(), hasKey)
		if err != nil {
			return nil, err
		}
		return &client{id: a.clientID, secret: a.clientSecret, method: m}, nil
	}
	if a.metadataURL != "" && as.ClientIDMetadataDocumentSupported {
		m := AuthMethodNone
		if hasKey {
			var err error
			if m, err = authMethod(as.TokenEndpointAuthMethodsSupported, false, true); err != nil {
				return nil, err
			}
		}
		return &client{id: a.metadataURL, method: m}, nil
	}
	if as.RegistrationEndpoint == "" {
		return nil, fmt.Errorf("%w: no pre-registered client (WithClient), the server takes no client ID metadata documents, and it offers no registration endpoint", ErrNoClient)
	}
	a.mu.Lock()
	cl := a.registered[as.Issuer]
	a.mu.Unlock()
	if cl != nil {
		return cl, nil
	}
	cl, err := a.register(ctx, as)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	a.registered[as.Issuer] = cl
	a.mu.Unlock()
	return cl, nil
}

// registration is the client metadata sent to a registration endpoint
// (RFC 7591 §2).
type registration struct {
	ClientName              string   `json:"client_name,omitempty"`
	ClientURI               string   `json:"client_uri,omitempty"`
	RedirectURIs            []string `json:"redirect_uris,omitempty"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types,omitempty"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	Scope                   string   `json:"scope,omitempty"`
}

// register asks the server to register this client.
func (a *Authorizer) register(ctx context.Context, as *ServerMetadata) (*client, error) {
	if err := checkURL("registration_endpoint", as.RegistrationEndpoint); err != nil {
		return nil, err
	}
	if a.key != nil {
		return nil, fmt.Errorf("%w: a client authenticating with a private key must be pre-registered (WithClient) or use a client ID metadata document", ErrNoClient)
	}
	reg := registration{ClientName: a.clientName}
	supported := as.TokenEndpointAuthMethodsSupported
	switch a.flow.kind {
	case flowCode:
		reg.RedirectURIs = []string{a.redirectURL}
		reg.GrantTypes = []string{GrantAuthorizationCode}
		if a.offline {
			reg.GrantTypes = append(reg.GrantTypes, GrantRefreshToken)
		}
		reg.ResponseTypes = []string{"code"}
		// A user agent's client is public unless the server wants a secret.
		switch {
		case len(supported) == 0 || slices.Contains(supported, AuthMethodNone):
			reg.TokenEndpointAuthMethod = AuthMethodNone
		case slices.Contains(supported, AuthMethodBasic):
			reg.TokenEndpointAuthMethod = AuthMethodBasic
		case slices.Contains(supported, AuthMethodPost):
			reg.TokenEndpointAuthMethod = AuthMethodPost
		default:
			return nil, fmt.Errorf("%w: no token endpoint authentication method a registered client can use", ErrUnsupported)
		}
	default:
		reg.GrantTypes = []string{a.flow.grant()}
		m, err := authMethod(supported, true, false)
		if err != nil {
			return nil, err
		}
		reg.TokenEndpointAuthMethod = m
	}
	body, err := json.Marshal(reg)
	if err != nil {
		return nil, fmt.Errorf("%w: registration: %v", ErrConfig, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, as.RegistrationEndpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("%w: registration endpoint: %v", ErrMetadata, httpx.StripURL(err))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := a.do(req, "registration")
	if err != nil {
		return nil, &TransportError{Op: "registration", Err: httpx.StripURL(err)}
	}
	defer resp.Body.Close()
	out, rerr := httpx.ReadAll(resp.Body, a.maxBody)
	var answer struct {
		ClientID                string `json:"client_id"`
		ClientSecret            string `json:"client_secret"`
		TokenEndpointAuthMethod string `json:"token_endpoint_auth_method"`
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, newStatusError("registration", resp, out, nil)
	}
	if rerr != nil {
		return nil, &MetadataError{URL: as.RegistrationEndpoint, Reason: "registration answer: " + rerr.Error()}
	}
	if err := strictJSON(out, &answer); err != nil || answer.ClientID == "" {
		hide := []string{}
		if answer.ClientSecret != "" {
			hide = append(hide, answer.ClientSecret)
		}
		reason := "no client_id"
		if err != nil {
			reason = err.Error()
		}
		return nil, &MetadataError{URL: as.RegistrationEndpoint, Body: secret.RedactBytes(out, hide...), Reason: "registration answer: " + reason}
	}
	cl := &client{id: answer.ClientID, secret: secret.New(answer.ClientSecret), method: reg.TokenEndpointAuthMethod}
	if answer.TokenEndpointAuthMethod != "" {
		cl.method = answer.TokenEndpointAuthMethod
	}
	switch cl.method {
	case AuthMethodBasic, AuthMethodPost:
		if answer.ClientSecret == "" {
			return nil, &MetadataError{URL: as.RegistrationEndpoint, Reason: "registration answer: method " + cl.method + " without client_secret"}
		}
	case AuthMethodNone:
	default:
		return nil, fmt.Errorf("%w: the server registered the client with token endpoint authentication %q", ErrUnsupported, httpx.Excerpt([]byte(cl.method), 64))
	}
	return cl, nil
}

var errNoCode = errors.New("the callback has no code")
