package tokenexchange

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"golang.org/x/oauth2"
)

// Sentinel errors. Match them with errors.Is.
var (
	// ErrConfig reports a Config that cannot be used (missing TokenURL or
	// client credentials, an unknown AuthStyle, a plain-http token URL that
	// is not loopback). Nothing was sent.
	ErrConfig = errors.New("tokenexchange: invalid config")
	// ErrNoSubjectToken reports an empty subject token. Nothing was sent.
	ErrNoSubjectToken = errors.New("tokenexchange: no subject token")
	// ErrInvalidResponse reports a success status whose body is not a usable
	// token response: not JSON, too large, or missing access_token,
	// issued_token_type or token_type. See *ResponseError.
	ErrInvalidResponse = errors.New("tokenexchange: invalid token response")

	// ErrNoMandate reports that the agent holds no usable mandate for the
	// user. errors.Is(err, ErrNoMandate) is also true for ErrMandateRevoked,
	// ErrMandateUnreadable and ErrMandateRejected: in every case the agent
	// has no authority and must stop.
	ErrNoMandate = errors.New("tokenexchange: no mandate")
	// ErrMandateRevoked reports a mandate the user revoked.
	ErrMandateRevoked = errors.New("tokenexchange: mandate revoked")
	// ErrMandateUnreadable reports a sealed mandate the store's key cannot
	// open: a wrong key, or a row that was tampered with or moved.
	ErrMandateUnreadable = errors.New("tokenexchange: mandate cannot be opened with this key")
	// ErrMandateRejected reports that the provider refused the stored
	// refresh token (invalid_grant): expired, revoked at the provider, or
	// already rotated by someone else.
	ErrMandateRejected = errors.New("tokenexchange: provider rejected the mandate")
	// ErrUnknownAgent reports an agent the MandateStore has no Config for.
	ErrUnknownAgent = errors.New("tokenexchange: unknown agent")
	// ErrRotationNotPersisted reports that the provider rotated the refresh
	// token but the new one could not be stored; no access token is
	// returned, and the mandate may have to be granted again.
	ErrRotationNotPersisted = errors.New("tokenexchange: rotated refresh token not persisted")
	// ErrProviderNotRevoked reports a MandateStore.Revoke that revoked the
	// mandate in the store (Token will never redeem it again) but could not
	// revoke the refresh token at the provider's RevocationURL: the
	// provider refused or could not be reached, or the key cannot open the
	// sealed token. The token may stay valid there until it expires, held
	// by no one.
	ErrProviderNotRevoked = errors.New("tokenexchange: mandate revoked in the store but not at the provider")
)

const redacted = "[REDACTED]"

// Error is an OAuth error answer from the token endpoint (RFC 6749 §5.2), or
// any non-2xx answer. It wraps the *oauth2.RetrieveError, so
// errors.As(err, &retrieveErr) works and ErrorCode, ErrorDescription and
// ErrorURI are kept. The body is kept as evidence, with every secret that
// was sent (subject token, refresh token, client secret) blanked out.
type Error struct {
	// Op is "exchange", "refresh" or "revoke".
	Op string
	// StatusCode is the HTTP status of the answer.
	StatusCode int
	// Retrieve carries error, error_description, error_uri and the body.
	// Its Response has no Request, so it holds no credential.
	Retrieve *oauth2.RetrieveError
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "tokenexchange: %s: token endpoint answered %d %s", e.Op, e.StatusCode, http.StatusText(e.StatusCode))
	if e.Retrieve != nil && e.Retrieve.ErrorCode != "" {
		b.WriteString(": ")
		b.WriteString(e.Retrieve.ErrorCode)
		if e.Retrieve.ErrorDescription != "" {
			fmt.Fprintf(&b, " (%s)", e.Retrieve.ErrorDescription)
		}
	} else {
		b.WriteString(" without an OAuth error code")
	}
	return b.String()
}

// Unwrap returns the *oauth2.RetrieveError.
func (e *Error) Unwrap() error { return e.Retrieve }

// Code is the OAuth error code (for example "invalid_request"), or "".
func (e *Error) Code() string {
	if e.Retrieve == nil {
		return ""
	}
	return e.Retrieve.ErrorCode
}

