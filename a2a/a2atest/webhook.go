package a2atest

import (
	"bytes"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/candorkit/candor/internal/httpx"
	"github.com/candorkit/candor/reply"
)

// MaxRequestBytes is the exact cap on a request body the Webhook reads; a
// longer one is answered 413 and recorded with TooLarge set.
const MaxRequestBytes = 1 << 20

// Request is one request the Webhook received, in arrival order.
type Request struct {
	Method string
	// Path is the request's path (the Webhook's secret path when the
	// request was addressed to it).
	Path   string
	Header http.Header
	// SubjectToken is the reply.SubjectTokenHeader header, "" when absent.
	SubjectToken string
	// Body is the request body as received (at most MaxRequestBytes).
	Body []byte
	// Text, TaskID and ContextID are the fields of the JSON body package
	// a2a's WebhookBackend posts, "" when absent or not JSON.
	Text, TaskID, ContextID string
	// TooLarge reports a body over MaxRequestBytes (answered 413).
	TooLarge bool
}

// Reply is what the Webhook answers one request with: build it with Answer,
// Escalate, Empty, WrongTypes, Body, Status, Oversized, Hang, After or
// Func. The zero Reply answers like Empty.
type Reply struct {
	status  int
	ctype   string
	body    []byte
	hang    bool
	release <-chan struct{}
	then    *Reply
	fn      func(Request) Reply
}

// Answer is the contract's reply {"answer": text, "escalate": false}, 200.
func Answer(text string) Reply { return contract(text, false) }

// Escalate is {"answer": text, "escalate": true}, 200: the workflow hands
// the question to a person.
func Escalate(text string) Reply { return contract(text, true) }

func contract(text string, escalate bool) Reply {
	b, _ := json.Marshal(reply.Reply{Answer: text, Escalate: escalate})
	return Reply{status: http.StatusOK, ctype: "application/json", body: b}
}

// Empty is a 200 with Content-Type application/json and no body: what n8n
// 1.x answers when a node fails before its Respond to Webhook node.
func Empty() Reply { return Reply{status: http.StatusOK, ctype: "application/json"} }

// WrongTypes is a 200 whose keys are the contract's with the wrong types:
// {"answer": 42, "escalate": "no"}.
func WrongTypes() Reply { return Body(http.StatusOK, `{"answer":42,"escalate":"no"}`) }

// Body answers status with body verbatim, Content-Type application/json:
// any off-contract shape (not JSON, an extra key, trailing data, another
// 2xx status).
func Body(status int, body string) Reply {
	return Reply{status: status, ctype: "application/json", body: []byte(body)}
}

// Status answers a status outside 2xx with n8n's error shape
// {"message": "<status text>"}.
func Status(code int) Reply {
	b, _ := json.Marshal(map[string]string{"message": http.StatusText(code)})
	return Reply{status: code, ctype: "application/json", body: b}
}

// minimalContract is the shortest contract body Oversized pads.
const minimalContract = `{"answer":"","escalate":false}`

// Oversized is a 200 contract reply of exactly n bytes, its answer padded
// with "x": reply.DefaultMaxResponseBytes is accepted,
// reply.DefaultMaxResponseBytes+1 is too large. An n below the shortest
// contract body (30 bytes) gives that body's first n bytes.
func Oversized(n int64) Reply {
	if n < int64(len(minimalContract)) {
		return Body(http.StatusOK, minimalContract[:max(n, 0)])
	}
	var b bytes.Buffer
	b.Grow(int(n))
	b.WriteString(`{"answer":"`)
	b.Write(bytes.Repeat([]byte("x"), int(n)-len(minimalContract)))
	b.WriteString(`","escalate":false}`)
	return Reply{status: http.StatusOK, ctype: "application/json", body: b.Bytes()}
}

// Hang never answers: the request waits until the caller gives up (its
// deadline or cancellation) or the Webhook closes. It is the slow webhook
// of a caller's time bound.
func Hang() Reply { return Reply{hang: true} }

// After answers r once release is closed (or gives up when the caller
// does): a slow webhook whose moment the test chooses, without sleeping.
func After(release <-chan struct{}, r Reply) Reply { return Reply{release: release, then: &r} }

// Func answers with what fn returns for the request, for replies that
// depend on the question.
func Func(fn func(Request) Reply) Reply { return Reply{fn: fn} }

// Webhook is a loopback httptest server speaking package reply's webhook
// contract: each POST to URL takes the next Reply of its script.
type Webhook struct {
	// URL is the webhook's address, with a random path as n8n gives one.
	URL string
	// Server is the underlying server (its Client trusts a TLS Webhook).
	Server *httptest.Server

	path       string
	done       chan struct{}
	mu         sync.Mutex
	script     []Reply
	always     *Reply
	requests   []Request
	unscripted int
}

// NewWebhook starts a Webhook on plain http that answers script in order;
// it is closed at the end of the test. A request after the script (and
// without Always) answers 500 and fails the test at its end.
func NewWebhook(tb testing.TB, script ...Reply) *Webhook {
	tb.Helper()
	return start(tb, false, script)
}

