package pybridge

import (
	"strconv"
	"testing"
)

// Python objects stay flat across many requests: the bridge leaks no
// reference per request (environ, input, headers, body).
func TestNoObjectGrowth(t *testing.T) {
	count := func() int {
		j := get(t, "bench_app:objects", "/")
		n, err := strconv.Atoi(string(j.Response.Body()))
		if err != nil {
			t.Fatalf("%q: %v", j.Response.Body(), err)
		}
		return n
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
			if s.app == "errors_app:app" && i%100 != 3 {
				continue // a traceback per request would flood the log
			}
			j := newJob(t, loadApp(t, s.app), s.raw)
			if s.body {
				j.Body = &pieces{list: [][]byte{[]byte("ab\ncd\nef")}}
			}
			run(j)
			j.Response.Free()
			j.Response = nil
		}
	}
	serve(2000) // warm: caches, interned keys, lazily made objects
	before := count()
	serve(10000)
	after := count()
	t.Logf("gc objects: %d before, %d after 10000 requests", before, after)
	if after-before > 50 {
		t.Errorf("gc objects grew by %d over 10000 requests", after-before)
	}
}
