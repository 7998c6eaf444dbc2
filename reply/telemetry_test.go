package reply_test

import (
	"context"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/candorkit/candor/internal/otelx/oteltest"
	"github.com/candorkit/candor/reply"
)

const telemetryToken = "eyJhbGciOiJSUzI1NiJ9.subject-token-for-telemetry.sig"

// TestCallTelemetry checks the client span and the duration metric of one
// success and of one failure of each kind, that the webhook receives the
// caller's trace context, and that neither the token nor the webhook's
// path and query reach the telemetry.
func TestCallTelemetry(t *testing.T) {
	type tc struct {
		name    string
		handler http.HandlerFunc
		token   string
		body    any
		opts    []reply.Option
		cancel  bool // cancel the caller's context once the webhook has the request
		kind    reply.Kind
		status  int  // expected http.response.status_code, 0 for none
		metric  bool // a duration is recorded
	}
	arrived := make(chan struct{}, 1)
	cases := []tc{
		{name: "completed", handler: answer(200, `{"answer":"yes","escalate":false}`), status: 200, metric: true},
		{name: "escalated is not an error", handler: answer(200, `{"answer":"ask a human","escalate":true}`), status: 200, metric: true},
		{name: "no_identity", handler: answer(200, `{}`), token: " ", kind: reply.KindNoIdentity},
		{name: "no_reply", handler: answer(200, "  "), kind: reply.KindNoReply, status: 200, metric: true},
		{name: "off_contract", handler: answer(200, `{"answer":1}`), kind: reply.KindOffContract, status: 200, metric: true},
		{name: "http_status", handler: answer(404, `{"message":"webhook `+secretPath+` is not registered"}`), kind: reply.KindHTTPStatus, status: 404, metric: true},
		{name: "too_large", handler: answer(200, `{"answer":"`+strings.Repeat("x", 64)+`","escalate":false}`),
			opts: []reply.Option{reply.WithMaxResponseBytes(16)}, kind: reply.KindTooLarge, status: 200, metric: true},
		{name: "timeout", handler: func(w http.ResponseWriter, r *http.Request) { _, _ = io.Copy(io.Discard, r.Body); <-r.Context().Done() },
			opts: []reply.Option{reply.WithTimeout(20 * time.Millisecond)}, kind: reply.KindTimeout, metric: true},
		{name: "canceled", handler: func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			select {
			case arrived <- struct{}{}:
			default:
			}
			<-r.Context().Done()
		},
			cancel: true, kind: reply.KindCanceled, metric: true},
		{name: "unreachable", kind: reply.KindUnreachable, metric: true},
		{name: "other", handler: answer(200, `{}`), body: func() {}, kind: reply.KindOther},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := oteltest.New(t)
			gotParent := make(chan string, 1)
			var hookURL string
			if c.handler != nil {
				hookURL = serve(t, func(w http.ResponseWriter, r *http.Request) {
					select {
					case gotParent <- r.Header.Get("Traceparent"):
					default:
					}
					c.handler(w, r)
				}) + secretPath + "?key=query-secret-value"
			} else {
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				require.NoError(t, err)
				hookURL = "http://" + ln.Addr().String() + secretPath + "?key=query-secret-value"
				require.NoError(t, ln.Close())
			}
			opts := append([]reply.Option{reply.WithTracerProvider(rec.TracerProvider()), reply.WithMeterProvider(rec.MeterProvider())}, c.opts...)
			client := newClient(t, hookURL, opts...)
			token, body := c.token, c.body
			if token == "" {
				token = telemetryToken
			}
			if body == nil {
				body = map[string]string{"text": "How many?"}
			}

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ctx, parent := rec.TracerProvider().Tracer("test").Start(ctx, "caller")
			if c.cancel {
				go func() { <-arrived; cancel() }()
			}
			_, err := client.Call(ctx, token, body)
			parent.End()
			assert.Equal(t, c.kind, reply.Classify(err))

			span := rec.Span(t, "POST")
			assert.Equal(t, trace.SpanKindClient, span.SpanKind())
			assert.Equal(t, parent.SpanContext().TraceID(), span.SpanContext().TraceID())
			assert.Equal(t, parent.SpanContext().SpanID(), span.Parent().SpanID())
			a := oteltest.Attrs(span.Attributes())
			u := strings.TrimPrefix(hookURL, "http://")
			host, port, _ := net.SplitHostPort(u[:strings.Index(u, "/")])
			wantPort, _ := strconv.Atoi(port)
			assert.Equal(t, "POST", a["http.request.method"].AsString())
			assert.Equal(t, host, a["server.address"].AsString())
			assert.Equal(t, int64(wantPort), a["server.port"].AsInt64())
			assert.Equal(t, "http", a["url.scheme"].AsString())
			if c.status != 0 {
				assert.Equal(t, int64(c.status), a["http.response.status_code"].AsInt64())
			} else {
				assert.NotContains(t, a, "http.response.status_code")
			}
			if c.kind == reply.KindNone {
				assert.NotContains(t, a, "error.type")
				assert.Equal(t, codes.Unset, span.Status().Code)
			} else {
				assert.Equal(t, string(c.kind), a["error.type"].AsString())
				assert.Equal(t, codes.Error, span.Status().Code)
				assert.Equal(t, string(c.kind), span.Status().Description)
			}
			if c.status != 0 {
				select {
				case tp := <-gotParent:
					sc := span.SpanContext()
					assert.Equal(t, "00-"+sc.TraceID().String()+"-"+sc.SpanID().String()+"-01", tp, "the webhook continues the client span")
				default:
					t.Error("the webhook was not called")
				}
			}

			m, ok := rec.Metric(context.Background(), reply.MetricWebhookDuration)
			if !c.metric {
				assert.False(t, ok && oteltest.HistogramCount(m) > 0, "no duration without a request")
			} else {
				require.True(t, ok)
				assert.Equal(t, "s", m.Unit)
				match := []attribute.KeyValue{attribute.String("server.address", host), attribute.String("url.scheme", "http")}
				if c.kind != reply.KindNone {
					match = append(match, attribute.String("error.type", string(c.kind)))
				}
				if c.status != 0 {
					match = append(match, attribute.Int("http.response.status_code", c.status))
				}
				assert.Equal(t, uint64(1), oteltest.HistogramCount(m, match...))
			}
			rec.AssertNoSecrets(t, telemetryToken, secretPath, strings.TrimPrefix(secretPath, "/webhook/"), "query-secret-value", hookURL)
		})
	}
}

