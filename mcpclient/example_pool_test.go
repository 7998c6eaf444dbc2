package mcpclient_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"golang.org/x/oauth2"

	"github.com/candorkit/candor/mcpclient"
	"github.com/candorkit/candor/mcpclient/mcptest"
)

// ExampleNewPool serves two users through one pool: each user's questions
// share that user's session, each question has its own budget, and the
// requests of a session carry only its user's token.
func ExampleNewPool() {
	tokens := map[string]string{"alice": "tok-alice", "bob": "tok-bob"}
	srv, err := mcptest.Start(mcptest.MCPGo, mcptest.WithBearerCheck(func(tok string) bool {
		return tok == tokens["alice"] || tok == tokens["bob"]
	}))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	ctx := context.Background()

	pool, err := mcpclient.NewPool(srv.URL, mcpclient.WithMaxSessions(100))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, user := range []string{"alice", "bob", "alice", "bob", "alice"} {
		// One Caller per question (an agent run), keyed by the verified subject.
		run, err := pool.Caller(mcpclient.Identity{
			Subject: user,
			Tokens:  oauth2.StaticTokenSource(&oauth2.Token{AccessToken: tokens[user]}),
		}, mcpclient.CallerOptions{Budget: mcpclient.Budget{MaxCalls: 1}})
		if err != nil {
			fmt.Println(err)
			return
		}
		got, err := mcpclient.CallJSON[map[string]string](ctx, run, "echo", map[string]string{"for": user})
		fmt.Println(got["for"], err)
	}
	fmt.Println("sessions:", pool.Sessions(), "initialize requests:", len(srv.Calls("initialize")))
	fmt.Println(pool.Close())
	// Output:
	// alice <nil>
	// bob <nil>
	// alice <nil>
	// bob <nil>
	// alice <nil>
	// sessions: 2 initialize requests: 2
	// <nil>
}

// ExampleClient_ListTools reads the server's tool list to its end; the
// complete list then gives the session its schemas, and a call whose
// arguments do not match is refused before it is sent.
func ExampleClient_ListTools() {
	order := mcptest.Tool{
		Name:        "order",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"qty":{"type":"integer","minimum":1}},"required":["qty"]}`),
		Handle: func(context.Context, json.RawMessage) (mcptest.Result, error) {
			return mcptest.Result{Text: "ordered"}, nil
		},
	}
	srv, err := mcptest.Start(mcptest.GoSDK, mcptest.WithTools(order), mcptest.WithToolsPageSize(5))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	ctx := context.Background()
	c, err := mcpclient.Dial(ctx, srv.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	fmt.Println("server:", c.Server().Name, "tools capability:", c.Server().Capabilities.Tools != nil)

	scan, err := c.ListTools(ctx, mcpclient.ListToolsOptions{})
	fmt.Println("tools:", len(scan.Items), "pages:", scan.Pages, "complete:", scan.Complete, err)

	_, err = c.Call(ctx, "order", map[string]int{"qty": 0})
	var se *mcpclient.SchemaError
	if errors.As(err, &se) {
		fmt.Println(mcpclient.Classify(err), se.Violations)
	}
	fmt.Println("calls sent:", len(srv.Calls("tools/call")))
	// Output:
	// server: mcptest-go-sdk tools capability: true
	// tools: 9 pages: 2 complete: true <nil>
	// invalid_argument [property "qty": validating /properties/qty: minimum: 0/1 is less than 1.000000]
	// calls sent: 0
}

// ExampleWithRequestHeader sends a header with one call only, without a
// new Dial.
func ExampleWithRequestHeader() {
	srv, err := mcptest.Start(mcptest.MCPGo)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	ctx := context.Background()
	c, err := mcpclient.Dial(ctx, srv.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	tagged := mcpclient.WithRequestHeader(ctx, http.Header{"X-Request-Id": {"q-17"}})
	_, _ = c.Call(tagged, "echo", nil)
	_, _ = c.Call(ctx, "echo", nil)
	for _, r := range srv.Calls("tools/call") {
		fmt.Printf("%q\n", r.Header.Get("X-Request-Id"))
	}
	_, err = c.Call(mcpclient.WithRequestHeader(ctx, http.Header{"Authorization": {"Bearer x"}}), "echo", nil)
	fmt.Println(mcpclient.Classify(err))
	// Output:
	// "q-17"
	// ""
	// invalid_argument
}

// ExampleWithElicitationHandler declares the elicitation capability and
// answers the server's question in the middle of a call.
func ExampleWithElicitationHandler() {
	srv, err := mcptest.Start(mcptest.GoSDK)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	ctx := context.Background()
	confirm := func(_ context.Context, req mcpclient.ServerRequest) (json.RawMessage, error) {
		fmt.Println("asked:", req.Method)
		return json.RawMessage(`{"action":"accept","content":{"ok":true}}`), nil
	}
	c, err := mcpclient.Dial(ctx, srv.URL, mcpclient.WithElicitationHandler(confirm))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	res, err := c.Call(ctx, "elicit", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Text())

	// Without a handler nothing is declared, and the server cannot ask.
	plain, err := mcpclient.Dial(ctx, srv.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer plain.Close()
	_, err = plain.Call(ctx, "elicit", nil)
	fmt.Println(mcpclient.Classify(err))
	// Output:
	// asked: elicitation/create
	// elicitation: accept
	// tool_error
}
