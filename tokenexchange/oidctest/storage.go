package oidctest

import (
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// grant is what the provider remembers about one issued token: whose it is,
// which client holds it, and what it may be used for. It implements the
// zitadel request interfaces the OP passes back into storage.
type grant struct {
	subject  string
	clientID string
	audience []string
	scopes   []string
	authTime time.Time
}

func (g *grant) GetAMR() []string                 { return []string{"pwd"} }
func (g *grant) GetAudience() []string            { return g.audience }
func (g *grant) GetAuthTime() time.Time           { return g.authTime }
func (g *grant) GetClientID() string              { return g.clientID }
func (g *grant) GetScopes() []string              { return g.scopes }
func (g *grant) GetSubject() string               { return g.subject }
func (g *grant) SetCurrentScopes(scopes []string) { g.scopes = scopes }

type accessRecord struct {
	grant
	expires time.Time
	revoked bool
}

type refreshRecord struct {
	grant
	id      string
	expires time.Time
	// used is set when the token was rotated away; presenting it again is
	// refused like Keycloak does with "Revoke Refresh Token" on.
	used    bool
	revoked bool
}

// storage implements op.Storage and op.TokenExchangeStorage in memory. All
// state belongs to one Provider: nothing is shared between providers.
type storage struct {
	mu       sync.Mutex
	clients  map[string]*client
	users    map[string]User
	access   map[string]*accessRecord  // by jti
	refresh  map[string]*refreshRecord // by token value
	auth     map[string]*authRequest   // authorization requests by ID
	codes    map[string]string         // authorization codes to request IDs
	keyMu    sync.Mutex                // guards key, keyID and retired; never taken with mu held by a caller of mu
	key      *ecdsa.PrivateKey
	keyID    string
	retired  []signingKey // keys RotateKey replaced, still published for verification
	rotate   bool
	lifetime time.Duration
	offline  time.Duration
}

var errNotSupported = errors.New("oidctest: not supported by the test provider")

func randomString(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never returns an error (Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b)
}

func (s *storage) lookupClient(id string) (*client, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.clients[id]
	return c, ok
}

// --- AuthStorage: the authorization code flow of clients with redirect URIs. ---

// authRequest is one authorization request, from the authorization
// endpoint to the redemption of its code.
type authRequest struct {
	id       string
	req      oidc.AuthRequest
	audience []string
	scopes   []string
	subject  string
	authTime time.Time
	done     bool
}

func (a *authRequest) GetID() string         { return a.id }
func (a *authRequest) GetACR() string        { return "" }
func (a *authRequest) GetAMR() []string      { return []string{"pwd"} }
func (a *authRequest) GetAudience() []string { return a.audience }
func (a *authRequest) GetAuthTime() time.Time {
	return a.authTime
}
func (a *authRequest) GetClientID() string { return a.req.ClientID }
func (a *authRequest) GetCodeChallenge() *oidc.CodeChallenge {
	if a.req.CodeChallenge == "" {
		return nil
	}
	return &oidc.CodeChallenge{Challenge: a.req.CodeChallenge, Method: a.req.CodeChallengeMethod}
}
func (a *authRequest) GetNonce() string                   { return a.req.Nonce }
func (a *authRequest) GetRedirectURI() string             { return a.req.RedirectURI }
func (a *authRequest) GetResponseType() oidc.ResponseType { return a.req.ResponseType }
func (a *authRequest) GetResponseMode() oidc.ResponseMode { return a.req.ResponseMode }
func (a *authRequest) GetScopes() []string                { return a.scopes }
func (a *authRequest) GetState() string                   { return a.req.State }
func (a *authRequest) GetSubject() string                 { return a.subject }
func (a *authRequest) Done() bool                         { return a.done }

// resourceKey carries the RFC 8707 resource parameters of an authorization
// request from the server to CreateAuthRequest.
type resourceKey struct{}

func (s *storage) CreateAuthRequest(ctx context.Context, req *oidc.AuthRequest, _ string) (op.AuthRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.clients[req.ClientID]
	if !ok || len(c.Client.RedirectURIs) == 0 {
		return nil, oidc.ErrUnauthorizedClient().WithDescription("Client is not allowed to initiate browser login")
	}
	if c.public() && (req.CodeChallenge == "" || req.CodeChallengeMethod != oidc.CodeChallengeMethodS256) {
		return nil, oidc.ErrInvalidRequest().WithDescription("Missing parameter: code_challenge_method")
	}
	resources, _ := ctx.Value(resourceKey{}).([]string)
	aud, err := narrowAudience(c.Audiences, resources)
	if err != nil {
		return nil, err
	}
	scopes := slices.Clone(c.DefaultScopes)
	for _, sc := range req.Scopes {
		if c.allows(sc) && !slices.Contains(scopes, sc) {
			scopes = append(scopes, sc)
		}
	}
	a := &authRequest{id: randomString(16), req: *req, audience: aud, scopes: scopes}
	s.auth[a.id] = a
	return a, nil
}

func (s *storage) AuthRequestByID(_ context.Context, id string) (op.AuthRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.auth[id]
	if !ok {
		return nil, oidc.ErrInvalidRequest().WithDescription("Invalid authorization request")
	}
	return a, nil
}

func (s *storage) AuthRequestByCode(_ context.Context, code string) (op.AuthRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.auth[s.codes[code]]
	if !ok {
		return nil, oidc.ErrInvalidGrant().WithDescription("Code not valid")
	}
	return a, nil
}

func (s *storage) SaveAuthCode(_ context.Context, id, code string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.auth[id]; !ok {
		return oidc.ErrInvalidRequest().WithDescription("Invalid authorization request")
	}
	s.codes[code] = id
	return nil
}

// DeleteAuthRequest forgets a redeemed request, so its code is refused
// afterwards.
func (s *storage) DeleteAuthRequest(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.auth, id)
	for code, rid := range s.codes {
		if rid == id {
			delete(s.codes, code)
		}
	}
	return nil
}

