package a2a_test

import (
	"context"
	"crypto/x509"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/candorkit/candor/a2a"
	"github.com/candorkit/candor/internal/otelx/oteltest"
	"github.com/candorkit/candor/reply"
)

const (
	telToken      = "tok-telemetry-0123456789abcdef"
	telHookPath   = "/webhook/9d1e-telemetry-secret-path"
	telTraceID    = "4bf92f3577b34da6a3ce929d0e0e4736"
	telTraceParen = "00-" + telTraceID + "-00f067aa0ba902b7-01"
	send10        = `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"How many?"}]}}}`
)

// TestTelemetry checks the request span, the task span, the webhook span
// and the task counter for one completed task and one failed task of each
// webhook failure kind, with the caller's traceparent continued through
// all three spans and to the webhook, and no token or webhook path in any
// of them.
func TestTelemetry(t *testing.T) {
	cases := []struct {
		name   string
		status int
		body   string
		opts   []reply.Option
		down   bool
		kind   a2a.Kind
	}{
		{name: "completed", status: 200, body: `{"answer":"7305 in stock","escalate":false}`},
		{name: "escalated", status: 200, body: `{"answer":"ask a human","escalate":true}`, kind: a2a.KindEscalated},
		{name: "no_reply", status: 200, body: " ", kind: a2a.KindNoReply},
		{name: "http_status", status: 500, body: `{"error":"` + telHookPath + `"}`, kind: a2a.KindHTTPStatus},
		{name: "off_contract", status: 200, body: `{"answer":"x"}`, kind: a2a.KindOffContract},
		{name: "too_large", status: 200, body: `{"answer":"` + strings.Repeat("x", 64) + `","escalate":false}`,
			opts: []reply.Option{reply.WithMaxResponseBytes(16)}, kind: a2a.KindTooLarge},
		{name: "unreachable", down: true, kind: a2a.KindUnreachable},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := oteltest.New(t)
			hook := newHook(t, false)
			hookURL := hook.srv.URL + telHookPath
			if c.down {
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				require.NoError(t, err)
				hookURL = "http://" + ln.Addr().String() + telHookPath
				require.NoError(t, ln.Close())
			} else {
				hook.set(c.status, c.body)
			}
			f := startFacade(t, func(endpoint string) (*a2a.Server, error) {
				return a2a.NewAdapter(a2a.Config{Agent: testAgent(endpoint), WebhookURL: hookURL},
					a2a.WithVerifier(testVerifier), a2a.WithTracerProvider(rec.TracerProvider()),
					a2a.WithMeterProvider(rec.MeterProvider()), a2a.WithWebhookOptions(c.opts...))
			})
			status, resp := rawRPC(t, f.URL+"/a2a", map[string]string{
				"Authorization": "Bearer " + telToken, "A2A-Version": "1.0", "Traceparent": telTraceParen}, send10)
			require.Equal(t, 200, status)
			require.Nil(t, resp.Error)

			req := rec.Span(t, "SendMessage")
			assert.Equal(t, trace.SpanKindServer, req.SpanKind())
			assert.Equal(t, telTraceID, req.SpanContext().TraceID().String(), "the request span continues the caller's trace")
			assert.True(t, req.Parent().IsRemote())
			ra := oteltest.Attrs(req.Attributes())
			assert.Equal(t, "jsonrpc", ra["rpc.system"].AsString())
			assert.Equal(t, "SendMessage", ra["rpc.method"].AsString())
			assert.Equal(t, "1.0", ra["a2a.protocol.version"].AsString())
			assert.Equal(t, int64(200), ra["http.response.status_code"].AsInt64())
			assert.NotContains(t, ra, "error.type", "a failed task is an answered request")

			task := rec.Span(t, a2a.SpanTask)
			assert.Equal(t, req.SpanContext().TraceID(), task.SpanContext().TraceID())
			ta := oteltest.Attrs(task.Attributes())
			assert.NotEmpty(t, ta["a2a.task.id"].AsString())
			assert.NotEmpty(t, ta["a2a.context.id"].AsString())
			assert.Equal(t, "1.0", ta["a2a.protocol.version"].AsString())
			state := "completed"
			if c.kind != a2a.KindNone {
				state = "failed"
				assert.Equal(t, string(c.kind), ta["error.type"].AsString())
				assert.Equal(t, codes.Error, task.Status().Code)
			} else {
				assert.NotContains(t, ta, "error.type")
			}
			assert.Equal(t, state, ta["a2a.task.state"].AsString())

			hookSpan := rec.Span(t, "POST")
			assert.Equal(t, task.SpanContext().SpanID(), hookSpan.Parent().SpanID(), "the webhook call is a child of the task")
			if !c.down {
				calls := hook.recorded()
				require.Len(t, calls, 1)
				assert.Contains(t, calls[0].Header.Get("Traceparent"), telTraceID, "the webhook receives the trace")
			}

			m, ok := rec.Metric(context.Background(), a2a.MetricTasks)
			require.True(t, ok)
			match := []attribute.KeyValue{attribute.String("a2a.task.state", state)}
			if c.kind != a2a.KindNone {
				match = append(match, attribute.String("error.type", string(c.kind)))
			}
			assert.Equal(t, int64(1), oteltest.Sum(m, match...))
			d, ok := rec.Metric(context.Background(), reply.MetricWebhookDuration)
			require.True(t, ok)
			assert.Equal(t, uint64(1), oteltest.HistogramCount(d))

			rec.AssertNoSecrets(t, telToken, telHookPath, strings.TrimPrefix(telHookPath, "/webhook/"), hookURL)
		})
	}
}

