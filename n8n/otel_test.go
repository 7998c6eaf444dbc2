package n8n_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/candorkit/candor/internal/otelx/oteltest"
	"github.com/candorkit/candor/n8n"
	"github.com/candorkit/candor/n8n/n8ntest"
)

// otelEnv is a client of a Fake that records its telemetry.
type otelEnv struct {
	inst *n8ntest.Instance
	rec  *oteltest.Recorder
	c    *n8n.Client
	s    *n8n.Session
}

func newOtelEnv(t *testing.T, e n8ntest.Edition, opts ...n8n.Option) *otelEnv {
	t.Helper()
	inst := n8ntest.StartFake(t, e, n8ntest.Options{})
	rec := oteltest.New(t)
	c, err := n8n.New(inst.BaseURL, inst.APIKey,
		append([]n8n.Option{n8n.WithTracerProvider(rec.TracerProvider()), n8n.WithMeterProvider(rec.MeterProvider())}, opts...)...)
	require.NoError(t, err)
	s, err := c.Login(ctxT(t), inst.Email, inst.Password)
	require.NoError(t, err)
	en := &otelEnv{inst: inst, rec: rec, c: c, s: s}
	t.Cleanup(func() {
		rec.AssertNoSecrets(t, inst.APIKey, strings.TrimPrefix(inst.Cookie, "n8n-auth="), inst.Cookie, inst.Password)
	})
	return en
}

// created creates a webhook workflow and returns it with its id.
func (en *otelEnv) created(t *testing.T, name string) (*n8n.Workflow, n8n.ID) {
	t.Helper()
	wf := webhookWorkflow(t, name, "otel-"+name, answerCode("v1"))
	w, err := en.c.CreateWorkflow(ctxT(t), wf)
	require.NoError(t, err)
	return wf, w.ID
}

// children returns the names of the spans whose parent is p, in the order
// they ended.
func (en *otelEnv) children(p sdktrace.ReadOnlySpan) []string {
	var out []string
	for _, s := range en.rec.Spans() {
		if s.Parent().SpanID() == p.SpanContext().SpanID() {
			out = append(out, s.Name())
		}
	}
	return out
}

func checkFailed(t *testing.T, s sdktrace.ReadOnlySpan, kind string) {
	t.Helper()
	a := oteltest.Attrs(s.Attributes())
	if kind == "" {
		assert.NotContains(t, a, "error.type", s.Name())
		assert.Equal(t, codes.Unset, s.Status().Code, s.Name())
		return
	}
	assert.Equal(t, kind, a["error.type"].AsString(), s.Name())
	assert.Equal(t, codes.Error, s.Status().Code, s.Name())
	assert.Equal(t, kind, s.Status().Description, s.Name())
}

