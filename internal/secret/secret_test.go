package secret_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"testing"

	"github.com/candorkit/candor/internal/secret"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const value = "hunter2-very-secret"

func TestSecretNeverPrints(t *testing.T) {
	s := secret.New(value)
	type holder struct {
		Name string
		Key  secret.Secret
		Ptr  *secret.Secret
	}
	h := holder{Name: "n", Key: s, Ptr: &s}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%10s", "%T"} {
		for _, arg := range []any{s, &s, h, &h, []secret.Secret{s}, map[string]secret.Secret{"k": s}} {
			out := fmt.Sprintf(verb, arg)
			assert.NotContains(t, out, value, "%s of %T", verb, arg)
			assert.NotContains(t, out, fmt.Sprintf("%x", value), "%s of %T", verb, arg)
		}
	}
	assert.Equal(t, secret.Redacted, s.String())
	assert.Equal(t, secret.Redacted, fmt.Sprint(s))
	assert.Equal(t, `secret.Secret("[REDACTED]")`, fmt.Sprintf("%#v", s))

	j, err := json.Marshal(h)
	require.NoError(t, err)
	assert.NotContains(t, string(j), value)
	assert.Contains(t, string(j), `"Key":"[REDACTED]"`)

	x, err := xml.Marshal(h)
	require.NoError(t, err)
	assert.NotContains(t, string(x), value)

	var buf bytes.Buffer
	for _, hd := range []slog.Handler{slog.NewTextHandler(&buf, nil), slog.NewJSONHandler(&buf, nil)} {
		l := slog.New(hd)
		l.Info("m", "key", s, "ptr", &s, "holder", h, slog.Any("any", s))
	}
	assert.NotContains(t, buf.String(), value)
	assert.Contains(t, buf.String(), secret.Redacted)

	assert.Equal(t, value, s.Reveal())
	assert.False(t, s.IsZero())
	assert.True(t, secret.Secret{}.IsZero())
	assert.True(t, secret.New("").IsZero())
	assert.True(t, s.Equal(secret.New(value)))
	assert.False(t, s.Equal(secret.New(value+"x")))
}

func TestRedactEncodedForms(t *testing.T) {
	const sec = "p/ss+w&rd é<\"x\">"
	b64 := func(e *base64.Encoding) string { return e.EncodeToString([]byte(sec)) }
	jsonHTML, _ := json.Marshal(sec)
	forms := map[string]string{
		"raw":             sec,
		"query-escaped":   url.QueryEscape(sec),
		"query lower hex": strings.ToLower(url.QueryEscape(sec)),
		"path-escaped":    url.PathEscape(sec),
		"json html":       string(jsonHTML[1 : len(jsonHTML)-1]),
		"json plain":      `p/ss+w&rd é<\"x\">`,
		"json slash":      `p\/ss+w&rd é<\"x\">`,
		"json ascii":      `p/ss+w&rd \u00e9<\"x\">`,
		"base64 std":      b64(base64.StdEncoding),
		"base64 url":      b64(base64.URLEncoding),
		"base64 raw std":  b64(base64.RawStdEncoding),
		"base64 raw url":  b64(base64.RawURLEncoding),
	}
	for name, f := range forms {
		t.Run(name, func(t *testing.T) {
			text := "before " + f + " after"
			assert.Equal(t, "before [REDACTED] after", secret.Redact(text, sec))
		})
	}
}

// The shape an OP echoing a form body gives back (AuthStyleInParams).
func TestRedactFormEchoedBody(t *testing.T) {
	form := url.Values{"client_id": {"agent"}, "client_secret": {"p/ss+w&rd"}, "grant_type": {"refresh_token"}}
	body := `{"error":"invalid_request","echo":"` + form.Encode() + `"}`
	require.Contains(t, body, "client_secret=p%2Fss%2Bw%26rd")
	got := secret.Redact(body, "p/ss+w&rd")
	assert.NotContains(t, got, "p%2Fss%2Bw%26rd")
	assert.Contains(t, got, "client_secret=[REDACTED]")
	assert.Contains(t, got, `"error":"invalid_request"`)
}