// approve completes authorization request id as logged in by userID.
func (s *storage) approve(id, userID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.auth[id]
	if !ok {
		return errors.New("unknown authorization request")
	}
	if _, ok := s.users[userID]; !ok {
		return errors.New("unknown user")
	}
	a.subject, a.authTime, a.done = userID, time.Now(), true
	return nil
}

// narrowAudience applies RFC 8707: with resource parameters, the token's
// audience is exactly those, and each must be one of the client's
// audiences (else invalid_target); without, it is the client's audiences.
func narrowAudience(audiences, resources []string) ([]string, error) {
	if len(resources) == 0 {
		return slices.Clone(audiences), nil
	}
	var out []string
	for _, r := range resources {
		if !slices.Contains(audiences, r) {
			return nil, oidc.ErrInvalidTarget().WithDescription("Invalid resource: %s", r)
		}
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out, nil
}

// --- ClientCredentialsStorage: clients with ClientCredentials set. ---

func (s *storage) ClientCredentials(_ context.Context, id, secret string) (op.Client, error) {
	c, ok := s.lookupClient(id)
	if !ok || c.Secret == "" || !constantTimeEqual(c.Secret, secret) {
		return nil, oidc.ErrInvalidClient()
	}
	if !c.ClientCredentials {
		return nil, oidc.ErrUnauthorizedClient().WithDescription("Client not enabled to retrieve service account")
	}
	return c, nil
}

func (s *storage) ClientCredentialsTokenRequest(_ context.Context, id string, scopes []string) (op.TokenRequest, error) {
	return s.serviceAccountGrant(id, scopes, nil)
}

// serviceAccountGrant is the grant of a client_credentials request of
// client id for scopes and resources.
func (s *storage) serviceAccountGrant(id string, scopes, resources []string) (*grant, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.clients[id]
	if !ok {
		return nil, oidc.ErrInvalidClient()
	}
	granted := slices.Clone(c.DefaultScopes)
	var invalid []string
	for _, sc := range scopes {
		switch {
		case slices.Contains(granted, sc):
		case c.allows(sc):
			granted = append(granted, sc)
		default:
			invalid = append(invalid, sc)
		}
	}
	if len(invalid) > 0 {
		return nil, oidc.ErrInvalidScope().WithDescription("Invalid scopes: %s", strings.Join(invalid, " "))
	}
	aud, err := narrowAudience(c.Audiences, resources)
	if err != nil {
		return nil, err
	}
	return &grant{subject: "service-account-" + id, clientID: id, audience: aud, scopes: granted, authTime: time.Now()}, nil
}

func (s *storage) accessLifetime(clientID string) time.Duration {
	if c, ok := s.clients[clientID]; ok && c.AccessTokenLifetime > 0 {
		return c.AccessTokenLifetime
	}
	return s.lifetime
}

func grantOf(request op.TokenRequest) grant {
	g := grant{
		subject:  request.GetSubject(),
		audience: slices.Clone(request.GetAudience()),
		scopes:   slices.Clone(request.GetScopes()),
		authTime: time.Now(),
	}
	if c, ok := request.(interface{ GetClientID() string }); ok {
		g.clientID = c.GetClientID()
	}
	return g
}

func (s *storage) CreateAccessToken(_ context.Context, request op.TokenRequest) (string, time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.newAccessLocked(grantOf(request))
}

func (s *storage) newAccessLocked(g grant) (string, time.Time, error) {
	id := randomString(16)
	exp := time.Now().Add(s.accessLifetime(g.clientID)).UTC()
	s.access[id] = &accessRecord{grant: g, expires: exp}
	return id, exp, nil
}

func (s *storage) newRefreshLocked(g grant) string {
	token := randomString(32)
	s.refresh[token] = &refreshRecord{grant: g, id: randomString(12), expires: time.Now().Add(s.offline)}
	return token
}

func (s *storage) CreateAccessAndRefreshTokens(_ context.Context, request op.TokenRequest, current string) (string, string, time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := grantOf(request)
	next := current
	if current != "" {
		rec, ok := s.refresh[current]
		if !ok || rec.revoked || rec.used {
			// Two refreshes raced with the same token: only the first wins.
			return "", "", time.Time{}, oidc.ErrInvalidGrant().WithDescription("Stale token")
		}
		g.clientID = rec.clientID
		if s.rotate {
			rec.used = true
			next = s.newRefreshLocked(g)
		}
	} else {
		if _, isExchange := request.(op.TokenExchangeRequest); isExchange {
			return "", "", time.Time{}, oidc.ErrInvalidRequest().WithDescription("requested_token_type unsupported")
		}
		next = s.newRefreshLocked(g)
	}
	id, exp, err := s.newAccessLocked(g)
	return id, next, exp, err
}

func (s *storage) TokenRequestByRefreshToken(_ context.Context, token string) (op.RefreshTokenRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.refresh[token]
	switch {
	case !ok:
		return nil, oidc.ErrInvalidGrant().WithDescription("Invalid refresh token")
	case rec.revoked:
		return nil, oidc.ErrInvalidGrant().WithDescription("Session not active")
	case rec.used:
		return nil, oidc.ErrInvalidGrant().WithDescription("Stale token")
	case time.Now().After(rec.expires):
		return nil, oidc.ErrInvalidGrant().WithDescription("Offline session not active")
	}
	g := rec.grant
	g.audience = slices.Clone(s.audiencesLocked(rec.clientID))
	g.scopes = slices.Clone(rec.scopes)
	return &g, nil
}

func (s *storage) audiencesLocked(clientID string) []string {
	if c, ok := s.clients[clientID]; ok {
		return c.Audiences
	}
	return nil
}

func (s *storage) TerminateSession(_ context.Context, userID, clientID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.refresh {
		if r.subject == userID && r.clientID == clientID {
			r.revoked = true
		}
	}
	return nil
}

func (s *storage) RevokeToken(_ context.Context, tokenOrID, _ string, clientID string) *oidc.Error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.refresh[tokenOrID]; ok {
		if r.clientID != clientID {
			return oidc.ErrInvalidClient().WithDescription("token was not issued to this client")
		}
		r.revoked = true
		return nil
	}
	if a, ok := s.access[tokenOrID]; ok {
		a.revoked = true
	}
	return nil
}

