package n8n_test

// Unit tests on httptest servers, each reproducing a wire shape observed on
// a real n8n (see docs/n8n.md): 405s, numeric ids, the self-pointing cursor
// of limit=0, the empty 200 of a failed webhook, or a fault no real n8n can
// be made to produce (a body past the cap, a redirect).

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/candorkit/candor/n8n"
	"github.com/candorkit/candor/reply"
)

const testKey = "n8n_api_0123456789abcdef-secret"

func newClient(t *testing.T, srv *httptest.Server, opts ...n8n.Option) *n8n.Client {
	t.Helper()
	c, err := n8n.New(srv.URL, testKey, opts...)
	require.NoError(t, err)
	return c
}

func TestListWorkflowsRefusesALoopingCursor(t *testing.T) {
	// n8n's answer to limit=0: every workflow plus a cursor pointing to the
	// same page, forever.
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) > 10 {
			t.Error("client kept following a looping cursor")
			http.Error(w, "stop", 500)
			return
		}
		io.WriteString(w, `{"data":[{"id":"a1","name":"one","nodes":[],"connections":{}}],
			"nextCursor":"eyJsaW1pdCI6MCwib2Zmc2V0IjowfQ=="}`)
	}))
	defer srv.Close()
	c := newClient(t, srv)
	got, err := c.ListWorkflows(context.Background(), n8n.ListWorkflowsOptions{})
	require.ErrorIs(t, err, n8n.ErrIncompleteList)
	assert.Nil(t, got, "a partial list must not look complete")
	assert.EqualValues(t, 2, calls.Load(), "the page, then the repeated cursor")

	// The iterator yields what it read, then ends with the error: never a
	// silent end.
	calls.Store(0)
	var ids []n8n.ID
	var last error
	for w, err := range c.Workflows(context.Background(), n8n.ListWorkflowsOptions{}) {
		if err != nil {
			last = err
			break
		}
		ids = append(ids, w.ID)
	}
	assert.ErrorIs(t, last, n8n.ErrIncompleteList)
	assert.Equal(t, []n8n.ID{"a1", "a1"}, ids)
}

func TestListWorkflowsPagesAndClampsLimit(t *testing.T) {
	cases := map[int]string{0: "100", -3: "1", 1: "1", 250: "250", 251: "250", 100000: "250"}
	for asked, sent := range cases {
		var limits []string
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			limits = append(limits, r.URL.Query().Get("limit"))
			switch r.URL.Query().Get("cursor") {
			case "":
				io.WriteString(w, `{"data":[{"id":"1","name":"a"},{"id":2,"name":"b"}],"nextCursor":"c2"}`)
			case "c2":
				io.WriteString(w, `{"data":[{"id":"3","name":"c"}],"nextCursor":"c3"}`)
			case "c3":
				io.WriteString(w, `{"data":[],"nextCursor":null}`)
			default:
				http.Error(w, "bad cursor", 400)
			}
		}))
		got, err := newClient(t, srv).ListWorkflows(context.Background(), n8n.ListWorkflowsOptions{PageSize: asked})
		srv.Close()
		require.NoError(t, err, "PageSize %d", asked)
		var ids []string
		for _, w := range got {
			ids = append(ids, string(w.ID))
		}
		assert.Equal(t, "1,2,3", strings.Join(ids, ","), "PageSize %d (numeric id 2 included)", asked)
		for _, l := range limits {
			assert.Equal(t, sent, l, "PageSize %d", asked)
		}
	}
}

func TestListExecutionsStopsAtMax(t *testing.T) {
	var pages atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pages.Add(1)
		assert.Equal(t, "error", r.URL.Query().Get("status"))
		io.WriteString(w, `{"data":[{"id":1,"status":"error"},{"id":2,"status":"error"}],"nextCursor":"more"}`)
	}))
	defer srv.Close()
	got, err := newClient(t, srv).ListExecutions(context.Background(),
		n8n.ListExecutionsOptions{Status: n8n.ExecutionError, Max: 1})
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, n8n.ExecutionError, got[0].Status)
	assert.EqualValues(t, 1, pages.Load(), "Max reached on the first page: no second request")
}

