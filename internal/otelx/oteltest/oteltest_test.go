package oteltest_test

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"

	"github.com/candorkit/candor/internal/otelx/oteltest"
)

// recordingTB captures the failures AssertNoSecrets reports.
type recordingTB struct {
	testing.TB
	errs []string
}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recordingTB) Helper() {}

const tok = "eyJhbGciOiJSUzI1NiJ9.secret-token/+value"

func TestAssertNoSecretsFindsEveryEncoding(t *testing.T) {
	forms := map[string]func(string) string{
		"raw":    func(s string) string { return s },
		"query":  url.QueryEscape,
		"path":   url.PathEscape,
		"base64": func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) },
		"rawurl": func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) },
	}
	places := map[string]func(rec *oteltest.Recorder, v string){
		"span name": func(rec *oteltest.Recorder, v string) {
			_, s := rec.TracerProvider().Tracer("x").Start(t.Context(), "op "+v)
			s.End()
		},
		"span attribute": func(rec *oteltest.Recorder, v string) {
			_, s := rec.TracerProvider().Tracer("x").Start(t.Context(), "op")
			s.SetAttributes(attribute.StringSlice("k", []string{"a", v}))
			s.End()
		},
		"event": func(rec *oteltest.Recorder, v string) {
			_, s := rec.TracerProvider().Tracer("x").Start(t.Context(), "op")
			s.AddEvent("e", traceEventAttr("k", v))
			s.End()
		},
		"status": func(rec *oteltest.Recorder, v string) {
			_, s := rec.TracerProvider().Tracer("x").Start(t.Context(), "op")
			s.SetStatus(codes.Error, "failed: "+v)
			s.End()
		},
		"metric attribute": func(rec *oteltest.Recorder, v string) {
			c, err := rec.MeterProvider().Meter("x").Int64Counter("n")
			require.NoError(t, err)
			c.Add(t.Context(), 1, metric.WithAttributes(attribute.String("k", v)))
		},
		"histogram attribute": func(rec *oteltest.Recorder, v string) {
			h, err := rec.MeterProvider().Meter("x").Float64Histogram("d")
			require.NoError(t, err)
			h.Record(t.Context(), 1, metric.WithAttributes(attribute.String("k", v)))
		},
	}
	for fname, form := range forms {
		for pname, place := range places {
			t.Run(fname+"/"+pname, func(t *testing.T) {
				rec := oteltest.New(t)
				place(rec, form(tok))
				tb := &recordingTB{TB: t}
				rec.AssertNoSecrets(tb, tok)
				require.NotEmpty(t, tb.errs)
				for _, e := range tb.errs {
					assert.NotContains(t, e, tok, "the report never quotes the secret")
				}
			})
		}
	}
}

func TestAssertNoSecretsPassesCleanTelemetry(t *testing.T) {
	rec := oteltest.New(t)
	_, s := rec.TracerProvider().Tracer("x").Start(t.Context(), "op")
	s.SetAttributes(attribute.String("k", "invalid_grant"))
	s.End()
	c, err := rec.MeterProvider().Meter("x").Int64Counter("n")
	require.NoError(t, err)
	c.Add(t.Context(), 2, metric.WithAttributes(attribute.String("outcome", "ok")))

	tb := &recordingTB{TB: t}
	rec.AssertNoSecrets(tb, tok, "grant", "")
	assert.Empty(t, tb.errs)
	rec.AssertNoSecrets(t) // no secrets: nothing to check

	require.Len(t, rec.Spans(), 1)
	assert.Len(t, rec.SpansNamed("op"), 1)
	assert.Empty(t, rec.SpansNamed("none"))
	m, ok := rec.Metric(t.Context(), "n")
	require.True(t, ok)
	assert.Equal(t, int64(2), oteltest.Sum(m, attribute.String("outcome", "ok")))
	assert.Equal(t, int64(0), oteltest.Sum(m, attribute.String("outcome", "failed")))
	assert.Equal(t, uint64(0), oteltest.HistogramCount(m), "not a histogram")
	_, ok = rec.Metric(t.Context(), "absent")
	assert.False(t, ok)
	assert.NotEmpty(t, rec.Metrics(t.Context()).ScopeMetrics)
}

type fatalTB struct {
	testing.TB
	fatal bool
}

func (f *fatalTB) Fatalf(string, ...any) { f.fatal = true }
func (f *fatalTB) Helper()               {}

func TestSpanWantsExactlyOne(t *testing.T) {
	rec := oteltest.New(t)
	tb := &fatalTB{TB: t}
	rec.Span(tb, "missing")
	assert.True(t, tb.fatal)
}
