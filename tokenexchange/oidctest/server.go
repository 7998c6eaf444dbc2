package oidctest

import (
	"context"
	"errors"
	"net/http"
	"slices"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// keycloakServer is zitadel's LegacyServer with the token endpoint made as
// strict as Keycloak's standard token exchange (v2).
type keycloakServer struct {
	*op.LegacyServer
	st *storage
}

// VerifyClient answers a failed client authentication with 401, as Keycloak
// does; zitadel's Server answers 400.
func (s *keycloakServer) VerifyClient(ctx context.Context, r *op.Request[op.ClientCredentials]) (op.Client, error) {
	c, err := s.LegacyServer.VerifyClient(ctx, r)
	if err != nil {
		var oe *oidc.Error
		if errors.As(err, &oe) && oe.ErrorType == oidc.InvalidClient {
			return nil, op.NewStatusError(oidc.ErrInvalidClient().WithDescription("Invalid client or Invalid client credentials"), http.StatusUnauthorized)
		}
		return nil, err
	}
	return c, nil
}

// exchangeRequest overrides the audience of a validated exchange request with
// the one Keycloak would grant.
type exchangeRequest struct {
	op.TokenExchangeRequest
	audience []string
}

func (r *exchangeRequest) GetAudience() []string { return r.audience }

// TokenExchange refuses what Keycloak's standard token exchange refuses
// before handing the request to zitadel.
func (s *keycloakServer) TokenExchange(ctx context.Context, r *op.ClientRequest[oidc.TokenExchangeRequest]) (*op.Response, error) {
	switch {
	case len(r.Data.Resource) > 0:
		return nil, oidc.ErrInvalidRequest().WithDescription("Parameter 'resource' not supported")
	case r.Data.ActorToken != "" || r.Data.ActorTokenType != "":
		return nil, oidc.ErrInvalidRequest().WithDescription("Parameter 'actor_token' not supported")
	case r.Data.SubjectTokenType != oidc.AccessTokenType:
		return nil, oidc.ErrInvalidRequest().WithDescription("Parameter 'subject_token' supports access tokens only")
	}
	provider := s.Provider()
	req, err := op.CreateTokenExchangeRequest(ctx, r.Data, r.Client, provider)
	if err != nil {
		return nil, err
	}
	aud, err := s.st.exchangeAudience(r.Client.GetID(), r.Data.Audience)
	if err != nil {
		return nil, err
	}
	resp, err := op.CreateTokenExchangeResponse(ctx, &exchangeRequest{TokenExchangeRequest: req, audience: aud}, r.Client, provider)
	if err != nil {
		return nil, err
	}
	return op.NewResponse(resp), nil
}

// RefreshToken keeps Keycloak's error descriptions ("Stale token", "Invalid
// refresh token") that zitadel's LegacyServer drops, and refuses a refresh
// token presented by a client it was not issued to.
func (s *keycloakServer) RefreshToken(ctx context.Context, r *op.ClientRequest[oidc.RefreshTokenRequest]) (*op.Response, error) {
	request, err := s.st.TokenRequestByRefreshToken(ctx, r.Data.RefreshToken)
	if err != nil {
		return nil, err
	}
	if request.GetClientID() != r.Client.GetID() {
		return nil, oidc.ErrInvalidGrant().WithDescription("Invalid refresh token. Token client and authorized client don't match")
	}
	if err := op.ValidateRefreshTokenScopes(r.Data.Scopes, request); err != nil {
		return nil, err
	}
	if resources := r.Form["resource"]; len(resources) > 0 {
		g, ok := request.(*grant)
		if !ok {
			return nil, oidc.ErrServerError()
		}
		if g.audience, err = narrowAudience(g.audience, resources); err != nil {
			return nil, err
		}
	}
	resp, err := op.CreateTokenResponse(ctx, request, r.Client, s.Provider(), true, "", r.Data.RefreshToken)
	if err != nil {
		return nil, err
	}
	return op.NewResponse(resp), nil
}

// Authorize checks the RFC 8707 resource parameters of an authorization
// request (each one of the client's audiences, else invalid_target at the
// redirect URI) and narrows the audience of its tokens to them.
func (s *keycloakServer) Authorize(ctx context.Context, r *op.ClientRequest[oidc.AuthRequest]) (*op.Redirect, error) {
	resources := r.Form["resource"]
	if len(resources) > 0 {
		c, ok := r.Client.(*client)
		if !ok {
			return nil, oidc.ErrServerError()
		}
		if _, err := narrowAudience(c.Audiences, resources); err != nil {
			return op.TryErrorRedirect(ctx, r.Data, err, s.Provider().Encoder(), nil)
		}
		ctx = context.WithValue(ctx, resourceKey{}, slices.Clone(resources))
	}
	return s.LegacyServer.Authorize(ctx, r)
}

// CodeExchange refuses (invalid_target) a resource parameter that the
// authorization request did not name.
func (s *keycloakServer) CodeExchange(ctx context.Context, r *op.ClientRequest[oidc.AccessTokenRequest]) (*op.Response, error) {
	if resources := r.Form["resource"]; len(resources) > 0 {
		authReq, err := op.AuthRequestByCode(ctx, s.Provider().Storage(), r.Data.Code)
		if err != nil {
			return nil, err
		}
		if _, err := narrowAudience(authReq.GetAudience(), resources); err != nil {
			return nil, err
		}
	}
	return s.LegacyServer.CodeExchange(ctx, r)
}

// ClientCredentialsExchange issues a service account token, its audience
// narrowed to the resource parameters (RFC 8707).
func (s *keycloakServer) ClientCredentialsExchange(ctx context.Context, r *op.ClientRequest[oidc.ClientCredentialsRequest]) (*op.Response, error) {
	g, err := s.st.serviceAccountGrant(r.Client.GetID(), r.Data.Scope, r.Form["resource"])
	if err != nil {
		return nil, err
	}
	resp, err := op.CreateClientCredentialsTokenResponse(ctx, g, s.Provider(), r.Client)
	if err != nil {
		return nil, err
	}
	return op.NewResponse(resp), nil
}
