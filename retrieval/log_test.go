package retrieval

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The index logs only through WithLogger; a failure is logged under the key
// "error"; chunk text is never logged.
func TestLoggingOnlyWithLogger(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	corpus, vecs := controlled()
	ix, path, m := openBuilt(t, corpus, vecs, WithLogger(log))
	assert.Contains(t, buf.String(), `"msg":"retrieval index opened"`)
	assert.Contains(t, buf.String(), `"msg":"retrieval index rebuilt"`)

	// A compaction that cannot write its new vector file (a directory
	// stands in its way) is logged with its error; the delete itself
	// succeeds.
	require.NoError(t, os.Mkdir(vectorPath(path, ix.gen+1), 0o700))
	require.NoError(t, ix.Delete(t.Context(), "ACME-USERS", "ACME-BILLING"))
	assert.Contains(t, buf.String(), `"msg":"retrieval index compaction failed","error":`)
	assert.Equal(t, 1, ix.Len())
	hits, err := ix.Search(t.Context(), []float32{1, 0}, CorpusPolicy{AsOf: asOf, Scope: "acme"}, 3)
	require.NoError(t, err)
	assert.Equal(t, []string{"ACME-EXPORT#0"}, hitIDs(hits))
	for _, c := range corpus {
		assert.NotContains(t, buf.String(), c.Text[:20], "chunk text logged")
	}
	require.NoError(t, ix.Close())
	re, err := Open(t.Context(), path, Manifest{Profile: m.Profile, Provider: m.Provider, Model: m.Model, ModelVersion: m.ModelVersion, Dims: m.Dims})
	require.NoError(t, err, "the uncompacted file reopens")
	assert.Equal(t, 1, re.Len())
	require.NoError(t, re.Close())
	m.CorpusDigest = ""

	// Without WithLogger, or with a nil logger, nothing reaches the
	// default logger.
	var def bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&def, nil)))
	defer slog.SetDefault(old)
	for _, opts := range [][]Option{nil, {WithLogger(nil)}} {
		re, err := Open(t.Context(), path, m, opts...)
		require.NoError(t, err)
		require.NoError(t, re.Close())
	}
	assert.Empty(t, def.String())
	assert.False(t, strings.Contains(def.String(), "retrieval"))
}

func TestOpenValidatesOptions(t *testing.T) {
	corpus, _ := controlled()
	m := testManifest(2, corpus)
	path := filepath.Join(t.TempDir(), "i.db")
	for name, opt := range map[string]Option{"workers 0": WithWorkers(0), "negative busy timeout": WithBusyTimeout(-1)} {
		_, err := Open(t.Context(), path, m, opt)
		assert.Error(t, err, name)
	}
	_, err := os.Stat(path)
	assert.ErrorIs(t, err, os.ErrNotExist, "a refused Open creates nothing")
}