// TestCallTelemetryGlobalProviders checks that a Client without the
// options uses the global no-op providers: the call works and no trace
// context is sent.
func TestCallTelemetryGlobalProviders(t *testing.T) {
	got := make(chan string, 1)
	url := serve(t, func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("Traceparent")
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = io.WriteString(w, `{"answer":"yes","escalate":false}`)
	})
	_, err := newClient(t, url).Call(context.Background(), telemetryToken, map[string]string{"text": "q"})
	require.NoError(t, err)
	assert.Empty(t, <-got)
}

// TestTransportWrapperWithRootCAs checks that WithTransportWrapper and
// WithRootCAs combine in either order: the certificate is verified against
// the pool and the call goes through the wrapper.
func TestTransportWrapperWithRootCAs(t *testing.T) {
	srv := httptest.NewTLSServer(answer(200, `{"answer":"yes","escalate":false}`))
	t.Cleanup(srv.Close)
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	for _, order := range []string{"roots first", "wrapper first"} {
		t.Run(order, func(t *testing.T) {
			var n atomic.Int64
			wrap := reply.WithTransportWrapper(func(rt http.RoundTripper) http.RoundTripper {
				return roundTripFunc(func(r *http.Request) (*http.Response, error) { n.Add(1); return rt.RoundTrip(r) })
			})
			opts := []reply.Option{reply.WithRootCAs(pool), wrap}
			if order == "wrapper first" {
				opts = []reply.Option{wrap, reply.WithRootCAs(pool)}
			}
			r, err := newClient(t, srv.URL+secretPath, opts...).Call(context.Background(), telemetryToken, map[string]string{"text": "q"})
			require.NoError(t, err)
			assert.Equal(t, "yes", r.Answer)
			assert.Equal(t, int64(1), n.Load())
		})
	}
	_, err := reply.NewClient(srv.URL, reply.WithTransportWrapper(nil))
	assert.ErrorContains(t, err, "WithTransportWrapper(nil)")
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
