package a2a

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/candorkit/candor/reply"
)

// SubjectTokenHeader is the request header that carries the caller's bearer
// token to the webhook. The token is never put in the request body.
const SubjectTokenHeader = "X-Subject-Token"

// Defaults of the webhook backend.
const (
	DefaultWebhookTimeout = 30 * time.Second
	DefaultMaxReplyBytes  = reply.MaxBytes
)

// WebhookRequest is the JSON body the Webhook posts. It never holds the token.
type WebhookRequest struct {
	Text      string `json:"text"`
	TaskID    string `json:"taskId"`
	ContextID string `json:"contextId"`
}

// WebhookError is the cause of a Failed outcome when the webhook could not be
// called or did not answer in time: no reply was received. Err is the
// transport error (a *url.Error, a TLS verification error, context.DeadlineExceeded...).
type WebhookError struct {
	// Host is the webhook's host (the path and query, which may be secret in
	// n8n deployments, are left out).
	Host string
	Err  error
}

func (e *WebhookError) Error() string {
	return "a2a: calling the webhook at " + e.Host + ": " + e.Err.Error()
}

func (e *WebhookError) Unwrap() error { return e.Err }

// Webhook is the facade's default Backend: it posts the question to a workflow
// webhook that answers {"answer": string, "escalate": bool}, and maps the reply
// with MapReply.
//
// The request is a POST with a JSON WebhookRequest body and the caller's token
// in the X-Subject-Token header. Redirects are not followed (a 3xx is a
// failure), so the token is never re-sent to another address. The reply body
// is read up to the size bound (DefaultMaxReplyBytes unless WithMaxReplyBytes)
// and the whole call is bounded by the timeout (DefaultWebhookTimeout unless
// WithTimeout).
type Webhook struct {
	url      string
	host     string
	client   *http.Client
	timeout  time.Duration
	maxBytes int64
}

// WebhookOption configures a Webhook.
type WebhookOption func(*Webhook)

// WithTimeout bounds each webhook call, from dialling to the last byte read.
func WithTimeout(d time.Duration) WebhookOption {
	return func(w *Webhook) { w.timeout = d }
}

// WithMaxReplyBytes bounds the reply body; a longer reply is a Failed outcome
// with ErrTooLarge.
func WithMaxReplyBytes(n int64) WebhookOption {
	return func(w *Webhook) { w.maxBytes = n }
}

// WithRootCAs sets the certificate authorities the webhook's TLS certificate
// is verified against (for instance the system roots plus a private CA, as
// Config.RootCAs holds). Verification is never disabled.
func WithRootCAs(pool *x509.CertPool) WebhookOption {
	return func(w *Webhook) {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
		w.client = &http.Client{Transport: t}
	}
}

// WithHTTPClient sets the HTTP client. Its CheckRedirect is replaced so that
// redirects are never followed; its Timeout is left as given.
func WithHTTPClient(c *http.Client) WebhookOption {
	return func(w *Webhook) { cp := *c; w.client = &cp }
}

// NewWebhook returns a Webhook posting to rawURL, an absolute http or https URL.
func NewWebhook(rawURL string, opts ...WebhookOption) (*Webhook, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("a2a: the webhook URL must be an absolute http or https URL")
	}
	w := &Webhook{
		url:      rawURL,
		host:     u.Host,
		client:   &http.Client{},
		timeout:  DefaultWebhookTimeout,
		maxBytes: DefaultMaxReplyBytes,
	}
	for _, opt := range opts {
		opt(w)
	}
	if w.timeout <= 0 {
		return nil, errors.New("a2a: the webhook timeout must be positive")
	}
	if w.maxBytes <= 0 {
		return nil, errors.New("a2a: the reply size bound must be positive")
	}
	w.client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return w, nil
}

// Ask posts q to the webhook and maps the reply. A Question without a token
// is not sent.
func (w *Webhook) Ask(ctx context.Context, q Question) Outcome {
	if q.Token == "" {
		return Fail("no bearer token: the workflow was not called", ErrNoToken)
	}
	body, err := json.Marshal(WebhookRequest{Text: q.Text, TaskID: q.TaskID, ContextID: q.ContextID})
	if err != nil {
		return Fail("the question could not be encoded", err)
	}
	ctx, cancel := context.WithTimeout(ctx, w.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url, bytes.NewReader(body))
	if err != nil {
		return Fail("the workflow could not be called", &WebhookError{Host: w.host, Err: err})
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set(SubjectTokenHeader, q.Token)

	resp, err := w.client.Do(req)
	if err != nil {
		return w.transportFailure(ctx, err)
	}
	defer resp.Body.Close()
	// Read one byte past the bound to tell "exactly at the bound" from "over it".
	raw, err := io.ReadAll(io.LimitReader(resp.Body, w.maxBytes+1))
	if err != nil {
		return w.transportFailure(ctx, err)
	}
	if int64(len(raw)) > w.maxBytes {
		return Fail(fmt.Sprintf("the workflow reply exceeds %d bytes", w.maxBytes),
			&ReplyError{Status: resp.StatusCode, Header: resp.Header.Clone(), Body: raw[:w.maxBytes], Err: ErrTooLarge})
	}
	return MapReply(resp.StatusCode, resp.Header, raw)
}

func (w *Webhook) transportFailure(ctx context.Context, err error) Outcome {
	var ue *url.Error
	if errors.As(err, &ue) { // its message repeats the full URL; keep the operation and cause
		err = fmt.Errorf("%s: %w", ue.Op, ue.Err)
	}
	cause := &WebhookError{Host: w.host, Err: err}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return Fail(fmt.Sprintf("the workflow did not answer within %s", w.timeout), cause)
	}
	return Fail("the workflow could not be reached", cause)
}
