package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// bench/python-arms.json is what `make bench-python` runs: it must load,
// and every group must hold m0serve and at least one peer serving the same
// app, or the table would print rows with nothing to compare against.
func TestPythonArmsFile(t *testing.T) {
	arms, err := LoadArms(filepath.Join("..", "python-arms.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := uniqueNames(arms); err != nil {
		t.Fatal(err)
	}
	type group struct{ m0serve, peers int }
	groups := map[string]*group{}
	for _, arm := range arms {
		if arm.Group == "" {
			t.Errorf("%s: no group, so it would be compared with the native hello arms", arm.Name)
		}
		g := groups[arm.Group]
		if g == nil {
			g = &group{}
			groups[arm.Group] = g
		}
		if arm.Peer {
			g.peers++
		}
		if strings.HasPrefix(arm.Name, "m0serve") {
			g.m0serve++
			if arm.Peer {
				t.Errorf("%s: m0serve is the row measured, not a peer", arm.Name)
			}
		}
		// The app a Python arm serves must be one of bench/apps.
		found := false
		for _, need := range arm.Requires {
			if strings.HasPrefix(need, "bench/apps/") {
				found = true
				if _, err := os.Stat(filepath.Join("..", "..", need)); err != nil {
					t.Errorf("%s: %v", arm.Name, err)
				}
			}
		}
		if !found {
			t.Errorf("%s: requires names no app under bench/apps", arm.Name)
		}
		if strings.Contains(arm.Name, "flask") && !strings.HasPrefix(arm.Body(), "{") {
			t.Errorf("%s: parity expects %q, not Flask's JSON", arm.Name, arm.Body())
		}
		if !strings.Contains(arm.Name, "flask") && arm.Body() != helloBody {
			t.Errorf("%s: parity expects %q, not the bare hello", arm.Name, arm.Body())
		}
	}
	if len(groups) != 2 {
		t.Errorf("%d groups, want 2 (bare hello, Flask JSON)", len(groups))
	}
	for name, g := range groups {
		if g.m0serve < 1 || g.peers < 2 {
			t.Errorf("group %q: %d m0serve arms and %d peers, want at least 1 and 2", name, g.m0serve, g.peers)
		}
	}
}
