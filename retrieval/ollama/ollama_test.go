package ollama

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// server answers POST /api/embed the way Ollama's API documentation
// describes: {"model","embeddings":[[...]],"total_duration",...} on success,
// {"error": "..."} with a 4xx/5xx status on failure. Each embedding here is
// (len(text), 1, 0) so tests can check order. httptest stands in for the
// server because the tests need its faults, which a real one cannot be made
// to produce.
func server(t *testing.T, handle func(w http.ResponseWriter, req request) bool) (*httptest.Server, *[]request) {
	t.Helper()
	var seen []request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/api/embed") || r.Header.Get("Content-Type") != "application/json" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		var req request
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"error":"invalid request"}`)
			return
		}
		seen = append(seen, req)
		if handle != nil && handle(w, req) {
			return
		}
		if req.Model != "nomic-embed-text" {
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"error":"model \"`+req.Model+`\" not found, try pulling it first"}`)
			return
		}
		embs := make([][]float64, len(req.Input))
		for i, in := range req.Input {
			embs[i] = []float64{float64(len(in)), 1, 0}
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_ = json.NewEncoder(w).Encode(map[string]any{"model": req.Model, "embeddings": embs,
			"total_duration": 14143917, "load_duration": 1019500, "prompt_eval_count": 8})
	}))
	t.Cleanup(srv.Close)
	return srv, &seen
}

func TestEmbedBatches(t *testing.T) {
	srv, seen := server(t, nil)
	e, err := New(srv.URL+"/", "nomic-embed-text", WithBatch(2))
	require.NoError(t, err)
	assert.Equal(t, "nomic-embed-text", e.Model())
	vecs, err := e.Embed(t.Context(), []string{"a", "bb", "ccc"})
	require.NoError(t, err)
	assert.Equal(t, [][]float32{{1, 1, 0}, {2, 1, 0}, {3, 1, 0}}, vecs)
	require.Len(t, *seen, 2)
	assert.Equal(t, []string{"a", "bb"}, (*seen)[0].Input)
	assert.Equal(t, []string{"ccc"}, (*seen)[1].Input)
	assert.False(t, (*seen)[0].Truncate, "truncate is off by default")
	assert.Zero(t, (*seen)[0].Dimensions)
}

func TestTruncateAndDimensionsAreSent(t *testing.T) {
	srv, seen := server(t, func(w http.ResponseWriter, req request) bool {
		_, _ = io.WriteString(w, `{"embeddings":[[1,2]]}`)
		return true
	})
	e, err := New(srv.URL, "nomic-embed-text", WithTruncate(true), WithDimensions(2))
	require.NoError(t, err)
	vecs, err := e.Embed(t.Context(), []string{"a"})
	require.NoError(t, err)
	assert.Equal(t, [][]float32{{1, 2}}, vecs)
	require.Len(t, *seen, 1)
	assert.True(t, (*seen)[0].Truncate)
	assert.Equal(t, 2, (*seen)[0].Dimensions)
}

func TestFailuresAreErrors(t *testing.T) {
	cases := []struct {
		name   string
		model  string
		handle func(w http.ResponseWriter, req request) bool
		opts   []Option
		check  func(t *testing.T, err error)
	}{
		{"unknown model", "nope", nil, nil, func(t *testing.T, err error) {
			var se *StatusError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, 404, se.StatusCode)
			assert.Contains(t, se.Message, "not found")
			assert.Contains(t, string(se.Body), "try pulling")
			assert.NotNil(t, se.Header)
			assert.Contains(t, err.Error(), "ollama: HTTP 404 Not Found: ")
		}},
		{"server error", "nomic-embed-text", func(w http.ResponseWriter, _ request) bool {
			w.WriteHeader(500)
			_, _ = io.WriteString(w, "{\"error\":\"input length exceeds the context length\"}\n\n")
			return true
		}, nil, func(t *testing.T, err error) {
			var se *StatusError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, 500, se.StatusCode)
			assert.Contains(t, se.Message, "context length")
			assert.False(t, strings.HasSuffix(err.Error(), "\n"), "no trailing white space in %q", err.Error())
		}},
		{"empty 200 body", "nomic-embed-text", func(w http.ResponseWriter, _ request) bool { return true }, nil,
			func(t *testing.T, err error) {
				var re *ResponseError
				require.ErrorAs(t, err, &re)
				assert.Contains(t, re.Reason, "JSON")
			}},
		{"fewer embeddings", "nomic-embed-text", func(w http.ResponseWriter, _ request) bool {
			_, _ = io.WriteString(w, `{"model":"nomic-embed-text","embeddings":[[1,2,3]]}`)
			return true
		}, nil, func(t *testing.T, err error) {
			var re *ResponseError
			require.ErrorAs(t, err, &re)
			assert.Contains(t, re.Reason, "1 embeddings for 2 inputs")
		}},
		{"ragged dims", "nomic-embed-text", func(w http.ResponseWriter, _ request) bool {
			_, _ = io.WriteString(w, `{"model":"nomic-embed-text","embeddings":[[1,2,3],[1,2]]}`)
			return true
		}, nil, func(t *testing.T, err error) {
			var re *ResponseError
			require.ErrorAs(t, err, &re)
			assert.Contains(t, re.Reason, "vector 1 has 2 dimensions, want 3")
		}},
		{"wrong dims", "nomic-embed-text", nil, []Option{WithDimensions(768)}, func(t *testing.T, err error) {
			var re *ResponseError
			require.ErrorAs(t, err, &re)
			assert.Contains(t, re.Reason, "want 768")
		}},
		{"overflowing float32", "nomic-embed-text", func(w http.ResponseWriter, _ request) bool {
			_, _ = io.WriteString(w, `{"model":"nomic-embed-text","embeddings":[[1e39,0],[1,0]]}`)
			return true
		}, nil, func(t *testing.T, err error) {
			var re *ResponseError
			require.ErrorAs(t, err, &re)
			assert.Contains(t, re.Reason, "finite")
		}},
		{"error field with 200", "nomic-embed-text", func(w http.ResponseWriter, _ request) bool {
			_, _ = io.WriteString(w, `{"error":"busy"}`)
			return true
		}, nil, func(t *testing.T, err error) {
			var re *ResponseError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, "error field: busy", re.Reason)
		}},
		{"redirect", "nomic-embed-text", func(w http.ResponseWriter, _ request) bool {
			http.Redirect(w, &http.Request{}, "http://127.0.0.1:1/api/embed", http.StatusTemporaryRedirect)
			return true
		}, nil, func(t *testing.T, err error) {
			var se *StatusError
			require.ErrorAs(t, err, &se, "a redirect is not followed")
			assert.Equal(t, http.StatusTemporaryRedirect, se.StatusCode)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv, _ := server(t, c.handle)
			e, err := New(srv.URL, c.model, c.opts...)
			require.NoError(t, err)
			vecs, err := e.Embed(t.Context(), []string{"a", "bb"})
			assert.Nil(t, vecs)
			require.ErrorIs(t, err, ErrEmbed)
			c.check(t, err)
		})
	}
}