func TestListWithoutDataIsAnError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"nextCursor":null}`)
	}))
	defer srv.Close()
	_, err := newClient(t, srv).ListWorkflows(context.Background(), n8n.ListWorkflowsOptions{})
	var de *n8n.DecodeError
	assert.ErrorAs(t, err, &de)
	assert.ErrorIs(t, err, n8n.ErrIncompleteList)
}

func TestNumericIDs(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"id":134,"workflowId":"Wf1","status":"error","finished":false,"mode":"webhook",
			"retryOf":6,"retrySuccessId":null,
			"data":{"resultData":{"error":{"message":"boom"}}}}`)
	}))
	defer srv.Close()
	e, err := newClient(t, srv).GetExecution(context.Background(), "134", true)
	require.NoError(t, err)
	assert.Equal(t, n8n.ID("134"), e.ID)
	assert.Equal(t, n8n.ID("6"), e.RetryOf)
	assert.Equal(t, n8n.ID(""), e.RetrySuccessID)
	assert.Equal(t, n8n.ID("Wf1"), e.WorkflowID)
	assert.Equal(t, "boom", e.ErrorMessage())
	var id n8n.ID
	for _, bad := range []string{`1.5`, `true`, `{}`, `[]`} {
		assert.Error(t, json.Unmarshal([]byte(bad), &id), "ID accepted %s", bad)
	}
}

func TestMethodNotAllowedMeansEdition1(t *testing.T) {
	// n8n 1.x answers GET /api/v1/credentials with 405.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		assert.Equal(t, http.MethodGet, r.Method)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Allow", "POST")
		w.WriteHeader(http.StatusMethodNotAllowed)
		io.WriteString(w, `{"message":"GET method not allowed"}`)
	}))
	defer srv.Close()
	c := newClient(t, srv)
	ed, err := c.DetectEdition(context.Background())
	require.NoError(t, err)
	assert.Equal(t, n8n.Edition1, ed)
	// The same 405 on a call that needs it is a *StatusError with the evidence.
	_, err = c.ListWorkflows(context.Background(), n8n.ListWorkflowsOptions{})
	var se *n8n.StatusError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, 405, se.StatusCode)
	assert.Equal(t, "POST", se.Header.Get("Allow"))
	assert.Equal(t, "GET method not allowed", se.Message)
	assert.True(t, n8n.IsStatus(err, 405))
	assert.Equal(t, "n8n: GET /api/v1/workflows?limit=100: HTTP 405 Method Not Allowed: GET method not allowed", err.Error())
}

// TestStatusErrorExcerpt: Error() never carries a raw body's trailing white
// space, and a cut body stays valid UTF-8.
func TestStatusErrorExcerpt(t *testing.T) {
	var body atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
		io.WriteString(w, body.Load().(string))
	}))
	defer srv.Close()
	c := newClient(t, srv)

	body.Store("upstream down\r\n\n")
	_, err := c.GetWorkflow(context.Background(), "x")
	require.Error(t, err)
	assert.True(t, strings.HasSuffix(err.Error(), ": upstream down"), "Error() = %q", err.Error())
	var se *n8n.StatusError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, []byte("upstream down\r\n\n"), se.Body, "the raw body is kept as evidence")

	body.Store(strings.Repeat("é", 300)) // 600 bytes of two-byte runes
	_, err = c.GetWorkflow(context.Background(), "x")
	require.Error(t, err)
	assert.True(t, utf8.ValidString(err.Error()), "Error() cut inside a rune: %q", err.Error())
	assert.Less(t, len(err.Error()), 300)
}

