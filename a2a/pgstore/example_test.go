package pgstore_test

import (
	"context"
	"database/sql"
	"fmt"
	"log"
	"os"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver

	"github.com/candorkit/candor/a2a"
	"github.com/candorkit/candor/a2a/pgstore"
)

// Several replicas of one agent share their tasks through PostgreSQL: each
// replica runs this, with its own pool, on the same database and schema.
func Example() {
	ctx := context.Background()
	db, err := sql.Open("pgx", os.Getenv("TASKS_DSN"))
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	store, err := pgstore.OpenDB(ctx, db,
		pgstore.WithSchema("stock_agent"),
		pgstore.WithMaxTasks(50000), pgstore.WithTaskTTL(24*time.Hour))
	if err != nil {
		log.Fatal(err) // errors.Is(err, pgstore.ErrUnavailable): the database is down
	}
	defer store.Close()
	backend := a2a.BackendFunc(func(ctx context.Context, q a2a.Question) a2a.Outcome {
		return a2a.Answer("7305 units")
	})
	verifier := a2a.VerifierFunc(func(ctx context.Context, token string) (a2a.Caller, error) {
		return a2a.Caller{}, a2a.ErrInvalidToken // in production: package a2a/jwtauth
	})
	srv, err := a2a.NewServer(a2a.Agent{
		Name: "Stock agent", Description: "Answers stock questions",
		URL:   "https://agents.example/stock",
		Skill: a2a.Skill{ID: "stock-level", Name: "Stock level", Description: "Units in stock"},
	}, backend, a2a.WithVerifier(verifier), a2a.WithTaskStore(store))
	if err != nil {
		log.Fatal(err)
	}
	_ = srv // serve it behind the load balancer
}

// OpenDB checks its arguments before any statement runs.
func ExampleOpenDB() {
	ctx := context.Background()
	_, err := pgstore.OpenDB(ctx, nil)
	fmt.Println(err)
	db, _ := sql.Open("pgx", "postgres://127.0.0.1:1/none") // not connected yet
	defer db.Close()
	_, err = pgstore.OpenDB(ctx, db, pgstore.WithSchema("Stock-Agent"), pgstore.WithMaxTasks(0))
	fmt.Println(err)
	// Output:
	// pgstore: OpenDB: db is nil
	// pgstore: WithSchema("Stock-Agent"): not a plain lower-case identifier
	// pgstore: WithMaxTasks(0): the bound must be positive
}
