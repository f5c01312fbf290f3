//go:build linux

package tests

import (
	"strings"
	"testing"
	"time"
)

// startReliability serves tests/apps/reliability_app.py's WSGI or ASGI
// app (attr "wsgi" or "asgi") on the default backend.
func startReliability(t *testing.T, attr string, args ...string) *asgiServer {
	t.Helper()
	return startASGI(t, wsgiVariant(), "reliability_app:"+attr, args...)
}

// TestHostValidation: a Host value that is not host [":" port] is a 400
// before the app runs, and an absolute-form target's authority is the host
// the app sees, in HTTP_HOST and in the ASGI headers (RFC 9112 §3.2).
func TestHostValidation(t *testing.T) {
	for _, attr := range []string{"wsgi", "asgi"} {
		t.Run(attr, func(t *testing.T) {
			s := startReliability(t, attr)
			for _, bad := range []string{"a b", "a/b", "user@a", "a, b", "<a>", "a:8o"} {
				out, _ := rawExchange(t, s.addr, "GET /host HTTP/1.1\r\nHost: "+bad+"\r\n\r\n", 10*time.Second)
				if !strings.HasPrefix(out, "HTTP/1.1 400 ") {
					t.Errorf("Host %q: got %q, want 400", bad, out)
				}
			}
			out, _ := rawExchange(t, s.addr, "GET http://a/host HTTP/1.1\r\nHost:\r\n\r\n", 10*time.Second)
			if !strings.HasPrefix(out, "HTTP/1.1 400 ") {
				t.Errorf("empty Host with an absolute-form target: got %q, want 400", out)
			}
			cases := []struct{ request, body string }{
				{"GET /host HTTP/1.1\r\nHost: b.example:81\r\nConnection: close\r\n\r\n", "b.example:81|/host"},
				{"GET http://a.example:8080/host?q HTTP/1.1\r\nHost: b.example\r\nConnection: close\r\n\r\n", "a.example:8080|/host"},
				{"GET http://[::1]/host HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n", "[::1]|/host"},
			}
			for _, c := range cases {
				out, _ := rawExchange(t, s.addr, c.request, 10*time.Second)
				if !strings.HasPrefix(out, "HTTP/1.1 200 ") || !strings.HasSuffix(out, "\r\n\r\n"+c.body) {
					t.Errorf("%q: got %q, want 200 with %q", c.request, out, c.body)
				}
			}
		})
	}
}

// TestRefusedTargets: an encoded NUL in the path is a 400 before the app
// runs (as nginx answers), and CONNECT, which no handler tunnels, is a 405
// that closes the connection instead of reaching the app.
func TestRefusedTargets(t *testing.T) {
	for _, attr := range []string{"wsgi", "asgi"} {
		t.Run(attr, func(t *testing.T) {
			s := startReliability(t, attr)
			out, _ := rawExchange(t, s.addr, "GET /host%00.txt HTTP/1.1\r\nHost: h\r\n\r\n", 10*time.Second)
			if !strings.HasPrefix(out, "HTTP/1.1 400 ") {
				t.Errorf("%%00 in the path: got %q, want 400", out)
			}
			out, _ = rawExchange(t, s.addr, "GET /host?q=%00 HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n", 10*time.Second)
			if !strings.HasPrefix(out, "HTTP/1.1 200 ") {
				t.Errorf("%%00 in the query: got %q, want 200", out)
			}
			// The tunnel's first bytes follow the CONNECT head at once: they
			// must not be read as a request.
			out, _ = rawExchange(t, s.addr, "CONNECT h:443 HTTP/1.1\r\nHost: h:443\r\n\r\nGET /host HTTP/1.1\r\nHost: h\r\n\r\n", 10*time.Second)
			if !strings.HasPrefix(out, "HTTP/1.1 405 ") || !strings.Contains(out, "\r\nAllow: \r\n") || strings.Count(out, "HTTP/1.1 ") != 1 {
				t.Errorf("CONNECT: got %q, want one 405 with Allow", out)
			}
		})
	}
}
