package mcpauth

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseChallenges(t *testing.T) {
	cases := []struct {
		name   string
		values []string
		want   []challenge
	}{
		{"bearer with params", []string{`Bearer realm="mcp", error="invalid_token", scope="a b"`},
			[]challenge{{scheme: "bearer", params: map[string]string{"realm": "mcp", "error": "invalid_token", "scope": "a b"}}}},
		{"case-insensitive scheme and names", []string{`BEARER Resource_Metadata="https://x/.well-known/oauth-protected-resource"`},
			[]challenge{{scheme: "bearer", params: map[string]string{"resource_metadata": "https://x/.well-known/oauth-protected-resource"}}}},
		{"quoted escapes", []string{`Bearer error_description="say \"no\" \\ twice", scope=a`},
			[]challenge{{scheme: "bearer", params: map[string]string{"error_description": `say "no" \ twice`, "scope": "a"}}}},
		{"two challenges in one value", []string{`Basic realm="x", Bearer scope="s", error=insufficient_scope`},
			[]challenge{{scheme: "basic", params: map[string]string{"realm": "x"}}, {scheme: "bearer", params: map[string]string{"scope": "s", "error": "insufficient_scope"}}}},
		{"values in several headers", []string{`Basic realm="x"`, `Bearer scope="s"`},
			[]challenge{{scheme: "basic", params: map[string]string{"realm": "x"}}, {scheme: "bearer", params: map[string]string{"scope": "s"}}}},
		{"token68", []string{`Negotiate YIIB+/9w==, Bearer scope="s"`},
			[]challenge{{scheme: "negotiate", params: map[string]string{}, token68: "YIIB+/9w=="}, {scheme: "bearer", params: map[string]string{"scope": "s"}}}},
		{"bare scheme", []string{`Bearer`}, []challenge{{scheme: "bearer", params: map[string]string{}}}},
		{"whitespace around equals", []string{`Bearer  scope = "s" ,  error = x`},
			[]challenge{{scheme: "bearer", params: map[string]string{"scope": "s", "error": "x"}}}},
		{"unterminated quote keeps what came before", []string{`Bearer scope="s", error="oops`},
			[]challenge{{scheme: "bearer", params: map[string]string{"scope": "s"}}}},
		{"junk after a value ends the value", []string{`Bearer scope="s" junk, error=x`},
			[]challenge{{scheme: "bearer", params: map[string]string{"scope": "s"}}}},
		{"nothing parseable", []string{`"quoted"`, ``, `,,, `}, nil},
		{"trailing backslash", []string{`Bearer a="x\`}, []challenge{{scheme: "bearer", params: map[string]string{}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, parseChallenges(tc.values))
		})
	}
}

func TestBearerParams(t *testing.T) {
	h := http.Header{}
	h.Add("WWW-Authenticate", `Basic realm="x"`)
	h.Add("WWW-Authenticate", `Bearer scope="a b", resource_metadata="https://h/prm"`)
	p, ok := bearerParams(h)
	require.True(t, ok)
	assert.Equal(t, "https://h/prm", p["resource_metadata"])
	assert.Equal(t, []string{"a", "b"}, scopeList(p["scope"]))
	_, ok = bearerParams(http.Header{"Www-Authenticate": {`Basic realm="x"`}})
	assert.False(t, ok)
	_, ok = bearerParams(http.Header{})
	assert.False(t, ok)
}

// quote writes v as a quoted-string.
func quote(v string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(v) + `"`
}

// FuzzParseChallenges: no input panics, and a well-formed Bearer
// challenge built from the fuzzed name and value reads back as written.
func FuzzParseChallenges(f *testing.F) {
	f.Add(`Bearer realm="x", scope="a b"`, "scope", "a b")
	f.Add(`Negotiate abc==, Bearer error=invalid_token`, "error", `say "no"`)
	f.Add(`Bearer a="\`, "resource_metadata", `https://h/.well-known/oauth-protected-resource/mcp`)
	f.Add(`,"=,`, "x", "\\")
	f.Fuzz(func(t *testing.T, raw, name, value string) {
		_ = parseChallenges([]string{raw})
		_, _ = bearerParams(http.Header{"Www-Authenticate": {raw}})
		if name == "" || strings.IndexFunc(name, func(r rune) bool { return r > 127 || !tchar(byte(r)) }) >= 0 {
			return
		}
		if strings.ContainsAny(value, "\r\n") || strings.IndexFunc(value, func(r rune) bool { return r < 0x20 && r != '\t' }) >= 0 {
			return
		}
		hdr := `Basic realm="r", Bearer ` + name + "=" + quote(value) + `, other="y"`
		got := parseChallenges([]string{hdr})
		require.Len(t, got, 2, "%s", hdr)
		assert.Equal(t, "bearer", got[1].scheme)
		want := value
		if strings.ToLower(name) == "other" {
			want = "y" // the later one wins
		}
		assert.Equal(t, want, got[1].params[strings.ToLower(name)], "%s", hdr)
	})
}
