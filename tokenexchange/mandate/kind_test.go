package mandate_test

import (
	"errors"
	"os"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/candorkit/candor/tokenexchange"
	"github.com/candorkit/candor/tokenexchange/mandate"
)

// Every Kind is a distinct snake_case string documented in doc.go, and
// none collides with a tokenexchange kind that Classify passes through.
func TestKindsDocumented(t *testing.T) {
	kinds := []mandate.Kind{
		mandate.KindConfig, mandate.KindNoMandate, mandate.KindRevoked, mandate.KindUnreadable,
		mandate.KindRejected, mandate.KindUnknownAgent, mandate.KindRotationNotPersisted,
		mandate.KindProviderNotRevoked, mandate.KindSchema, mandate.KindStore, mandate.KindLeaseLost,
	}
	doc, err := os.ReadFile("doc.go")
	require.NoError(t, err)
	snake := regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)
	seen := map[mandate.Kind]bool{mandate.KindNone: true}
	for _, k := range kinds {
		assert.Regexp(t, snake, string(k))
		assert.False(t, seen[k], "kind %q twice", k)
		seen[k] = true
		assert.Contains(t, string(doc), strconv.Quote(string(k)), "kind %q is not documented in doc.go", k)
	}
	assert.Equal(t, mandate.KindNone, mandate.Classify(nil))
	assert.Equal(t, mandate.Kind(tokenexchange.KindUnknown), mandate.Classify(errors.New("elsewhere")))
	assert.Equal(t, mandate.KindStore, mandate.Classify(&mandate.Error{User: "u", Agent: "a", Err: errors.New("disk I/O error")}))
	assert.Equal(t, mandate.Kind(tokenexchange.KindUnavailable), mandate.Classify(&mandate.Error{Err: &tokenexchange.StatusError{StatusCode: 502}}))
	// A database failure whose cause is a network error is the store's,
	// never the provider's transport.
	assert.Equal(t, mandate.KindStore, mandate.Classify(&mandate.Error{Reason: mandate.ErrStore, Err: errors.New("dial tcp 127.0.0.1:5432: connection refused")}))
	assert.Equal(t, mandate.KindLeaseLost, mandate.Classify(&mandate.Error{Reason: mandate.ErrLeaseLost}))
	assert.False(t, errors.Is(&mandate.Error{Reason: mandate.ErrLeaseLost}, mandate.ErrNoMandate), "a lost lease is not a lost mandate")
}
