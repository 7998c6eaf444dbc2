package approval

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/candorkit/candor/internal/otelx"
)

// scope is the instrumentation scope of the store's telemetry.
const scope = "github.com/candorkit/candor/approval"

// Attribute keys of the store's spans and metrics (see doc.go).
const (
	attrOperationID = attribute.Key("approval.operation.id")
	attrOutcome     = attribute.Key("approval.outcome")
	attrVerdict     = attribute.Key("approval.verdict")
	attrStatus      = attribute.Key("approval.status")
	attrBackend     = attribute.Key("db.system.name")
	attrNamespace   = attribute.Key("db.namespace")
)

// Outcomes of a span that succeeded: the call made the transition, or
// found it made before (an exact repeat, which changes nothing).
const (
	outcomeRegistered = "registered"
	outcomeApproved   = "approved"
	outcomeRejected   = "rejected"
	outcomeApplied    = "applied"
	outcomeRepeated   = "repeated"
)

// instruments are the tracer and instruments of one pair of providers.
type instruments struct {
	tracer      trace.Tracer
	meter       metric.Meter
	transitions metric.Int64Counter
	decision    metric.Float64Histogram
	operations  metric.Int64ObservableGauge
}

// telemetry is a store's instruments and the attributes of its backend.
type telemetry struct {
	instruments
	backend attribute.KeyValue
	// statusSets are the attribute sets of the transitions counter by the
	// status entered, built once so that a transition allocates nothing.
	statusSets map[Status]metric.MeasurementOption
}

// global are the instruments of the global providers, made once: the
// global meter keeps every instrument made on it, to delegate it later.
var global = sync.OnceValue(func() instruments { return makeInstruments(nil, nil) })

func newTelemetry(o options) *telemetry {
	if o.tp == nil && o.mp == nil {
		return &telemetry{instruments: global()}
	}
	return &telemetry{instruments: makeInstruments(o.tp, o.mp)}
}

func makeInstruments(tp trace.TracerProvider, mp metric.MeterProvider) instruments {
	m := otelx.Meter(mp, scope)
	t := instruments{tracer: otelx.Tracer(tp, scope), meter: m}
	t.transitions, _ = m.Int64Counter("approval.transitions",
		metric.WithUnit("{transition}"),
		metric.WithDescription("Transitions this process committed, by the status entered (waiting: registered; approved, rejected: decided; completed: applied)."))
	t.decision, _ = m.Float64Histogram("approval.decision.duration",
		metric.WithUnit("s"),
		metric.WithDescription("Time from an operation's registration to its decision, recorded once, by the process that committed the decision."),
		metric.WithExplicitBucketBoundaries(1, 10, 60, 300, 900, 3600, 4*3600, 12*3600, 24*3600, 3*24*3600, 7*24*3600))
	t.operations, _ = m.Int64ObservableGauge("approval.operations",
		metric.WithUnit("{operation}"),
		metric.WithDescription("Operations in the store by status, read from the store at each collection: every process sharing the store reports the same value."))
	return t
}

// setBackend fixes the db.system.name attribute once the backend is known.
func (t *telemetry) setBackend(pg bool) {
	t.backend = attrBackend.String("sqlite")
	if pg {
		t.backend = attrBackend.String("postgresql")
	}
	t.statusSets = map[Status]metric.MeasurementOption{}
	for _, st := range []Status{StatusWaiting, StatusApproved, StatusRejected, StatusCompleted} {
		t.statusSets[st] = metric.WithAttributeSet(attribute.NewSet(t.backend, attrStatus.String(string(st))))
	}
}

// start opens the span of one store call.
func (t *telemetry) start(ctx context.Context, name, operationID string) (context.Context, trace.Span) {
	ctx, span := t.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindInternal))
	if span.IsRecording() {
		span.SetAttributes(t.backend)
		// An id the store refuses is not recorded: it may be anything.
		if checkOperationID(operationID) == nil {
			span.SetAttributes(attrOperationID.String(operationID))
		}
	}
	return ctx, span
}

// end records the outcome of a store call on its span, and ends it.
func end(span trace.Span, outcome string, err error) {
	if span.IsRecording() {
		if err != nil {
			otelx.Fail(span, string(Classify(err)))
		} else {
			span.SetAttributes(attrOutcome.String(outcome))
		}
	}
	span.End()
}

// transition counts a transition this process committed.
func (t *telemetry) transition(ctx context.Context, to Status) {
	if t.transitions.Enabled(ctx) {
		t.transitions.Add(ctx, 1, t.statusSets[to])
	}
}

// decided records the time from registration to decision.
func (t *telemetry) decided(ctx context.Context, st State) {
	if t.decision.Enabled(ctx) {
		t.decision.Record(ctx, otelx.Duration(st.DecidedAt.Sub(st.CreatedAt)),
			metric.WithAttributes(t.backend, attrVerdict.String(string(st.Decision.Verdict))))
	}
}

// qCountByStatus counts the operations by status, for the approval.operations
// gauge; {ops} is the operations table of the backend.
const qCountByStatus = `SELECT status, count(*) FROM {ops} GROUP BY status`

// observe registers the approval.operations gauge, read from the store at
// each collection, until Close.
func (s *Store) observe() {
	g := s.tel.operations
	if g == nil {
		return // telemetry never fails a call
	}
	ops := "candor_approval_operations"
	if s.pg {
		ops = s.inSchema("{schema}.candor_approval_operations")
	}
	q := strings.ReplaceAll(qCountByStatus, "{ops}", ops)
	ns := s.namespace
	if ns == "" {
		ns = s.path
	}
	sets := map[Status]metric.ObserveOption{}
	for _, st := range []Status{StatusWaiting, StatusApproved, StatusRejected, StatusCompleted} {
		sets[st] = metric.WithAttributeSet(attribute.NewSet(s.tel.backend, attrNamespace.String(ns), attrStatus.String(string(st))))
	}
	reg, err := s.tel.meter.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		if s.open() != nil {
			return nil
		}
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		rows, err := s.db.QueryContext(ctx, q)
		if err != nil {
			return fmt.Errorf("approval: counting operations: %w", s.dbErr(err))
		}
		defer rows.Close()
		counts := map[Status]int64{StatusWaiting: 0, StatusApproved: 0, StatusRejected: 0, StatusCompleted: 0}
		for rows.Next() {
			var st string
			var n int64
			if err := rows.Scan(&st, &n); err != nil {
				return fmt.Errorf("approval: counting operations: %w", s.dbErr(err))
			}
			counts[Status(st)] = n
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("approval: counting operations: %w", s.dbErr(err))
		}
		for st, n := range counts {
			if opt, ok := sets[st]; ok {
				o.ObserveInt64(g, n, opt)
			}
		}
		return nil
	}, g)
	if err != nil {
		return
	}
	s.unobserve = reg.Unregister
}
