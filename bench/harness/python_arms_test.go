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
		// The native hello on the same binary is the floor the Python rows
		// stand on (the handoff overhead is measured against it): no app,
		// no peers.
		if arm.Kind == "native" {
			if arm.Group != "native hello" || arm.Body() != helloBody {
				t.Errorf("%s: a native arm belongs in the native hello group and answers %q", arm.Name, helloBody)
			}
			continue
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
		// Every arm checks what it answers: its body, or its length.
		if arm.ExpectBody == "" && arm.ExpectLength == 0 && arm.Body() != helloBody {
			t.Errorf("%s: parity checks neither a body nor a length", arm.Name)
		}
		// A Python peer runs bench/.venv's interpreter or server, and
		// m0serve that venv, so every arm runs the same Python and app code.
		if strings.HasPrefix(arm.Name, "m0serve") && !strings.Contains(strings.Join(arm.Command, " "), "--venv bench/.venv") {
			t.Errorf("%s: not on --venv bench/.venv", arm.Name)
		}
		if arm.Peer && !strings.HasPrefix(arm.Command[0], "bench/.venv/bin/") {
			t.Errorf("%s: runs %s, not bench/.venv's", arm.Name, arm.Command[0])
		}
	}
	// Every row has Granian beside it; the bare rows both its configurations
	// and the other servers' too.
	wantPeers := map[string]int{"native hello": 0, "wsgi": 5, "asgi": 5, "flask": 3, "starlette": 2,
		"fastapi-body": 2, "django": 2, "upload": 2, "stream": 2, "static": 2}
	if len(groups) != len(wantPeers) {
		t.Errorf("%d groups, want %d", len(groups), len(wantPeers))
	}
	for name, g := range groups {
		want, known := wantPeers[name]
		if !known {
			t.Errorf("group %q is not one of the expected groups", name)
			continue
		}
		if g.m0serve < 1 || g.peers < want {
			t.Errorf("group %q: %d m0serve arms and %d peers, want at least 1 and %d", name, g.m0serve, g.peers, want)
		}
	}
}
