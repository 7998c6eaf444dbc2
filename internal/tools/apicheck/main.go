// Command apicheck lists the exported identifiers of the module's packages
// that nothing exercises or documents: no _test.go file in the module
// references them, no program under examples/ uses them, and no Markdown
// file names them.
//
// Run it from the module root:
//
//	go run ./internal/tools/apicheck
//
// It checks the non-test files of every package outside examples/ and
// internal/tools (commands, package main, are skipped): top-level
// functions, types, variables and constants, and the exported methods and
// fields of exported types. Methods that satisfy well-known interfaces
// (Error, String, Unwrap, Is, As, Format, GoString, LogValue, MarshalJSON,
// ServeHTTP, Read, Write, Close and the like) are exempt, and so are struct
// fields with a tag (a wire schema, filled by decoding). A reference is
// an identifier or selector match in the syntax tree, without type
// checking: pkg.Name in a file importing the package, a bare Name in the
// package's own test files, and, for a method or field, a selector or a
// composite-literal key of that name in a file that imports the package. A
// Markdown file names an identifier as pkg.Name, Type.Name, or `Name` at
// the start of a code span.
//
// It prints "pkg.Name (file:line)" for each unreferenced identifier and
// exits 1, or prints a one-line count and exits 0. Exit 2 is a failure to
// read the module.
package main

import (
	"bufio"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// exempt are method names that satisfy interfaces of the standard library
// or of the drivers the module plugs into; they are called through the
// interface, not by name.
var exempt = map[string]bool{
	"Error": true, "String": true, "Unwrap": true, "Is": true, "As": true,
	"Format": true, "GoString": true, "LogValue": true,
	"MarshalJSON": true, "UnmarshalJSON": true, "MarshalText": true, "UnmarshalText": true,
	"ServeHTTP": true, "RoundTrip": true, "Read": true, "Write": true, "Close": true,
	"ReadFrom": true, "WriteTo": true, "Seek": true, "Flush": true, "Header": true,
	"WriteHeader": true, "Hijack": true, "Timeout": true, "Temporary": true,
	"Scan": true, "Value": true, "Len": true, "Less": true, "Swap": true,
}

type decl struct {
	pkg    string // directory relative to the module root ("." for the root)
	name   string // package name
	typ    string // receiver or owning type, "" for top-level
	ident  string
	pos    token.Position
	member bool
}

func (d decl) label() string {
	if d.typ != "" {
		return d.pkg + "." + d.typ + "." + d.ident
	}
	return d.pkg + "." + d.ident
}

type refs struct {
	top    map[string]map[string]bool // package dir -> names used as pkg.Name or bare in own tests
	member map[string]map[string]bool // package dir -> selector/key names in files that see it
}

func add(m map[string]map[string]bool, pkg, name string) {
	if m[pkg] == nil {
		m[pkg] = map[string]bool{}
	}
	m[pkg][name] = true
}

func main() {
	n, bad, err := run(".")
	if err != nil {
		fmt.Fprintln(os.Stderr, "apicheck:", err)
		os.Exit(2)
	}
	if len(bad) > 0 {
		for _, b := range bad {
			fmt.Println(b)
		}
		fmt.Fprintf(os.Stderr, "apicheck: %d of %d exported identifiers are not referenced by a test or an example, nor named in a document\n", len(bad), n)
		os.Exit(1)
	}
	fmt.Printf("apicheck: %d exported identifiers, each referenced by a test or an example or named in a document\n", n)
}

func modulePath(root string) (string, error) {
	f, err := os.Open(filepath.Join(root, "go.mod"))
	if err != nil {
		return "", fmt.Errorf("run it from the module root: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", errors.New("go.mod has no module line")
}

type file struct {
	dir  string // relative to root, slash-separated
	path string // relative to root
	ast  *ast.File
	test bool
}

// run returns the number of identifiers checked and the lines to report.
func run(root string) (int, []string, error) {
	mod, err := modulePath(root)
	if err != nil {
		return 0, nil, err
	}
	fset := token.NewFileSet()
	var files []file
	var docs strings.Builder
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		base := d.Name()
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_") ||
				base == "testdata" || base == "vendor" || base == "node_modules") {
				return filepath.SkipDir
			}
			// A nested module is not part of this one.
			if rel != "." {
				if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
					return filepath.SkipDir
				}
			}
			return nil
		}
		switch {
		case strings.HasSuffix(base, ".md"):
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			docs.Write(b)
			docs.WriteByte('\n')
		case strings.HasSuffix(base, ".go"):
			f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			files = append(files, file{dir: path.Dir(rel), path: rel, ast: f, test: strings.HasSuffix(base, "_test.go")})
		}
		return nil
	})
	if err != nil {
		return 0, nil, err
	}

	var decls []decl
	r := refs{top: map[string]map[string]bool{}, member: map[string]map[string]bool{}}
	for _, f := range files {
		inExamples := f.dir == "examples" || strings.HasPrefix(f.dir, "examples/")
		if !f.test && !inExamples && !isTool(f.dir) && f.ast.Name.Name != "main" {
			decls = append(decls, declsOf(fset, root, f)...)
		}
		if f.test || inExamples {
			collect(f, mod, r)
		}
	}

	md := docs.String()
	var bad []string
	for _, d := range decls {
		if used(d, r) || named(d, md) {
			continue
		}
		bad = append(bad, fmt.Sprintf("%s (%s:%d)", d.label(), d.pos.Filename, d.pos.Line))
	}
	sort.Strings(bad)
	return len(decls), bad, nil
}

