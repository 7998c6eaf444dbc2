package generate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/candorkit/candor/internal/httpx"
)

// Generator produces one workflow definition for a prompt.
type Generator interface {
	// Generate returns the workflow JSON object.
	Generate(ctx context.Context, prompt string) (json.RawMessage, error)
	// Describe says where workflows come from, for the progress output.
	Describe() string
}

// Defaults for Ollama.
const (
	DefaultOllamaURL = "http://127.0.0.1:11434"
	DefaultModel     = "llama3.1:8b"
	DefaultTimeout   = 120 * time.Second
	// MaxBody bounds an Ollama answer and a workflow file.
	MaxBody = 8 << 20
)

// Sentinel errors; see the package documentation.
var (
	ErrIncomplete = errors.New("generate: the model did not finish its reply")
	ErrTooLarge   = errors.New("generate: body larger than 8 MiB")
)

// OllamaError is a non-200 answer, or a 200 that is not the documented object.
type OllamaError struct {
	Status  int
	Message string // Ollama's {"error": …}
	Body    string // bounded body
}

func (e *OllamaError) Error() string {
	if e.Message != "" {
		return fmt.Sprintf("generate: ollama answered HTTP %d: %s", e.Status, e.Message)
	}
	return fmt.Sprintf("generate: ollama answered HTTP %d with an unusable body (%d bytes)", e.Status, len(e.Body))
}

// Ollama generates with a local model through Ollama's /api/generate.
type Ollama struct {
	BaseURL    string        // default DefaultOllamaURL
	Model      string        // default DefaultModel
	Timeout    time.Duration // whole request, default DefaultTimeout
	HTTPClient *http.Client  // default http.DefaultClient (the timeout comes from the context)
}

func (o Ollama) base() string {
	if o.BaseURL == "" {
		return DefaultOllamaURL
	}
	return strings.TrimRight(o.BaseURL, "/")
}

func (o Ollama) model() string {
	if o.Model == "" {
		return DefaultModel
	}
	return o.Model
}

// Describe implements Generator.
func (o Ollama) Describe() string { return fmt.Sprintf("ollama %s at %s", o.model(), o.base()) }

type generateRequest struct {
	Model  string `json:"model"`
	Prompt string `json:"prompt"`
	Stream bool   `json:"stream"`
}

type generateResponse struct {
	Model      string  `json:"model"`
	Response   *string `json:"response"`
	Done       bool    `json:"done"`
	DoneReason string  `json:"done_reason"`
}

// Generate implements Generator.
func (o Ollama) Generate(ctx context.Context, prompt string) (json.RawMessage, error) {
	reply, err := o.Complete(ctx, prompt)
	if err != nil {
		return nil, err
	}
	return ExtractWorkflow([]byte(reply))
}

// Complete returns the model's raw reply text.
func (o Ollama) Complete(ctx context.Context, prompt string) (string, error) {
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	body, _ := json.Marshal(generateRequest{Model: o.model(), Prompt: prompt, Stream: false})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.base()+"/api/generate", bytes.NewReader(body))
	if err != nil {
		return "", fmt.Errorf("generate: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	client := httpx.NoRedirectClient(o.HTTPClient)
	resp, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("generate: ollama %s: %w", o.model(), err)
	}
	defer resp.Body.Close()
	raw, err := httpx.ReadAll(resp.Body, MaxBody)
	if errors.Is(err, httpx.ErrTooLarge) {
		return "", fmt.Errorf("%w: ollama answer", ErrTooLarge)
	}
	if err != nil {
		return "", fmt.Errorf("generate: read ollama answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		e := &OllamaError{Status: resp.StatusCode, Body: evidence(raw)}
		var msg struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(raw, &msg) == nil {
			e.Message = msg.Error
		}
		return "", e
	}
	var gr generateResponse
	if err := json.Unmarshal(raw, &gr); err != nil || gr.Response == nil {
		return "", &OllamaError{Status: resp.StatusCode, Message: "answer is not a generate response object", Body: evidence(raw)}
	}
	if !gr.Done || gr.DoneReason == "length" {
		return "", fmt.Errorf("%w (done=%t, done_reason=%q, %d characters)", ErrIncomplete, gr.Done, gr.DoneReason, len(*gr.Response))
	}
	return *gr.Response, nil
}

func evidence(raw []byte) string {
	if len(raw) > maxEvidence {
		raw = raw[:maxEvidence]
	}
	return string(raw)
}

// File reads the workflow from a file instead of asking a model.
type File struct{ Path string }

// Describe implements Generator.
func (f File) Describe() string {
	return "file:" + f.Path + " (no model: the workflow is read from this file)"
}

// Generate implements Generator; the prompt is ignored.
func (f File) Generate(_ context.Context, _ string) (json.RawMessage, error) {
	fh, err := os.Open(f.Path)
	if err != nil {
		return nil, fmt.Errorf("generate: %w", err)
	}
	defer fh.Close()
	raw, err := io.ReadAll(io.LimitReader(fh, MaxBody+1))
	if err != nil {
		return nil, fmt.Errorf("generate: read %s: %w", f.Path, err)
	}
	if len(raw) > MaxBody {
		return nil, fmt.Errorf("%w: %s", ErrTooLarge, f.Path)
	}
	wf, err := ExtractWorkflow(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Path, err)
	}
	return wf, nil
}

// FromFlag returns the generator a -generator value names: "" or "ollama"
// → o; "file:PATH" → File.
func FromFlag(value string, o Ollama) (Generator, error) {
	switch {
	case value == "" || value == "ollama":
		return o, nil
	case strings.HasPrefix(value, "file:") && len(value) > len("file:"):
		return File{Path: strings.TrimPrefix(value, "file:")}, nil
	}
	return nil, fmt.Errorf("generate: -generator %q: want \"ollama\" or \"file:PATH\"", value)
}
