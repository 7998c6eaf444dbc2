package retrieval

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"

	"github.com/candorkit/candor/internal/otelx/oteltest"
)

// A search and an Open record their spans and durations: attributes on a
// success, error.type (the Classify kind) on each failure the span can
// see, and never a chunk text, title or query vector.
func TestTelemetrySpansAndMetrics(t *testing.T) {
	rec := oteltest.New(t)
	tel := []Option{WithTracerProvider(rec.TracerProvider()), WithMeterProvider(rec.MeterProvider())}
	corpus, vecs := controlled()
	ix, path, m := openBuilt(t, corpus, vecs, tel...)
	ctx := t.Context()
	p := CorpusPolicy{AsOf: asOf, Scope: "acme"}

	open := rec.Span(t, "retrieval.open")
	a := oteltest.Attrs(open.Attributes())
	assert.Equal(t, "float32", a["retrieval.precision"].AsString())
	assert.NotContains(t, a, "error.type")

	hits, err := ix.Search(ctx, []float32{1, 0}, p, 2)
	require.NoError(t, err)
	require.Len(t, hits, 2)
	s := rec.Span(t, "retrieval.search")
	a = oteltest.Attrs(s.Attributes())
	assert.Equal(t, int64(2), a["retrieval.k"].AsInt64())
	assert.Equal(t, int64(3), a["retrieval.rows.admitted"].AsInt64())
	assert.Equal(t, int64(3), a["retrieval.rows.scanned"].AsInt64())
	assert.Equal(t, int64(1), a["retrieval.workers"].AsInt64())
	assert.Equal(t, ix.Kernel(), a["retrieval.kernel"].AsString())
	assert.Equal(t, "float32", a["retrieval.precision"].AsString())
	assert.NotContains(t, a, "error.type")

	canceled, cancel := context.WithCancel(ctx)
	cancel()
	searchFails := []struct {
		kind Kind
		run  func(*Index) error
	}{
		{KindInvalidQuery, func(ix *Index) error { _, err := ix.Search(ctx, []float32{0, 0}, p, 1); return err }},
		{KindInvalidPolicy, func(ix *Index) error { _, err := ix.Search(ctx, []float32{1, 0}, CorpusPolicy{}, 1); return err }},
		{KindManifestMismatch, func(ix *Index) error { _, err := ix.Search(ctx, []float32{1, 0, 0}, p, 1); return err }},
		{KindNoAdmissible, func(ix *Index) error {
			_, err := ix.Search(ctx, []float32{1, 0}, CorpusPolicy{AsOf: asOf, Scope: "initech"}, 1)
			return err
		}},
		{KindCanceled, func(ix *Index) error { _, err := ix.Search(canceled, []float32{1, 0}, p, 1); return err }},
	}
	for _, f := range searchFails {
		require.Equal(t, f.kind, Classify(f.run(ix)), f.kind)
	}
	empty, err := Open(ctx, filepath.Join(t.TempDir(), "empty.db"), m, tel...)
	require.NoError(t, err)
	require.Equal(t, KindNotBuilt, Classify(func() error { _, err := empty.Search(ctx, []float32{1, 0}, p, 1); return err }()))
	require.NoError(t, empty.Close())
	require.NoError(t, ix.Close())
	_, err = ix.Search(ctx, []float32{1, 0}, p, 1)
	require.Equal(t, KindClosed, Classify(err))

	kinds := map[string]int{}
	for _, sp := range rec.SpansNamed("retrieval.search") {
		if v, ok := oteltest.Attrs(sp.Attributes())["error.type"]; ok {
			kinds[v.AsString()]++
			assert.Equal(t, v.AsString(), sp.Status().Description)
		}
	}
	for _, k := range []Kind{KindInvalidQuery, KindInvalidPolicy, KindManifestMismatch, KindNoAdmissible, KindCanceled, KindNotBuilt, KindClosed} {
		assert.Equal(t, 1, kinds[string(k)], "one search span failed with %s", k)
	}

	// Open failures: locked (a second writer), corrupt, not found.
	ix2, err := Open(ctx, path, m, tel...)
	require.NoError(t, err)
	_, err = Open(ctx, path, m, append(tel, WithBusyTimeout(0))...)
	require.Equal(t, KindLocked, Classify(err))
	require.NoError(t, ix2.Close())
	bad := filepath.Join(t.TempDir(), "bad.db")
	require.NoError(t, os.WriteFile(bad, []byte("this is not a SQLite file, at all, not even close"), 0o600))
	_, err = Open(ctx, bad, m, tel...)
	require.Equal(t, KindCorrupt, Classify(err))
	_, err = Open(ctx, filepath.Join(t.TempDir(), "missing.db"), m, append(tel, WithReadOnly())...)
	require.Equal(t, KindNotFound, Classify(err))
	_, err = Open(ctx, filepath.Join(t.TempDir(), "x.db"), Manifest{}, tel...)
	require.Equal(t, KindInvalidCorpus, Classify(err))
	kinds = map[string]int{}
	for _, sp := range rec.SpansNamed("retrieval.open") {
		if v, ok := oteltest.Attrs(sp.Attributes())["error.type"]; ok {
			kinds[v.AsString()]++
		}
	}
	assert.Equal(t, map[string]int{"locked": 1, "corrupt": 1, "not_found": 1, "invalid_corpus": 1}, kinds)

	sm, ok := rec.Metric(ctx, "retrieval.search.duration")
	require.True(t, ok)
	assert.Equal(t, uint64(8), oteltest.HistogramCount(sm, attribute.String("retrieval.precision", "float32")), "one success, seven failures")
	for _, k := range []Kind{KindInvalidQuery, KindNoAdmissible, KindClosed} {
		assert.Equal(t, uint64(1), oteltest.HistogramCount(sm, attribute.String("error.type", string(k))), k)
	}
	om, ok := rec.Metric(ctx, "retrieval.open.duration")
	require.True(t, ok)
	assert.Equal(t, uint64(1), oteltest.HistogramCount(om, attribute.String("error.type", "locked")))

	// No chunk text, title or source text is ever an attribute.
	var texts []string
	for _, c := range corpus {
		texts = append(texts, c.Text, c.Title)
	}
	for _, c := range Chunks(corpus) {
		texts = append(texts, c.Text)
	}
	rec.AssertNoSecrets(t, texts...)
}