func isTool(dir string) bool {
	return dir == "internal/tools" || strings.HasPrefix(dir, "internal/tools/")
}

func declsOf(fset *token.FileSet, root string, f file) []decl {
	var out []decl
	mk := func(typ, ident string, pos token.Pos, member bool) {
		p := fset.Position(pos)
		if rel, err := filepath.Rel(root, p.Filename); err == nil {
			p.Filename = rel
		}
		p.Filename = filepath.ToSlash(p.Filename)
		out = append(out, decl{pkg: f.dir, name: f.ast.Name.Name, typ: typ, ident: ident, pos: p, member: member})
	}
	for _, dl := range f.ast.Decls {
		switch dl := dl.(type) {
		case *ast.FuncDecl:
			if !dl.Name.IsExported() {
				continue
			}
			if dl.Recv == nil {
				mk("", dl.Name.Name, dl.Name.Pos(), false)
				continue
			}
			recv := receiverType(dl.Recv)
			if recv == "" || !ast.IsExported(recv) || exempt[dl.Name.Name] {
				continue
			}
			mk(recv, dl.Name.Name, dl.Name.Pos(), true)
		case *ast.GenDecl:
			for _, sp := range dl.Specs {
				switch sp := sp.(type) {
				case *ast.ValueSpec:
					for _, n := range sp.Names {
						if n.IsExported() {
							mk("", n.Name, n.Pos(), false)
						}
					}
				case *ast.TypeSpec:
					if !sp.Name.IsExported() {
						continue
					}
					mk("", sp.Name.Name, sp.Name.Pos(), false)
					switch t := sp.Type.(type) {
					case *ast.StructType:
						for _, fl := range t.Fields.List {
							if fl.Tag != nil {
								continue // a wire-schema field (json:"…"), set by decoding
							}
							for _, n := range fl.Names { // embedded fields are left out
								if n.IsExported() {
									mk(sp.Name.Name, n.Name, n.Pos(), true)
								}
							}
						}
					case *ast.InterfaceType:
						for _, m := range t.Methods.List {
							for _, n := range m.Names {
								if n.IsExported() && !exempt[n.Name] {
									mk(sp.Name.Name, n.Name, n.Pos(), true)
								}
							}
						}
					}
				}
			}
		}
	}
	return out
}

func receiverType(fl *ast.FieldList) string {
	if len(fl.List) == 0 {
		return ""
	}
	t := fl.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.ParenExpr:
			t = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// collect records what a test file or an example program references.
func collect(f file, mod string, r refs) {
	aliases := map[string]string{} // local name -> package dir
	var seen []string              // package dirs whose members this file may touch
	own := f.dir
	seen = append(seen, own)
	for _, im := range f.ast.Imports {
		p, err := strconv.Unquote(im.Path.Value)
		if err != nil {
			continue
		}
		var dir string
		switch {
		case p == mod:
			dir = "."
		case strings.HasPrefix(p, mod+"/"):
			dir = strings.TrimPrefix(p, mod+"/")
		default:
			continue
		}
		seen = append(seen, dir)
		name := path.Base(dir)
		if dir == "." {
			name = path.Base(mod)
		}
		if im.Name != nil {
			name = im.Name.Name
		}
		if name == "_" {
			continue
		}
		if name == "." {
			// A dot import makes every bare identifier a candidate.
			aliases["."] = dir
			continue
		}
		aliases[name] = dir
	}
	// A package's own test files (package p or p_test in the same
	// directory) and a dot import see bare identifiers.
	bare := []string{own}
	if d, ok := aliases["."]; ok {
		bare = append(bare, d)
	}
	ast.Inspect(f.ast, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.SelectorExpr:
			if id, ok := x.X.(*ast.Ident); ok {
				if dir, ok := aliases[id.Name]; ok {
					add(r.top, dir, x.Sel.Name)
				}
			}
			for _, d := range seen {
				add(r.member, d, x.Sel.Name)
			}
		case *ast.KeyValueExpr:
			if id, ok := x.Key.(*ast.Ident); ok {
				for _, d := range seen {
					add(r.member, d, id.Name)
				}
			}
		case *ast.Ident:
			if x.IsExported() {
				for _, d := range bare {
					add(r.top, d, x.Name)
					add(r.member, d, x.Name)
				}
			}
		}
		return true
	})
}

func used(d decl, r refs) bool {
	if d.member {
		return r.member[d.pkg][d.ident]
	}
	return r.top[d.pkg][d.ident]
}

var wordCache = map[string]*regexp.Regexp{}

func named(d decl, md string) bool {
	var pats []string
	q := regexp.QuoteMeta
	if d.typ != "" {
		pats = append(pats, `\b`+q(d.typ)+`\.`+q(d.ident)+`\b`)
	} else {
		pats = append(pats, `\b`+q(d.name)+`\.`+q(d.ident)+`\b`)
	}
	pats = append(pats, "`"+q(d.ident)+`\b`)
	for _, p := range pats {
		re, ok := wordCache[p]
		if !ok {
			re = regexp.MustCompile(p)
			wordCache[p] = re
		}
		if re.MatchString(md) {
			return true
		}
	}
	return false
}