func TestKeyNeverInErrorsOrLogs(t *testing.T) {
	var logs bytes.Buffer
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		assert.Equal(t, testKey, r.Header.Get("X-N8N-API-KEY"))
		w.WriteHeader(http.StatusUnauthorized)
		// A server that echoes the key it was sent.
		io.WriteString(w, `{"message":"unauthorized key `+r.Header.Get("X-N8N-API-KEY")+`"}`)
	}))
	defer srv.Close()
	c := newClient(t, srv, n8n.WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	_, err := c.GetWorkflow(context.Background(), "x")
	require.True(t, n8n.IsStatus(err, 401), "err = %v", err)
	var se *n8n.StatusError
	require.ErrorAs(t, err, &se)
	slog.New(slog.NewTextHandler(&logs, nil)).Info("client", "c", c)
	for what, s := range map[string]string{"error": err.Error(), "body": string(se.Body), "logs": logs.String(), "String": c.String()} {
		assert.NotContains(t, s, testKey, "the API key appears in the %s", what)
	}
	assert.Contains(t, se.Message, "[REDACTED]")
	assert.Contains(t, logs.String(), "status=401")
	_, err = n8n.New(srv.URL, " ")
	assert.Error(t, err, "New accepted a blank API key")
}

// TestNoLoggerLogsNothing: without WithLogger nothing reaches slog.Default.
func TestNoLoggerLogsNothing(t *testing.T) {
	var logs bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	t.Cleanup(func() { slog.SetDefault(old) })
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"message":"not found"}`)
	}))
	defer srv.Close()
	_, err := newClient(t, srv).GetWorkflow(context.Background(), "x")
	require.True(t, n8n.IsStatus(err, 404))
	assert.Empty(t, logs.String())
}

func TestNewRefusesBadOptions(t *testing.T) {
	for name, opt := range map[string]n8n.Option{
		"WithHTTPClient(nil)":     n8n.WithHTTPClient(nil),
		"WithRootCAs(nil)":        n8n.WithRootCAs(nil),
		"WithTimeout(0)":          n8n.WithTimeout(0),
		"WithMaxResponseBytes(0)": n8n.WithMaxResponseBytes(0),
		"nil":                     nil,
	} {
		_, err := n8n.New("http://127.0.0.1:5678", testKey, opt)
		assert.Error(t, err, name)
	}
	for _, bad := range []string{"127.0.0.1:5678", "ftp://h", "http://u:p@h", "http://h/?q=1"} {
		_, err := n8n.New(bad, testKey)
		assert.Error(t, err, bad)
	}
}

// TestRootCAsComposeWithHTTPClient: WithRootCAs before or after
// WithHTTPClient gives the same client, and TLS is verified.
func TestRootCAsComposeWithHTTPClient(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"id":"1","name":"a"}`)
	}))
	defer srv.Close()
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	var used atomic.Int32
	base := &http.Client{Transport: &countingTransport{rt: http.DefaultTransport.(*http.Transport).Clone(), n: &used}}
	// countingTransport is not an *http.Transport: roots cannot be set on it.
	_, err := n8n.New(srv.URL, testKey, n8n.WithHTTPClient(base), n8n.WithRootCAs(pool))
	assert.Error(t, err, "WithRootCAs silently ignored a transport it cannot configure")

	plain := &http.Client{Timeout: 7 * time.Second}
	for _, opts := range [][]n8n.Option{
		{n8n.WithHTTPClient(plain), n8n.WithRootCAs(pool)},
		{n8n.WithRootCAs(pool), n8n.WithHTTPClient(plain)},
		{n8n.WithRootCAs(pool)},
	} {
		c, err := n8n.New(srv.URL, testKey, opts...)
		require.NoError(t, err)
		_, err = c.GetWorkflow(context.Background(), "1")
		assert.NoError(t, err)
	}
	c, err := n8n.New(srv.URL, testKey)
	require.NoError(t, err)
	_, err = c.GetWorkflow(context.Background(), "1")
	assert.ErrorContains(t, err, "certificate", "an unknown CA was accepted")
	assert.NotContains(t, err.Error(), srv.URL, "the error carries the URL")
}

