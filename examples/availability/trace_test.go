package main

import (
	"bytes"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/candorkit/candor/a2a"
	"github.com/candorkit/candor/a2a/jwtauth"
	"github.com/candorkit/candor/examples/availability/internal/check"
	"github.com/candorkit/candor/internal/otelx/oteltest"
	"github.com/candorkit/candor/mcpclient/mcptest"
	"github.com/candorkit/candor/tokenexchange"
)

// mcpArrival is what reached the catalog for one MCP request message.
type mcpArrival struct {
	Method, Traceparent, MetaTraceparent string
}

// arrivals records, in front of the catalog, the trace context each MCP
// request carried (header and params._meta), then forwards it unchanged.
type arrivals struct {
	mu  sync.Mutex
	got []mcpArrival
}

func (a *arrivals) list() []mcpArrival {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]mcpArrival(nil), a.got...)
}

func (a *arrivals) front(t *testing.T, target string) string {
	t.Helper()
	u, err := url.Parse(target)
	require.NoError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
	proxy.FlushInterval = -1 // event streams pass as they come
	proxy.ErrorLog = log.New(io.Discard, "", 0)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
			r.Body = io.NopCloser(bytes.NewReader(body))
			var msg struct {
				Method string `json:"method"`
				Params struct {
					Meta map[string]any `json:"_meta"`
				} `json:"params"`
			}
			if json.Unmarshal(body, &msg) == nil && msg.Method != "" {
				meta, _ := msg.Params.Meta["traceparent"].(string)
				a.mu.Lock()
				a.got = append(a.got, mcpArrival{msg.Method, r.Header.Get("Traceparent"), meta})
				a.mu.Unlock()
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + u.RequestURI()
}

// TestOneTraceAcrossProcesses runs the availability flow (A2A request,
// token exchange at the provider, MCP call to the catalog) with an SDK
// recording to memory, passed through the options, and checks that one
// trace id runs from the A2A request span through the token exchange span
// to the MCP call span, and that the same trace id arrives at the provider
// and at the catalog, in the traceparent header and in params._meta.
func TestOneTraceAcrossProcesses(t *testing.T) {
	ctx := t.Context()
	rec := oteltest.New(t)
	tp, mp := rec.TracerProvider(), rec.MeterProvider()

	emb, err := startEmbedded(ctx, discard)
	require.NoError(t, err)
	t.Cleanup(emb.Close)
	var seen arrivals
	mcpURL := seen.front(t, emb.MCPURL)

	exchange := *emb.AgentConfig()
	exchange.TracerProvider, exchange.MeterProvider = tp, mp
	tokens, err := tokenexchange.NewCache(&exchange)
	require.NoError(t, err)
	checker, err := check.New(check.Config{Exchanger: tokens, MCPURL: mcpURL, TracerProvider: tp, MeterProvider: mp})
	require.NoError(t, err)
	t.Cleanup(func() { _ = checker.Close() })
	verifier, err := jwtauth.New(emb.OP.Issuer(), agentClient, jwtauth.WithLeeway(0))
	require.NoError(t, err)
	agent, err := startAgent("127.0.0.1:0", checker, checker.Threshold(), verifier, false, discard,
		a2a.WithTracerProvider(tp), a2a.WithMeterProvider(mp))
	require.NoError(t, err)
	t.Cleanup(func() { _ = agent.Close() })
	token, err := emb.UserToken(ctx)
	require.NoError(t, err)

	body := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"` +
		demoQuestions()[0] + `"}]}}}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, agent.Endpoint, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	_ = resp.Body.Close()
	require.Contains(t, string(answer), "TASK_STATE_COMPLETED", "%s", answer)

	root := rec.Span(t, "SendMessage")
	trace := root.SpanContext().TraceID()
	require.True(t, trace.IsValid())
	assert.False(t, root.Parent().IsValid(), "the A2A request span starts the trace")
	task := rec.Span(t, a2a.SpanTask)
	assert.Equal(t, trace, task.SpanContext().TraceID(), "task span")
	exchangeSpan := rec.Span(t, "tokenexchange exchange")
	assert.Equal(t, trace, exchangeSpan.SpanContext().TraceID(), "token exchange span")
	calls := rec.SpansNamed("tools/call " + check.ToolGetProduct)
	require.NotEmpty(t, calls, "an MCP call span")
	for _, s := range calls {
		assert.Equal(t, trace, s.SpanContext().TraceID(), "MCP call span")
	}
	for _, s := range rec.Spans() {
		assert.Equal(t, trace, s.SpanContext().TraceID(), "span %q is in another trace", s.Name())
	}

	// What arrived on the other side of each hop.
	var exchanged int
	for _, r := range emb.OP.Requests() {
		if r.GrantType == tokenexchange.GrantTypeTokenExchange {
			exchanged++
			assert.Equal(t, trace.String(), mcptest.TraceID(r.Traceparent), "the provider got the trace")
		}
	}
	assert.Equal(t, 1, exchanged)
	var toolCalls int
	for _, a := range seen.list() {
		assert.Equal(t, trace.String(), mcptest.TraceID(a.Traceparent), "%s: traceparent header at the catalog", a.Method)
		if a.Method == "notifications/initialized" {
			continue
		}
		assert.Equal(t, trace.String(), mcptest.TraceID(a.MetaTraceparent), "%s: params._meta.traceparent at the catalog", a.Method)
		if a.Method == "tools/call" {
			toolCalls++
		}
	}
	assert.Equal(t, 1, toolCalls, "%+v", seen.list())

	rec.AssertNoSecrets(t, token, emb.AgentSecret)
}
