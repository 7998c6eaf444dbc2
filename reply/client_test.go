package reply_test

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/candorkit/candor/reply"
)

// secretPath is an n8n-style production webhook path: the id is the secret.
const secretPath = "/webhook/3f9c2a7e-secret-hook-id"

func serve(t *testing.T, h http.HandlerFunc) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

func answer(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

func newClient(t *testing.T, url string, opts ...reply.Option) *reply.Client {
	t.Helper()
	c, err := reply.NewClient(url, opts...)
	require.NoError(t, err)
	return c
}

func TestCallSendsTheContractRequest(t *testing.T) {
	var got struct {
		method, token, ctype string
		body                 []byte
	}
	url := serve(t, func(w http.ResponseWriter, r *http.Request) {
		got.method, got.token, got.ctype = r.Method, r.Header.Get(reply.SubjectTokenHeader), r.Header.Get("Content-Type")
		got.body, _ = io.ReadAll(r.Body)
		io.WriteString(w, `{"answer":"7305 in stock","escalate":false}`)
	})
	r, err := newClient(t, url+secretPath).Call(context.Background(), "tok-123", map[string]string{"text": "stock 7305?"})
	require.NoError(t, err)
	assert.Equal(t, reply.Reply{Answer: "7305 in stock"}, r)
	assert.Equal(t, http.MethodPost, got.method)
	assert.Equal(t, "tok-123", got.token)
	assert.Equal(t, "application/json", got.ctype)
	assert.JSONEq(t, `{"text":"stock 7305?"}`, string(got.body))
	assert.NotContains(t, string(got.body), "tok-123")
}

func TestCallEscalateIsAnAnswer(t *testing.T) {
	url := serve(t, answer(200, `{"answer":"ask a person","escalate":true}`))
	r, err := newClient(t, url).Call(context.Background(), "t", json.RawMessage(`{}`))
	require.NoError(t, err)
	assert.Equal(t, reply.Reply{Answer: "ask a person", Escalate: true}, r)
}

func TestCallNoTokenSendsNothing(t *testing.T) {
	var hits atomic.Int32
	url := serve(t, func(http.ResponseWriter, *http.Request) { hits.Add(1) })
	for _, tok := range []string{"", "  "} {
		_, err := newClient(t, url).Call(context.Background(), tok, nil)
		assert.ErrorIs(t, err, reply.ErrNoToken)
		assert.Equal(t, reply.KindNoIdentity, reply.Classify(err))
	}
	assert.Zero(t, hits.Load())
}

func TestCallRefusesABodyThatIsNotJSON(t *testing.T) {
	url := serve(t, answer(200, `{"answer":"a","escalate":false}`))
	_, err := newClient(t, url).Call(context.Background(), "t", []byte("not json"))
	require.Error(t, err)
	assert.Equal(t, reply.KindOther, reply.Classify(err))
}

// The status rule: only 200 carries a reply; another 2xx is off-contract with
// its body visible; anything else is a *StatusError.
func TestCallStatusRule(t *testing.T) {
	contract := `{"answer":"a","escalate":false}`
	for _, status := range []int{201, 202, 203} {
		url := serve(t, answer(status, contract))
		_, err := newClient(t, url).Call(context.Background(), "t", nil)
		var ce *reply.ContractError
		require.ErrorAs(t, err, &ce, "status %d", status)
		assert.Equal(t, status, ce.StatusCode)
		assert.Equal(t, contract, string(ce.Raw))
		assert.Contains(t, ce.Reason, "want 200")
		assert.Equal(t, reply.KindOffContract, reply.Classify(err))
	}
	for _, status := range []int{204, 200} {
		url := serve(t, answer(status, ""))
		_, err := newClient(t, url).Call(context.Background(), "t", nil)
		assert.ErrorIs(t, err, reply.ErrEmpty, "status %d", status)
		assert.Equal(t, reply.KindNoReply, reply.Classify(err))
	}
	for _, status := range []int{301, 302, 307, 400, 401, 404, 422, 500, 502} {
		url := serve(t, func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/elsewhere" {
				t.Errorf("a redirect was followed (status %d)", status)
			}
			w.Header().Set("Location", "/elsewhere")
			w.WriteHeader(status)
			io.WriteString(w, contract)
		})
		_, err := newClient(t, url).Call(context.Background(), "t", nil)
		var se *reply.StatusError
		require.ErrorAs(t, err, &se, "status %d", status)
		assert.Equal(t, status, se.StatusCode)
		assert.Equal(t, contract, string(se.Body))
		assert.Equal(t, "/elsewhere", se.Header.Get("Location"))
		assert.Equal(t, reply.KindHTTPStatus, reply.Classify(err))
	}
	// An off-contract 200 keeps its bytes.
	url := serve(t, answer(200, `{"data":{"answer":"a","escalate":false}}`))
	_, err := newClient(t, url).Call(context.Background(), "t", nil)
	var ce *reply.ContractError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, 200, ce.StatusCode)
	assert.Equal(t, `{"data":{"answer":"a","escalate":false}}`, string(ce.Raw))
}

