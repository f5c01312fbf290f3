package pybridge

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// The C files call each other one way: no file calls into a file that
// calls back into it, directly or around a circle, so that each can be
// read knowing only the files below it. A shim function is one named
// m0_*, defined at the start of a line.
func TestCFilesCallOneWay(t *testing.T) {
	files, err := filepath.Glob("*.c")
	if err != nil || len(files) == 0 {
		t.Fatalf("no C files: %v", err)
	}
	definition := regexp.MustCompile(`(?m)^[A-Za-z_][\w \*]*?\b(m0_\w+)\s*\([^;{]*\)\s*\{`)
	sources := map[string]string{}
	definedIn := map[string]string{}
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sources[f] = string(text)
		for _, m := range definition.FindAllStringSubmatch(string(text), -1) {
			definedIn[m[1]] = f
		}
	}
	calls := map[string][]string{}
	for f, text := range sources {
		seen := map[string]bool{}
		for name, home := range definedIn {
			if home != f && !seen[home] && regexp.MustCompile(`\b`+name+`\s*\(`).MatchString(text) {
				seen[home] = true
				calls[f] = append(calls[f], home)
			}
		}
		sort.Strings(calls[f])
	}
	if circle := findCircle(files, calls); circle != nil {
		t.Fatalf("the C files call around a circle: %s", strings.Join(circle, " → "))
	}
}

// findCircle is a circle in the graph (its first node again at its end),
// or nil.
func findCircle(nodes []string, edges map[string][]string) []string {
	const (
		unseen = iota
		onPath
		done
	)
	state := map[string]int{}
	var path []string
	var visit func(n string) []string
	visit = func(n string) []string {
		state[n] = onPath
		path = append(path, n)
		for _, m := range edges[n] {
			switch state[m] {
			case onPath:
				for i, p := range path {
					if p == m {
						return append(append([]string{}, path[i:]...), m)
					}
				}
			case unseen:
				if c := visit(m); c != nil {
					return c
				}
			}
		}
		path = path[:len(path)-1]
		state[n] = done
		return nil
	}
	for _, n := range nodes {
		if state[n] == unseen {
			if c := visit(n); c != nil {
				return c
			}
		}
	}
	return nil
}
