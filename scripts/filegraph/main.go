// filegraph prints the arrows between the files of one Go package (file A
// → file B when A uses a name or method declared at B's top level; tests
// and _other.go files left out), then a summary: how many arrows, how
// many of them inside a circle of files (a strongly connected group), and
// how many pairs of files use each other. Run from the module's root:
//
//	go run ./scripts/filegraph loop
//
// FIELDS=1 counts struct fields' uses as arrows too.
package main

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	dir := os.Args[1]
	out, err := exec.Command("go", "list", "-export", "-deps", "-json=ImportPath,Export", "./"+dir).Output()
	if err != nil {
		fmt.Fprintf(os.Stderr, "filegraph: go list ./%s: %v\n", dir, err)
		os.Exit(1)
	}
	exports := map[string]string{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p struct{ ImportPath, Export string }
		if err := dec.Decode(&p); err != nil {
			break
		}
		exports[p.ImportPath] = p.Export
	}
	fset := token.NewFileSet()
	matches, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	var files []*ast.File
	for _, m := range matches {
		if strings.HasSuffix(m, "_test.go") || strings.HasSuffix(m, "_other.go") {
			continue
		}
		f, err := parser.ParseFile(fset, m, nil, 0)
		if err != nil {
			fmt.Fprintf(os.Stderr, "filegraph: %v\n", err)
			os.Exit(1)
		}
		files = append(files, f)
	}
	conf := types.Config{Importer: importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) { return os.Open(exports[path]) })}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
	pkg, err := conf.Check(dir, fset, files, info)
	if err != nil {
		fmt.Fprintf(os.Stderr, "filegraph: %s: %v\n", dir, err)
		os.Exit(1)
	}
	edges := map[[2]string]int{}
	add := func(from token.Pos, obj types.Object) {
		if obj == nil || obj.Pkg() != pkg || !obj.Pos().IsValid() {
			return
		}
		// package-level objects, methods and struct fields
		if v, ok := obj.(*types.Var); ok && !v.IsField() && obj.Parent() != pkg.Scope() {
			return
		}
		if _, ok := obj.(*types.TypeName); ok && obj.Parent() != pkg.Scope() {
			return
		}
		if _, ok := obj.(*types.Const); ok && obj.Parent() != pkg.Scope() {
			return
		}
		a := filepath.Base(fset.Position(from).Filename)
		b := filepath.Base(fset.Position(obj.Pos()).Filename)
		if a != b {
			edges[[2]string{a, b}]++
		}
	}
	for id, obj := range info.Uses {
		if v, ok := obj.(*types.Var); ok && v.IsField() && os.Getenv("FIELDS") == "" {
			continue
		}
		add(id.Pos(), obj)
	}
	var keys [][2]string
	for k := range edges {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i][0] < keys[j][0] || keys[i][0] == keys[j][0] && keys[i][1] < keys[j][1]
	})
	graph := map[string][]string{}
	for _, k := range keys {
		fmt.Printf("%s %s %d\n", k[0], k[1], edges[k])
		graph[k[0]] = append(graph[k[0]], k[1])
	}
	group := circles(graph)
	inside, mutual := 0, 0
	for _, k := range keys {
		if group[k[0]] == group[k[1]] {
			inside++
		}
		if k[0] < k[1] && edges[[2]string{k[1], k[0]}] > 0 {
			mutual++
		}
	}
	fmt.Printf("# %d files, %d arrows, %d inside circles, %d pairs both ways\n", len(files), len(keys), inside, mutual)
}

// circles numbers the strongly connected groups of graph (Tarjan's).
func circles(graph map[string][]string) map[string]int {
	index, low := map[string]int{}, map[string]int{}
	onStack := map[string]bool{}
	var stack []string
	group := map[string]int{}
	next, groups := 0, 0
	var visit func(v string)
	visit = func(v string) {
		index[v], low[v] = next, next
		next++
		stack = append(stack, v)
		onStack[v] = true
		for _, w := range graph[v] {
			if _, seen := index[w]; !seen {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				group[w] = groups
				if w == v {
					break
				}
			}
			groups++
		}
	}
	names := make([]string, 0, len(graph))
	for v := range graph {
		names = append(names, v)
	}
	sort.Strings(names)
	for _, v := range names {
		if _, seen := index[v]; !seen {
			visit(v)
		}
	}
	return group
}
