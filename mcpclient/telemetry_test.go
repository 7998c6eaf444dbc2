package mcpclient

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/oauth2"

	"github.com/candorkit/candor/internal/otelx/oteltest"
	"github.com/candorkit/candor/mcpclient/mcptest"
)

// The bearer tokens of the telemetry tests, which must appear in no span
// or metric.
const (
	telToken      = "tel-bearer-4f1c9a0e-right"
	telWrongToken = "tel-bearer-77b2d1aa-wrong"
)

func telTokens(tok string) oauth2.TokenSource {
	return oauth2.StaticTokenSource(&oauth2.Token{AccessToken: tok, TokenType: "Bearer"})
}

func withRecorder(rec *oteltest.Recorder) []Option {
	return []Option{WithTracerProvider(rec.TracerProvider()), WithMeterProvider(rec.MeterProvider())}
}

// lastSpan returns the last ended span named name.
func lastSpan(t *testing.T, rec *oteltest.Recorder, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	spans := rec.SpansNamed(name)
	require.NotEmpty(t, spans, "no span %q", name)
	return spans[len(spans)-1]
}

func TestTelemetryOfASession(t *testing.T) {
	eachServer(t, func(t *testing.T, kind mcptest.Kind) {
		srv := mcptest.New(t, kind, mcptest.WithBearer(telToken))
		rec := oteltest.New(t)
		root, parent := rec.TracerProvider().Tracer("test").Start(t.Context(), "agent run")
		c := dial(t, srv.URL, append(withRecorder(rec), WithTokenSource(telTokens(telToken)))...)
		_, err := c.ListTools(root, ListToolsOptions{})
		require.NoError(t, err)
		_, err = c.Call(root, mcptest.ToolEcho, map[string]any{"q": 1})
		require.NoError(t, err)
		parent.End()

		for name, method := range map[string]string{"initialize": "initialize", "tools/list": "tools/list", "tools/call echo": "tools/call"} {
			s := rec.Span(t, name)
			a := oteltest.Attrs(s.Attributes())
			assert.Equal(t, trace.SpanKindClient, s.SpanKind(), name)
			assert.Equal(t, codes.Unset, s.Status().Code, name)
			assert.Equal(t, method, a["mcp.method.name"].AsString(), name)
			assert.Equal(t, DefaultProtocolVersion, a["mcp.protocol.version"].AsString(), name)
			assert.Equal(t, "127.0.0.1", a["server.address"].AsString(), name)
			assert.Positive(t, a["server.port"].AsInt64(), name)
			assert.NotEmpty(t, a["jsonrpc.request.id"].AsString(), name)
			assert.NotContains(t, a, "error.type", name)
			assert.NotContains(t, a, "mcp.session.id", "off by default")
			assert.Equal(t, instrumentationScope, s.InstrumentationScope().Name)
		}
		call := rec.Span(t, "tools/call echo")
		a := oteltest.Attrs(call.Attributes())
		assert.Equal(t, "echo", a["gen_ai.tool.name"].AsString())
		assert.Equal(t, "execute_tool", a["gen_ai.operation.name"].AsString())
		assert.Equal(t, parent.SpanContext().SpanID(), call.Parent().SpanID())
		assert.Equal(t, parent.SpanContext().TraceID(), call.SpanContext().TraceID())

		// The trace context reached the server in the header and in
		// params._meta, naming the request's own span as the parent.
		got := srv.Calls("tools/call")
		require.Len(t, got, 1)
		wantTP := fmt.Sprintf("00-%s-%s-01", call.SpanContext().TraceID(), call.SpanContext().SpanID())
		assert.Equal(t, wantTP, got[0].Traceparent)
		assert.Equal(t, wantTP, got[0].MetaTraceparent)
		assert.Equal(t, call.SpanContext().TraceID().String(), mcptest.TraceID(got[0].MetaTraceparent))
		assert.JSONEq(t, `{"traceparent":"`+wantTP+`"}`, string(got[0].Meta))
		list := srv.Calls("tools/list")
		require.Len(t, list, 1)
		assert.Equal(t, parent.SpanContext().TraceID().String(), mcptest.TraceID(list[0].Traceparent))

		m, ok := rec.Metric(t.Context(), "mcp.client.operation.duration")
		require.True(t, ok)
		assert.Equal(t, "s", m.Unit)
		assert.Equal(t, uint64(1), oteltest.HistogramCount(m, attribute.String("mcp.method.name", "tools/call"), attribute.String("gen_ai.tool.name", "echo"),
			attribute.String("mcp.protocol.version", DefaultProtocolVersion)))
		assert.Equal(t, uint64(1), oteltest.HistogramCount(m, attribute.String("mcp.method.name", "initialize")))
		assert.Equal(t, uint64(1), oteltest.HistogramCount(m, attribute.String("mcp.method.name", "tools/list")))
		rec.AssertNoSecrets(t, telToken, c.SessionID())
	})
}

