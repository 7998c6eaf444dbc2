package ollama

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/candorkit/candor/internal/httpx"
	"github.com/candorkit/candor/internal/otelx"
)

// Defaults of New.
const (
	DefaultURL              = "http://127.0.0.1:11434"
	DefaultTimeout          = 60 * time.Second
	DefaultBatch            = 64
	DefaultMaxResponseBytes = 64 << 20
	// MaxBatch bounds WithBatch.
	MaxBatch = 4096
	// MaxDimensions bounds WithDimensions.
	MaxDimensions = 1 << 16
)

const embedPath = "/api/embed"

// Option configures New.
type Option func(*options)

type options struct {
	client    *http.Client
	clientSet bool
	timeout   time.Duration
	batch     int
	maxBody   int64
	dims      int
	truncate  bool
	tp        trace.TracerProvider
}

// WithHTTPClient sets the client used for every request (its transport and
// timeout; default: a client with the default transport, TLS verified).
// Redirects are refused whatever the client says.
func WithHTTPClient(c *http.Client) Option {
	return func(o *options) { o.client, o.clientSet = c, true }
}

// WithTimeout bounds each request (default DefaultTimeout), on top of the
// caller's context.
func WithTimeout(d time.Duration) Option { return func(o *options) { o.timeout = d } }

// WithBatch sets how many texts go in one request (default DefaultBatch, at
// most MaxBatch).
func WithBatch(n int) Option { return func(o *options) { o.batch = n } }

// WithMaxResponseBytes is the exact cap on the bytes read from one response
// (default DefaultMaxResponseBytes); a longer response is a *ResponseError.
func WithMaxResponseBytes(n int64) Option { return func(o *options) { o.maxBody = n } }

// WithDimensions asks the model for n dimensions (the API's "dimensions"
// field, for models that support it) and checks that every vector has n.
// Without it, every vector of one Embed call must have the same length.
func WithDimensions(n int) Option { return func(o *options) { o.dims = n } }

// WithTruncate lets Ollama cut inputs longer than the model's context (its
// "truncate" field). The default is false: a too-long input is an error
// rather than a vector of part of the text.
func WithTruncate(on bool) Option { return func(o *options) { o.truncate = on } }

// Embedder embeds texts with an Ollama server's POST /api/embed. It is safe
// for concurrent use.
type Embedder struct {
	endpoint string
	model    string
	client   *http.Client
	timeout  time.Duration
	batch    int
	maxBody  int64
	dims     int
	truncate bool
	tp       trace.TracerProvider
	tracer   trace.Tracer
	attrs    []attribute.KeyValue
}

// New returns an embedder for model on the Ollama server at baseURL (""
// means DefaultURL). baseURL must be an http or https URL without user
// information, query or fragment. New does no I/O.
func New(baseURL, model string, opts ...Option) (*Embedder, error) {
	if baseURL == "" {
		baseURL = DefaultURL
	}
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		// The URL is not quoted: it could hold credentials.
		return nil, errors.New("ollama: baseURL must be http(s)://host[:port][/path] without credentials, query or fragment")
	}
	if strings.TrimSpace(model) == "" {
		return nil, errors.New("ollama: model is empty")
	}
	o := options{timeout: DefaultTimeout, batch: DefaultBatch, maxBody: DefaultMaxResponseBytes}
	for _, opt := range opts {
		opt(&o)
	}
	switch {
	case o.clientSet && o.client == nil:
		return nil, errors.New("ollama: WithHTTPClient: client is nil")
	case o.timeout <= 0:
		return nil, errors.New("ollama: WithTimeout: must be positive")
	case o.batch < 1 || o.batch > MaxBatch:
		return nil, fmt.Errorf("ollama: WithBatch: must be in [1, %d]", MaxBatch)
	case o.maxBody < 1:
		return nil, errors.New("ollama: WithMaxResponseBytes: must be positive")
	case o.dims < 0 || o.dims > MaxDimensions:
		return nil, fmt.Errorf("ollama: WithDimensions: must be in [0, %d]", MaxDimensions)
	}
	return &Embedder{
		endpoint: strings.TrimSuffix(u.String(), "/") + embedPath,
		model:    model,
		client:   httpx.NoRedirectClient(o.client),
		timeout:  o.timeout,
		batch:    o.batch,
		maxBody:  o.maxBody,
		dims:     o.dims,
		truncate: o.truncate,
		tp:       o.tp,
		tracer:   otelx.Tracer(o.tp, scope),
		attrs:    spanAttrs(u, model),
	}, nil
}

