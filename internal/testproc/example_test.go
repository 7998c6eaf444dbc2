package testproc_test

import (
	"fmt"
	"strings"
	"sync"

	"github.com/candorkit/candor/internal/testproc"
)

// A Buffer takes writes from several goroutines, as exec's copying
// goroutines for a child's stdout and stderr do, while the test reads it.
func ExampleBuffer() {
	var out testproc.Buffer
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 100 {
				fmt.Fprint(&out, "ab")
			}
		})
	}
	wg.Wait()
	fmt.Println(out.Len(), strings.Count(out.String(), "ab"))
	// Output: 800 400
}
