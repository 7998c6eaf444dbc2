package overseer_test

import (
	"fmt"

	"github.com/candorkit/candor/examples/builder/internal/overseer"
)

func ExampleParseVerdict() {
	v, ok := overseer.ParseVerdict("FAIL — the HTTP node posts to an invented URL.\n")
	fmt.Println(ok, v)
	_, ok = overseer.ParseVerdict("Looks good to me!")
	fmt.Println(ok)
	// Output:
	// true FAIL: the HTTP node posts to an invented URL.
	// false
}
