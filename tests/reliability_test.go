//go:build linux

package tests

import (
	"bufio"
	"io"
	"net"
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

// TestHalfClose: a client that ends its side after complete requests
// (RFC 9112 §9.6) is answered, every pipelined request in turn, then
// closed; an ASGI app that never calls receive is not told of a
// disconnect. A client that really leaves gets nothing and costs no 500.
func TestHalfClose(t *testing.T) {
	for _, attr := range []string{"wsgi", "asgi"} {
		t.Run(attr, func(t *testing.T) {
			s := startReliability(t, attr, "--access-log")
			c, err := net.Dial("tcp", s.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(20 * time.Second))
			io.WriteString(c, "GET /a HTTP/1.1\r\nHost: h\r\n\r\nGET /b HTTP/1.1\r\nHost: h\r\n\r\nGET /c HTTP/1.1\r\nHost: h\r\n\r\n")
			if err := c.(*net.TCPConn).CloseWrite(); err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(c)
			for _, path := range []string{"/a", "/b", "/c"} {
				resp, body := readResponseTo(t, br, "GET")
				if resp.StatusCode != 200 || !strings.HasSuffix(body, path) && body != "ok" {
					t.Fatalf("%s after a half-close: %d %q\n%s", path, resp.StatusCode, body, s.logs)
				}
			}
			if rest, err := io.ReadAll(br); err != nil || len(rest) != 0 {
				t.Fatalf("after the answers: %q, %v; want the close", rest, err)
			}

			// A client that closes (not half-closes) while the app streams:
			// the app's send fails and the log shows no 500.
			c2, err := net.Dial("tcp", s.addr)
			if err != nil {
				t.Fatal(err)
			}
			io.WriteString(c2, "GET /big?left HTTP/1.1\r\nHost: h\r\n\r\n")
			c2.Read(make([]byte, 1))
			c2.Close()
			s.waitFile(t, "left", map[string]string{"wsgi": "GeneratorExit", "asgi": "ClientDisconnected"}[attr])
			s.stop()
			logs := s.logs.String()
			for _, bad := range []string{"\" 500 ", "\" 0 ", "Traceback"} {
				if strings.Contains(logs, bad) {
					t.Fatalf("log shows %q:\n%s", bad, logs)
				}
			}
		})
	}
}