func (s *storage) GetRefreshTokenInfo(_ context.Context, clientID, token string) (string, string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.refresh[token]
	if !ok || r.clientID != clientID {
		return "", "", op.ErrInvalidRefreshToken
	}
	return r.subject, token, nil
}

type signingKey struct {
	id  string
	key *ecdsa.PrivateKey
}

func (k signingKey) SignatureAlgorithm() jose.SignatureAlgorithm { return jose.ES256 }
func (k signingKey) Key() any                                    { return k.key }
func (k signingKey) ID() string                                  { return k.id }

type publicKey struct{ signingKey }

func (k publicKey) Algorithm() jose.SignatureAlgorithm { return jose.ES256 }
func (k publicKey) Use() string                        { return "sig" }
func (k publicKey) Key() any                           { return &k.key.PublicKey }

func (s *storage) SigningKey(context.Context) (op.SigningKey, error) {
	s.keyMu.Lock()
	defer s.keyMu.Unlock()
	return signingKey{id: s.keyID, key: s.key}, nil
}
func (s *storage) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{jose.ES256}, nil
}
func (s *storage) KeySet(context.Context) ([]op.Key, error) {
	s.keyMu.Lock()
	defer s.keyMu.Unlock()
	keys := []op.Key{publicKey{signingKey{id: s.keyID, key: s.key}}}
	for _, k := range s.retired {
		keys = append(keys, publicKey{k})
	}
	return keys, nil
}

