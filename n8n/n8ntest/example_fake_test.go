package n8ntest_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/candorkit/candor/n8n"
	"github.com/candorkit/candor/n8n/n8ntest"
)

// exampleT stands in for the *testing.T a test passes (an Example has
// none): it runs the cleanups when the Example ends and panics on a
// failure.
type exampleT struct {
	testing.TB // nil: only the methods below are called
	dir        string
	cleanups   []func()
}

func (e *exampleT) Helper()                           {}
func (e *exampleT) Cleanup(f func())                  { e.cleanups = append(e.cleanups, f) }
func (e *exampleT) Fatal(args ...any)                 { panic(fmt.Sprint(args...)) }
func (e *exampleT) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }
func (e *exampleT) TempDir() string                   { return e.dir }
func (e *exampleT) finish() {
	for i := len(e.cleanups) - 1; i >= 0; i-- {
		e.cleanups[i]()
	}
}

// A deploy on the Fake of n8n 2.x: the workflow goes live, its webhook
// answers from the Code node, and a publish refused on purpose is rolled
// back. In a test, pass t to StartFake.
func ExampleStartFake() {
	dir, cleanup := tempDir()
	defer cleanup()
	t := &exampleT{dir: dir}
	defer t.finish()
	ctx := context.Background()

	inst := n8ntest.StartFake(t, n8ntest.Edition2, n8ntest.Options{})
	c, err := n8n.New(inst.BaseURL, inst.APIKey)
	if err != nil {
		panic(err)
	}
	s, err := c.Login(ctx, inst.Email, inst.Password) // for n8n 2.x's publication record
	if err != nil {
		panic(err)
	}
	wf, err := n8n.ParseWorkflow([]byte(stockWorkflow))
	if err != nil {
		panic(err)
	}
	created, err := c.CreateWorkflow(ctx, wf)
	if err != nil {
		panic(err)
	}
	on := true
	rep, err := n8n.Deploy(ctx, c, created.ID, wf, n8n.DeployOptions{Active: &on, Session: s})
	fmt.Println(rep.State, rep.Live, err)
	r, err := n8n.CallWebhook(ctx, inst.BaseURL+"/webhook/stock", "subject-token", map[string]string{"text": "S10_1949"})
	fmt.Printf("%q %v\n", r.Answer, err)

	next := wf.Clone()
	next.Name = "Stock v2"
	inst.Fake.FailNext(n8ntest.OpPublish, 400, "refused on purpose")
	rep, _ = n8n.Deploy(ctx, c, created.ID, next, n8n.DeployOptions{Session: s})
	fmt.Println(rep.State)
	// Output:
	// deployed publication <nil>
	// "got S10_1949" <nil>
	// restored
}

const stockWorkflow = `{"name": "Stock", "settings": {"executionOrder": "v1"},
 "nodes": [
  {"id": "0b6f4d2e-5a51-4c3e-9a0e-1f2d3c4b5a61", "name": "Webhook", "type": "n8n-nodes-base.webhook",
   "typeVersion": 2, "position": [0, 0], "webhookId": "0b6f4d2e-5a51-4c3e-9a0e-1f2d3c4b5a64",
   "parameters": {"httpMethod": "POST", "path": "stock", "responseMode": "responseNode"}},
  {"id": "0b6f4d2e-5a51-4c3e-9a0e-1f2d3c4b5a62", "name": "Code", "type": "n8n-nodes-base.code",
   "typeVersion": 2, "position": [220, 0],
   "parameters": {"jsCode": "return [{json: {answer: 'got ' + $input.first().json.body.text, escalate: false}}];"}},
  {"id": "0b6f4d2e-5a51-4c3e-9a0e-1f2d3c4b5a63", "name": "Respond", "type": "n8n-nodes-base.respondToWebhook",
   "typeVersion": 1.1, "position": [440, 0], "parameters": {"respondWith": "firstIncomingItem"}}],
 "connections": {
  "Webhook": {"main": [[{"node": "Code", "type": "main", "index": 0}]]},
  "Code": {"main": [[{"node": "Respond", "type": "main", "index": 0}]]}}}`

func tempDir() (string, func()) {
	dir, err := os.MkdirTemp("", "n8ntest-example")
	if err != nil {
		panic(err)
	}
	return dir, func() { os.RemoveAll(dir) }
}
