// Command drain is a program for cli's tests: at the first signal it says
// "draining" and then waits forever, as a program whose work in flight
// never ends would.
package main

import (
	"context"
	"fmt"

	"github.com/candorkit/candor/examples/internal/cli"
)

func main() {
	cli.Main(func(ctx context.Context) int {
		fmt.Println("ready")
		<-ctx.Done()
		fmt.Println("draining")
		select {}
	})
}