// The response cap is exact: a body of exactly the cap is read, one byte
// more is refused, and no more than the cap plus one byte is kept.
func TestMaxResponseBytesIsExact(t *testing.T) {
	const body = `{"embeddings":[[1,2,3]]}`
	srv, _ := server(t, func(w http.ResponseWriter, _ request) bool {
		_, _ = io.WriteString(w, body)
		return true
	})
	e, err := New(srv.URL, "nomic-embed-text", WithMaxResponseBytes(int64(len(body))))
	require.NoError(t, err)
	_, err = e.Embed(t.Context(), []string{"a"})
	require.NoError(t, err)

	e, err = New(srv.URL, "nomic-embed-text", WithMaxResponseBytes(int64(len(body)-1)))
	require.NoError(t, err)
	_, err = e.Embed(t.Context(), []string{"a"})
	var re *ResponseError
	require.ErrorAs(t, err, &re)
	assert.Contains(t, re.Reason, "longer than 23 bytes")
	assert.LessOrEqual(t, len(re.Body), len(body)-1)
}

func TestTimeoutAndURLFreeErrors(t *testing.T) {
	release := make(chan struct{})
	srv, _ := server(t, func(w http.ResponseWriter, _ request) bool {
		<-release
		return true
	})
	defer close(release)
	e, err := New(srv.URL+"/secret-path", "nomic-embed-text", WithTimeout(20*time.Millisecond))
	require.NoError(t, err)
	vecs, err := e.Embed(t.Context(), []string{"a"})
	assert.Nil(t, vecs)
	require.ErrorIs(t, err, ErrEmbed)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	var re *RequestError
	assert.ErrorAs(t, err, &re)
	assert.NotContains(t, err.Error(), "secret-path")
	assert.NotContains(t, err.Error(), srv.URL)
}

type countingTransport struct {
	n    atomic.Int32
	base http.RoundTripper
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.base.RoundTrip(r)
}

func TestWithHTTPClientIsUsed(t *testing.T) {
	srv, _ := server(t, nil)
	tr := &countingTransport{base: http.DefaultTransport}
	e, err := New(srv.URL, "nomic-embed-text", WithHTTPClient(&http.Client{Transport: tr}), WithBatch(1))
	require.NoError(t, err)
	_, err = e.Embed(t.Context(), []string{"a", "b"})
	require.NoError(t, err)
	assert.Equal(t, int32(2), tr.n.Load())
}

func TestNewValidates(t *testing.T) {
	for _, u := range []string{"ftp://h", "http://user:pw@h", "http://h?x=1", "http://h#f", "http://", ":", "mailto:x"} {
		_, err := New(u, "m")
		if assert.Error(t, err, "base URL %q", u) {
			assert.NotContains(t, err.Error(), "pw")
		}
	}
	_, err := New("", " ")
	assert.Error(t, err, "blank model")
	for name, opt := range map[string]Option{
		"nil client":     WithHTTPClient(nil),
		"zero timeout":   WithTimeout(0),
		"batch 0":        WithBatch(0),
		"batch too big":  WithBatch(MaxBatch + 1),
		"cap 0":          WithMaxResponseBytes(0),
		"dims negative":  WithDimensions(-1),
		"dims too large": WithDimensions(MaxDimensions + 1),
	} {
		_, err := New("", "m", opt)
		assert.Error(t, err, name)
	}
	e, err := New("", "m")
	require.NoError(t, err)
	assert.Equal(t, "http://127.0.0.1:11434/api/embed", e.endpoint)
	_, err = e.Embed(t.Context(), nil)
	assert.ErrorIs(t, err, ErrEmbed, "no texts")
}
