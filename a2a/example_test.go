package a2a_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/candorkit/candor/a2a"
	"github.com/candorkit/candor/reply"
)

func ExampleMapReply() {
	ok := a2a.MapReply(reply.Reply{Answer: "7305 in stock"}, nil)
	fmt.Println(ok.State, ok.Text)

	// n8n answers 200 with an empty body when a node throws before Respond.
	empty := a2a.MapReply(reply.Reply{}, reply.ErrEmpty)
	fmt.Println(empty.State, empty.Text, a2a.Classify(empty.Err))

	esc := a2a.MapReply(reply.Reply{Answer: "ask the warehouse", Escalate: true}, nil)
	fmt.Println(esc.State, esc.Text, errors.Is(esc.Err, a2a.ErrEscalated))

	_, err := reply.Decode([]byte(`{"answer":"ok"}`))
	drift := a2a.MapReply(reply.Reply{}, err)
	fmt.Println(drift.State, drift.Text, string(drift.Raw))
	// Output:
	// completed 7305 in stock
	// failed the workflow returned no reply no_reply
	// failed ask the warehouse true
	// failed the workflow reply is off-contract: missing key "escalate" {"answer":"ok"}
}

// A backend other than the webhook plugs into the same Server. Every bearer
// token is checked by the Verifier before the backend is asked.
func ExampleNewServer() {
	stock := a2a.BackendFunc(func(ctx context.Context, q a2a.Question) a2a.Outcome {
		return a2a.Answer("7305 units of S10_1949, asked by " + q.Caller.Subject)
	})
	// In production: a verifier from package a2a/jwtauth.
	verifier := a2a.VerifierFunc(func(ctx context.Context, token string) (a2a.Caller, error) {
		return a2a.Caller{}, a2a.ErrInvalidToken
	})
	srv, err := a2a.NewServer(a2a.Agent{
		Name: "Stock agent", Description: "Answers stock questions",
		URL:   "https://agents.example/stock",
		Skill: a2a.Skill{ID: "stock-level", Name: "Stock level", Description: "Units in stock"},
	}, stock, a2a.WithVerifier(verifier))
	if err != nil {
		fmt.Println(err)
		return
	}
	mux := http.NewServeMux()
	mux.Handle("/", srv)                        // JSON-RPC on /stock, the card on /.well-known/agent-card.json
	store := srv.TaskStore().(*a2a.MemoryStore) // the default; GetTask and ListTasks read from here
	fmt.Println(store.Len())

	_, err = a2a.NewServer(a2a.Agent{}, stock)
	fmt.Println(err)
	// Output:
	// 0
	// a2a: bearer tokens need a verifier: pass WithVerifier (or, for a backend that proves tokens itself, WithUnverifiedTokens)
}

// The webhook facade: a workflow webhook answering {"answer", "escalate"}.
func ExampleNewAdapter() {
	verifier := a2a.VerifierFunc(func(ctx context.Context, token string) (a2a.Caller, error) {
		return a2a.Caller{}, a2a.ErrInvalidToken // in production: package a2a/jwtauth
	})
	srv, err := a2a.NewAdapter(a2a.Config{
		Agent: a2a.Agent{
			Name: "Stock agent", Description: "Answers stock questions",
			URL:   "https://agents.example/a2a",
			Skill: a2a.Skill{ID: "stock-level", Name: "Stock level", Description: "Units in stock"},
		},
		WebhookURL: "https://n8n.example/webhook/2f0c-secret-id",
	}, a2a.WithVerifier(verifier))
	fmt.Println(srv != nil, err)
	// Output:
	// true <nil>
}

// The Server keeps its tasks in any TaskStore: a bounded MemoryStore here;
// package a2a/pgstore's store for replicas sharing their tasks.
func ExampleWithTaskStore() {
	store, err := a2a.NewMemoryStore(1000, 30*time.Minute)
	if err != nil {
		fmt.Println(err)
		return
	}
	verifier := a2a.VerifierFunc(func(ctx context.Context, token string) (a2a.Caller, error) {
		return a2a.Caller{}, a2a.ErrInvalidToken // in production: package a2a/jwtauth
	})
	backend := a2a.BackendFunc(func(ctx context.Context, q a2a.Question) a2a.Outcome { return a2a.Answer("7305") })
	agent := a2a.Agent{
		Name: "Stock agent", Description: "Answers stock questions", URL: "https://agents.example/stock",
		Skill: a2a.Skill{ID: "stock-level", Name: "Stock level", Description: "Units in stock"},
	}
	srv, err := a2a.NewServer(agent, backend, a2a.WithVerifier(verifier), a2a.WithTaskStore(store))
	fmt.Println(err, srv.TaskStore() == a2a.TaskStore(store))

	_, err = a2a.NewServer(agent, backend, a2a.WithVerifier(verifier), a2a.WithTaskStore((*a2a.MemoryStore)(nil)))
	fmt.Println(err)
	// Output:
	// <nil> true
	// a2a: WithTaskStore(nil)
}