// TestDeployTelemetryEdition1: a deploy on n8n 1.x is one n8n.deploy span
// with a span per step, each step's requests below it as client spans; a
// refused activation fails the step and the deploy with the status code
// and nests the restore's steps under n8n.deploy.restore.
func TestDeployTelemetryEdition1(t *testing.T) {
	en := newOtelEnv(t, n8ntest.Edition1)
	ctx := ctxT(t)
	on := true
	wf, id := en.created(t, "e1")
	_, err := n8n.Deploy(ctx, en.c, id, wf, n8n.DeployOptions{Active: &on})
	require.NoError(t, err)
	setCode(t, wf, answerCode("v2"))

	n := len(en.rec.SpansNamed("n8n.deploy"))
	_, err = n8n.Deploy(ctx, en.c, id, wf, n8n.DeployOptions{})
	require.NoError(t, err)
	deploys := en.rec.SpansNamed("n8n.deploy")
	require.Len(t, deploys, n+1)
	d := deploys[n]
	checkFailed(t, d, "")
	a := oteltest.Attrs(d.Attributes())
	assert.Equal(t, string(id), a["n8n.workflow.id"].AsString())
	assert.Equal(t, "deployed", a["n8n.deploy.state"].AsString())
	assert.Equal(t, "1", a["n8n.edition"].AsString())
	assert.Equal(t, string(n8n.LiveActivation), a["n8n.deploy.live"].AsString())
	assert.Equal(t, []string{"n8n.deploy.read", "n8n.deploy.detect", "n8n.deploy.deactivate", "n8n.deploy.verify-deactivated",
		"n8n.deploy.update", "n8n.deploy.verify-update", "n8n.deploy.activate", "n8n.deploy.verify-live"}, en.children(d))
	var read sdktrace.ReadOnlySpan
	for _, s := range en.rec.SpansNamed("n8n.deploy.read") {
		if s.Parent().SpanID() == d.SpanContext().SpanID() {
			read = s
		}
	}
	require.NotNil(t, read)
	assert.Equal(t, "read", oteltest.Attrs(read.Attributes())["n8n.deploy.step"].AsString())
	assert.Equal(t, []string{"GET /api/v1/workflows/{id}"}, en.children(read))

	// A refused activation: the step, the deploy and the request fail with
	// the status; the restore succeeds.
	setCode(t, wf, answerCode("v3"))
	en.inst.Fake.FailNext(n8ntest.OpActivate, http.StatusBadRequest, "refused")
	rep, err := n8n.Deploy(ctx, en.c, id, wf, n8n.DeployOptions{})
	require.Error(t, err)
	require.Equal(t, n8n.StateRestored, rep.State)
	deploys = en.rec.SpansNamed("n8n.deploy")
	d = deploys[len(deploys)-1]
	checkFailed(t, d, "400")
	a = oteltest.Attrs(d.Attributes())
	assert.Equal(t, "restored", a["n8n.deploy.state"].AsString())
	assert.Equal(t, "activate", a["n8n.deploy.failed_step"].AsString())
	steps := en.children(d)
	assert.Contains(t, steps, "n8n.deploy.activate")
	acts := en.rec.SpansNamed("n8n.deploy.activate")
	act := acts[len(acts)-1]
	checkFailed(t, act, "400")
	var call sdktrace.ReadOnlySpan
	for _, s := range en.rec.SpansNamed("POST /api/v1/workflows/{id}/activate") {
		if s.Parent().SpanID() == act.SpanContext().SpanID() {
			call = s
		}
	}
	require.NotNil(t, call, "no request under the activate step")
	checkFailed(t, call, "400")
	ca := oteltest.Attrs(call.Attributes())
	assert.Equal(t, int64(400), ca["http.response.status_code"].AsInt64())
	assert.Equal(t, "POST", ca["http.request.method"].AsString())
	assert.Equal(t, "/api/v1/workflows/{id}/activate", ca["url.template"].AsString())
	assert.Equal(t, "127.0.0.1", ca["server.address"].AsString())
	assert.Equal(t, trace.SpanKindClient, call.SpanKind())
	restores := en.rec.SpansNamed("n8n.deploy.restore")
	require.NotEmpty(t, restores)
	r := restores[len(restores)-1]
	checkFailed(t, r, "")
	assert.Equal(t, "restored", oteltest.Attrs(r.Attributes())["n8n.deploy.state"].AsString())
	assert.Contains(t, en.children(r), "n8n.deploy.restore-activate")

	// Validation and conflict fail before any write.
	bad := *wf
	bad.Nodes = nil
	_, err = n8n.Deploy(ctx, en.c, id, &bad, n8n.DeployOptions{})
	require.Error(t, err)
	deploys = en.rec.SpansNamed("n8n.deploy")
	checkFailed(t, deploys[len(deploys)-1], "validation")
	checkFailed(t, en.rec.Span(t, "n8n.deploy.validate"), "validation")
	_, err = n8n.Deploy(ctx, en.c, id, wf, n8n.DeployOptions{Expect: &n8n.Snapshot{VersionID: "stale"}})
	require.ErrorIs(t, err, n8n.ErrConflict)
	deploys = en.rec.SpansNamed("n8n.deploy")
	checkFailed(t, deploys[len(deploys)-1], "conflict")
	assert.Equal(t, "unchanged", oteltest.Attrs(deploys[len(deploys)-1].Attributes())["n8n.deploy.state"].AsString())

	// Metrics: one data point per deploy outcome; one per request route.
	m, ok := en.rec.Metric(ctx, "n8n.deploy.duration")
	require.True(t, ok)
	assert.Equal(t, "s", m.Unit)
	assert.Equal(t, uint64(1), oteltest.HistogramCount(m, attribute.String("n8n.deploy.state", "restored"), attribute.String("error.type", "400")))
	assert.Equal(t, uint64(1), oteltest.HistogramCount(m, attribute.String("error.type", "validation")))
	assert.Equal(t, uint64(1), oteltest.HistogramCount(m, attribute.String("error.type", "conflict")))
	assert.Equal(t, uint64(2), oteltest.HistogramCount(m, attribute.String("n8n.deploy.state", "deployed")))
	m, ok = en.rec.Metric(ctx, "http.client.request.duration")
	require.True(t, ok)
	assert.Equal(t, uint64(1), oteltest.HistogramCount(m, attribute.String("url.template", "/api/v1/workflows/{id}/activate"),
		attribute.Int("http.response.status_code", 400), attribute.String("error.type", "400")))
	assert.Equal(t, uint64(1), oteltest.HistogramCount(m, attribute.String("url.template", "/rest/login")))
	for _, s := range en.rec.Spans() {
		assert.NotContains(t, s.Name(), string(id), "an id in a span name")
	}
}

