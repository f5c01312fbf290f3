package pybridge

import (
	"strconv"
	"strings"
	"testing"
)

// Python objects stay flat across many requests: the bridge leaks no
// reference per request (environ, input, headers, body).
func TestNoObjectGrowth(t *testing.T) {
	count := func() (objects, blocks int) {
		j := get(t, "bench_app:objects", "/")
		f := strings.Fields(string(j.Response.Body()))
		if len(f) != 2 {
			t.Fatalf("objects: %q", j.Response.Body())
		}
		objects, err1 := strconv.Atoi(f[0])
		blocks, err2 := strconv.Atoi(f[1])
		if err1 != nil || err2 != nil {
			t.Fatalf("objects: %q", j.Response.Body())
		}
		return objects, blocks
	}
	shapes := []struct {
		app, raw string
		body     bool
	}{
		{"bench_app:app", "GET /p?q=1 HTTP/1.1\r\nHost: x\r\nCookie: a=1\r\nCookie: b=2\r\nX-Rare-Name: v\r\n\r\n", false},
		{"body_app:app", "GET /generator HTTP/1.1\r\nHost: x\r\n\r\n", false},
		{"input_app:app", "POST /readline HTTP/1.1\r\nHost: x\r\nContent-Length: 8\r\n\r\n", true},
		{"errors_app:app", "GET /raise-before HTTP/1.1\r\nHost: x\r\n\r\n", false},
	}
	serve := func(n int) {
		for i := 0; i < n; i++ {
			s := shapes[i%len(shapes)]
			j := newJob(t, loadApp(t, s.app), s.raw)
			if s.body {
				j.Body = &pieces{list: [][]byte{[]byte("ab\ncd\nef")}}
			}
			run(j)
			j.Response.Free()
			j.Response = nil
		}
	}
	get(t, "bench_app:quiet", "/on") // a traceback per failing request
	defer get(t, "bench_app:quiet", "/off")
	serve(2000) // warm: caches, interned keys, lazily made objects
	objects, blocks := count()
	serve(10000)
	objects2, blocks2 := count()
	t.Logf("gc objects %d -> %d, allocated blocks %d -> %d over 10000 requests", objects, objects2, blocks, blocks2)
	// One leaked reference per request would be 10000; a few hundred is
	// the noise of free lists and caches.
	if objects2-objects > 50 || blocks2-blocks > 500 {
		t.Errorf("growth over 10000 requests: %d gc objects, %d blocks", objects2-objects, blocks2-blocks)
	}
}