// TestTelemetryBackendKinds checks the task span and counter for the
// failures a custom Backend and a tokenless task produce.
func TestTelemetryBackendKinds(t *testing.T) {
	cases := []struct {
		name    string
		backend a2a.Backend
		token   string
		kind    a2a.Kind
	}{
		{name: "backend", token: telToken, kind: a2a.KindBackend,
			backend: a2a.BackendFunc(func(context.Context, a2a.Question) a2a.Outcome { return a2a.Fail("no", assert.AnError) })},
		{name: "invalid_outcome", token: telToken, kind: a2a.KindInvalidOutcome,
			backend: a2a.BackendFunc(func(context.Context, a2a.Question) a2a.Outcome { return a2a.Outcome{} })},
		{name: "no_identity", kind: a2a.KindNoIdentity,
			backend: a2a.BackendFunc(func(context.Context, a2a.Question) a2a.Outcome { return a2a.Answer("never") })},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := oteltest.New(t)
			f := startFacade(t, func(endpoint string) (*a2a.Server, error) {
				return a2a.NewServer(testAgent(endpoint), c.backend, a2a.WithVerifier(testVerifier), a2a.WithNoIdentityTasks(),
					a2a.WithTracerProvider(rec.TracerProvider()), a2a.WithMeterProvider(rec.MeterProvider()))
			})
			h := map[string]string{"A2A-Version": "1.0"}
			if c.token != "" {
				h["Authorization"] = "Bearer " + c.token
			}
			_, resp := rawRPC(t, f.URL+"/a2a", h, send10)
			require.Nil(t, resp.Error)
			task := rec.Span(t, a2a.SpanTask)
			ta := oteltest.Attrs(task.Attributes())
			assert.Equal(t, "failed", ta["a2a.task.state"].AsString())
			assert.Equal(t, string(c.kind), ta["error.type"].AsString())
			m, ok := rec.Metric(context.Background(), a2a.MetricTasks)
			require.True(t, ok)
			assert.Equal(t, int64(1), oteltest.Sum(m, attribute.String("error.type", string(c.kind))))
			rec.AssertNoSecrets(t, telToken)
		})
	}
}

