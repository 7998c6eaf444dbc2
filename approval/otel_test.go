package approval

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/candorkit/candor/internal/otelx/oteltest"
)

// Texts the store must never put in telemetry: a draft's content, a
// comment, a decider and an effect's error.
const (
	otelDraftTitle = "draft-title-7c41e9b2d0"
	otelComment    = "comment-text-53af09e1c8"
	otelDecider    = "decider-name-e8b2d4406f"
	otelEffectErr  = "effect-error-text-91d3c2aa"
)

// TestTelemetry runs register, decide and apply to each of their outcomes
// and to one failure of each kind they can meet in a test, on both
// backends, and checks the spans, the transitions counter, the decision
// histogram and the operations gauge.
func TestTelemetry(t *testing.T) {
	forBackends(t, func(t *testing.T, b *backend) {
		ctx := context.Background()
		rec := oteltest.New(t)
		loc := b.location(t, "otel")
		s := b.open(t, loc, WithTracerProvider(rec.TracerProvider()), WithMeterProvider(rec.MeterProvider()))
		draft := testDraft{Title: otelDraftTitle, Quantity: 2}
		approve := Decision{OperationID: "op-a", Verdict: Approve, Comment: otelComment, DecidedBy: otelDecider}

		// Register: new, repeated, invalid, rebound.
		_, err := s.Register(ctx, Ticket{OperationID: "op-a", Draft: draft})
		require.NoError(t, err)
		_, err = s.Register(ctx, Ticket{OperationID: "op-a", Draft: draft})
		require.NoError(t, err)
		_, err = s.Register(ctx, Ticket{OperationID: "", Draft: draft})
		require.Equal(t, KindInvalidInput, Classify(err))
		_, err = s.Register(ctx, Ticket{OperationID: "op-a", Draft: testDraft{Title: "other", Quantity: 1}})
		require.Equal(t, KindRebound, Classify(err))
		_, err = s.Register(ctx, Ticket{OperationID: "op-r", Draft: draft})
		require.NoError(t, err)
		_, err = s.Register(ctx, Ticket{OperationID: "op-w", Draft: draft})
		require.NoError(t, err)
		checkSpans(t, rec.SpansNamed("approval.register"), b, []spanWant{
			{id: "op-a", outcome: outcomeRegistered}, {id: "op-a", outcome: outcomeRepeated},
			{kind: KindInvalidInput}, {id: "op-a", kind: KindRebound},
			{id: "op-r", outcome: outcomeRegistered}, {id: "op-w", outcome: outcomeRegistered},
		})

		// Apply before the decision: not approved.
		_, err = s.Apply(ctx, "op-a", nil)
		require.Equal(t, KindNotApproved, Classify(err))

		// Decide: approve, repeat, reject, unknown, already decided, invalid.
		_, err = s.Decide(ctx, approve)
		require.NoError(t, err)
		_, err = s.Decide(ctx, approve)
		require.NoError(t, err)
		_, err = s.Decide(ctx, Decision{OperationID: "op-r", Verdict: Reject, Comment: otelComment, DecidedBy: otelDecider})
		require.NoError(t, err)
		_, err = s.Decide(ctx, Decision{OperationID: "op-x", Verdict: Approve, DecidedBy: otelDecider})
		require.Equal(t, KindUnknownOperation, Classify(err))
		_, err = s.Decide(ctx, Decision{OperationID: "op-a", Verdict: Reject, DecidedBy: otelDecider})
		require.Equal(t, KindAlreadyDecided, Classify(err))
		_, err = s.Decide(ctx, Decision{OperationID: "op-w", Verdict: "maybe", DecidedBy: otelDecider})
		require.Equal(t, KindInvalidInput, Classify(err))
		decides := rec.SpansNamed("approval.decide")
		checkSpans(t, decides, b, []spanWant{
			{id: "op-a", outcome: outcomeApproved}, {id: "op-a", outcome: outcomeRepeated},
			{id: "op-r", outcome: outcomeRejected}, {id: "op-x", kind: KindUnknownOperation},
			{id: "op-a", kind: KindAlreadyDecided}, {id: "op-w", kind: KindInvalidInput},
		})
		assert.Equal(t, string(Approve), oteltest.Attrs(decides[0].Attributes())["approval.verdict"].AsString())
		assert.Equal(t, string(Reject), oteltest.Attrs(decides[2].Attributes())["approval.verdict"].AsString())

		// Apply: an effect that fails, then applied, repeated, unknown; the
		// effect runs inside the apply span.
		_, err = s.Apply(ctx, "op-a", func(context.Context, *sql.Tx, Item) error { return errors.New(otelEffectErr) })
		require.Equal(t, KindEffectFailed, Classify(err))
		var inner sdktrace.ReadOnlySpan
		_, err = s.Apply(ctx, "op-a", func(ctx context.Context, _ *sql.Tx, _ Item) error {
			_, sp := rec.TracerProvider().Tracer("effect").Start(ctx, "effect")
			sp.End()
			inner = rec.Span(t, "effect")
			return nil
		})
		require.NoError(t, err)
		_, err = s.Apply(ctx, "op-a", nil)
		require.NoError(t, err)
		_, err = s.Apply(ctx, "op-x", nil)
		require.Equal(t, KindUnknownOperation, Classify(err))
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		_, err = s.Apply(cctx, "op-w", nil)
		require.Equal(t, KindCanceled, Classify(err))
		applies := rec.SpansNamed("approval.apply")
		checkSpans(t, applies, b, []spanWant{
			{id: "op-a", kind: KindNotApproved}, {id: "op-a", kind: KindEffectFailed},
			{id: "op-a", outcome: outcomeApplied}, {id: "op-a", outcome: outcomeRepeated},
			{id: "op-x", kind: KindUnknownOperation}, {id: "op-w", kind: KindCanceled},
		})
		require.NotNil(t, inner)
		assert.Equal(t, applies[2].SpanContext().SpanID(), inner.Parent().SpanID(), "the effect's span is a child of approval.apply")

		// Metrics: one transition per status entered, counted once.
		m, ok := rec.Metric(ctx, "approval.transitions")
		require.True(t, ok)
		for st, n := range map[Status]int64{StatusWaiting: 3, StatusApproved: 1, StatusRejected: 1, StatusCompleted: 1} {
			assert.Equal(t, n, oteltest.Sum(m, attribute.String("approval.status", string(st)), attribute.String("db.system.name", b.system())), st)
		}
		m, ok = rec.Metric(ctx, "approval.decision.duration")
		require.True(t, ok)
		assert.Equal(t, "s", m.Unit)
		assert.Equal(t, uint64(1), oteltest.HistogramCount(m, attribute.String("approval.verdict", string(Approve))))
		assert.Equal(t, uint64(1), oteltest.HistogramCount(m, attribute.String("approval.verdict", string(Reject))))
		assert.Equal(t, map[string]int64{"waiting": 1, "approved": 0, "rejected": 1, "completed": 1}, gauge(t, rec, "approval.operations"))

		// A second store on the same database (another process) reports
		// the same gauge and counts only its own transitions.
		rec2 := oteltest.New(t)
		s2 := b.open(t, loc, WithTracerProvider(rec2.TracerProvider()), WithMeterProvider(rec2.MeterProvider()))
		_, err = s2.Decide(ctx, Decision{OperationID: "op-w", Verdict: Approve, DecidedBy: otelDecider})
		require.NoError(t, err)
		want := map[string]int64{"waiting": 0, "approved": 1, "rejected": 1, "completed": 1}
		assert.Equal(t, want, gauge(t, rec, "approval.operations"))
		assert.Equal(t, want, gauge(t, rec2, "approval.operations"))
		m, ok = rec2.Metric(ctx, "approval.transitions")
		require.True(t, ok)
		assert.Equal(t, int64(1), oteltest.Sum(m))

		// Closed: the span fails, the gauge stops.
		require.NoError(t, s2.Close())
		_, err = s2.Register(ctx, Ticket{OperationID: "op-c", Draft: draft})
		require.Equal(t, KindClosed, Classify(err))
		sp := rec2.Span(t, "approval.register")
		assert.Equal(t, string(KindClosed), oteltest.Attrs(sp.Attributes())["error.type"].AsString())
		assert.Empty(t, gauge(t, rec2, "approval.operations"))

		rec.AssertNoSecrets(t, otelDraftTitle, otelComment, otelDecider, otelEffectErr)
		rec2.AssertNoSecrets(t, otelDraftTitle, otelComment, otelDecider, otelEffectErr)
	})
}

