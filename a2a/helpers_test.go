package a2a_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	a2apb "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"github.com/candorkit/candor/a2a"
	"github.com/candorkit/candor/reply"
)

const testToken = "tok-3f9a1c77-secret"

// hookCall is one request the recording webhook received.
type hookCall struct {
	Header http.Header
	Body   []byte
}

// recordingHook is an httptest webhook that records every request and
// answers with the status and body it is set to.
type recordingHook struct {
	mu     sync.Mutex
	calls  []hookCall
	status int
	body   string
	srv    *httptest.Server
}

func (h *recordingHook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	h.calls = append(h.calls, hookCall{Header: r.Header.Clone(), Body: body})
	status, reply := h.status, h.body
	h.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, reply)
}

func (h *recordingHook) set(status int, body string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.status, h.body = status, body
}

func (h *recordingHook) recorded() []hookCall {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]hookCall(nil), h.calls...)
}

func newHook(t testing.TB, tlsServer bool) *recordingHook {
	h := &recordingHook{status: 200, body: `{"answer":"7305 in stock","escalate":false}`}
	if tlsServer {
		h.srv = httptest.NewTLSServer(h)
	} else {
		h.srv = httptest.NewServer(h)
	}
	t.Cleanup(h.srv.Close)
	return h
}

func testAgent(url string) a2a.Agent {
	return a2a.Agent{
		Name: "Stock agent", Description: "Answers stock questions", URL: url,
		Skill: a2a.Skill{ID: "stock-level", Name: "Stock level", Description: "How many units are in stock",
			Examples: []string{"How many 1969 Harley Davidson are in stock?"}},
	}
}

// facade is a started Server on loopback, with the versions it was called with.
type facade struct {
	*httptest.Server
	srv      *a2a.Server
	mu       sync.Mutex
	versions []string
}

func (f *facade) seenVersions() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.versions...)
}

// startFacade serves build(url) on a loopback listener whose address is
// known before the Server is built (the card needs it).
func startFacade(t testing.TB, build func(endpoint string) (*a2a.Server, error)) *facade {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	endpoint := "http://" + ln.Addr().String() + "/a2a"
	srv, err := build(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	f := &facade{srv: srv}
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			f.mu.Lock()
			f.versions = append(f.versions, r.Header.Get("A2A-Version"))
			f.mu.Unlock()
		}
		srv.ServeHTTP(w, r)
	}))
	ts.Listener.Close()
	ts.Listener = ln
	ts.Start()
	t.Cleanup(ts.Close)
	f.Server = ts
	return f
}

func startWebhookFacade(t testing.TB, hookURL string, opts ...a2a.Option) *facade {
	return startFacade(t, func(endpoint string) (*a2a.Server, error) {
		hook, err := reply.NewClient(hookURL)
		if err != nil {
			return nil, err
		}
		return a2a.NewServer(testAgent(endpoint), a2a.WebhookBackend(hook), append([]a2a.Option{a2a.WithVerifier(testVerifier)}, opts...)...)
	})
}

// testIssuer is the issuer testVerifier vouches for.
const testIssuer = "https://op.test"

// testVerifier stands in for an OpenID provider's verifier (package
// a2a/jwtauth verifies real JWTs): a token starting with "bad" is invalid,
// one starting with "noscope" lacks the agent's scope, one starting with
// "down" cannot be checked; any other token belongs to a subject of its own.
var testVerifier = a2a.VerifierFunc(func(ctx context.Context, token string) (a2a.Caller, error) {
	switch {
	case strings.HasPrefix(token, "bad"):
		return a2a.Caller{}, fmt.Errorf("%w: signature does not verify", a2a.ErrInvalidToken)
	case strings.HasPrefix(token, "noscope"):
		return a2a.Caller{}, fmt.Errorf("%w: needs stock:read", a2a.ErrInsufficientScope)
	case strings.HasPrefix(token, "down"):
		return a2a.Caller{}, errors.New("fetching the issuer's keys: connection refused")
	}
	sum := sha256.Sum256([]byte(token))
	return a2a.Caller{Subject: "sub-" + hex.EncodeToString(sum[:6]), Issuer: testIssuer, Audience: []string{"stock-agent"}}, nil
})

// bearer adds an Authorization header to every request; an empty token
// sends none.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	if b.token == "" {
		return b.next.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// newClient resolves the card and returns an a2a-go v2 client (1.0 JSON-RPC)
// sending token.
func newClient(t testing.TB, base, token string) *a2aclient.Client {
	t.Helper()
	ctx := context.Background()
	resolver := &agentcard.Resolver{Client: http.DefaultClient, CardParser: a2a.ParseCard}
	card, err := resolver.Resolve(ctx, base)
	if err != nil {
		t.Fatalf("resolving the card: %v", err)
	}
	hc := &http.Client{Transport: bearer{token, http.DefaultTransport}}
	c, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithJSONRPCTransport(hc))
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	t.Cleanup(func() { _ = c.Destroy() })
	return c
}

func userMessage(text string) *a2apb.SendMessageRequest {
	return &a2apb.SendMessageRequest{Message: a2apb.NewMessage(a2apb.MessageRoleUser, a2apb.NewTextPart(text))}
}

// rpc posts a raw JSON-RPC request and decodes the response envelope.
type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func rawRPC(t testing.TB, url string, header map[string]string, body string) (int, rpcResponse) {
	t.Helper()
	status, _, out := rawRPCHeader(t, url, header, body)
	return status, out
}

// rawRPCHeader is rawRPC returning the response header too.
func rawRPCHeader(t testing.TB, url string, header map[string]string, body string) (int, http.Header, rpcResponse) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		t.Fatal(err)
	}
	var out rpcResponse
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("response is not JSON-RPC: %v: %s", err, b)
	}
	return resp.StatusCode, resp.Header, out
}

// rawRPCBody posts a raw JSON-RPC request and returns the status and the
// body as received.
func rawRPCBody(t testing.TB, url string, header map[string]string, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