type countingTransport struct {
	rt http.RoundTripper
	n  *atomic.Int32
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.rt.RoundTrip(r)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestTimeoutIsPerRequest: every request carries the client's deadline,
// DefaultTimeout or WithTimeout's, on top of the caller's context.
func TestTimeoutIsPerRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var left []time.Duration
		hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			dl, ok := r.Context().Deadline()
			require.True(t, ok, "request without a deadline")
			left = append(left, time.Until(dl))
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(`{"id":"1"}`)), Request: r}, nil
		})}
		for _, opts := range [][]n8n.Option{{n8n.WithHTTPClient(hc)}, {n8n.WithHTTPClient(hc), n8n.WithTimeout(5 * time.Second)}} {
			c, err := n8n.New("http://n8n.invalid", testKey, opts...)
			require.NoError(t, err)
			_, err = c.GetWorkflow(context.Background(), "1")
			require.NoError(t, err)
		}
		assert.Equal(t, []time.Duration{n8n.DefaultTimeout, 5 * time.Second}, left)
	})
}

func TestIDsAreEscapedOnce(t *testing.T) {
	// Ids go into the path escaped exactly once, below the base URL's prefix.
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.RequestURI)
		io.WriteString(w, `{"id":"a b/c%","name":"x"}`)
	}))
	defer srv.Close()
	c, err := n8n.New(srv.URL+"/pre%20fix", testKey)
	require.NoError(t, err)
	_, err = c.GetWorkflow(context.Background(), "a b/c%")
	require.NoError(t, err)
	assert.Equal(t, []string{"/pre%20fix/api/v1/workflows/a%20b%2Fc%25"}, got)
}

func TestRedirectIsNotFollowed(t *testing.T) {
	var leaked atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked.Add(1)
	}))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/steal", http.StatusFound)
	}))
	defer srv.Close()
	// Also with a caller's client that would follow redirects.
	_, err := newClient(t, srv, n8n.WithHTTPClient(&http.Client{})).GetWorkflow(context.Background(), "x")
	assert.True(t, n8n.IsStatus(err, http.StatusFound), "err = %v, want a *StatusError 302", err)
	assert.Zero(t, leaked.Load(), "the request (and its API key) was replayed to the redirect target")
}

// TestResponseCapIsExact: a body of exactly the cap is read, one byte more
// is ErrResponseTooLarge, and no more than the cap plus one byte is taken
// from the connection whatever the body's size.
func TestResponseCapIsExact(t *testing.T) {
	const max = 1024
	var taken atomic.Int64
	var size atomic.Int64
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		doc := `{"id":"1","name":"` + strings.Repeat("x", int(size.Load())-len(`{"id":"1","name":""}`)) + `"}`
		return &http.Response{StatusCode: 200, Header: http.Header{}, Request: r,
			Body: io.NopCloser(&countingReader{r: strings.NewReader(doc + strings.Repeat(" ", 1<<20)), n: &taken})}, nil
	})}
	c, err := n8n.New("http://n8n.invalid", testKey, n8n.WithHTTPClient(hc), n8n.WithMaxResponseBytes(max))
	require.NoError(t, err)

	// Exactly max bytes: the padding must not be there for this case.
	exact := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		doc := `{"id":"1","name":"` + strings.Repeat("x", max-len(`{"id":"1","name":""}`)) + `"}`
		require.Len(t, doc, max)
		return &http.Response{StatusCode: 200, Header: http.Header{}, Request: r, Body: io.NopCloser(strings.NewReader(doc))}, nil
	})}
	ce, err := n8n.New("http://n8n.invalid", testKey, n8n.WithHTTPClient(exact), n8n.WithMaxResponseBytes(max))
	require.NoError(t, err)
	_, err = ce.GetWorkflow(context.Background(), "1")
	assert.NoError(t, err, "a body of exactly the cap was refused")

	size.Store(max - 100)
	_, err = c.GetWorkflow(context.Background(), "1")
	assert.ErrorIs(t, err, n8n.ErrResponseTooLarge, "the padding makes it larger than the cap")
	assert.LessOrEqual(t, taken.Load(), int64(max+1), "read past the cap")

	big := strings.Repeat("e", n8n.MaxErrorBody+100)
	srv2 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(500)
		io.WriteString(w, big)
	}))
	defer srv2.Close()
	_, err = newClient(t, srv2).GetWorkflow(context.Background(), "1")
	var se *n8n.StatusError
	require.ErrorAs(t, err, &se)
	assert.Len(t, se.Body, n8n.MaxErrorBody)
	assert.True(t, se.Truncated)
}