func TestTelemetrySessionIDOnRequest(t *testing.T) {
	srv := mcptest.New(t, mcptest.MCPGo)
	rec := oteltest.New(t)
	c := dial(t, srv.URL, append(withRecorder(rec), WithSessionIDAttribute())...)
	_, err := c.Call(t.Context(), mcptest.ToolEcho, nil)
	require.NoError(t, err)
	require.NotEmpty(t, c.SessionID())
	for _, name := range []string{"initialize", "tools/call echo"} {
		assert.Equal(t, c.SessionID(), oteltest.Attrs(rec.Span(t, name).Attributes())["mcp.session.id"].AsString(), name)
	}
}

// No span in the caller's context and no provider: nothing is injected.
func TestNoTraceContextWithoutTelemetry(t *testing.T) {
	srv := mcptest.New(t, mcptest.MCPGo)
	c := dial(t, srv.URL)
	_, err := c.Call(t.Context(), mcptest.ToolEcho, nil)
	require.NoError(t, err)
	for _, r := range srv.Requests() {
		assert.Empty(t, r.Traceparent)
		assert.Nil(t, r.Meta)
	}
}

// A caller's own span is propagated even when the client records nothing.
func TestCallersTraceContextPropagated(t *testing.T) {
	srv := mcptest.New(t, mcptest.MCPGo)
	rec := oteltest.New(t)
	c := dial(t, srv.URL)
	ts, err := trace.ParseTraceState("candor=t1")
	require.NoError(t, err)
	remote := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1, 2, 3}, SpanID: trace.SpanID{4, 5, 6},
		TraceFlags: trace.FlagsSampled, TraceState: ts, Remote: true})
	ctx, span := rec.TracerProvider().Tracer("test").Start(trace.ContextWithRemoteSpanContext(t.Context(), remote), "caller")
	_, err = c.Call(ctx, mcptest.ToolEcho, nil)
	span.End()
	require.NoError(t, err)
	got := srv.Calls("tools/call")
	require.Len(t, got, 1)
	want := span.SpanContext().TraceID().String()
	assert.Equal(t, want, mcptest.TraceID(got[0].Traceparent))
	assert.Equal(t, want, mcptest.TraceID(got[0].MetaTraceparent))
	assert.Equal(t, "candor=t1", got[0].Tracestate)
	assert.Contains(t, string(got[0].Meta), `"tracestate":"candor=t1"`)
	assert.Empty(t, mcptest.TraceID("not-a-traceparent"))
}

