package httpx_test

import (
	"errors"
	"fmt"
	"strings"

	"github.com/candorkit/candor/internal/httpx"
)

func ExampleReadAll() {
	body := strings.NewReader(strings.Repeat("x", 100))
	b, err := httpx.ReadAll(body, 16)
	fmt.Println(len(b), errors.Is(err, httpx.ErrTooLarge))
	// Output: 16 true
}

func ExampleStatusText() {
	fmt.Println(httpx.StatusText("n8n", 404, []byte("workflow not found\n")))
	// Output: n8n: HTTP 404 Not Found: workflow not found
}

func ExampleIsLoopback() {
	fmt.Println(httpx.IsLoopback("127.0.0.1:5678"), httpx.IsLoopback("n8n.example.com"))
	// Output: true false
}
