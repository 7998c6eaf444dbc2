// Command hello prints its name and arguments; testproc's tests build it.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// greeting is set by the test with -ldflags=-X, to show Build passes flags.
var greeting = "unset"

func main() {
	fmt.Printf("%s %s %s\n", greeting, strings.TrimSuffix(filepath.Base(os.Args[0]), ".exe"), strings.Join(os.Args[1:], " "))
	fmt.Fprintln(os.Stderr, "to stderr")
}
