package reorder_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"

	"github.com/candorkit/candor/internal/otelx/oteltest"
	"github.com/candorkit/candor/reorder"
)

const otelToken = "mandate-token-4f1c9a2e7b"

// TestRunTelemetry runs the Runner to success and to each failure kind it
// can end with, and checks the reorder.run span and the
// reorder.run.duration histogram of each.
func TestRunTelemetry(t *testing.T) {
	items := loadFixture(t)
	mandate := reorder.MandateFunc(func(context.Context) (reorder.Mandate, error) {
		return reorder.Mandate{Subject: "marie", Token: otelToken}, nil
	})
	openWith := func(c reorder.Catalog) reorder.Opener {
		return func(context.Context, reorder.Mandate) (reorder.Catalog, error) { return c, nil }
	}
	cases := []struct {
		name     string
		mandates reorder.MandateSource
		open     reorder.Opener
		t        reorder.Thresholds
		want     reorder.Kind
		complete bool
	}{
		{name: "complete", mandates: mandate, open: openWith(&memCatalog{items: items}), complete: true},
		{name: "no mandate", mandates: reorder.MandateFunc(func(context.Context) (reorder.Mandate, error) {
			return reorder.Mandate{}, reorder.ErrNoMandate
		}), open: openWith(&memCatalog{items: items}), want: reorder.KindNoMandate},
		{name: "mandate unavailable", mandates: reorder.MandateFunc(func(context.Context) (reorder.Mandate, error) {
			return reorder.Mandate{}, errors.New("mandate store down")
		}), open: openWith(&memCatalog{items: items}), want: reorder.KindMandateUnavailable},
		{name: "open failed", mandates: mandate, open: func(context.Context, reorder.Mandate) (reorder.Catalog, error) {
			return nil, errors.New("catalog refused the token")
		}, want: reorder.KindOpenFailed},
		{name: "nil catalog", mandates: mandate, open: openWith(nil), want: reorder.KindNilCatalog},
		{name: "page cap", mandates: mandate, open: openWith(&memCatalog{items: items}),
			t: reorder.Thresholds{PageSize: 10, MaxPages: 2}, want: reorder.KindPageCap},
		{name: "item cap", mandates: mandate, open: openWith(&memCatalog{items: items}),
			t: reorder.Thresholds{MaxItems: 20}, want: reorder.KindItemCap},
		{name: "catalog error", mandates: mandate, open: openWith(&memCatalog{items: items, failPage: 1,
			failErr: errors.New("HTTP 502")}), want: reorder.KindCatalogError},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := oteltest.New(t)
			r, err := reorder.NewRunner(tc.mandates, tc.open, tc.t,
				reorder.WithTracerProvider(rec.TracerProvider()), reorder.WithMeterProvider(rec.MeterProvider()))
			require.NoError(t, err)
			p, err := r.Run(context.Background())
			assert.Equal(t, tc.want, reorder.Classify(err))
			checkRun(t, rec, "run", p, tc.want, tc.complete)
			rec.AssertNoSecrets(t, otelToken)
		})
	}
}

// TestPlanTelemetry plans to success and to the failure kinds only Plan
// meets: invalid thresholds, cancellation, a cursor repeat, a duplicate code
// and a total mismatch.
func TestPlanTelemetry(t *testing.T) {
	items := loadFixture(t)[:3]
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	cases := []struct {
		name     string
		ctx      context.Context
		catalog  reorder.Catalog
		t        reorder.Thresholds
		want     reorder.Kind
		complete bool
	}{
		{name: "complete", catalog: &memCatalog{items: items}, complete: true},
		{name: "invalid thresholds", catalog: &memCatalog{items: items}, t: reorder.Thresholds{ReorderPoint: 200},
			want: reorder.KindInvalidThresholds},
		{name: "canceled", ctx: cancelled, catalog: &memCatalog{items: items}, want: reorder.KindCanceled},
		{name: "cursor repeat", catalog: reorder.CatalogFunc(func(context.Context, string, int) (reorder.Batch, string, error) {
			return reorder.Batch{Items: items[:1]}, "same", nil
		}), want: reorder.KindCursorRepeat},
		{name: "duplicate code", catalog: &memCatalog{items: []reorder.Item{items[0], items[0]}}, want: reorder.KindDuplicateCode},
		{name: "total mismatch", catalog: reorder.CatalogFunc(func(context.Context, string, int) (reorder.Batch, string, error) {
			return reorder.Batch{Items: items, Total: 110}, "", nil
		}), want: reorder.KindTotalMismatch},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := oteltest.New(t)
			ctx := tc.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			p, err := reorder.Plan(ctx, tc.catalog, tc.t,
				reorder.WithTracerProvider(rec.TracerProvider()), reorder.WithMeterProvider(rec.MeterProvider()))
			assert.Equal(t, tc.want, reorder.Classify(err))
			checkRun(t, rec, "plan", p, tc.want, tc.complete)
		})
	}
}

