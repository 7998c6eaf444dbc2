package retrieval

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
)

// parseScopes decodes every stored scopes value as json.Unmarshal does.
func TestParseScopesMatchesJSON(t *testing.T) {
	for _, raw := range []string{
		`[]`, `["acme"]`, `["a","b c","x-y_z"]`, `[""]`, `["",""]`, `null`, `[ ]`, `[ "a" ]`,
		`["<tag>"]`, `["\u003ctag\u003e"]`, `["é"]`, `["a\"b"]`, `["a\\b"]`, `["a",]`, `[,"a"]`,
		`["a""b"]`, `["a"`, `[`, ``, `{}`, `["\t"]`, "[\"\x01\"]", `[1]`, `["a",1]`,
	} {
		var want []string
		wantErr := json.Unmarshal([]byte(raw), &want)
		got, err := parseScopes([]byte(raw))
		if wantErr != nil {
			assert.Error(t, err, "%q", raw)
			continue
		}
		if assert.NoError(t, err, "%q", raw) {
			assert.Equal(t, want, got, "%q", raw)
			assert.Equal(t, want == nil, got == nil, "%q: nil", raw)
		}
	}
}
