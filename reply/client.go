package reply

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/candorkit/candor/internal/httpx"
)

// SubjectTokenHeader is the request header that carries the caller's subject
// token to the webhook. The token is never put in the request body or the URL.
const SubjectTokenHeader = "X-Subject-Token"

// Defaults of a Client.
const (
	// DefaultTimeout bounds one call, from dialling to the last byte read,
	// on top of the caller's context. A webhook answers a question someone
	// is waiting on; a workflow that needs longer sets WithTimeout.
	DefaultTimeout = 30 * time.Second
	// DefaultMaxResponseBytes is the exact cap on a reply body: a contract
	// reply is a sentence or a paragraph, never megabytes. A body of exactly
	// this many bytes is read; one byte more is a *TooLargeError.
	DefaultMaxResponseBytes int64 = 1 << 20
)

// Option configures NewClient.
type Option func(*options)

type options struct {
	client   *http.Client
	roots    *x509.CertPool
	timeout  time.Duration
	maxBytes int64
	logger   *slog.Logger
	tp       trace.TracerProvider
	mp       metric.MeterProvider
	wrap     func(http.RoundTripper) http.RoundTripper
	errs     []error
}

// WithTransportWrapper wraps the client's transport, after WithRootCAs has
// been applied to it, in whatever wrap returns: an instrumented transport
// (OpenTelemetry's otelhttp, say) and a CA bundle then combine, in any
// order of the options. Redirects are still refused.
func WithTransportWrapper(wrap func(http.RoundTripper) http.RoundTripper) Option {
	return func(o *options) {
		if wrap == nil {
			o.errs = append(o.errs, errors.New("reply: WithTransportWrapper(nil)"))
			return
		}
		o.wrap = wrap
	}
}

// WithHTTPClient sets the client (its transport and timeout) used for every
// call. Redirects are still refused: a 3xx comes back as a *StatusError, so
// the subject token is never re-sent to another address. The client is not
// modified.
func WithHTTPClient(c *http.Client) Option {
	return func(o *options) {
		if c == nil {
			o.errs = append(o.errs, errors.New("reply: WithHTTPClient(nil)"))
			return
		}
		o.client = c
	}
}

// WithRootCAs sets the roots the webhook's TLS certificate is verified
// against, applied to a clone of the client's transport (the one given with
// WithHTTPClient, before or after this option). Verification is never
// disabled.
func WithRootCAs(pool *x509.CertPool) Option {
	return func(o *options) {
		if pool == nil {
			o.errs = append(o.errs, errors.New("reply: WithRootCAs(nil)"))
			return
		}
		o.roots = pool
	}
}

// WithTimeout sets the per-call deadline (DefaultTimeout when absent); it
// must be positive.
func WithTimeout(d time.Duration) Option {
	return func(o *options) {
		if d <= 0 {
			o.errs = append(o.errs, fmt.Errorf("reply: WithTimeout(%s): the timeout must be positive", d))
			return
		}
		o.timeout = d
	}
}

// WithMaxResponseBytes sets the exact cap on a reply body
// (DefaultMaxResponseBytes when absent); it must be positive.
func WithMaxResponseBytes(n int64) Option {
	return func(o *options) {
		if n <= 0 {
			o.errs = append(o.errs, fmt.Errorf("reply: WithMaxResponseBytes(%d): the cap must be positive", n))
			return
		}
		o.maxBytes = n
	}
}

// WithLogger sets where the client logs: one debug record per answered call
// (host, status, bytes) and one warning per failed call, with a non-2xx body
// in full but with the webhook's path and query redacted. Nil or absent means
// nothing is logged. The token and the URL's path and query are never logged.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) { o.logger = l }
}

// WithTracerProvider sets the OpenTelemetry tracer provider of the call
// spans (the package documentation lists them); nil or absent means the
// global provider, a no-op unless the program installed one.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(o *options) { o.tp = tp }
}

// WithMeterProvider sets the OpenTelemetry meter provider of the call
// metrics; nil or absent means the global provider.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(o *options) { o.mp = mp }
}

// Client calls one webhook that answers the contract. It is safe for
// concurrent use.
type Client struct {
	url      string
	origin   string // scheme://host, the only part of the URL that is ever shown
	secrets  []string
	client   *http.Client
	timeout  time.Duration
	maxBytes int64
	logger   *slog.Logger
	tel      *telemetry
}

// NewClient returns a Client posting to webhookURL, an absolute http or
// https URL without user information. It does no I/O.
func NewClient(webhookURL string, opts ...Option) (*Client, error) {
	u, err := url.Parse(webhookURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("reply: the webhook URL must be an absolute http or https URL")
	}
	if u.User != nil {
		return nil, errors.New("reply: the webhook URL must not hold user information")
	}
	o := options{timeout: DefaultTimeout, maxBytes: DefaultMaxResponseBytes}
	for _, opt := range opts {
		opt(&o)
	}
	if len(o.errs) > 0 {
		return nil, errors.Join(o.errs...)
	}
	hc := o.client
	if o.roots != nil {
		if hc, err = httpx.WithRootCAs(hc, o.roots); err != nil {
			return nil, fmt.Errorf("reply: WithRootCAs: %w", err)
		}
	}
	if o.wrap != nil {
		var wrapped http.Client
		if hc != nil {
			wrapped = *hc
		}
		base := wrapped.Transport
		if base == nil {
			base = http.DefaultTransport
		}
		if wrapped.Transport = o.wrap(base); wrapped.Transport == nil {
			return nil, errors.New("reply: WithTransportWrapper: the wrapper returned a nil transport")
		}
		hc = &wrapped
	}
	return &Client{
		url:      webhookURL,
		origin:   u.Scheme + "://" + u.Host,
		secrets:  urlSecrets(u),
		client:   httpx.NoRedirectClient(hc),
		timeout:  o.timeout,
		maxBytes: o.maxBytes,
		logger:   o.logger,
		tel:      newTelemetry(u, o.tp, o.mp),
	}, nil
}

