package secret_test

import (
	"fmt"

	"github.com/candorkit/candor/internal/secret"
)

func ExampleSecret() {
	key := secret.New("n8n-api-key-0123")
	fmt.Printf("%v %q %#v\n", key, key, key)
	// Output: [REDACTED] "[REDACTED]" secret.Secret("[REDACTED]")
}

func ExampleRedact() {
	body := `{"error":"invalid_grant","echo":"client_secret=p%2Fss%2Bw%26rd"}`
	fmt.Println(secret.Redact(body, "p/ss+w&rd", "grant"))
	// Output: {"error":"invalid_grant","echo":"client_secret=[REDACTED]"}
}