// One failure of each kind a request can end with: its span carries
// error.type (the Classify kind) and status Error, never the error text,
// and the duration metric the same error.type.
func TestTelemetryFailureKinds(t *testing.T) {
	srv := mcptest.New(t, mcptest.MCPGo, mcptest.WithBearer(telToken), mcptest.WithToolsPageSize(1))
	tok := WithTokenSource(telTokens(telToken))
	hostileCall := func(t *testing.T, answer func(w http.ResponseWriter, m rpcMsg)) string {
		h := newHostile(t, func(w http.ResponseWriter, r *http.Request, m rpcMsg) bool {
			if m.Method == "tools/call" || m.Method == "tools/list" {
				answer(w, m)
				return true
			}
			return false
		})
		return h.srv.URL
	}
	for _, tc := range []struct {
		want Kind
		span string
		run  func(t *testing.T, opts []Option) error
	}{
		{KindToolError, "tools/call fail", func(t *testing.T, opts []Option) error {
			_, err := dial(t, srv.URL, append(opts, tok)...).Call(t.Context(), mcptest.ToolFail, nil)
			return err
		}},
		{KindProtocol, "tools/call go-error", func(t *testing.T, opts []Option) error {
			_, err := dial(t, srv.URL, append(opts, tok)...).Call(t.Context(), mcptest.ToolGoError, nil)
			return err
		}},
		{KindInvalidArgument, "tools/call echo", func(t *testing.T, opts []Option) error {
			_, err := dial(t, srv.URL, append(opts, tok)...).Call(t.Context(), mcptest.ToolEcho, []int{1})
			return err
		}},
		{KindTimeout, "tools/call echo", func(t *testing.T, opts []Option) error {
			past, cancel := context.WithDeadline(t.Context(), time.Now().Add(-time.Second))
			defer cancel()
			_, err := dial(t, srv.URL, append(opts, tok)...).Call(past, mcptest.ToolEcho, nil)
			return err
		}},
		{KindCanceled, "tools/call echo", func(t *testing.T, opts []Option) error {
			done, stop := context.WithCancel(t.Context())
			stop()
			_, err := dial(t, srv.URL, append(opts, tok)...).Call(done, mcptest.ToolEcho, nil)
			return err
		}},
		{KindUnauthorized, "initialize", func(t *testing.T, opts []Option) error {
			_, err := Dial(t.Context(), srv.URL, append(opts, WithTokenSource(telTokens(telWrongToken)))...)
			return err
		}},
		{KindNoToken, "initialize", func(t *testing.T, opts []Option) error {
			_, err := Dial(t.Context(), srv.URL, append(opts, WithTokenSource(oauth2.StaticTokenSource(&oauth2.Token{})))...)
			return err
		}},
		{KindTransport, "initialize", func(t *testing.T, opts []Option) error {
			_, err := Dial(t.Context(), "http://127.0.0.1:1/mcp", opts...)
			return err
		}},
		{KindTooLarge, "tools/call big", func(t *testing.T, opts []Option) error {
			_, err := dial(t, srv.URL, append(opts, tok, WithMaxResponseBytes(4096))...).Call(t.Context(), mcptest.ToolBig, map[string]int{"bytes": 10_000})
			return err
		}},
		{KindBudgetExceeded, "tools/call echo", func(t *testing.T, opts []Option) error {
			c := dial(t, srv.URL, append(opts, tok, WithBudget(Budget{MaxCalls: 1}))...)
			_, err := c.Call(t.Context(), mcptest.ToolEcho, nil)
			require.NoError(t, err)
			_, err = c.Call(t.Context(), mcptest.ToolEcho, nil)
			return err
		}},
		{KindClosed, "tools/call echo", func(t *testing.T, opts []Option) error {
			c := dial(t, srv.URL, append(opts, tok)...)
			require.NoError(t, c.Close())
			_, err := c.Call(t.Context(), mcptest.ToolEcho, nil)
			return err
		}},
		{KindPoolFull, "tools/call echo", func(t *testing.T, opts []Option) error {
			p, err := NewPool(srv.URL, append(opts, WithMaxSessions(1))...)
			require.NoError(t, err)
			t.Cleanup(func() { _ = p.Close() })
			busy, err := p.Caller(Identity{Subject: "a", Tokens: telTokens(telToken)}, CallerOptions{})
			require.NoError(t, err)
			other, err := p.Caller(Identity{Subject: "b", Tokens: telTokens(telToken)}, CallerOptions{})
			require.NoError(t, err)
			ctx, cancel := context.WithCancel(t.Context())
			var wg sync.WaitGroup
			wg.Go(func() { _, _ = busy.Call(ctx, mcptest.ToolBlock, nil) })
			<-srv.Entered()
			_, err = other.Call(t.Context(), mcptest.ToolEcho, nil)
			cancel()
			wg.Wait()
			return err
		}},
		{KindForbidden, "tools/call echo", func(t *testing.T, opts []Option) error {
			u := hostileCall(t, func(w http.ResponseWriter, _ rpcMsg) { http.Error(w, "forbidden", http.StatusForbidden) })
			_, err := dial(t, u, opts...).Call(t.Context(), mcptest.ToolEcho, nil)
			return err
		}},
		{KindStatus, "tools/call echo", func(t *testing.T, opts []Option) error {
			u := hostileCall(t, func(w http.ResponseWriter, _ rpcMsg) { http.Error(w, "boom", http.StatusInternalServerError) })
			_, err := dial(t, u, opts...).Call(t.Context(), mcptest.ToolEcho, nil)
			return err
		}},
		{KindSessionExpired, "tools/call echo", func(t *testing.T, opts []Option) error {
			u := hostileCall(t, func(w http.ResponseWriter, _ rpcMsg) { http.Error(w, "no such session", http.StatusNotFound) })
			_, err := dial(t, u, opts...).Call(t.Context(), mcptest.ToolEcho, nil)
			return err
		}},
		{KindMalformedResult, "tools/call echo", func(t *testing.T, opts []Option) error {
			u := hostileCall(t, func(w http.ResponseWriter, m rpcMsg) {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":"not a list"}}`, m.ID)
			})
			_, err := dial(t, u, opts...).Call(t.Context(), mcptest.ToolEcho, nil)
			return err
		}},
		{KindOutcomeUnknown, "tools/call echo", func(t *testing.T, opts []Option) error {
			u := hostileCall(t, func(w http.ResponseWriter, _ rpcMsg) { emptyStream(w) })
			_, err := dial(t, u, opts...).Call(t.Context(), mcptest.ToolEcho, nil)
			return err
		}},
		{KindDecode, "tools/list", func(t *testing.T, opts []Option) error {
			u := hostileCall(t, func(w http.ResponseWriter, m rpcMsg) {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"nextCursor":null}}`, m.ID)
			})
			_, err := dial(t, u, opts...).ListTools(t.Context(), ListToolsOptions{})
			return err
		}},
	} {
		t.Run(string(tc.want), func(t *testing.T) {
			rec := oteltest.New(t)
			err := tc.run(t, withRecorder(rec))
			require.Error(t, err)
			require.Equal(t, tc.want, Classify(err), "%v", err)

			s := lastSpan(t, rec, tc.span)
			assert.Equal(t, string(tc.want), oteltest.Attrs(s.Attributes())["error.type"].AsString())
			assert.Equal(t, codes.Error, s.Status().Code)
			assert.Equal(t, string(tc.want), s.Status().Description, "the kind, never the error text")
			assert.Empty(t, s.Events(), "no exception event: error texts carry evidence")
			if tc.want == KindProtocol {
				assert.NotEmpty(t, oteltest.Attrs(s.Attributes())["rpc.response.status_code"].AsString())
			}
			m, ok := rec.Metric(t.Context(), "mcp.client.operation.duration")
			require.True(t, ok)
			method, _, _ := strings.Cut(tc.span, " ")
			assert.Equal(t, uint64(1), oteltest.HistogramCount(m, attribute.String("error.type", string(tc.want)), attribute.String("mcp.method.name", method)))
			rec.AssertNoSecrets(t, telToken, telWrongToken)
		})
	}
}

// A scan stopped by a rule across pages is the scan's failure; each page
// request succeeded and says so.
func TestTelemetryIncompleteScanPagesSucceed(t *testing.T) {
	srv := mcptest.New(t, mcptest.MCPGo, mcptest.WithToolsPageSize(1))
	rec := oteltest.New(t)
	c := dial(t, srv.URL, withRecorder(rec)...)
	_, err := c.ListTools(t.Context(), ListToolsOptions{MaxPages: 1})
	require.Equal(t, KindIncomplete, Classify(err))
	pages := rec.SpansNamed("tools/list")
	require.Len(t, pages, 1)
	assert.Equal(t, codes.Unset, pages[0].Status().Code)
}

// A call answered for an unknown session is sent again on a new session:
// one tools/call span, with the re-initialization as its child.
func TestTelemetryRetryIsOneSpan(t *testing.T) {
	srv := mcptest.New(t, mcptest.MCPGo)
	rec := oteltest.New(t)
	c := dial(t, srv.URL, withRecorder(rec)...)
	require.NoError(t, srv.Terminate(c.SessionID()))
	_, err := c.Call(t.Context(), mcptest.ToolEcho, nil)
	require.NoError(t, err)
	call := rec.Span(t, "tools/call echo")
	inits := rec.SpansNamed("initialize")
	require.Len(t, inits, 2)
	assert.Equal(t, call.SpanContext().SpanID(), inits[1].Parent().SpanID())
	calls := srv.Calls("tools/call")
	require.Len(t, calls, 2)
	assert.Equal(t, calls[0].MetaTraceparent, calls[1].MetaTraceparent)
}