// --- OPStorage ---

func (s *storage) GetClientByClientID(_ context.Context, id string) (op.Client, error) {
	c, ok := s.lookupClient(id)
	if !ok {
		return nil, fmt.Errorf("client %q not found", id)
	}
	return c, nil
}

func (s *storage) AuthorizeClientIDSecret(_ context.Context, id, secret string) error {
	c, ok := s.lookupClient(id)
	if !ok || c.Secret == "" || !constantTimeEqual(c.Secret, secret) {
		return errors.New("invalid client credentials")
	}
	return nil
}

func (s *storage) userInfo(info *oidc.UserInfo, userID string, scopes []string) error {
	s.mu.Lock()
	u, ok := s.users[userID]
	s.mu.Unlock()
	if !ok {
		return fmt.Errorf("user %q not found", userID)
	}
	info.Subject = u.ID
	if slices.Contains(scopes, oidc.ScopeProfile) {
		info.PreferredUsername = u.Username
		info.Name = u.Name
	}
	if slices.Contains(scopes, oidc.ScopeEmail) {
		info.Email = u.Email
		info.EmailVerified = oidc.Bool(u.Email != "")
	}
	return nil
}

func (s *storage) SetUserinfoFromScopes(context.Context, *oidc.UserInfo, string, string, []string) error {
	return nil
}

func (s *storage) SetUserinfoFromRequest(_ context.Context, info *oidc.UserInfo, request op.IDTokenRequest, scopes []string) error {
	return s.userInfo(info, request.GetSubject(), scopes)
}

func (s *storage) SetUserinfoFromToken(_ context.Context, info *oidc.UserInfo, tokenID, subject, _ string) error {
	s.mu.Lock()
	rec, ok := s.access[tokenID]
	s.mu.Unlock()
	if !ok || rec.revoked || time.Now().After(rec.expires) {
		return errors.New("token is not active")
	}
	return s.userInfo(info, subject, rec.scopes)
}

func (s *storage) SetIntrospectionFromToken(_ context.Context, resp *oidc.IntrospectionResponse, tokenID, subject, _ string) error {
	s.mu.Lock()
	rec, ok := s.access[tokenID]
	s.mu.Unlock()
	if !ok || rec.revoked || time.Now().After(rec.expires) {
		return errors.New("token is not active")
	}
	resp.Subject = subject
	resp.ClientID = rec.clientID
	resp.Audience = rec.audience
	resp.Scope = rec.scopes
	resp.Expiration = oidc.FromTime(rec.expires)
	resp.TokenType = oidc.BearerToken
	resp.Claims = map[string]any{"azp": rec.clientID}
	return nil
}

func (s *storage) GetPrivateClaimsFromScopes(context.Context, string, string, []string) (map[string]any, error) {
	return map[string]any{}, nil
}

