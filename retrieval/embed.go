package retrieval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Embedder turns texts into vectors, one per text, in order. An
// implementation returns an error for any failure; it never substitutes
// other vectors.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// EmbedError is a failed embedding call. It matches ErrEmbed and keeps the
// evidence: the HTTP status (0 when no response was read) and up to
// MaxErrorBody bytes of the response body.
type EmbedError struct {
	Op         string // what failed: "request", "status", "decode", "response"
	StatusCode int
	Body       []byte
	Reason     string
	Err        error // underlying cause, if any
}

// MaxErrorBody bounds the bytes of a response body an EmbedError keeps.
const MaxErrorBody = 4 << 10

func (e *EmbedError) Error() string {
	s := "retrieval: embedding failed: " + e.Op
	if e.StatusCode != 0 {
		s += fmt.Sprintf(": HTTP %d", e.StatusCode)
	}
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns ErrEmbed and the cause.
func (e *EmbedError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrEmbed, e.Err}
	}
	return []error{ErrEmbed}
}

// Ollama defaults.
const (
	DefaultOllamaURL        = "http://127.0.0.1:11434"
	DefaultOllamaTimeout    = 60 * time.Second
	DefaultOllamaBatch      = 64
	DefaultOllamaMaxBody    = 64 << 20
	ollamaEmbedPath         = "/api/embed"
	maxOllamaTextsPerCall   = 4096
	maxOllamaErrorBodyBytes = MaxErrorBody
)

// OllamaOption configures an OllamaEmbedder.
type OllamaOption func(*OllamaEmbedder)

// WithOllamaHTTPClient sets the HTTP client (default: a client with the
// default transport, TLS verified). The embedder's timeout applies on top
// of the client's own.
func WithOllamaHTTPClient(c *http.Client) OllamaOption {
	return func(o *OllamaEmbedder) { o.client = c }
}

// WithOllamaTimeout bounds each HTTP call (default DefaultOllamaTimeout).
func WithOllamaTimeout(d time.Duration) OllamaOption {
	return func(o *OllamaEmbedder) { o.timeout = d }
}

// WithOllamaBatch sets how many texts go in one request (default
// DefaultOllamaBatch).
func WithOllamaBatch(n int) OllamaOption { return func(o *OllamaEmbedder) { o.batch = n } }

// WithOllamaMaxResponseBytes bounds the bytes read from one response
// (default DefaultOllamaMaxBody); a longer response is an error.
func WithOllamaMaxResponseBytes(n int64) OllamaOption {
	return func(o *OllamaEmbedder) { o.maxBody = n }
}

// WithOllamaDimensions asks the model for n dimensions (the API's
// "dimensions" field, for models that support it) and checks every vector
// has n. Without it, every vector of one call must have the same length.
func WithOllamaDimensions(n int) OllamaOption { return func(o *OllamaEmbedder) { o.dims = n } }

// WithOllamaTruncate lets Ollama cut inputs longer than the model's context
// (its "truncate" field). The default is false: a too-long input is an error
// rather than a vector of part of the text.
func WithOllamaTruncate(on bool) OllamaOption { return func(o *OllamaEmbedder) { o.truncate = on } }

// OllamaEmbedder embeds texts with an Ollama server's POST /api/embed.
type OllamaEmbedder struct {
	endpoint string
	model    string
	client   *http.Client
	timeout  time.Duration
	batch    int
	maxBody  int64
	dims     int
	truncate bool
}

// NewOllamaEmbedder returns an embedder for model on the Ollama server at
// baseURL ("" means DefaultOllamaURL). baseURL must be an http or https URL
// without user information, query or fragment.
func NewOllamaEmbedder(baseURL, model string, opts ...OllamaOption) (*OllamaEmbedder, error) {
	if baseURL == "" {
		baseURL = DefaultOllamaURL
	}
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, fmt.Errorf("retrieval: ollama base URL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, errors.New("retrieval: ollama base URL must be http(s)://host[:port][/path] without credentials, query or fragment")
	}
	if strings.TrimSpace(model) == "" {
		return nil, errors.New("retrieval: ollama model is empty")
	}
	o := &OllamaEmbedder{
		endpoint: strings.TrimSuffix(u.String(), "/") + ollamaEmbedPath,
		model:    model,
		client:   &http.Client{},
		timeout:  DefaultOllamaTimeout,
		batch:    DefaultOllamaBatch,
		maxBody:  DefaultOllamaMaxBody,
	}
	for _, opt := range opts {
		opt(o)
	}
	switch {
	case o.client == nil:
		return nil, errors.New("retrieval: ollama HTTP client is nil")
	case o.timeout <= 0:
		return nil, errors.New("retrieval: ollama timeout must be positive")
	case o.batch < 1 || o.batch > maxOllamaTextsPerCall:
		return nil, fmt.Errorf("retrieval: ollama batch must be in [1, %d]", maxOllamaTextsPerCall)
	case o.maxBody < 1:
		return nil, errors.New("retrieval: ollama max response bytes must be positive")
	case o.dims < 0 || o.dims > maxDims:
		return nil, errors.New("retrieval: ollama dimensions out of range")
	}
	return o, nil
}

