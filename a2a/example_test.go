package a2a_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/candorkit/candor/a2a"
	"github.com/candorkit/candor/reply"
)

func ExampleMapReply() {
	ok := a2a.MapReply(200, nil, []byte(`{"answer":"7305 in stock","escalate":false}`))
	fmt.Println(ok.State, ok.Text)

	// n8n answers 200 with an empty body when a node throws before Respond.
	empty := a2a.MapReply(200, http.Header{"Content-Type": {"application/json"}}, nil)
	fmt.Println(empty.State, empty.Text, errors.Is(empty.Err, reply.ErrEmpty))

	esc := a2a.MapReply(200, nil, []byte(`{"answer":"ask the warehouse","escalate":true}`))
	fmt.Println(esc.State, esc.Text, errors.Is(esc.Err, a2a.ErrEscalated))

	drift := a2a.MapReply(200, nil, []byte(`{"answer":"ok"}`))
	fmt.Println(drift.State, drift.Text, string(drift.Raw))
	// Output:
	// completed 7305 in stock
	// failed the workflow returned no reply true
	// failed ask the warehouse true
	// failed the workflow reply is off-contract: missing key "escalate" {"answer":"ok"}
}

// A backend other than the webhook plugs into the same Server.
func ExampleNewServer() {
	stock := a2a.BackendFunc(func(ctx context.Context, q a2a.Question) a2a.Outcome {
		if q.Text == "" {
			return a2a.Fail("nothing was asked", errors.New("empty question"))
		}
		return a2a.Answer("7305 units of S10_1949")
	})
	srv, err := a2a.NewServer(a2a.Agent{
		Name: "Stock agent", Description: "Answers stock questions",
		URL:   "https://agents.example/stock",
		Skill: a2a.Skill{ID: "stock-level", Name: "Stock level", Description: "Units in stock"},
	}, stock)
	if err != nil {
		fmt.Println(err)
		return
	}
	mux := http.NewServeMux()
	mux.Handle("/", srv) // JSON-RPC on /stock, the card on /.well-known/agent-card.json
	store := srv.Store() // GetTask and ListTasks read from here
	fmt.Println(store.Len())
	// Output:
	// 0
}
