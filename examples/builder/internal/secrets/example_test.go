package secrets_test

import (
	"context"
	"fmt"

	"github.com/candorkit/candor/examples/builder/internal/secrets"
)

func ExampleEnv() {
	env := map[string]string{
		"N8N_SANDBOX_URL":     "http://127.0.0.1:5678",
		"N8N_SANDBOX_API_KEY": "n8n_api_example",
	}
	src := secrets.Env{Lookup: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
	n, err := src.N8N(context.Background(), secrets.Sandbox)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(n.BaseURL, n.APIKey)
	fmt.Printf("%+v\n", n)

	_, err = src.N8N(context.Background(), secrets.Production)
	fmt.Println(err)
	// Output:
	// http://127.0.0.1:5678 [REDACTED]
	// {Env:sandbox BaseURL:http://127.0.0.1:5678 APIKey:[REDACTED] Email: Password:[REDACTED]}
	// secrets: environment lacks N8N_PRODUCTION_URL, N8N_PRODUCTION_API_KEY
}