// With no provider given and none installed, a search skips telemetry
// altogether (the hot path of BenchmarkRetrieval100k/search-top10).
func TestTelemetryOffWithoutProviders(t *testing.T) {
	corpus, vecs := controlled()
	ix, _, _ := openBuilt(t, corpus, vecs)
	assert.True(t, ix.tel.off())
	rec := oteltest.New(t)
	ix2, _, _ := openBuilt(t, corpus, vecs, WithTracerProvider(rec.TracerProvider()))
	assert.False(t, ix2.tel.off())
}

// Every documented kind, and what Classify makes of errors it did not
// make.
func TestClassify(t *testing.T) {
	cases := map[Kind]error{
		"":                   nil,
		KindInvalidQuery:     &QueryError{Reason: "x"},
		KindInvalidPolicy:    &CorpusPolicyError{Reason: "x"},
		KindInvalidCorpus:    &CorpusError{Reason: "x"},
		KindManifestMismatch: &MismatchError{Field: "Dims"},
		KindNoAdmissible:     fmt.Errorf("%w (scope)", ErrNoAdmissible),
		KindNotBuilt:         ErrNotBuilt,
		KindClosed:           ErrClosed,
		KindCorrupt:          &CorruptError{What: "x", Err: errors.New("y")},
		KindLocked:           fmt.Errorf("%w: busy", ErrLocked),
		KindReadOnly:         ErrReadOnly,
		KindNotFound:         fmt.Errorf("open: %w", os.ErrNotExist),
		KindRejected:         &RejectedError{},
		KindCanceled:         context.Canceled,
		KindDeadlineExceeded: context.DeadlineExceeded,
		KindOther:            errors.New("something else"),
	}
	for want, err := range cases {
		assert.Equal(t, want, Classify(err), "%v", err)
	}
}