func checkRun(t *testing.T, rec *oteltest.Recorder, op string, p reorder.Proposal, want reorder.Kind, complete bool) {
	t.Helper()
	span := rec.Span(t, "reorder."+op)
	a := oteltest.Attrs(span.Attributes())
	assert.Equal(t, op, a["reorder.operation"].AsString())
	assert.Equal(t, complete, a["reorder.complete"].AsBool())
	assert.Equal(t, p.Complete, complete)
	assert.Equal(t, int64(len(p.Lines)), a["reorder.lines"].AsInt64())
	assert.Equal(t, int64(p.Scanned), a["reorder.items.scanned"].AsInt64())
	assert.Equal(t, p.Escalate, a["reorder.escalate"].AsBool())
	if want == "" {
		assert.NotContains(t, a, "error.type")
		assert.Equal(t, codes.Unset, span.Status().Code)
	} else {
		assert.Equal(t, string(want), a["error.type"].AsString())
		assert.Equal(t, codes.Error, span.Status().Code)
		assert.Equal(t, string(want), span.Status().Description)
	}
	m, ok := rec.Metric(context.Background(), "reorder.run.duration")
	require.True(t, ok, "no reorder.run.duration")
	assert.Equal(t, "s", m.Unit)
	match := []attribute.KeyValue{attribute.String("reorder.operation", op), attribute.Bool("reorder.complete", complete)}
	if want != "" {
		match = append(match, attribute.String("error.type", string(want)))
	}
	assert.Equal(t, uint64(1), oteltest.HistogramCount(m, match...))
}

func TestRunRefusesTelemetryOptions(t *testing.T) {
	s, err := reorder.DefaultSchedule()
	require.NoError(t, err)
	rec := oteltest.New(t)
	err = reorder.Run(context.Background(), s, func(context.Context, time.Time) error { return nil },
		reorder.WithTracerProvider(rec.TracerProvider()))
	assert.ErrorIs(t, err, reorder.ErrSchedule)
	assert.Equal(t, reorder.KindSchedule, reorder.Classify(err))
}

func TestClassifyUnknownIsOther(t *testing.T) {
	assert.Equal(t, reorder.Kind(""), reorder.Classify(nil))
	assert.Equal(t, reorder.KindOther, reorder.Classify(errors.New("not one of the package's")))
}

// BenchmarkPlanTelemetry is BenchmarkPlanFixture with the SDK recording to
// memory; BenchmarkPlanFixture itself runs with the global (no-op)
// providers.
func BenchmarkPlanTelemetry(b *testing.B) {
	rec := oteltest.New(b)
	cat := &memCatalog{items: loadFixture(b)}
	ctx := context.Background()
	opts := []reorder.Option{reorder.WithTracerProvider(rec.TracerProvider()), reorder.WithMeterProvider(rec.MeterProvider())}
	for b.Loop() {
		cat.sizes = cat.sizes[:0]
		if _, err := reorder.Plan(ctx, cat, reorder.Thresholds{PageSize: 50}, opts...); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPlanBaseline is BenchmarkPlanFixture without the telemetry, the
// baseline of the cost of the instrumentation.
func BenchmarkPlanBaseline(b *testing.B) {
	cat := &memCatalog{items: loadFixture(b)}
	ctx := context.Background()
	for b.Loop() {
		cat.sizes = cat.sizes[:0]
		if _, err := reorder.PlanBaseline(ctx, cat, reorder.Thresholds{PageSize: 50}); err != nil {
			b.Fatal(err)
		}
	}
}
