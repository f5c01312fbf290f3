package main

import (
	"strings"
	"testing"
)

func TestDecodeGunicorn(t *testing.T) {
	in := "GET /\\x41 HTTP/1.1\\r\\n\nHost: a\\tb\\0\\r\\n\nX: \\n\\r\\n\n\\r\\n\n"
	want := "GET /A HTTP/1.1\r\nHost: a\tb\x00\r\nX: \n\r\n\r\n"
	if got := string(decodeGunicorn([]byte(in))); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestDecodeGoFuzz(t *testing.T) {
	got, ok := decodeGoFuzz([]byte("go test fuzz v1\n[]byte(\"GET / HTTP/1.1\\r\\n\\x00\")\n"))
	if !ok || string(got) != "GET / HTTP/1.1\r\n\x00" {
		t.Fatalf("got %q, %v", got, ok)
	}
	if _, ok := decodeGoFuzz([]byte("go test fuzz v1\nint(3)\n")); ok {
		t.Fatal("an int entry decoded as bytes")
	}
}

// TestMutator: the corpora load, no seed names HEAD (the validator
// assumes bodies), the same seed gives the same requests, and the
// requests are mostly changed and bounded.
func TestMutator(t *testing.T) {
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	a, err := newMutator(root, 7)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := newMutator(root, 7)
	if a.Seeds() <= len(baseRequests)+50 {
		t.Fatalf("%d seeds: the corpora under http1/testdata did not load", a.Seeds())
	}
	for _, s := range a.seeds {
		if strings.Contains(string(s), "HEAD") {
			t.Fatalf("seed %q names HEAD", s)
		}
	}
	seeds := map[string]bool{}
	for _, s := range a.seeds {
		seeds[string(s)] = true
	}
	changed := 0
	for i := 0; i < 2000; i++ {
		x, y := a.Next(), b.Next()
		if string(x) != string(y) {
			t.Fatalf("request %d differs between two mutators with one seed", i)
		}
		if len(x) > 64<<10 {
			t.Fatalf("request %d is %d bytes", i, len(x))
		}
		if !seeds[string(x)] {
			changed++
		}
	}
	if changed < 1500 {
		t.Fatalf("%d of 2000 requests differ from every seed", changed)
	}
}
