package retrieval

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// ollamaServer answers POST /api/embed the way Ollama's API documentation
// describes: {"model","embeddings":[[...]],"total_duration",...} on success,
// {"error": "..."} with a 4xx/5xx status on failure. Each embedding here is
// (len(text), 1, 0) so tests can check order.
func ollamaServer(t *testing.T, handle func(w http.ResponseWriter, req ollamaRequest) bool) (*httptest.Server, *[]ollamaRequest) {
	t.Helper()
	var seen []ollamaRequest
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/api/embed" || r.Header.Get("Content-Type") != "application/json" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		var req ollamaRequest
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

func TestOllamaEmbed(t *testing.T) {
	srv, seen := ollamaServer(t, nil)
	e, err := NewOllamaEmbedder(srv.URL+"/", "nomic-embed-text", WithOllamaBatch(2))
	if err != nil {
		t.Fatal(err)
	}
	var _ Embedder = e
	vecs, err := e.Embed(t.Context(), []string{"a", "bb", "ccc"})
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs) != 3 || vecs[0][0] != 1 || vecs[1][0] != 2 || vecs[2][0] != 3 || len(vecs[2]) != 3 {
		t.Fatalf("vectors %v", vecs)
	}
	if len(*seen) != 2 || len((*seen)[0].Input) != 2 || (*seen)[0].Truncate || (*seen)[1].Input[0] != "ccc" {
		t.Fatalf("requests %+v: want two batches, truncate false", *seen)
	}
}

func TestOllamaFailuresAreErrors(t *testing.T) {
	cases := []struct {
		name   string
		model  string
		handle func(w http.ResponseWriter, req ollamaRequest) bool
		opts   []OllamaOption
		check  func(*EmbedError) bool
	}{
		{"unknown model", "nope", nil, nil, func(e *EmbedError) bool {
			return e.StatusCode == 404 && strings.Contains(e.Reason, "not found") && strings.Contains(string(e.Body), "try pulling")
		}},
		{"server error", "nomic-embed-text", func(w http.ResponseWriter, _ ollamaRequest) bool {
			w.WriteHeader(500)
			_, _ = io.WriteString(w, `{"error":"input length exceeds the context length"}`)
			return true
		}, nil, func(e *EmbedError) bool { return e.StatusCode == 500 && strings.Contains(e.Reason, "context length") }},
		{"empty 200 body", "nomic-embed-text", func(w http.ResponseWriter, _ ollamaRequest) bool { return true }, nil,
			func(e *EmbedError) bool { return e.Op == "decode" }},
		{"fewer embeddings", "nomic-embed-text", func(w http.ResponseWriter, _ ollamaRequest) bool {
			_, _ = io.WriteString(w, `{"model":"nomic-embed-text","embeddings":[[1,2,3]]}`)
			return true
		}, nil, func(e *EmbedError) bool {
			return e.Op == "response" && strings.Contains(e.Reason, "1 embeddings for 2 inputs")
		}},
		{"ragged dims", "nomic-embed-text", func(w http.ResponseWriter, _ ollamaRequest) bool {
			_, _ = io.WriteString(w, `{"model":"nomic-embed-text","embeddings":[[1,2,3],[1,2]]}`)
			return true
		}, nil, func(e *EmbedError) bool { return e.Op == "response" }},
		{"wrong dims", "nomic-embed-text", nil, []OllamaOption{WithOllamaDimensions(768)},
			func(e *EmbedError) bool { return e.Op == "response" && strings.Contains(e.Reason, "want 768") }},
		{"overflowing float32", "nomic-embed-text", func(w http.ResponseWriter, _ ollamaRequest) bool {
			_, _ = io.WriteString(w, `{"model":"nomic-embed-text","embeddings":[[1e39,0],[1,0]]}`)
			return true
		}, nil, func(e *EmbedError) bool { return strings.Contains(e.Reason, "non-finite") }},
		{"response over the bound", "nomic-embed-text", nil, []OllamaOption{WithOllamaMaxResponseBytes(64)},
			func(e *EmbedError) bool {
				return strings.Contains(e.Reason, "longer than 64 bytes") && len(e.Body) <= MaxErrorBody
			}},
		{"error field with 200", "nomic-embed-text", func(w http.ResponseWriter, _ ollamaRequest) bool {
			_, _ = io.WriteString(w, `{"error":"busy"}`)
			return true
		}, nil, func(e *EmbedError) bool { return e.Reason == "busy" }},
	}
	for _, c := range cases {
		srv, _ := ollamaServer(t, c.handle)
		e, err := NewOllamaEmbedder(srv.URL, c.model, c.opts...)
		if err != nil {
			t.Fatal(err)
		}
		vecs, err := e.Embed(t.Context(), []string{"a", "bb"})
		var ee *EmbedError
		if vecs != nil || !errors.Is(err, ErrEmbed) || !errors.As(err, &ee) || !c.check(ee) {
			t.Errorf("%s: vecs %v, err %#v", c.name, vecs, err)
		}
	}
}

func TestOllamaTimeoutAndCancel(t *testing.T) {
	release := make(chan struct{})
	srv, _ := ollamaServer(t, func(w http.ResponseWriter, _ ollamaRequest) bool {
		<-release
		return true
	})
	defer close(release)
	e, err := NewOllamaEmbedder(srv.URL, "nomic-embed-text", WithOllamaTimeout(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	vecs, err := e.Embed(t.Context(), []string{"a"})
	if vecs != nil || !errors.Is(err, ErrEmbed) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("hung server: vecs %v, err %v", vecs, err)
	}
}

func TestOllamaConfig(t *testing.T) {
	for _, u := range []string{"ftp://h", "http://user:pw@h", "http://h?x=1", "http://", ":"} {
		if _, err := NewOllamaEmbedder(u, "m"); err == nil {
			t.Errorf("base URL %q accepted", u)
		} else if strings.Contains(err.Error(), "pw") {
			t.Errorf("error leaks credentials: %v", err)
		}
	}
	if _, err := NewOllamaEmbedder("", " "); err == nil {
		t.Error("blank model accepted")
	}
	e, err := NewOllamaEmbedder("", "m")
	if err != nil || e.endpoint != "http://127.0.0.1:11434/api/embed" {
		t.Fatalf("default endpoint %q, %v", e.endpoint, err)
	}
	if _, err := e.Embed(t.Context(), nil); !errors.Is(err, ErrEmbed) {
		t.Errorf("no texts: %v", err)
	}
}
