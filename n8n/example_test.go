package n8n_test

import (
	"fmt"

	"github.com/candorkit/candor/n8n"
)

func ExampleValidate() {
	wf, err := n8n.ParseWorkflow([]byte(`{
	  "name": "availability",
	  "nodes": [
	    {"id": "0f5c2f7e-8f0a-4d55-9a43-2f5b8e3c1a01", "name": "Webhook",
	     "type": "n8n-nodes-base.webhook", "typeVersion": 2, "position": [0, 0],
	     "parameters": {"path": "availability", "httpMethod": "POST"}},
	    {"id": "not-a-uuid", "name": "Answer",
	     "type": "n8n-nodes-base.respondToWebhook", "typeVersion": 1.1, "position": [220],
	     "parameters": {}}
	  ],
	  "connections": {
	    "Webhook": {"main": [[{"node": "Reply", "type": "main", "index": 0}]]}
	  }
	}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range n8n.Validate(wf) {
		fmt.Println(p)
	}
	// Output:
	// $.connections["Webhook"]["main"][0][0].node: target node "Reply" does not exist
	// $.nodes[0].webhookId: a n8n-nodes-base.webhook node needs a webhookId, else its production path changes with the workflow id
	// $.nodes[1].id: "not-a-uuid" is not a UUID
	// $.nodes[1].position: must be [x, y], not an array
}
