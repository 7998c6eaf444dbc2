package n8n

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// DefaultMaxResponseBytes bounds every response body the Client reads unless
// Options.MaxResponseBytes says otherwise. Execution data can be large; n8n's
// own request limit is 16 MiB.
const DefaultMaxResponseBytes = 32 << 20

// Options configure a Client. The zero value is usable.
type Options struct {
	// HTTPClient sends the requests; nil means a client with a two-minute
	// timeout. The Client uses a copy that does not follow redirects, so the
	// API key is never replayed to another address.
	HTTPClient *http.Client
	// Logger receives one debug record per request (method, path, status,
	// duration), never a header or a body; nil discards.
	Logger *slog.Logger
	// MaxResponseBytes bounds each response body; 0 means DefaultMaxResponseBytes.
	MaxResponseBytes int64
}

// Client calls n8n's public API (/api/v1) with an API key. It is safe for
// concurrent use. The key is sent only in the X-N8N-API-KEY header and never
// appears in logs, errors or String.
type Client struct {
	base    *url.URL
	apiKey  string
	hc      *http.Client
	log     *slog.Logger
	maxBody int64
}

// New returns a Client for the n8n at baseURL (scheme and host, optionally a
// path prefix; e.g. http://127.0.0.1:5678). An empty API key is an error: no
// identity, no call.
func New(baseURL, apiKey string, opts Options) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil {
		return nil, fmt.Errorf("n8n: base URL: %w", err)
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
	hc := &http.Client{Timeout: 2 * time.Minute}
	if opts.HTTPClient != nil {
		copied := *opts.HTTPClient
		hc = &copied
	}
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	max := opts.MaxResponseBytes
	if max <= 0 {
		max = DefaultMaxResponseBytes
	}
	return &Client{base: u, apiKey: apiKey, hc: hc, log: log, maxBody: max}, nil
}

// BaseURL returns the instance address the Client was made for.
func (c *Client) BaseURL() string { return c.base.String() }

// String describes the client without its key.
func (c *Client) String() string { return "n8n.Client(" + c.base.String() + ", key redacted)" }

// LogValue keeps the key out of structured logs.
func (c *Client) LogValue() slog.Value {
	return slog.GroupValue(slog.String("base", c.base.String()), slog.String("key", "redacted"))
}

// DecodeError is a 2xx response whose body is not the JSON the call expects.
type DecodeError struct {
	Method, Path string
	Status       int
	// Body is the response body, cut at MaxErrorBody bytes.
	Body []byte
	Err  error
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("n8n: %s %s: status %d with an unexpected body: %v", e.Method, e.Path, e.Status, e.Err)
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
	req, err := http.NewRequestWithContext(ctx, k.method, u.String(), body)
	if err != nil {
		return fmt.Errorf("n8n: %s %s: %w", k.method, k.path, err)
	}
	req.Header.Set("Accept", "application/json")
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
		c.log.DebugContext(ctx, "n8n request failed", "method", k.method, "path", shown, "err", err)
		return fmt.Errorf("n8n: %s %s: %w", k.method, shown, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, c.maxBody+1))
	c.log.DebugContext(ctx, "n8n request", "method", k.method, "path", shown,
		"status", resp.StatusCode, "bytes", len(data), "duration", time.Since(start))
	if err != nil {
		return fmt.Errorf("n8n: %s %s: reading the response: %w", k.method, shown, err)
	}
	if int64(len(data)) > c.maxBody {
		return fmt.Errorf("n8n: %s %s: status %d: %w (%d bytes)", k.method, shown, resp.StatusCode,
			ErrResponseTooLarge, c.maxBody)
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
		return newAPIError(k.method, shown, resp.StatusCode, data)
	}
	if k.header != nil {
		*k.header = resp.Header
	}
	if k.raw != nil {
		*k.raw = data
	}
	if k.out != nil {
		if err := json.Unmarshal(data, k.out); err != nil {
			return &DecodeError{Method: k.method, Path: shown, Status: resp.StatusCode, Body: cut(data), Err: err}
		}
	}
	return nil
}

func newAPIError(method, path string, status int, data []byte) *APIError {
	e := &APIError{Method: method, Path: path, Status: status, Body: cut(data), Truncated: len(data) > MaxErrorBody}
	var m struct {
		Message any `json:"message"`
	}
	if json.Unmarshal(data, &m) == nil {
		switch v := m.Message.(type) {
		case string:
			e.Message = v
		case nil:
		default:
			b, _ := json.Marshal(v)
			e.Message = string(b)
		}
	}
	return e
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

// clampLimit maps a requested page size to n8n's accepted 1..250; 0 means
// n8n's default of 100. n8n answers limit=0 with a cursor that points to its
// own page, so 0 is never sent.
func clampLimit(n int) int {
	switch {
	case n == 0:
		return 100
	case n < 1:
		return 1
	case n > 250:
		return 250
	}
	return n
}

// page is n8n's paged list shape.
type page[T any] struct {
	Data       *[]T    `json:"data"`
	NextCursor *string `json:"nextCursor"`
}

// listAll follows nextCursor until it is null. A cursor seen before is an
// ErrCursorLoop, never a silent truncation. max > 0 stops after max items.
func listAll[T any](ctx context.Context, c *Client, path string, q url.Values, limit, max int) ([]T, error) {
	if q == nil {
		q = url.Values{}
	}
	size := clampLimit(limit)
	if max > 0 && max < size {
		size = max
	}
	q.Set("limit", strconv.Itoa(size))
	var out []T
	seen := map[string]bool{}
	for {
		var p page[T]
		if err := c.do(ctx, call{method: http.MethodGet, path: path, query: q, out: &p}); err != nil {
			return nil, err
		}
		if p.Data == nil {
			return nil, &DecodeError{Method: http.MethodGet, Path: path, Status: 200,
				Err: errors.New(`list response has no "data" array`)}
		}
		out = append(out, *p.Data...)
		if max > 0 && len(out) >= max {
			return out[:max], nil
		}
		if p.NextCursor == nil || *p.NextCursor == "" {
			if out == nil {
				out = []T{}
			}
			return out, nil
		}
		next := *p.NextCursor
		if seen[next] || next == q.Get("cursor") {
			return nil, fmt.Errorf("n8n: GET %s: %w after %d items (cursor %q)", path, ErrCursorLoop, len(out), clip(next, 80))
		}
		seen[next] = true
		q.Set("cursor", next)
	}
}