type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	c.n.Add(int64(k))
	return k, err
}

func TestCreateSendsOnlyWritableFields(t *testing.T) {
	// n8n rejects active, id, tags, versionId, pinData, meta… on create.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]json.RawMessage
		assert.NoError(t, json.NewDecoder(r.Body).Decode(&body))
		var keys []string
		for k := range body {
			keys = append(keys, k)
		}
		if len(body) != 4 || body["name"] == nil || body["nodes"] == nil || body["connections"] == nil || string(body["settings"]) != "{}" {
			w.WriteHeader(400)
			io.WriteString(w, `{"message":"request/body must NOT have additional properties"}`)
			t.Errorf("create body keys %v", keys)
			return
		}
		io.WriteString(w, `{"id":"new1","versionId":"v1","active":false,"name":"x","nodes":[],"connections":{}}`)
	}))
	defer srv.Close()
	wf, err := n8n.ParseWorkflow([]byte(`{"id":"old","name":"x","active":true,"nodes":[],"connections":{},
		"tags":[{"id":"t","name":"t"}],"versionId":"v0","pinData":{},"meta":{"a":1}}`))
	require.NoError(t, err)
	got, err := newClient(t, srv).CreateWorkflow(context.Background(), wf)
	require.NoError(t, err)
	assert.Equal(t, n8n.ID("new1"), got.ID)
	assert.Equal(t, "v1", got.VersionID)
}

// TestCallWebhookIsReplysContract: CallWebhook is package reply's client,
// with reply's status rule, header, timeout default and cap.
func TestCallWebhookIsReplysContract(t *testing.T) {
	const token = "subject-token-value"
	type answer struct {
		status int
		body   string
	}
	var next atomic.Value
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		assert.Equal(t, token, r.Header.Get(reply.SubjectTokenHeader))
		b, _ := io.ReadAll(r.Body)
		assert.Equal(t, `{"q":"stock 7305?"}`, string(b))
		a := next.Load().(answer)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(a.status)
		io.WriteString(w, a.body)
	}))
	defer srv.Close()
	const path = "/webhook/5d4a1d6e-secret-path"
	call := func(a answer, opts ...reply.Option) (reply.Reply, error) {
		next.Store(a)
		return n8n.CallWebhook(context.Background(), srv.URL+path, token, map[string]string{"q": "stock 7305?"}, opts...)
	}

	r, err := call(answer{200, `{"answer":"12 in stock","escalate":false}`})
	require.NoError(t, err)
	assert.Equal(t, reply.Reply{Answer: "12 in stock"}, r)
	// n8n 1.x: a node throws before Respond to Webhook.
	_, err = call(answer{200, ``})
	assert.ErrorIs(t, err, reply.ErrEmpty)
	// n8n 2.x (and lastNode mode): a Code node throws. A non-2xx is a
	// status error, never a contract error.
	_, err = call(answer{500, `{"message":"Error in workflow"}`})
	var rse *reply.StatusError
	require.ErrorAs(t, err, &rse)
	assert.Equal(t, 500, rse.StatusCode)
	// An inactive workflow's webhook: n8n's 404 names the secret path.
	_, err = call(answer{404, `{"code":404,"message":"The requested webhook \"POST 5d4a1d6e-secret-path\" is not registered."}`})
	require.ErrorAs(t, err, &rse)
	assert.Equal(t, 404, rse.StatusCode)
	assert.NotContains(t, err.Error(), "5d4a1d6e-secret-path", "the webhook path reached the error text")
	// A 200 that is not exactly the contract, and the contract under
	// another 2xx: off contract.
	var rce *reply.ContractError
	_, err = call(answer{200, `{"answer":"ok","escalate":false,"debug":1}`})
	require.ErrorAs(t, err, &rce)
	assert.Contains(t, rce.Reason, `"debug"`)
	_, err = call(answer{202, `{"answer":"ok","escalate":false}`})
	require.ErrorAs(t, err, &rce)
	assert.Equal(t, 202, rce.StatusCode)
	// reply's cap, and its option passed through.
	_, err = call(answer{200, `{"answer":"` + strings.Repeat("a", 100) + `","escalate":false}`}, reply.WithMaxResponseBytes(64))
	var tle *reply.TooLargeError
	assert.ErrorAs(t, err, &tle)

	before := calls.Load()
	_, err = n8n.CallWebhook(context.Background(), srv.URL, "", nil)
	assert.ErrorIs(t, err, reply.ErrNoToken)
	assert.Equal(t, before, calls.Load(), "a call without a subject token reached the webhook")
	_, err = n8n.CallWebhook(context.Background(), srv.URL, "t", []byte(`not json`))
	assert.Error(t, err, "sent a body that is not JSON")
}

