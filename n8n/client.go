package n8n

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/candorkit/candor/internal/httpx"
	"github.com/candorkit/candor/internal/otelx"
)

// DefaultMaxResponseBytes bounds every response body the Client reads unless
// WithMaxResponseBytes says otherwise. Execution data can be large; n8n's
// own request limit is 16 MiB.
const DefaultMaxResponseBytes int64 = 32 << 20

// DefaultTimeout is the per-request deadline of a Client without
// WithTimeout, on top of the caller's context.
const DefaultTimeout = 2 * time.Minute

// Option configures New.
type Option func(*options)

type options struct {
	hc      *http.Client
	roots   *x509.CertPool
	log     *slog.Logger
	maxBody int64
	timeout time.Duration
	tp      trace.TracerProvider
	mp      metric.MeterProvider
	errs    []error
}

// WithHTTPClient sets the client (its transport and timeout) used for every
// request. The Client uses a clone that does not follow redirects, so the
// API key is never replayed to another address; hc itself is not modified.
func WithHTTPClient(hc *http.Client) Option {
	return func(o *options) {
		if hc == nil {
			o.errs = append(o.errs, errors.New("n8n: WithHTTPClient(nil)"))
			return
		}
		o.hc = hc
	}
}

// WithRootCAs sets the roots n8n's TLS certificate is verified against,
// applied to a clone of the client's transport (the one WithHTTPClient
// gives, before or after this option). Verification is never turned off.
func WithRootCAs(pool *x509.CertPool) Option {
	return func(o *options) {
		if pool == nil {
			o.errs = append(o.errs, errors.New("n8n: WithRootCAs(nil)"))
			return
		}
		o.roots = pool
	}
}

// WithLogger sets where the Client (and Deploy, ApplyDir and ApplyPlan with
// it) logs: one debug record per request (method, path, status, bytes,
// duration) and one record per deploy step, never a header, a key, a cookie
// or a body. Nil or absent means nothing is logged.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) { o.log = l }
}

// WithMaxResponseBytes sets the exact cap on a response body
// (DefaultMaxResponseBytes when absent): a body of n bytes is read, one of
// n+1 is ErrResponseTooLarge. n must be positive.
func WithMaxResponseBytes(n int64) Option {
	return func(o *options) {
		if n <= 0 {
			o.errs = append(o.errs, fmt.Errorf("n8n: WithMaxResponseBytes(%d): the cap must be positive", n))
			return
		}
		o.maxBody = n
	}
}

// WithTimeout sets the deadline of each request (DefaultTimeout when
// absent), on top of the caller's context. d must be positive.
func WithTimeout(d time.Duration) Option {
	return func(o *options) {
		if d <= 0 {
			o.errs = append(o.errs, fmt.Errorf("n8n: WithTimeout(%s): the timeout must be positive", d))
			return
		}
		o.timeout = d
	}
}

// WithTracerProvider sets the OpenTelemetry tracer provider of the
// Client's spans: one client span per request, and Deploy's span with one
// span per step (see the package documentation). Nil or absent means the
// global provider.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(o *options) { o.tp = tp }
}

// WithMeterProvider sets the OpenTelemetry meter provider of the metrics
// http.client.request.duration and n8n.deploy.duration. Nil or absent
// means the global provider.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(o *options) { o.mp = mp }
}

// Client calls n8n's public API (/api/v1) with an API key. It is safe for
// concurrent use. The key is sent only in the X-N8N-API-KEY header and never
// appears in logs, errors or String.
type Client struct {
	base    *url.URL
	apiKey  string
	hc      *http.Client
	log     *slog.Logger // nil: nothing is logged
	maxBody int64
	timeout time.Duration
	tel     *telemetry
}

// New returns a Client for the n8n at baseURL (scheme and host, optionally a
// path prefix; e.g. http://127.0.0.1:5678). It does no I/O. An empty API key
// is an error: no identity, no call. So is any invalid option.
func New(baseURL, apiKey string, opts ...Option) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil {
		return nil, fmt.Errorf("n8n: base URL: %w", httpx.StripURL(err))
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("n8n: base URL %q: want http(s)://host[:port][/prefix]", u.Redacted())
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, errors.New("n8n: base URL must not carry user info, a query or a fragment")
	}
	if strings.TrimSpace(apiKey) == "" {
		return nil, errors.New("n8n: an API key is required")
	}
	o := options{maxBody: DefaultMaxResponseBytes, timeout: DefaultTimeout}
	for _, opt := range opts {
		if opt == nil {
			o.errs = append(o.errs, errors.New("n8n: nil Option"))
			continue
		}
		opt(&o)
	}
	if len(o.errs) > 0 {
		return nil, errors.Join(o.errs...)
	}
	hc := o.hc
	if o.roots != nil {
		if hc, err = httpx.WithRootCAs(hc, o.roots); err != nil {
			return nil, fmt.Errorf("n8n: WithRootCAs: %w", err)
		}
	}
	return &Client{base: u, apiKey: apiKey, hc: httpx.NoRedirectClient(hc), log: o.log,
		maxBody: o.maxBody, timeout: o.timeout, tel: newTelemetry(o, u)}, nil
}

// BaseURL returns the instance address the Client was made for.
func (c *Client) BaseURL() string { return c.base.String() }

// String describes the client without its key.
func (c *Client) String() string { return "n8n.Client(" + c.base.String() + ", key redacted)" }