// TestTelemetryRefusals checks the request span of requests refused before
// any task exists: error.type names the refusal.
func TestTelemetryRefusals(t *testing.T) {
	cases := []struct {
		name, token, version, kind string
		status                     int
	}{
		{name: "no token", version: "1.0", kind: "unauthenticated", status: 401},
		{name: "invalid token", token: "bad-" + telToken, version: "1.0", kind: "unauthenticated", status: 401},
		{name: "insufficient scope", token: "noscope-" + telToken, version: "1.0", kind: "unauthorized", status: 403},
		{name: "verifier down", token: "down-" + telToken, version: "1.0", kind: "internal", status: 503},
		{name: "unsupported version", token: telToken, version: "9.9", kind: "version_not_supported", status: 200},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := oteltest.New(t)
			hook := newHook(t, false)
			f := startWebhookFacade(t, hook.srv.URL, a2a.WithTracerProvider(rec.TracerProvider()), a2a.WithMeterProvider(rec.MeterProvider()))
			h := map[string]string{"A2A-Version": c.version}
			if c.token != "" {
				h["Authorization"] = "Bearer " + c.token
			}
			status, _ := rawRPC(t, f.URL+"/a2a", h, send10)
			assert.Equal(t, c.status, status)
			req := rec.Span(t, "SendMessage")
			ra := oteltest.Attrs(req.Attributes())
			assert.Equal(t, c.kind, ra["error.type"].AsString())
			assert.Equal(t, codes.Error, req.Status().Code)
			assert.Empty(t, rec.SpansNamed(a2a.SpanTask), "no task for a refused request")
			rec.AssertNoSecrets(t, telToken)
		})
	}
}

// countingTransport stands in for an instrumented transport.
type countingTransport struct {
	next http.RoundTripper
	n    *atomic.Int64
}

func (c countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.next.RoundTrip(r)
}

// TestAdapterTransportWrapperWithRootCAs checks that an instrumented
// transport (reply.WithTransportWrapper through WithWebhookOptions) and a
// CA bundle (Config.RootCAs) combine: the webhook's TLS certificate is
// verified against the bundle and every call goes through the wrapper.
func TestAdapterTransportWrapperWithRootCAs(t *testing.T) {
	hook := newHook(t, true)
	pool := x509.NewCertPool()
	pool.AddCert(hook.srv.Certificate())
	var n atomic.Int64
	wrap := reply.WithTransportWrapper(func(rt http.RoundTripper) http.RoundTripper { return countingTransport{rt, &n} })
	rec := oteltest.New(t)
	f := startFacade(t, func(endpoint string) (*a2a.Server, error) {
		return a2a.NewAdapter(a2a.Config{Agent: testAgent(endpoint), WebhookURL: hook.srv.URL + telHookPath, RootCAs: pool},
			a2a.WithVerifier(testVerifier), a2a.WithWebhookOptions(wrap), a2a.WithTracerProvider(rec.TracerProvider()))
	})
	_, resp := rawRPC(t, f.URL+"/a2a", map[string]string{"Authorization": "Bearer " + telToken, "A2A-Version": "1.0"}, send10)
	require.Nil(t, resp.Error)
	assert.Contains(t, string(resp.Result), "7305 in stock", "the TLS webhook answered, verified against the bundle")
	assert.Equal(t, int64(1), n.Load(), "the call went through the wrapper")
	assert.Equal(t, "https", oteltest.Attrs(rec.Span(t, "POST").Attributes())["url.scheme"].AsString())

	// NewServer refuses the adapter-only option.
	_, err := a2a.NewServer(testAgent("http://127.0.0.1:1/a2a"), a2a.BackendFunc(func(context.Context, a2a.Question) a2a.Outcome { return a2a.Answer("x") }),
		a2a.WithVerifier(testVerifier), a2a.WithWebhookOptions(wrap))
	assert.ErrorContains(t, err, "WithWebhookOptions applies to NewAdapter only")
}