// GetPrivateClaimsFromRequest adds azp and scope, as Keycloak does, to
// every access token that is not the result of an exchange.
func (s *storage) GetPrivateClaimsFromRequest(_ context.Context, request op.TokenRequest, _ []string) (map[string]any, error) {
	g := grantOf(request)
	return map[string]any{"azp": g.clientID, "scope": strings.Join(g.scopes, " ")}, nil
}

func (s *storage) GetKeyByIDAndClientID(context.Context, string, string) (*jose.JSONWebKey, error) {
	return nil, errNotSupported
}

func (s *storage) ValidateJWTProfileScopes(context.Context, string, []string) ([]string, error) {
	return nil, errNotSupported
}

func (s *storage) Health(context.Context) error { return nil }

// --- TokenExchangeStorage ---

// ValidateTokenExchangeRequest applies the Keycloak rules that zitadel's OP
// leaves to storage: the requesting client must hold the subject token or be
// in its audience (else 403 access_denied), the default requested token type
// is an access token, refresh tokens are not issued by an exchange, and the
// scope parameter may only add the client's optional scopes.
func (s *storage) ValidateTokenExchangeRequest(_ context.Context, request op.TokenExchangeRequest) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	requester := request.GetClientID()
	c, ok := s.clients[requester]
	if !ok {
		return oidc.ErrInvalidClient()
	}
	rec, ok := s.access[request.GetExchangeSubjectTokenIDOrToken()]
	if !ok || rec.revoked || time.Now().After(rec.expires) {
		return oidc.ErrInvalidRequest().WithDescription("subject_token is invalid")
	}
	if rec.clientID != requester && !slices.Contains(rec.audience, requester) {
		return op.NewStatusError(oidc.ErrAccessDenied().WithDescription("Client is not within the token audience"), http.StatusForbidden)
	}
	switch request.GetRequestedTokenType() {
	case "":
		request.SetRequestedTokenType(oidc.AccessTokenType)
	case oidc.AccessTokenType, oidc.IDTokenType:
	default:
		return oidc.ErrInvalidRequest().WithDescription("requested_token_type unsupported")
	}
	scopes := slices.Clone(c.DefaultScopes)
	var invalid []string
	for _, sc := range request.GetScopes() {
		switch {
		case slices.Contains(scopes, sc):
		case slices.Contains(c.OptionalScopes, sc):
			scopes = append(scopes, sc)
		default:
			invalid = append(invalid, sc)
		}
	}
	if len(invalid) > 0 {
		return oidc.ErrInvalidScope().WithDescription("Invalid scopes: %s", strings.Join(invalid, " "))
	}
	request.SetCurrentScopes(scopes)
	return nil
}

func (s *storage) CreateTokenExchangeRequest(context.Context, op.TokenExchangeRequest) error {
	return nil
}

func (s *storage) GetPrivateClaimsFromTokenExchangeRequest(_ context.Context, request op.TokenExchangeRequest) (map[string]any, error) {
	return map[string]any{"azp": request.GetClientID(), "scope": strings.Join(request.GetScopes(), " ")}, nil
}

func (s *storage) SetUserinfoFromTokenExchangeRequest(_ context.Context, info *oidc.UserInfo, request op.TokenExchangeRequest) error {
	return s.userInfo(info, request.GetSubject(), request.GetScopes())
}

// exchangeAudience is Keycloak's audience rule: the exchanged token carries
// the audiences the requesting client's own mappers produce; the audience
// parameter filters them and never adds one.
func (s *storage) exchangeAudience(requester string, requested []string) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	available := s.audiencesLocked(requester)
	if len(requested) == 0 {
		return slices.Clone(available), nil
	}
	var missing []string
	for _, a := range requested {
		if !slices.Contains(available, a) || a == requester {
			missing = append(missing, a)
		}
	}
	if len(missing) > 0 {
		return nil, oidc.ErrInvalidRequest().WithDescription("Requested audience not available: %s", strings.Join(missing, ", "))
	}
	out := slices.Clone(requested)
	slices.Sort(out)
	return slices.Compact(out), nil
}