// n8n answers an unregistered webhook with a 404 that names its path. The
// path (the secret part of the URL) and the query never reach Error,
// Excerpt or the log; the full body, redacted, goes to the log.
func TestStatusErrorRedactsTheWebhookPath(t *testing.T) {
	id := strings.TrimPrefix(secretPath, "/webhook/")
	body := `{"code":404,"message":"The requested webhook \"POST ` + id + `\" is not registered.","hint":"` +
		strings.Repeat("x", 300) + ` see ` + secretPath + `?key=qsecret-value-1"}` + "\n"
	url := serve(t, answer(404, body))
	var logged bytes.Buffer
	c := newClient(t, url+secretPath+"?key=qsecret-value-1", reply.WithLogger(slog.New(slog.NewTextHandler(&logged, nil))))
	_, err := c.Call(context.Background(), "t", nil)
	var se *reply.StatusError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, body, string(se.Body), "Body keeps the evidence")
	for _, shown := range []string{err.Error(), se.Excerpt(), logged.String(), c.String()} {
		assert.NotContains(t, shown, id)
		assert.NotContains(t, shown, "qsecret-value-1")
		assert.NotContains(t, shown, "3f9c2a7e")
	}
	assert.Contains(t, err.Error(), "reply: HTTP 404 Not Found: ")
	assert.Contains(t, err.Error(), "is not registered")
	assert.LessOrEqual(t, len(se.Excerpt()), 203)
	assert.False(t, strings.HasSuffix(err.Error(), "\n"))
	assert.Contains(t, logged.String(), strings.Repeat("x", 300), "the log gets the whole body")
	assert.Contains(t, logged.String(), "error=")
}

func TestTransportErrorHidesTheURL(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	_, err = newClient(t, "http://"+addr+secretPath+"?key=qsecret-value-1").Call(context.Background(), "t", nil)
	var te *reply.TransportError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, "http://"+addr, te.URL)
	assert.NotNil(t, te.Unwrap())
	assert.NotContains(t, err.Error(), "secret")
	assert.Equal(t, reply.KindUnreachable, reply.Classify(err))
}

func TestCallSizeCapIsExact(t *testing.T) {
	const limit = 64
	pad := func(n int) string { // a contract body of exactly n bytes
		base := `{"answer":"","escalate":false}`
		return `{"answer":"` + strings.Repeat("a", n-len(base)) + `","escalate":false}`
	}
	url := serve(t, answer(200, pad(limit)))
	r, err := newClient(t, url, reply.WithMaxResponseBytes(limit)).Call(context.Background(), "t", nil)
	require.NoError(t, err)
	assert.Len(t, r.Answer, limit-30)

	url = serve(t, answer(200, pad(limit+1)))
	_, err = newClient(t, url, reply.WithMaxResponseBytes(limit)).Call(context.Background(), "t", nil)
	var tl *reply.TooLargeError
	require.ErrorAs(t, err, &tl)
	assert.Equal(t, int64(limit), tl.Limit)
	assert.ErrorIs(t, err, reply.ErrTooLarge)
	assert.Equal(t, reply.KindTooLarge, reply.Classify(err))

	// A non-2xx body over the cap is still a status error, cut at the cap.
	url = serve(t, answer(500, strings.Repeat("e", 1000)))
	_, err = newClient(t, url, reply.WithMaxResponseBytes(limit)).Call(context.Background(), "t", nil)
	var se *reply.StatusError
	require.ErrorAs(t, err, &se)
	assert.Len(t, se.Body, limit)
}

type blockingTransport struct{}