// Description is the OAuth error_description, or "".
func (e *Error) Description() string {
	if e.Retrieve == nil {
		return ""
	}
	return e.Retrieve.ErrorDescription
}

// Format prints Error() for every verb, so %+v and %#v cannot reach the body.
func (e *Error) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(e.Error())) }

// LogValue logs the status and OAuth error fields only.
func (e *Error) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("op", e.Op),
		slog.Int("status", e.StatusCode),
		slog.String("error", e.Code()),
		slog.String("error_description", e.Description()),
	)
}

// ResponseError reports a success status whose body is not a usable token
// response. errors.Is(err, ErrInvalidResponse) is true. Body is the answer
// as received (at most MaxResponseBytes) with the values of access_token,
// refresh_token and id_token replaced when it is JSON; it is evidence and is
// never printed by Error, Format or LogValue.
type ResponseError struct {
	Op         string
	StatusCode int
	Reason     string
	Body       []byte
}

func (e *ResponseError) Error() string {
	return fmt.Sprintf("tokenexchange: %s: invalid token response (status %d): %s", e.Op, e.StatusCode, e.Reason)
}

// Is matches ErrInvalidResponse.
func (e *ResponseError) Is(target error) bool { return target == ErrInvalidResponse }

// Format prints Error() for every verb.
func (e *ResponseError) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(e.Error())) }

// LogValue logs the reason and status, never the body.
func (e *ResponseError) LogValue() slog.Value {
	return slog.GroupValue(slog.String("op", e.Op), slog.Int("status", e.StatusCode), slog.String("reason", e.Reason))
}

// MandateError is returned by MandateStore. Kind is one of the mandate
// sentinels (ErrNoMandate, ErrMandateRevoked, ErrMandateUnreadable,
// ErrMandateRejected, ErrUnknownAgent, ErrRotationNotPersisted,
// ErrProviderNotRevoked) or nil; Err
// is the underlying cause (a database error, an *Error from the provider) or
// nil. Both are reachable with errors.Is and errors.As.
type MandateError struct {
	User  string
	Agent string
	Kind  error
	Err   error
}

func (e *MandateError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "tokenexchange: mandate of user %q for agent %q", e.User, e.Agent)
	if e.Kind != nil {
		b.WriteString(": ")
		b.WriteString(strings.TrimPrefix(e.Kind.Error(), "tokenexchange: "))
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns Kind and Err.
func (e *MandateError) Unwrap() []error {
	var out []error
	if e.Kind != nil {
		out = append(out, e.Kind)
	}
	if e.Err != nil {
		out = append(out, e.Err)
	}
	return out
}

// Is makes every "no authority" kind match ErrNoMandate.
func (e *MandateError) Is(target error) bool {
	if target != ErrNoMandate {
		return false
	}
	switch e.Kind {
	case ErrMandateRevoked, ErrMandateUnreadable, ErrMandateRejected:
		return true
	}
	return false
}

// scrub replaces every occurrence of each secret in s.
func scrub(s string, secrets []string) string {
	for _, sec := range secrets {
		if sec != "" {
			s = strings.ReplaceAll(s, sec, redacted)
		}
	}
	return s
}

func scrubBytes(b []byte, secrets []string) []byte {
	out := bytes.Clone(b)
	for _, sec := range secrets {
		if sec != "" {
			out = bytes.ReplaceAll(out, []byte(sec), []byte(redacted))
		}
	}
	return out
}

// redactBody blanks the token values of a JSON object body and every known
// secret anywhere in it.
func redactBody(body []byte, secrets []string) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) == nil && m != nil {
		changed := false
		for k, v := range m {
			if !isTokenField(k) {
				continue
			}
			var s string
			if json.Unmarshal(v, &s) == nil && s != "" {
				secrets = append(secrets, s)
			}
			m[k] = json.RawMessage(`"` + redacted + `"`)
			changed = true
		}
		if changed {
			if out, err := json.Marshal(m); err == nil {
				return scrubBytes(out, secrets)
			}
		}
	}
	return scrubBytes(body, secrets)
}