// NewTLSWebhook is NewWebhook on https with httptest's certificate: give
// RootCAs to the caller (a2a.Config.RootCAs, reply.WithRootCAs).
func NewTLSWebhook(tb testing.TB, script ...Reply) *Webhook {
	tb.Helper()
	return start(tb, true, script)
}

func start(tb testing.TB, tls bool, script []Reply) *Webhook {
	var raw [12]byte
	if _, err := rand.Read(raw[:]); err != nil {
		tb.Fatalf("a2atest: %v", err)
	}
	w := &Webhook{path: "/webhook/" + hex.EncodeToString(raw[:]), done: make(chan struct{}), script: script}
	if tls {
		w.Server = httptest.NewTLSServer(w)
	} else {
		w.Server = httptest.NewServer(w)
	}
	w.URL = w.Server.URL + w.path
	tb.Cleanup(func() {
		w.Close()
		w.mu.Lock()
		n := w.unscripted
		w.mu.Unlock()
		if n > 0 {
			tb.Errorf("a2atest: the webhook received %d request(s) beyond its script", n)
		}
	})
	return w
}

// Close stops the Webhook; requests waiting in Hang or After end at once.
// It is safe to call more than once.
func (w *Webhook) Close() {
	w.mu.Lock()
	select {
	case <-w.done:
	default:
		close(w.done)
	}
	w.mu.Unlock()
	w.Server.Close()
}

// Script appends replies to the script.
func (w *Webhook) Script(replies ...Reply) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.script = append(w.script, replies...)
}

// Always sets the reply of every request once the script is used up.
func (w *Webhook) Always(r Reply) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.always = &r
}

// RootCAs returns a pool holding a TLS Webhook's certificate, nil for a
// plain-http one.
func (w *Webhook) RootCAs() *x509.CertPool {
	if c := w.Server.Certificate(); c != nil {
		pool := x509.NewCertPool()
		pool.AddCert(c)
		return pool
	}
	return nil
}

// Requests returns the requests received so far, in arrival order.
func (w *Webhook) Requests() []Request {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]Request, len(w.requests))
	copy(out, w.requests)
	return out
}

// SubjectTokens returns the X-Subject-Token header of each request
// received so far ("" where it was absent), in arrival order.
func (w *Webhook) SubjectTokens() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]string, len(w.requests))
	for i, r := range w.requests {
		out[i] = r.SubjectToken
	}
	return out
}

// ServeHTTP records the request and answers the next scripted reply.
func (w *Webhook) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	body, err := httpx.ReadAll(r.Body, MaxRequestBytes)
	req := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(),
		SubjectToken: r.Header.Get(reply.SubjectTokenHeader), Body: body}
	var tooLarge *httpx.TooLargeError
	req.TooLarge = errors.As(err, &tooLarge)
	var in struct {
		Text      string `json:"text"`
		TaskID    string `json:"taskId"`
		ContextID string `json:"contextId"`
	}
	if json.Unmarshal(body, &in) == nil {
		req.Text, req.TaskID, req.ContextID = in.Text, in.TaskID, in.ContextID
	}
	w.mu.Lock()
	w.requests = append(w.requests, req)
	if r.Method != http.MethodPost || r.URL.Path != w.path {
		w.mu.Unlock()
		// n8n's answer to an unknown webhook quotes the method and path.
		writeReply(rw, Body(http.StatusNotFound, fmt.Sprintf(
			`{"code":404,"message":"The requested webhook \"%s %s\" is not registered."}`,
			r.Method, strings.TrimPrefix(r.URL.Path, "/webhook/"))))
		return
	}
	if req.TooLarge || err != nil {
		w.mu.Unlock()
		writeReply(rw, Status(http.StatusRequestEntityTooLarge))
		return
	}
	var next Reply
	switch {
	case len(w.script) > 0:
		next, w.script = w.script[0], w.script[1:]
	case w.always != nil:
		next = *w.always
	default:
		w.unscripted++
		next = Body(http.StatusInternalServerError, `{"message":"a2atest: no scripted reply left"}`)
	}
	w.mu.Unlock()
	for {
		switch {
		case next.fn != nil:
			next = next.fn(req)
			continue
		case next.hang:
			select {
			case <-r.Context().Done():
				return
			case <-w.done:
				panic(http.ErrAbortHandler) // no answer at all
			}
		case next.release != nil:
			select {
			case <-next.release:
				next = *next.then
				continue
			case <-r.Context().Done():
				return
			case <-w.done:
				panic(http.ErrAbortHandler)
			}
		}
		break
	}
	writeReply(rw, next)
}

func writeReply(rw http.ResponseWriter, r Reply) {
	if r.ctype != "" {
		rw.Header().Set("Content-Type", r.ctype)
	}
	status := r.status
	if status == 0 {
		status = http.StatusOK
		rw.Header().Set("Content-Type", "application/json")
	}
	rw.WriteHeader(status)
	_, _ = rw.Write(r.body)
}