// Model returns the model name the embedder asks for.
func (o *OllamaEmbedder) Model() string { return o.model }

type ollamaRequest struct {
	Model      string   `json:"model"`
	Input      []string `json:"input"`
	Truncate   bool     `json:"truncate"`
	Dimensions int      `json:"dimensions,omitempty"`
}

type ollamaResponse struct {
	Model      string      `json:"model"`
	Embeddings [][]float64 `json:"embeddings"`
	Error      string      `json:"error"`
}

// Embed returns one vector per text, in order, sending texts in batches. Any
// failure (transport, timeout, non-200 status, an "error" field, a body over
// the bound, a vector count or length that does not match, a non-finite
// component) is an *EmbedError and no vectors are returned.
func (o *OllamaEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, &EmbedError{Op: "request", Reason: "no texts"}
	}
	out := make([][]float32, 0, len(texts))
	dims := o.dims
	for start := 0; start < len(texts); start += o.batch {
		batch := texts[start:min(start+o.batch, len(texts))]
		vecs, err := o.call(ctx, batch)
		if err != nil {
			return nil, err
		}
		for i, v := range vecs {
			if dims == 0 {
				dims = len(v)
			}
			if len(v) != dims || dims == 0 {
				return nil, &EmbedError{Op: "response", Reason: fmt.Sprintf("vector %d has %d dimensions, want %d", start+i, len(v), dims)}
			}
		}
		out = append(out, vecs...)
	}
	return out, nil
}

func (o *OllamaEmbedder) call(ctx context.Context, texts []string) ([][]float32, error) {
	body, err := json.Marshal(ollamaRequest{Model: o.model, Input: texts, Truncate: o.truncate, Dimensions: o.dims})
	if err != nil {
		return nil, &EmbedError{Op: "request", Err: err}
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, &EmbedError{Op: "request", Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := o.client.Do(req)
	if err != nil {
		return nil, &EmbedError{Op: "request", Err: err}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, o.maxBody+1))
	if err != nil {
		return nil, &EmbedError{Op: "response", StatusCode: resp.StatusCode, Body: clip(raw), Err: err}
	}
	if int64(len(raw)) > o.maxBody {
		return nil, &EmbedError{Op: "response", StatusCode: resp.StatusCode, Body: clip(raw),
			Reason: fmt.Sprintf("body longer than %d bytes", o.maxBody)}
	}
	var r ollamaResponse
	decErr := json.Unmarshal(raw, &r)
	if resp.StatusCode != http.StatusOK {
		reason := http.StatusText(resp.StatusCode)
		if decErr == nil && r.Error != "" {
			reason = r.Error
		}
		return nil, &EmbedError{Op: "status", StatusCode: resp.StatusCode, Body: clip(raw), Reason: reason}
	}
	if decErr != nil {
		return nil, &EmbedError{Op: "decode", StatusCode: resp.StatusCode, Body: clip(raw), Err: decErr}
	}
	if r.Error != "" {
		return nil, &EmbedError{Op: "status", StatusCode: resp.StatusCode, Body: clip(raw), Reason: r.Error}
	}
	if len(r.Embeddings) != len(texts) {
		return nil, &EmbedError{Op: "response", StatusCode: resp.StatusCode, Body: clip(raw),
			Reason: fmt.Sprintf("%d embeddings for %d inputs", len(r.Embeddings), len(texts))}
	}
	vecs := make([][]float32, len(r.Embeddings))
	for i, e := range r.Embeddings {
		v := make([]float32, len(e))
		for j, x := range e {
			f := float32(x)
			if math.IsNaN(x) || math.IsInf(float64(f), 0) {
				return nil, &EmbedError{Op: "response", StatusCode: resp.StatusCode,
					Reason: fmt.Sprintf("embedding %d has a non-finite component at %d", i, j)}
			}
			v[j] = f
		}
		vecs[i] = v
	}
	return vecs, nil
}

func clip(b []byte) []byte {
	if len(b) > maxOllamaErrorBodyBytes {
		b = b[:maxOllamaErrorBodyBytes]
	}
	return bytes.Clone(b)
}