// LogValue keeps the key out of structured logs.
func (c *Client) LogValue() slog.Value {
	return slog.GroupValue(slog.String("base", c.base.String()), slog.String("key", "redacted"))
}

// logAttrs logs when the Client was given a logger.
func (c *Client) logAttrs(ctx context.Context, level slog.Level, msg string, attrs ...slog.Attr) {
	if c.log != nil {
		c.log.LogAttrs(ctx, level, msg, attrs...)
	}
}

// DecodeError is a 2xx response whose body is not the JSON the call expects.
type DecodeError struct {
	Method, Path string
	StatusCode   int
	// Body is the response body, cut at MaxErrorBody bytes.
	Body []byte
	Err  error
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("n8n: %s %s: HTTP %d with an unexpected body: %v", e.Method, e.Path, e.StatusCode, e.Err)
}

func (e *DecodeError) Unwrap() error { return e.Err }

// call is one HTTP exchange.
type call struct {
	method string
	path   string // below the base URL, starting with '/'
	query  url.Values
	in     any     // JSON body, or nil
	want   []int   // accepted statuses; default 200
	cookie string  // session cookie for /rest
	anon   bool    // send neither key nor cookie (login)
	out    any     // decoded on success when non-nil
	raw    *[]byte // receives the body on success when non-nil
	header *http.Header
}

func (c *Client) do(ctx context.Context, k call) error {
	route := routeOf(k.path)
	ctx, span := c.tel.startCall(ctx, k.method, route)
	start := time.Now()
	status := 0
	err := c.exchange(ctx, k, &status)
	c.tel.endCall(ctx, span, start, k.method, route, status, err)
	return err
}

// exchange sends k and reads the answer; *status receives the response's
// status code.
func (c *Client) exchange(ctx context.Context, k call, status *int) error {
	// k.path is already escaped (see api): keep it as the raw path, so an
	// id holding '/', '%' or a space is sent once-escaped.
	u := *c.base
	u.RawPath = c.base.EscapedPath() + k.path
	p, err := url.PathUnescape(u.RawPath)
	if err != nil {
		return fmt.Errorf("n8n: %s %s: %w", k.method, k.path, err)
	}
	u.Path = p
	if len(k.query) > 0 {
		u.RawQuery = k.query.Encode()
	}
	shown := k.path
	if u.RawQuery != "" {
		shown += "?" + u.RawQuery
	}
	var body io.Reader
	if k.in != nil {
		b, err := json.Marshal(k.in)
		if err != nil {
			return fmt.Errorf("n8n: %s %s: encoding the request: %w", k.method, k.path, err)
		}
		body = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, k.method, u.String(), body)
	if err != nil {
		return fmt.Errorf("n8n: %s %s: %w", k.method, k.path, httpx.StripURL(err))
	}
	req.Header.Set("Accept", "application/json")
	otelx.Inject(ctx, req.Header)
	if k.in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	switch {
	case k.anon:
	case k.cookie != "":
		req.Header.Set("Cookie", k.cookie)
	default:
		req.Header.Set("X-N8N-API-KEY", c.apiKey)
	}
	start := time.Now()
	resp, err := c.hc.Do(req)
	if err != nil {
		err = fmt.Errorf("n8n: %s %s: %w", k.method, shown, httpx.StripURL(err))
		c.logAttrs(ctx, slog.LevelDebug, "n8n request failed", slog.String("method", k.method),
			slog.String("path", shown), slog.Any("error", err))
		return err
	}
	defer resp.Body.Close()
	*status = resp.StatusCode
	data, err := httpx.ReadAll(resp.Body, c.maxBody)
	c.logAttrs(ctx, slog.LevelDebug, "n8n request", slog.String("method", k.method), slog.String("path", shown),
		slog.Int("status", resp.StatusCode), slog.Int("bytes", len(data)), slog.Duration("duration", time.Since(start)))
	if errors.Is(err, httpx.ErrTooLarge) {
		return fmt.Errorf("n8n: %s %s: HTTP %d: %w (cap %d bytes)", k.method, shown, resp.StatusCode,
			ErrResponseTooLarge, c.maxBody)
	}
	if err != nil {
		return fmt.Errorf("n8n: %s %s: reading the response: %w", k.method, shown, httpx.StripURL(err))
	}
	want := k.want
	if len(want) == 0 {
		want = []int{http.StatusOK}
	}
	ok := false
	for _, s := range want {
		ok = ok || resp.StatusCode == s
	}
	if !ok {
		return newStatusError(k.method, shown, resp.StatusCode, resp.Header, data, c.apiKey, strings.TrimPrefix(k.cookie, "n8n-auth="))
	}
	if k.header != nil {
		*k.header = resp.Header
	}
	if k.raw != nil {
		*k.raw = data
	}
	if k.out != nil {
		if err := json.Unmarshal(data, k.out); err != nil {
			return &DecodeError{Method: k.method, Path: shown, StatusCode: resp.StatusCode, Body: cut(data), Err: err}
		}
	}
	return nil
}

func cut(b []byte) []byte {
	if len(b) > MaxErrorBody {
		b = b[:MaxErrorBody]
	}
	return bytes.Clone(b)
}

func api(format string, args ...any) string {
	for i, a := range args {
		args[i] = url.PathEscape(fmt.Sprint(a))
	}
	return "/api/v1" + fmt.Sprintf(format, args...)
}