// Model returns the model name the embedder asks for.
func (e *Embedder) Model() string { return e.model }

type request struct {
	Model      string   `json:"model"`
	Input      []string `json:"input"`
	Truncate   bool     `json:"truncate"`
	Dimensions int      `json:"dimensions,omitempty"`
}

type response struct {
	Model      string      `json:"model"`
	Embeddings [][]float64 `json:"embeddings"`
	Error      string      `json:"error"`
}

// Embed returns one vector per text, in order, sending texts in batches.
// Any failure (transport, timeout, a status other than 200, an "error"
// field, a body over the cap, a vector count or length that does not match,
// a component that is not a finite float32) is an error matching ErrEmbed,
// and no vectors are returned.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, &ResponseError{Reason: "no texts to embed"}
	}
	out := make([][]float32, 0, len(texts))
	dims := e.dims
	for start := 0; start < len(texts); start += e.batch {
		batch := texts[start:min(start+e.batch, len(texts))]
		vecs, err := e.traced(ctx, len(batch), func(ctx context.Context, status *int) ([][]float32, error) {
			return e.call(ctx, batch, status)
		})
		if err != nil {
			return nil, err
		}
		for i, v := range vecs {
			if dims == 0 {
				dims = len(v)
			}
			if len(v) != dims || dims == 0 {
				return nil, &ResponseError{Reason: fmt.Sprintf("vector %d has %d dimensions, want %d", start+i, len(v), dims)}
			}
		}
		out = append(out, vecs...)
	}
	return out, nil
}

func (e *Embedder) call(ctx context.Context, texts []string, status *int) ([][]float32, error) {
	body, err := json.Marshal(request{Model: e.model, Input: texts, Truncate: e.truncate, Dimensions: e.dims})
	if err != nil {
		return nil, &RequestError{Err: err}
	}
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, &RequestError{Err: httpx.StripURL(err)}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	otelx.Inject(ctx, req.Header)
	resp, err := e.client.Do(req)
	if err != nil {
		return nil, &RequestError{Err: httpx.StripURL(err)}
	}
	*status = resp.StatusCode
	defer resp.Body.Close()
	raw, err := httpx.ReadAll(resp.Body, e.maxBody)
	if resp.StatusCode != http.StatusOK {
		se := &StatusError{StatusCode: resp.StatusCode, Header: resp.Header.Clone(), Body: clip(raw)}
		var r response
		if err == nil && json.Unmarshal(raw, &r) == nil {
			se.Message = r.Error
		}
		return nil, se
	}
	if errors.Is(err, httpx.ErrTooLarge) {
		return nil, &ResponseError{Reason: fmt.Sprintf("body longer than %d bytes", e.maxBody), Body: clip(raw), Err: err}
	}
	if err != nil {
		return nil, &RequestError{Err: err}
	}
	var r response
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, &ResponseError{Reason: "body is not the expected JSON", Body: clip(raw), Err: err}
	}
	if r.Error != "" {
		return nil, &ResponseError{Reason: "error field: " + r.Error, Body: clip(raw)}
	}
	if len(r.Embeddings) != len(texts) {
		return nil, &ResponseError{Reason: fmt.Sprintf("%d embeddings for %d inputs", len(r.Embeddings), len(texts)), Body: clip(raw)}
	}
	vecs := make([][]float32, len(r.Embeddings))
	for i, emb := range r.Embeddings {
		v := make([]float32, len(emb))
		for j, x := range emb {
			f := float32(x)
			if math.IsNaN(x) || math.IsInf(float64(f), 0) {
				return nil, &ResponseError{Reason: fmt.Sprintf("embedding %d has a component at %d that is not a finite float32", i, j)}
			}
			v[j] = f
		}
		vecs[i] = v
	}
	return vecs, nil
}

func clip(b []byte) []byte {
	return bytes.Clone(b[:min(len(b), MaxErrorBody)])
}