// TestCallWebhookTimeoutDefault: reply's default deadline, not the old
// two minutes.
func TestCallWebhookTimeoutDefault(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var left time.Duration
		hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			dl, ok := r.Context().Deadline()
			require.True(t, ok, "webhook call without a deadline")
			left = time.Until(dl)
			return &http.Response{StatusCode: 200, Header: http.Header{}, Request: r,
				Body: io.NopCloser(strings.NewReader(`{"answer":"a","escalate":true}`))}, nil
		})}
		r, err := n8n.CallWebhook(context.Background(), "http://n8n.invalid/webhook/x", "t", nil, reply.WithHTTPClient(hc))
		require.NoError(t, err)
		assert.True(t, r.Escalate)
		assert.Equal(t, reply.DefaultTimeout, left)
	})
}

func TestSessionCreateWorkflowChecksItsTags(t *testing.T) {
	// n8n with workflow tags disabled creates the workflow and drops the tags.
	var sent map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/rest/login":
			http.SetCookie(w, &http.Cookie{Name: "n8n-auth", Value: "session-cookie-value"})
			io.WriteString(w, `{"data":{"id":"u1"}}`)
		case "/rest/workflows":
			assert.Equal(t, "n8n-auth=session-cookie-value", r.Header.Get("Cookie"))
			assert.Empty(t, r.Header.Get("X-N8N-API-KEY"))
			assert.NoError(t, json.NewDecoder(r.Body).Decode(&sent))
			io.WriteString(w, `{"data":{"id":"W1","name":"t","active":false,"nodes":[],"connections":{},"versionId":"v1","tags":[]}}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	c := newClient(t, srv)
	s, err := c.Login(context.Background(), "owner@example.test", "Password-1")
	require.NoError(t, err)
	wf, err := s.CreateWorkflow(context.Background(), &n8n.Workflow{Name: "t", Active: true}, "T1")
	require.ErrorIs(t, err, n8n.ErrTagsNotAttached)
	require.NotNil(t, wf)
	assert.Equal(t, n8n.ID("W1"), wf.ID)
	assert.Equal(t, false, sent["active"])
	assert.Equal(t, "[T1]", fmt.Sprint(sent["tags"]))
	assert.Nil(t, sent["versionId"])
}

// TestStrictJSONRefusesTrailingBrackets: one strict JSON value, nothing
// after it, no repeated key, at every entry point that reads a document.
func TestStrictJSONRefusesTrailingBrackets(t *testing.T) {
	const doc = `{"name":"x","nodes":[],"connections":{}}`
	for _, bad := range []string{doc + "}", doc + "]", doc + " }", `{"name":"x","name":"y","nodes":[],"connections":{}}`} {
		p := n8n.ValidateJSON([]byte(bad))
		if assert.NotEmpty(t, p, "ValidateJSON accepted %q", bad) {
			assert.Equal(t, "$", p[0].Path)
		}
		_, err := n8n.ParseWorkflow([]byte(bad))
		assert.Error(t, err, "ParseWorkflow accepted %q", bad)
	}
	assert.Empty(t, n8n.ValidateJSON([]byte(doc+"\n")), "trailing white space is not data")

	// Plan refuses such a file.
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "w.json"), []byte(doc+"]"), 0o644))
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		io.WriteString(w, `{"data":[],"nextCursor":null}`)
	}))
	defer srv.Close()
	_, err := n8n.Plan(context.Background(), newClient(t, srv), dir)
	assert.ErrorContains(t, err, "data after the JSON value")
}
