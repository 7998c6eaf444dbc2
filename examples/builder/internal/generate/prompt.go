package generate

import (
	"fmt"
	"strings"
)

// Credential is a credential that exists in the target n8n instance.
type Credential struct {
	Name string // exact name, e.g. "Slack-sandbox"
	Type string // n8n credential type, e.g. "slackApi"
}

// PromptInput is what the model is told about one automation.
type PromptInput struct {
	Name           string
	Spec           string
	Infrastructure string
	Credentials    []Credential
}

// First node position and spacing stated by the prompt.
const (
	FirstX  = 250
	StepX   = 200
	NodeY   = 300
	noCreds = "There are no credentials in this n8n instance: use no node that needs one."
)

// BuildPrompt states everything the model must respect: the specification,
// the infrastructure, the exact credential names and types, "active": false,
// node positions 200 px apart from x = 250, a fresh UUID per node, and no
// stubs. The model is asked for one JSON object and nothing else.
func BuildPrompt(in PromptInput) string {
	var b strings.Builder
	b.WriteString("You write n8n workflow definitions. Answer with exactly one JSON object and nothing else: no prose, no Markdown fences, no comments.\n\n")
	fmt.Fprintf(&b, "Automation name: %s\n\n", oneLine(in.Name))
	b.WriteString("Specification (what the workflow must do):\n")
	b.WriteString(strings.TrimSpace(in.Spec) + "\n\n")
	b.WriteString("Infrastructure (the systems, endpoints and conventions it runs against):\n")
	if infra := strings.TrimSpace(in.Infrastructure); infra != "" {
		b.WriteString(infra + "\n\n")
	} else {
		b.WriteString("Nothing beyond the n8n instance itself.\n\n")
	}
	b.WriteString("Credentials (use these exact names and types and no others; reference one in a node as \"credentials\": {\"<type>\": {\"name\": \"<name>\"}}):\n")
	if len(in.Credentials) == 0 {
		b.WriteString(noCreds + "\n\n")
	} else {
		for _, c := range in.Credentials {
			fmt.Fprintf(&b, "- name %q, type %q\n", c.Name, c.Type)
		}
		b.WriteString("\n")
	}
	b.WriteString("Rules:\n")
	fmt.Fprintf(&b, "1. The object has exactly the keys \"name\" (%q), \"nodes\", \"connections\", \"settings\" ({\"executionOrder\": \"v1\"}) and \"active\": false.\n", oneLine(in.Name))
	b.WriteString("2. Every node has \"id\" (a freshly generated UUID, different for every node), \"name\" (unique), \"type\", \"typeVersion\", \"position\" and \"parameters\". A Webhook node also has \"webhookId\" (another fresh UUID).\n")
	fmt.Fprintf(&b, "3. Positions are [x, %d] with x = %d for the first node and %d px more for each next node in flow order: [%d, %d], [%d, %d], [%d, %d], ...\n",
		NodeY, FirstX, StepX, FirstX, NodeY, FirstX+StepX, NodeY, FirstX+2*StepX, NodeY)
	b.WriteString("4. The first node is the trigger. \"connections\" maps each source node's name to {\"main\": [[{\"node\": \"<target node name>\", \"type\": \"main\", \"index\": 0}]]}.\n")
	b.WriteString("5. No stubs: every node does real work the specification asks for. No placeholder, NoOp or disabled nodes, no TODO, no \"...\", no example values, and no URL, host or credential that is not given above.\n")
	return b.String()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