func TestRedactBasicHeaderEcho(t *testing.T) {
	id, pw := "agent-client", "p/ss+w&rd"
	std := base64.StdEncoding.EncodeToString([]byte(id + ":" + pw))
	oauth := base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(id) + ":" + url.QueryEscape(pw)))
	text := "Authorization: Basic " + std + "\nAuthorization: Basic " + oauth
	got := secret.Redact(text, pw, secret.Basic(id, pw), secret.Basic(url.QueryEscape(id), url.QueryEscape(pw)))
	assert.Equal(t, "Authorization: Basic [REDACTED]\nAuthorization: Basic [REDACTED]", got)
	assert.Equal(t, "agent-client:p/ss+w&rd", secret.Basic(id, pw))
}

func TestRedactShortSecretOnlyWholeTokens(t *testing.T) {
	cases := []struct {
		name, text, sec, want string
	}{
		{"inside an error code", `{"error":"invalid_grant"}`, "grant", `{"error":"invalid_grant"}`},
		{"prefix of a word", "granted", "grant", "granted"},
		{"as a form value", "client_secret=grant&x=1", "grant", "client_secret=[REDACTED]&x=1"},
		{"json value", `{"refresh_token":"grant"}`, "grant", `{"refresh_token":"[REDACTED]"}`},
		{"alone", "grant", "grant", "[REDACTED]"},
		{"query-escaped short", "s=a%2Bb&", "a+b", "s=[REDACTED]&"},
		{"inside digits", "code 1234567", "234", "code 1234567"},
		{"non-word edges", "x=+&+y", "+&+", "x=[REDACTED]y"},
		{"unicode word", "éabc", "abc", "éabc"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, secret.Redact(c.text, c.sec))
		})
	}
	// From MinSubstringLen bytes, any occurrence goes.
	assert.Equal(t, "invalid_[REDACTED]", secret.Redact("invalid_granting", "granting"))
}

func TestRedactOverlapsAndEdges(t *testing.T) {
	assert.Equal(t, "x", secret.Redact("x"))
	assert.Equal(t, "x", secret.Redact("x", ""))
	assert.Equal(t, "", secret.Redact("", "abcdefgh"))
	// Overlapping matches of two secrets collapse into one.
	assert.Equal(t, "<[REDACTED]>", secret.Redact("<abcdefghijkl>", "abcdefgh", "efghijkl"))
	// Adjacent occurrences.
	assert.Equal(t, "[REDACTED][REDACTED]", secret.Redact("abcdefghabcdefgh", "abcdefgh"))
	// A secret that looks like the marker does not loop or double-redact.
	assert.Equal(t, "[[REDACTED]]", secret.Redact("[REDACTED]", "REDACTED"))
	assert.Equal(t, []byte("a [REDACTED] b"), secret.RedactBytes([]byte("a abcdefgh b"), "abcdefgh"))
}

func FuzzRedact(f *testing.F) {
	f.Add("client_secret=p%2Fss%2Bw%26rd", "p/ss+w&rd")
	f.Add("invalid_grant", "grant")
	f.Fuzz(func(t *testing.T, text, sec string) {
		got := secret.Redact(text, sec)
		if len(sec) >= secret.MinSubstringLen && !strings.Contains(secret.Redacted, sec) {
			assert.NotContains(t, got, sec)
		}
		if sec == "" {
			assert.Equal(t, text, got)
		}
	})
}

// TestUnexportedFieldNeverPrints pins why the value sits behind a pointer:
// fmt reaches an unexported field by reflection, without calling Format.
func TestUnexportedFieldNeverPrints(t *testing.T) {
	type holder struct {
		name string
		key  secret.Secret
	}
	h := holder{name: "n8n", key: secret.New("hunter2-long-value")}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%x", "%q"} {
		out := fmt.Sprintf(verb, h)
		if strings.Contains(out, "hunter2") || strings.Contains(out, fmt.Sprintf("%x", "hunter2")) {
			t.Errorf("%s of a struct holding a Secret in an unexported field printed the value: %s", verb, out)
		}
	}
}
