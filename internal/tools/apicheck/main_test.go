package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func write(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	}
}

func TestRun(t *testing.T) {
	root := t.TempDir()
	write(t, root, map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.26\n",
		"lib/lib.go": `package lib

type T struct {
	Field  int
	Tagged int ` + "`json:\"tagged\"`" + `
	Lonely int
}

func (T) Method()           {}
func (T) Unloved()          {}
func (T) Error() string     { return "" }
func (t *Gen[X]) Get() X    { return t.v }

type Gen[X any] struct{ v X }

func Used()        {}
func FromExample() {}
func Documented()  {}
func Unused()      {}

const Limit = 3

var internalOnly = 1
`,
		"lib/lib_test.go": `package lib_test

import (
	"testing"

	"example.com/m/lib"
)

func TestX(t *testing.T) {
	lib.Used()
	v := lib.T{Field: 1}
	v.Method()
	var g lib.Gen[int]
	_ = g.Get()
}
`,
		"lib/internal_test.go": "package lib\n\nvar _ = Limit\n",
		"examples/prog/main.go": `package main

import "example.com/m/lib"

func main() { lib.FromExample() }
`,
		"examples/prog/Helper.go": "package main\n\nfunc Exported() {}\n",
		"internal/tools/x/x.go":   "package x\n\nfunc Tool() {}\n",
		"docs/lib.md":             "Call `Documented` when needed.\n",
		"cmd/c/main.go":           "package main\n\nfunc Exported() {}\nfunc main() {}\n",
	})
	n, bad, err := run(root)
	require.NoError(t, err)
	assert.Equal(t, []string{
		"lib.T.Lonely (lib/lib.go:6)",
		"lib.T.Unloved (lib/lib.go:10)",
		"lib.Unused (lib/lib.go:19)",
	}, bad)
	// T, Field, Lonely, Method, Unloved, Get, Gen, Used, FromExample,
	// Documented, Unused, Limit.
	assert.Equal(t, 12, n)
}

func TestRunNeedsModuleRoot(t *testing.T) {
	_, _, err := run(t.TempDir())
	assert.Error(t, err)
}