// TestTelemetryReadOnly: a write on a read-only store is a read_only span;
// the gauge still reads the store.
func TestTelemetryReadOnly(t *testing.T) {
	ctx := context.Background()
	path := t.TempDir() + "/ro.db"
	s := openTest(t, path)
	_, err := s.Register(ctx, Ticket{OperationID: "op-1", Draft: testDraft{Title: otelDraftTitle, Quantity: 1}})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	rec := oteltest.New(t)
	ro := openTest(t, path, WithReadOnly(), WithTracerProvider(rec.TracerProvider()), WithMeterProvider(rec.MeterProvider()))
	defer ro.Close()
	_, err = ro.Decide(ctx, Decision{OperationID: "op-1", Verdict: Approve, DecidedBy: otelDecider})
	require.Equal(t, KindReadOnly, Classify(err))
	sp := rec.Span(t, "approval.decide")
	assert.Equal(t, string(KindReadOnly), oteltest.Attrs(sp.Attributes())["error.type"].AsString())
	assert.Equal(t, map[string]int64{"waiting": 1, "approved": 0, "rejected": 0, "completed": 0}, gauge(t, rec, "approval.operations"))
	_, ok := rec.Metric(ctx, "approval.transitions")
	assert.False(t, ok, "no transition was made")
	m, ok := rec.Metric(ctx, "approval.operations")
	require.True(t, ok)
	for _, dp := range m.Data.(metricdata.Gauge[int64]).DataPoints {
		ns, _ := dp.Attributes.Value("db.namespace")
		assert.Equal(t, path, ns.AsString(), "the gauge names its store")
	}
}

