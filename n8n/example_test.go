package n8n_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/candorkit/candor/n8n"
	"github.com/candorkit/candor/reply"
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

// New takes functional options and does no I/O; an invalid option is an
// error, never ignored.
func ExampleNew() {
	c, err := n8n.New("http://127.0.0.1:5678", "n8n_api_key",
		n8n.WithTimeout(30*time.Second),
		n8n.WithMaxResponseBytes(8<<20),
		n8n.WithLogger(nil)) // nil: nothing is logged
	fmt.Println(c, err)
	_, err = n8n.New("http://127.0.0.1:5678", "n8n_api_key", n8n.WithTimeout(0))
	fmt.Println(err)
	// Output:
	// n8n.Client(http://127.0.0.1:5678, key redacted) <nil>
	// n8n: WithTimeout(0s): the timeout must be positive
}

// Workflows ranges over every workflow, reading a page at a time; a listing
// that cannot finish ends with an error.
func ExampleClient_Workflows() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("cursor") == "" {
			fmt.Fprint(w, `{"data":[{"id":"a1","name":"availability"}],"nextCursor":"p2"}`)
			return
		}
		fmt.Fprint(w, `{"data":[{"id":"b2","name":"reorder"}],"nextCursor":null}`)
	}))
	defer srv.Close()
	c, err := n8n.New(srv.URL, "n8n_api_key")
	if err != nil {
		fmt.Println(err)
		return
	}
	for wf, err := range c.Workflows(context.Background(), n8n.ListWorkflowsOptions{PageSize: 1}) {
		if err != nil {
			fmt.Println("incomplete:", err)
			return
		}
		fmt.Println(wf.ID, wf.Name)
	}
	// Output:
	// a1 availability
	// b2 reorder
}

// IsStatus tells n8n's answers apart; the *StatusError keeps the evidence.
func ExampleIsStatus() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"message":"Not Found"}`+"\n")
	}))
	defer srv.Close()
	c, err := n8n.New(srv.URL, "n8n_api_key")
	if err != nil {
		fmt.Println(err)
		return
	}
	_, err = c.GetWorkflow(context.Background(), "gone")
	fmt.Println(n8n.IsStatus(err, http.StatusNotFound))
	var se *n8n.StatusError
	if errors.As(err, &se) {
		fmt.Println(se.StatusCode, se.Message)
	}
	fmt.Println(err)
	// Output:
	// true
	// 404 Not Found
	// n8n: GET /api/v1/workflows/gone: HTTP 404 Not Found: Not Found
}

// CallWebhook is package reply's webhook client: only a 200 carrying
// exactly {"answer","escalate"} is a reply.
func ExampleCallWebhook() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(reply.SubjectTokenHeader) == "" {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		fmt.Fprint(w, `{"answer":"12 in stock","escalate":false}`)
	}))
	defer srv.Close()
	r, err := n8n.CallWebhook(context.Background(), srv.URL+"/webhook/availability", "subject-token",
		map[string]string{"q": "stock of 7305?"})
	fmt.Println(r.Answer, r.Escalate, err)
	_, err = n8n.CallWebhook(context.Background(), srv.URL+"/webhook/availability", "", nil)
	fmt.Println(errors.Is(err, reply.ErrNoToken))
	// Output:
	// 12 in stock false <nil>
	// true
}

// Deploy with the state the caller read, and (on n8n 2.x) a Session to
// see n8n's publication record; the Report says what is on the instance
// whatever happened.
func ExampleDeploy() {
	ctx := context.Background()
	c, err := n8n.New("http://127.0.0.1:5678", "n8n_api_key")
	if err != nil {
		return
	}
	s, err := c.Login(ctx, "owner@example.test", "Password-1")
	if err != nil {
		return
	}
	read, err := c.GetWorkflow(ctx, "KqL0xTKw0Hc3Vt2r")
	if err != nil {
		return
	}
	next := read.Clone()
	// … edit next …
	expect := n8n.SnapshotOf(read)
	on := true
	rep, err := n8n.Deploy(ctx, c, read.ID, next, n8n.DeployOptions{Active: &on, Expect: &expect, Session: s})
	switch {
	case err == nil:
		fmt.Println("live:", rep.Live, "offline for", rep.Downtime)
	case errors.Is(err, n8n.ErrConflict):
		fmt.Println("someone else changed it; nothing overwritten:", rep.State)
	default:
		fmt.Println("failed, the workflow is", rep.State, err)
	}
}