// TestDeployTelemetryEdition2: publish and settle steps with a Session;
// without one the deploy is unverified.
func TestDeployTelemetryEdition2(t *testing.T) {
	en := newOtelEnv(t, n8ntest.Edition2)
	ctx := ctxT(t)
	on := true
	wf, id := en.created(t, "e2")
	_, err := n8n.Deploy(ctx, en.c, id, wf, n8n.DeployOptions{Active: &on, Session: en.s})
	require.NoError(t, err)
	d := en.rec.Span(t, "n8n.deploy")
	checkFailed(t, d, "")
	assert.Equal(t, "2", oteltest.Attrs(d.Attributes())["n8n.edition"].AsString())
	steps := en.children(d)
	assert.Contains(t, steps, "n8n.deploy.publish")
	assert.Contains(t, steps, "n8n.deploy.settle")
	settle := en.rec.Span(t, "n8n.deploy.settle")
	assert.Contains(t, en.children(settle), "GET /rest/workflows/{id}/publication-status")

	setCode(t, wf, answerCode("v2"))
	rep, err := n8n.Deploy(ctx, en.c, id, wf, n8n.DeployOptions{})
	require.ErrorIs(t, err, n8n.ErrUnverified)
	require.Equal(t, n8n.StateUnverified, rep.State)
	deploys := en.rec.SpansNamed("n8n.deploy")
	checkFailed(t, deploys[1], "unverified")
	assert.Equal(t, "verify-serving", oteltest.Attrs(deploys[1].Attributes())["n8n.deploy.failed_step"].AsString())
}

// TestCallTelemetry: one client span per request, named by its route
// without ids; failures carry the status code, or a word for a failure
// without one.
func TestCallTelemetry(t *testing.T) {
	t.Run("status", func(t *testing.T) {
		en := newOtelEnv(t, n8ntest.Edition1)
		_, err := en.c.GetWorkflow(ctxT(t), "no-such-workflow")
		require.True(t, n8n.IsStatus(err, http.StatusNotFound))
		s := en.rec.Span(t, "GET /api/v1/workflows/{id}")
		checkFailed(t, s, "404")
		assert.Equal(t, int64(404), oteltest.Attrs(s.Attributes())["http.response.status_code"].AsInt64())
		login := en.rec.Span(t, "POST /rest/login")
		checkFailed(t, login, "")
		assert.Equal(t, int64(200), oteltest.Attrs(login.Attributes())["http.response.status_code"].AsInt64())
	})
	t.Run("response too large", func(t *testing.T) {
		en := newOtelEnv(t, n8ntest.Edition1, n8n.WithMaxResponseBytes(1<<10))
		_, err := en.c.CreateWorkflow(ctxT(t), webhookWorkflow(t, "big", "otel-big", answerCode("v1")))
		require.ErrorIs(t, err, n8n.ErrResponseTooLarge)
		s := en.rec.Span(t, "POST /api/v1/workflows")
		checkFailed(t, s, "response_too_large")
		assert.Equal(t, int64(200), oteltest.Attrs(s.Attributes())["http.response.status_code"].AsInt64())
	})
	t.Run("transport", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addr := l.Addr().String()
		require.NoError(t, l.Close())
		rec := oteltest.New(t)
		c, err := n8n.New("http://"+addr, "api-key-0d9c3b7e51", n8n.WithTracerProvider(rec.TracerProvider()))
		require.NoError(t, err)
		_, err = c.ListWorkflows(ctxT(t), n8n.ListWorkflowsOptions{})
		require.Error(t, err)
		s := rec.Span(t, "GET /api/v1/workflows")
		checkFailed(t, s, "transport")
		assert.NotContains(t, oteltest.Attrs(s.Attributes()), "http.response.status_code")
		rec.AssertNoSecrets(t, "api-key-0d9c3b7e51")
	})
	t.Run("canceled", func(t *testing.T) {
		en := newOtelEnv(t, n8ntest.Edition1)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := en.c.GetWorkflow(ctx, "x")
		require.ErrorIs(t, err, context.Canceled)
		checkFailed(t, en.rec.Span(t, "GET /api/v1/workflows/{id}"), "canceled")
	})
}

func TestRouteTemplates(t *testing.T) {
	for path, want := range map[string]string{
		"/api/v1/workflows":                        "/api/v1/workflows",
		"/api/v1/workflows/a%2Fb":                  "/api/v1/workflows/{id}",
		"/api/v1/workflows/activate/activate":      "/api/v1/workflows/{id}/activate",
		"/api/v1/workflows/x/tags":                 "/api/v1/workflows/{id}/tags",
		"/api/v1/credentials/schema/httpBasicAuth": "/api/v1/credentials/schema/{type}",
		"/api/v1/credentials/schema":               "/api/v1/credentials/schema",
		"/rest/workflows/x/publication-status":     "/rest/workflows/{id}/publication-status",
		"/rest/workflows/x/run":                    "/rest/workflows/{id}/run",
		"/rest/login":                              "/rest/login",
		"/api/v1/secret-key-in-path/x/secret":      "/api/v1/{segment}/{id}/{segment}",
		"/webhook/secret":                          "/{path}",
	} {
		assert.Equal(t, want, n8n.RouteOf(path), path)
	}
}