type spanWant struct {
	id      string
	outcome string
	kind    Kind
}

func checkSpans(t *testing.T, spans []sdktrace.ReadOnlySpan, b *backend, want []spanWant) {
	t.Helper()
	require.Len(t, spans, len(want))
	for i, w := range want {
		a := oteltest.Attrs(spans[i].Attributes())
		if w.id == "" {
			assert.NotContains(t, a, "approval.operation.id", "span %d", i)
		} else {
			assert.Equal(t, w.id, a["approval.operation.id"].AsString(), "span %d", i)
		}
		assert.Equal(t, b.system(), a["db.system.name"].AsString(), "span %d", i)
		if w.kind == "" {
			assert.Equal(t, w.outcome, a["approval.outcome"].AsString(), "span %d", i)
			assert.NotContains(t, a, "error.type", "span %d", i)
			assert.Equal(t, codes.Unset, spans[i].Status().Code, "span %d", i)
		} else {
			assert.NotContains(t, a, "approval.outcome", "span %d", i)
			assert.Equal(t, string(w.kind), a["error.type"].AsString(), "span %d", i)
			assert.Equal(t, codes.Error, spans[i].Status().Code, "span %d", i)
			assert.Equal(t, string(w.kind), spans[i].Status().Description, "span %d", i)
		}
	}
}

// gauge collects the int64 gauge name as a map from status to value.
func gauge(t *testing.T, rec *oteltest.Recorder, name string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	m, ok := rec.Metric(context.Background(), name)
	if !ok {
		return out
	}
	g, ok := m.Data.(metricdata.Gauge[int64])
	require.True(t, ok, "%s is %T", name, m.Data)
	for _, dp := range g.DataPoints {
		st, _ := dp.Attributes.Value("approval.status")
		out[st.AsString()] = dp.Value
	}
	return out
}

func (b *backend) system() string {
	if b.cluster != nil {
		return "postgresql"
	}
	return "sqlite"
}

// BenchmarkCycleTelemetry is BenchmarkCycle with the global (no-op)
// providers and with the SDK recording to memory.
func BenchmarkCycleTelemetry(b *testing.B) {
	for _, mode := range []string{"global", "sdk"} {
		b.Run(mode, func(b *testing.B) {
			ctx := context.Background()
			var opts []Option
			if mode == "sdk" {
				rec := oteltest.New(b)
				opts = append(opts, WithTracerProvider(rec.TracerProvider()), WithMeterProvider(rec.MeterProvider()))
			}
			s, err := Open(ctx, b.TempDir()+"/a.db", opts...)
			require.NoError(b, err)
			defer s.Close()
			i := 0
			for b.Loop() {
				i++
				id := "op-" + strconv.Itoa(i)
				if _, err := s.Register(ctx, Ticket{OperationID: id, Draft: benchDraft(i)}); err != nil {
					b.Fatal(err)
				}
				if _, err := s.Decide(ctx, Decision{OperationID: id, Verdict: Approve, DecidedBy: "bench"}); err != nil {
					b.Fatal(err)
				}
				if _, err := s.Apply(ctx, id, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkTelemetryOverhead is what the instrumentation of one call costs
// with the global (no-op) providers, apart from the call: the span and
// one transition.
func BenchmarkTelemetryOverhead(b *testing.B) {
	tel := newTelemetry(options{})
	tel.setBackend(false)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, span := tel.start(ctx, "approval.register", "op-1")
		tel.transition(ctx, StatusWaiting)
		end(span, outcomeRegistered, nil)
	}
}

// BenchmarkOperationsGauge10k measures one collection of the
// approval.operations gauge on a store of 10,000 operations: the count
// by status the callback reads.
func BenchmarkOperationsGauge10k(b *testing.B) {
	rec := oteltest.New(b)
	s, err := Open(context.Background(), store10k(b), WithMeterProvider(rec.MeterProvider()))
	require.NoError(b, err)
	defer s.Close()
	for b.Loop() {
		rec.Metrics(context.Background())
	}
}