func (blockingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	<-r.Context().Done()
	return nil, r.Context().Err()
}

func TestCallTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newClient(t, "https://webhook.example"+secretPath, reply.WithHTTPClient(&http.Client{Transport: blockingTransport{}}))
		_, err := c.Call(context.Background(), "t", nil)
		var te *reply.TransportError
		require.ErrorAs(t, err, &te)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, reply.KindTimeout, reply.Classify(err))
		assert.NotContains(t, err.Error(), "secret")

		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err = c.Call(ctx, "t", nil)
		assert.Equal(t, reply.KindCanceled, reply.Classify(err))
	})
}

// WithRootCAs applies to the client given with WithHTTPClient whichever
// comes first: the TLS server's certificate verifies and the given client's
// transport (its dialer) is the one used.
func TestRootCAsComposeWithHTTPClient(t *testing.T) {
	srv := httptest.NewUnstartedServer(answer(200, `{"answer":"a","escalate":false}`))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake below
	srv.StartTLS()
	t.Cleanup(srv.Close)
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())

	var dials atomic.Int32
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	hc := &http.Client{Transport: tr}
	orders := map[string][]reply.Option{
		"client then roots": {reply.WithHTTPClient(hc), reply.WithRootCAs(pool)},
		"roots then client": {reply.WithRootCAs(pool), reply.WithHTTPClient(hc)},
	}
	for name, opts := range orders {
		t.Run(name, func(t *testing.T) {
			before := dials.Load()
			_, err := newClient(t, srv.URL, opts...).Call(context.Background(), "t", nil)
			require.NoError(t, err)
			assert.Greater(t, dials.Load(), before, "the given client's transport was discarded")
		})
	}
	// Without the roots, verification fails (it is never disabled).
	_, err := newClient(t, srv.URL, reply.WithHTTPClient(hc)).Call(context.Background(), "t", nil)
	assert.Equal(t, reply.KindUnreachable, reply.Classify(err))
	if tr.TLSClientConfig != nil {
		assert.Nil(t, tr.TLSClientConfig.RootCAs, "the given transport is not modified")
	}
}

func TestNewClientRefusesBadArguments(t *testing.T) {
	bad := map[string][]reply.Option{
		"nil client":   {reply.WithHTTPClient(nil)},
		"nil roots":    {reply.WithRootCAs(nil)},
		"zero timeout": {reply.WithTimeout(0)},
		"zero cap":     {reply.WithMaxResponseBytes(0)},
	}
	for name, opts := range bad {
		_, err := reply.NewClient("https://webhook.example/x", opts...)
		assert.Error(t, err, name)
	}
	for _, u := range []string{"", "webhook.example/x", "ftp://webhook.example/x", "https:///x", "https://user:pw@webhook.example/x"} {
		_, err := reply.NewClient(u)
		if assert.Error(t, err, u) {
			assert.NotContains(t, err.Error(), "pw")
		}
	}
}

func TestClassify(t *testing.T) {
	assert.Equal(t, reply.KindNone, reply.Classify(nil))
	assert.Equal(t, reply.KindOther, reply.Classify(errors.New("x")))
	_, err := reply.Decode([]byte(`[]`))
	assert.Equal(t, reply.KindOffContract, reply.Classify(err))
}

// An off-contract 2xx keeps its bytes in Raw; Redacted is what a caller may
// be shown: the same bytes with the webhook's path and query redacted.
func TestContractErrorRedacted(t *testing.T) {
	body := `{"echo":"POST ` + secretPath + `?key=qsecret-value-1"}`
	url := serve(t, answer(200, body))
	_, err := newClient(t, url+secretPath+"?key=qsecret-value-1").Call(context.Background(), "t", nil)
	var ce *reply.ContractError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, body, string(ce.Raw))
	shown := string(ce.Redacted())
	assert.NotContains(t, shown, "3f9c2a7e")
	assert.NotContains(t, shown, "qsecret-value-1")
	assert.Contains(t, shown, `{"echo":"POST [REDACTED]`)
	assert.NotContains(t, err.Error(), "3f9c2a7e")

	_, err = reply.Decode([]byte(`{"x":1}`))
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, `{"x":1}`, string(ce.Redacted()), "nothing to redact without a URL")
	assert.Equal(t, 30*time.Second, reply.DefaultTimeout)
}
