package n8ntest_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/candorkit/candor/n8n/n8ntest"
)

// ReadMarker finds an edition through the marker scripts/n8n-local writes
// at the end of a complete install; until then the edition is not installed,
// and Start fails the test with the command to run.
func ExampleReadMarker() {
	root, err := os.MkdirTemp("", "n8ntest-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(root)
	if old, ok := os.LookupEnv("CANDOR_CACHE"); ok {
		defer os.Setenv("CANDOR_CACHE", old)
	} else {
		defer os.Unsetenv("CANDOR_CACHE")
	}
	os.Setenv("CANDOR_CACHE", root)

	p, err := n8ntest.MarkerPath(n8ntest.Edition1)
	if err != nil {
		panic(err)
	}
	rel, _ := filepath.Rel(root, p)
	fmt.Println("marker:", rel)
	if _, err := n8ntest.ReadMarker(n8ntest.Edition1); err != nil {
		fmt.Println("before the install: not installed")
	}

	// What the script writes last, once node and n8n are in place.
	bin := filepath.Join(filepath.Dir(p), "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		panic(err)
	}
	node, n8n := filepath.Join(bin, "node"), filepath.Join(bin, "n8n")
	for _, f := range []string{node, n8n} {
		if err := os.WriteFile(f, nil, 0o755); err != nil {
			panic(err)
		}
	}
	marker := "edition=1\nversion=1.123.81\nnode=" + node + "\nn8n=" + n8n + "\n"
	if err := os.WriteFile(p, []byte(marker), 0o644); err != nil {
		panic(err)
	}
	m, err := n8ntest.ReadMarker(n8ntest.Edition1)
	fmt.Println("after the install:", m.Version, err)
	// Output:
	// marker: n8n/edition-1/installed.env
	// before the install: not installed
	// after the install: 1.123.81 <nil>
}
