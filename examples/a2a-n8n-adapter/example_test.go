package main

import (
	"bytes"
	"fmt"
	"strings"
)

func Example_usage() {
	var b bytes.Buffer
	usage(&b)
	for _, line := range strings.Split(b.String(), "\n") {
		if strings.Contains(line, "required") {
			fmt.Println(strings.Fields(line)[0])
		}
	}
	// Output:
	// ADAPTER_AGENT_NAME
	// ADAPTER_AGENT_DESCRIPTION
	// ADAPTER_SKILL_ID
	// ADAPTER_SKILL_NAME
	// ADAPTER_SKILL_DESCRIPTION
	// ADAPTER_WEBHOOK_URL
	// ADAPTER_PUBLIC_URL
	// ADAPTER_OIDC_ISSUER
	// ADAPTER_OIDC_AUDIENCE
}
