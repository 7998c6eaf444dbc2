package pipeline_test

import (
	"errors"
	"fmt"

	"github.com/candorkit/candor/examples/builder/internal/pipeline"
	"github.com/candorkit/candor/examples/builder/internal/secrets"
	"github.com/candorkit/candor/n8n"
)

// A workflow tested with the sandbox credential goes to production with the
// credential of the same name without "-sandbox".
func ExampleResolveCredentials() {
	wf := &n8n.Workflow{Name: "Order relay", Nodes: []n8n.Node{{
		Name: "Confirm order", Type: "n8n-nodes-base.httpRequest",
		Credentials: map[string]n8n.CredentialRef{"httpHeaderAuth": {Name: "Orders API-sandbox"}},
	}}}
	instance := []n8n.Credential{
		{ID: "11", Name: "Orders API-sandbox", Type: "httpHeaderAuth"},
		{ID: "12", Name: "Orders API", Type: "httpHeaderAuth"},
	}
	for _, env := range []secrets.Environment{secrets.Sandbox, secrets.Production} {
		out, err := pipeline.ResolveCredentials(wf, instance, env)
		if err != nil {
			fmt.Println(err)
			continue
		}
		ref := out.Nodes[0].Credentials["httpHeaderAuth"]
		fmt.Printf("%s: %s (id %s)\n", env, ref.Name, ref.ID)
	}
	// A production name is refused in the sandbox.
	wf.Nodes[0].Credentials["httpHeaderAuth"] = n8n.CredentialRef{Name: "Orders API"}
	_, err := pipeline.ResolveCredentials(wf, instance, secrets.Sandbox)
	var ce *pipeline.CredentialError
	if errors.As(err, &ce) {
		fmt.Println("BLOCKED:", ce.Names()[0])
	}
	// Output:
	// sandbox: Orders API-sandbox (id 11)
	// production: Orders API (id 12)
	// BLOCKED: Orders API (httpHeaderAuth: refused in the sandbox: the name does not end in -sandbox)
}
