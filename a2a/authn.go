package a2a

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
)

// identity is who a JSON-RPC call was authenticated as.
type identity struct {
	owner  string // the task store's owner key
	caller Caller // zero with WithUnverifiedTokens or without a token
	token  string // the bearer token, "" for a no-identity call
}

type identityKey struct{}

func identityFrom(ctx context.Context) (identity, bool) {
	who, ok := ctx.Value(identityKey{}).(identity)
	return who, ok
}

// noIdentityOwner owns the tasks made for tokenless messages under
// WithNoIdentityTasks. Every other owner starts with "caller:" or
// "bearer-sha256:", so no caller with a token is this owner.
const noIdentityOwner = "no identity"

// callerOwner names the owner of a verified caller's tasks: the issuer and
// the subject, quoted so that no pair can collide with another.
func callerOwner(c Caller) string {
	return "caller:" + strconv.Quote(c.Issuer) + ":" + strconv.Quote(c.Subject)
}

// fingerprint names the owner of an unverified token's tasks without
// keeping the token.
func fingerprint(token string) string {
	sum := sha256.Sum256([]byte(token))
	return "bearer-sha256:" + hex.EncodeToString(sum[:16])
}

// bearerOf extracts the token of "Authorization: Bearer <token>". present is
// false when the request carries no bearer credential at all (no header, or
// another scheme); ok is false for a Bearer header that is malformed.
func bearerOf(h http.Header) (token string, present, ok bool) {
	vals := h.Values("Authorization")
	if len(vals) == 0 {
		return "", false, false
	}
	scheme, tok, _ := strings.Cut(strings.TrimSpace(vals[0]), " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", false, false
	}
	tok = strings.TrimSpace(tok)
	if len(vals) > 1 || tok == "" || strings.ContainsAny(tok, " \t") {
		return "", true, false
	}
	return tok, true, true
}

// tokenlessAllowed reports whether a call without a token may go on under
// WithNoIdentityTasks: sending a message (which then fails "no identity")
// and reading one such task by id.
func tokenlessAllowed(method string) bool {
	switch method {
	case "message/send", "SendMessage", "tasks/get", "GetTask":
		return true
	}
	return false
}

// authenticate decides who the call is before anything is done for it. On
// refusal it has written the answer: 401 (no or a bad token) or 403 (a
// missing scope) with WWW-Authenticate, or 503 when the token could not be
// checked.
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request, id json.RawMessage, method string) (identity, bool) {
	tok, present, wellFormed := bearerOf(r.Header)
	switch {
	case !present && s.noIdentity && tokenlessAllowed(method):
		return identity{owner: noIdentityOwner}, true
	case !present:
		refuse(w, http.StatusUnauthorized, `Bearer`, id, codeUnauthenticated, "an Authorization: Bearer token is required")
		return identity{}, false
	case !wellFormed:
		refuse(w, http.StatusUnauthorized, `Bearer error="invalid_request"`, id, codeUnauthenticated, "the Authorization header is not one well-formed Bearer token")
		return identity{}, false
	case s.verifier == nil: // WithUnverifiedTokens
		return identity{owner: fingerprint(tok), token: tok}, true
	}
	c, err := s.verifier.Verify(r.Context(), tok)
	if err == nil && strings.TrimSpace(c.Subject) == "" {
		err = errors.New("a2a: the verifier returned a caller without a subject")
		err = errors.Join(ErrInvalidToken, err)
	}
	switch {
	case err == nil:
		return identity{owner: callerOwner(c), caller: c, token: tok}, true
	case errors.Is(err, ErrInsufficientScope):
		s.log.WarnContext(r.Context(), "a2a call refused: insufficient scope", "method", method, "error", err)
		refuse(w, http.StatusForbidden, `Bearer error="insufficient_scope"`, id, codeUnauthorized, "the bearer token does not grant access to this agent")
	case errors.Is(err, ErrInvalidToken):
		s.log.InfoContext(r.Context(), "a2a call refused: invalid token", "method", method, "error", err)
		refuse(w, http.StatusUnauthorized, `Bearer error="invalid_token"`, id, codeUnauthenticated, "the bearer token is not valid")
	default:
		s.log.ErrorContext(r.Context(), "a2a call refused: the token could not be verified", "method", method, "error", err)
		w.Header().Set("Retry-After", "5")
		writeRPCError(w, http.StatusServiceUnavailable, id, codeInternal, "the bearer token could not be verified now; retry later")
	}
	return identity{}, false
}

func refuse(w http.ResponseWriter, status int, challenge string, id json.RawMessage, code int, msg string) {
	w.Header().Set("WWW-Authenticate", challenge)
	writeRPCError(w, status, id, code, msg)
}
