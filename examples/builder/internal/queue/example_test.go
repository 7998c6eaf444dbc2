package queue_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/candorkit/candor/examples/builder/internal/queue"
)

// Two builders share one SQLite file; only the first claim of an idea wins.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "queue-example-")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "builder.db")

	first, err := queue.Open(ctx, path)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer first.Close()
	second, err := queue.Open(ctx, path)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer second.Close()

	_ = first.Init(ctx)
	id, _ := first.InsertSample(ctx)
	idea, _ := second.Pick(ctx)
	fmt.Println(idea.ID == id, idea.Name)

	fmt.Println("first builder:", first.Claim(ctx, id))
	err = second.Claim(ctx, id)
	fmt.Println("second builder claimed:", errors.Is(err, queue.ErrClaimed))
	_, err = first.Pick(ctx)
	fmt.Println("queue empty:", errors.Is(err, queue.ErrNoIdea))
	// Output:
	// true Order confirmation relay
	// first builder: <nil>
	// second builder claimed: true
	// queue empty: true
}