// String is the webhook's scheme and host, never its path or query.
func (c *Client) String() string { return c.origin }

// Call posts body as JSON to the webhook with subjectToken in the
// X-Subject-Token header and decodes the answer strictly.
//
// body is encoded with encoding/json, except []byte and json.RawMessage,
// which are sent as they are and must be valid JSON.
//
// The status rule: only 200 carries a reply. Any other 2xx is a
// *ContractError (its body stays visible, as drift); a 1xx, 3xx, 4xx or 5xx
// is a *StatusError. A 2xx body holding only white space is ErrEmpty; a
// body over the cap is a *TooLargeError; a 200 body that is not exactly
// {"answer": string, "escalate": bool} is a *ContractError. A reply with
// "escalate": true is returned with a nil error: escalating is the
// workflow's answer, and the caller decides what it means. No request is
// sent without a subject token (ErrNoToken). A call that got no answer is a
// *TransportError.
func (c *Client) Call(ctx context.Context, subjectToken string, body any) (Reply, error) {
	ctx, span, started := c.tel.start(ctx)
	r, status, err := c.call(ctx, subjectToken, body, started)
	c.tel.end(ctx, span, started, status, err)
	return r, err
}

// call is Call without its telemetry; status is the answer's HTTP status,
// 0 when there was none.
func (c *Client) call(ctx context.Context, subjectToken string, body any, started time.Time) (Reply, int, error) {
	if strings.TrimSpace(subjectToken) == "" {
		return Reply{}, 0, ErrNoToken
	}
	payload, err := encodeBody(body)
	if err != nil {
		return Reply{}, 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(payload))
	if err != nil {
		return Reply{}, 0, &TransportError{URL: c.origin, Err: httpx.StripURL(err)}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set(SubjectTokenHeader, subjectToken)
	c.tel.inject(ctx, req.Header)

	resp, err := c.client.Do(req)
	if err != nil {
		return Reply{}, 0, c.failed(ctx, &TransportError{URL: c.origin, Err: httpx.StripURL(err)}, nil)
	}
	defer resp.Body.Close()
	raw, err := httpx.ReadAll(resp.Body, c.maxBytes)
	status, header := resp.StatusCode, resp.Header.Clone()
	var tooLarge bool
	if err != nil {
		if !errors.Is(err, httpx.ErrTooLarge) {
			return Reply{}, 0, c.failed(ctx, &TransportError{URL: c.origin, Err: httpx.StripURL(err)}, nil)
		}
		tooLarge = true
	}
	if status < 200 || status > 299 {
		// The status is the fact that matters; a long error page is kept
		// up to the cap.
		return Reply{}, status, c.failed(ctx, &StatusError{StatusCode: status, Header: header, Body: raw, secrets: c.secrets}, raw)
	}
	if tooLarge {
		return Reply{}, status, c.failed(ctx, &TooLargeError{StatusCode: status, Header: header, Limit: c.maxBytes}, nil)
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return Reply{}, status, c.failed(ctx, ErrEmpty, nil)
	}
	if status != http.StatusOK {
		return Reply{}, status, c.failed(ctx, &ContractError{StatusCode: status, Header: header,
			Reason: fmt.Sprintf("status %d, want 200", status), Raw: raw, secrets: c.secrets}, nil)
	}
	r, reason := decode(raw)
	if reason != "" {
		return Reply{}, status, c.failed(ctx, &ContractError{StatusCode: status, Header: header, Reason: reason, Raw: raw, secrets: c.secrets}, nil)
	}
	if c.logger != nil {
		c.logger.LogAttrs(ctx, slog.LevelDebug, "webhook answered",
			slog.String("webhook", c.origin), slog.Int("status", status), slog.Int("bytes", len(raw)),
			slog.Bool("escalate", r.Escalate), slog.Duration("duration", time.Since(started)))
	}
	return r, status, nil
}

func (c *Client) failed(ctx context.Context, err error, body []byte) error {
	if c.logger != nil {
		attrs := []slog.Attr{slog.String("webhook", c.origin), slog.String("kind", string(Classify(err))), slog.Any("error", err)}
		if body != nil {
			attrs = append(attrs, slog.String("body", redact(string(body), c.secrets)))
		}
		c.logger.LogAttrs(ctx, slog.LevelWarn, "webhook call failed", attrs...)
	}
	return err
}

func encodeBody(body any) ([]byte, error) {
	var b []byte
	switch v := body.(type) {
	case []byte:
		b = v
	case json.RawMessage:
		b = v
	default:
		enc, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("reply: encoding the webhook body: %w", err)
		}
		return enc, nil
	}
	if !json.Valid(b) {
		return nil, errors.New("reply: the webhook body is not JSON")
	}
	return b, nil
}

// urlSecrets lists the parts of a webhook URL that must not be shown: the
// whole URL, its path and query in the forms a server may echo them, every
// path suffix (n8n quotes the path after /webhook/) and every query value.
func urlSecrets(u *url.URL) []string {
	var s []string
	add := func(v string) {
		if strings.Trim(v, "/") != "" {
			s = append(s, v)
		}
	}
	add(u.String())
	add(u.RequestURI())
	add(u.EscapedPath())
	add(u.Path)
	add(u.RawQuery)
	segs := strings.Split(strings.Trim(u.Path, "/"), "/")
	for i := range segs {
		add(strings.Join(segs[i:], "/"))
	}
	for _, vs := range u.Query() {
		for _, v := range vs {
			add(v)
		}
	}
	return s
}
