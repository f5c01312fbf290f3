package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// bench/tls-arms.json is what `make bench-tls` runs: each interface's
// group must hold m0serve in the clear and over TLS, and peers that
// terminate TLS themselves, every TLS arm with a certificate on its
// command line, so the table reads m0serve's TLS against both.
func TestTLSArmsFile(t *testing.T) {
	arms, err := LoadArms(filepath.Join("..", "tls-arms.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := uniqueNames(arms); err != nil {
		t.Fatal(err)
	}
	type group struct{ clearPeer, tlsPeers, m0serveTLS int }
	groups := map[string]*group{}
	for _, arm := range arms {
		g := groups[arm.Group]
		if g == nil {
			g = &group{}
			groups[arm.Group] = g
		}
		m0serve := strings.HasPrefix(arm.Name, "m0serve")
		switch {
		case arm.TLS && m0serve:
			g.m0serveTLS++
		case arm.TLS && arm.Peer:
			g.tlsPeers++
		case !arm.TLS && m0serve && arm.Peer:
			g.clearPeer++
		}
		if arm.Kind != "native" && arm.Group != arm.Kind+" bare hello" {
			t.Errorf("%s: a %s arm in group %q: WSGI and ASGI rows are compared apart", arm.Name, arm.Kind, arm.Group)
		}
		if arm.TLS && !strings.Contains(strings.Join(arm.Requires, " "), "bench/tls/") {
			t.Errorf("%s: serves TLS but does not require a certificate under bench/tls/", arm.Name)
		}
	}
	for _, name := range []string{"wsgi bare hello", "asgi bare hello"} {
		g := groups[name]
		if g == nil || g.clearPeer != 1 || g.m0serveTLS < 1 || g.tlsPeers < 2 {
			t.Errorf("group %q: want m0serve in the clear as a peer, m0serve over TLS and two TLS peers; have %+v", name, g)
		}
	}
}
