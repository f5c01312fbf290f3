//go:build linux

package tests

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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

// TestRefusedTargets: an encoded NUL in the path and an absolute-form
// target of another scheme than http(s) are a 400 before the app runs (as
// nginx answers), and CONNECT, which no handler tunnels, is a 405 that
// closes the connection instead of reaching the app. OPTIONS * reaches
// the app with the path "*" (uvicorn's, gunicorn's).
func TestRefusedTargets(t *testing.T) {
	for _, attr := range []string{"wsgi", "asgi"} {
		t.Run(attr, func(t *testing.T) {
			s := startReliability(t, attr)
			out, _ := rawExchange(t, s.addr, "GET /host%00.txt HTTP/1.1\r\nHost: h\r\n\r\n", 10*time.Second)
			if !strings.HasPrefix(out, "HTTP/1.1 400 ") {
				t.Errorf("%%00 in the path: got %q, want 400", out)
			}
			out, _ = rawExchange(t, s.addr, "GET ftp://h/host HTTP/1.1\r\nHost: h\r\n\r\n", 10*time.Second)
			if !strings.HasPrefix(out, "HTTP/1.1 400 ") {
				t.Errorf("ftp:// absolute-form target: got %q, want 400", out)
			}
			out, _ = rawExchange(t, s.addr, "OPTIONS * HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n", 10*time.Second)
			if !strings.HasPrefix(out, "HTTP/1.1 200 ") || !strings.HasSuffix(out, "\r\n\r\n*|*") {
				t.Errorf("OPTIONS *: got %q, want the path and raw path *", out)
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

// waitLog waits for a log line containing want; the limit only bounds a
// failing test.
func waitLog(t *testing.T, s *server, want string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(s.logs.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("no log line with %q:\n%s", want, s.logs)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// keepAliveGet sends a GET on c and reads its response, leaving c open.
func keepAliveGet(t *testing.T, c net.Conn) {
	t.Helper()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	if resp, _ := readResponseTo(t, bufio.NewReader(c), "GET"); resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
}

// TestConnectionLimits: past --max-connections-per-ip a client's new
// connections are reset at accept, and served again once it closes one;
// reaching --max-connections is logged (once per interval, not per
// connection), and the waiting client is served when a slot frees.
func TestConnectionLimits(t *testing.T) {
	forEachVariant(t, true, func(t *testing.T, v variant) {
		s := start(t, v, "--native", "hello", "--max-connections-per-ip", "2")
		var held []net.Conn
		for i := 0; i < 2; i++ {
			c, err := net.Dial("tcp", s.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			keepAliveGet(t, c)
			held = append(held, c)
		}
		for i := 0; i < 3; i++ {
			// The reset may come before connect returns, at the write (which
			// then takes the socket's error, and the read sees only EOF), or
			// at the read.
			c, err := net.DialTimeout("tcp", s.addr, 10*time.Second)
			if err == nil {
				c.SetDeadline(time.Now().Add(10 * time.Second))
				_, err = io.WriteString(c, "GET / HTTP/1.1\r\nHost: h\r\n\r\n")
				if err == nil {
					var out []byte
					out, err = io.ReadAll(c)
					if len(out) != 0 {
						t.Fatalf("connection 3 from one address answered %q", out)
					}
				}
				c.Close()
			}
			if errors.Is(err, syscall.EPIPE) {
				err = syscall.ECONNRESET // a write after the reset
			}
			if !errors.Is(err, syscall.ECONNRESET) {
				t.Fatalf("connection 3 from one address: %v; want a reset", err)
			}
		}
		waitLog(t, s, "127.0.0.1 has 2 connections open, the --max-connections-per-ip limit")
		if n := strings.Count(s.logs.String(), "--max-connections-per-ip limit"); n != 1 {
			t.Fatalf("%d log lines for the per-address limit, want 1 per interval:\n%s", n, s.logs)
		}
		held[0].Close()
		deadline := time.Now().Add(20 * time.Second)
		for {
			// Reset until the loop has seen the close: connect, write or
			// read may each fail meanwhile.
			var out []byte
			if c, err := net.DialTimeout("tcp", s.addr, 10*time.Second); err == nil {
				c.SetDeadline(time.Now().Add(10 * time.Second))
				if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n"); err == nil {
					out, _ = io.ReadAll(c)
				}
				c.Close()
			}
			if strings.HasPrefix(string(out), "HTTP/1.1 200 ") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no connection served after one of the two closed: %q", out)
			}
			time.Sleep(20 * time.Millisecond)
		}

		s = start(t, v, "--native", "hello", "--max-connections", "2")
		for i := 0; i < 2; i++ {
			c, err := net.Dial("tcp", s.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			keepAliveGet(t, c)
			held[i] = c
		}
		waiting, err := net.Dial("tcp", s.addr) // completes in the backlog
		if err != nil {
			t.Fatal(err)
		}
		defer waiting.Close()
		waitLog(t, s, "2 connections open, the --max-connections limit")
		held[0].Close()
		keepAliveGet(t, waiting)
	})
}

// TestSendTimeout: a client that asks for a large response and reads
// none of it is cut off after --send-timeout: the WSGI handler thread
// writing to it is freed for the next request (with --threads 1 every
// other client waited behind it), and the ASGI app's send raises.
func TestSendTimeout(t *testing.T) {
	forEachVariant(t, true, func(t *testing.T, v variant) {
		for _, attr := range []string{"wsgi", "asgi"} {
			t.Run(attr, func(t *testing.T) { testSendTimeout(t, v, attr) })
		}
	})
}

func testSendTimeout(t *testing.T, v variant, attr string) {
	s := startASGI(t, v, "reliability_app:"+attr, "--threads", "1", "--send-timeout", "2")
	stalled, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.Close()
	// A small receive buffer: the server's writes stall sooner.
	stalled.(*net.TCPConn).SetReadBuffer(4096)
	io.WriteString(stalled, "GET /big?stalled HTTP/1.1\r\nHost: h\r\n\r\n")
	// Served only once the stalled response's thread is free
	// (WSGI); the bound only ends a failing test.
	c, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	io.WriteString(c, "GET /host HTTP/1.1\r\nHost: h\r\n\r\n")
	resp, body := readResponseTo(t, bufio.NewReader(c), "GET")
	if resp.StatusCode != 200 || body != "h|/host" {
		t.Fatalf("the other client: %d %q", resp.StatusCode, body)
	}
	s.waitFile(t, "stalled", map[string]string{"wsgi": "GeneratorExit", "asgi": "ClientDisconnected"}[attr])
	waitLog(t, s.server, "--send-timeout (2s): connection closed")
}

// TestSlowBodies: with --threads 1, a client trickling a small body does
// not hold the handler thread (the loop gathers the body before the
// request is queued), and one trickling a large body gets 408 once it
// falls below --body-min-rate, freeing the thread; --body-timeout, a
// stall between bytes, never trips on either.
func TestSlowBodies(t *testing.T) {
	forEachVariant(t, true, testSlowBodies)
}

func testSlowBodies(t *testing.T, v variant) {
	s := startASGI(t, v, "reliability_app:wsgi", "--threads", "1", "--body-timeout", "120", "--body-min-rate", "1000")
	get := func() {
		t.Helper()
		c, err := net.Dial("tcp", s.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		// Bounds a failing test only: answered at once when the thread
		// is free.
		c.SetDeadline(time.Now().Add(30 * time.Second))
		io.WriteString(c, "GET /host HTTP/1.1\r\nHost: h\r\n\r\n")
		if resp, body := readResponseTo(t, bufio.NewReader(c), "GET"); resp.StatusCode != 200 || body != "h|/host" {
			t.Fatalf("the other client: %d %q", resp.StatusCode, body)
		}
	}

	small, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer small.Close()
	io.WriteString(small, "POST /body HTTP/1.1\r\nHost: h\r\nContent-Length: 100\r\n\r\n0123456789")
	get()
	io.WriteString(small, strings.Repeat("x", 90))
	small.SetDeadline(time.Now().Add(30 * time.Second))
	if resp, body := readResponseTo(t, bufio.NewReader(small), "POST"); resp.StatusCode != 200 || body != "100" {
		t.Fatalf("the small body: %d %q", resp.StatusCode, body)
	}

	large, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer large.Close()
	io.WriteString(large, "POST /body HTTP/1.1\r\nHost: h\r\nContent-Length: 200000\r\n\r\n"+strings.Repeat("x", 70000))
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Second):
				if _, err := large.Write([]byte("x")); err != nil {
					return
				}
			}
		}
	}()
	large.SetReadDeadline(time.Now().Add(60 * time.Second))
	resp, _ := readResponseTo(t, bufio.NewReader(large), "POST")
	if resp.StatusCode != 408 {
		t.Fatalf("the trickled large body: %d, want 408", resp.StatusCode)
	}
	get()
	waitLog(t, s.server, "slower than --body-min-rate (1000 bytes/s): 408")
}

// TestNoHeadOfLineBlocking: with --threads 2, requests that reach the
// loop together with one that blocks in the app are served by the other
// thread while it blocks. Each thread used to take a batch (8 jobs with
// two threads), so a request in the blocked thread's batch waited for it
// with the other thread idle.
func TestNoHeadOfLineBlocking(t *testing.T) {
	s := startReliability(t, "wsgi", "--threads", "2")
	const fast = 7
	requests := []string{"GET /block?held HTTP/1.1\r\nHost: h\r\n\r\n"}
	for i := 0; i < fast; i++ {
		requests = append(requests, "GET /host HTTP/1.1\r\nHost: h\r\n\r\n")
	}
	conns := make([]net.Conn, len(requests))
	for i := range conns {
		c, err := net.Dial("tcp", s.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns[i] = c
		// All but the last byte now: the last bytes then arrive together
		// and the loop queues the requests in one pass, the blocking one
		// first.
		io.WriteString(c, requests[i][:len(requests[i])-1])
	}
	time.Sleep(100 * time.Millisecond) // let the partial heads be read: not an assertion
	for _, c := range conns {
		c.Write([]byte{'\n'})
	}
	answered := make(chan error, fast)
	for _, c := range conns[1:] {
		go func(c net.Conn) {
			c.SetDeadline(time.Now().Add(60 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err == nil {
				resp.Body.Close()
			}
			answered <- err
		}(c)
	}
	s.waitFile(t, "held.entered", "1")
	// Bounds a failing test only: the other thread answers at once.
	limit := time.After(15 * time.Second)
	for i := 0; i < fast; i++ {
		select {
		case err := <-answered:
			if err != nil {
				t.Fatal(err)
			}
		case <-limit:
			t.Fatalf("%d of %d requests still wait behind the blocked one", fast-i, fast)
		}
	}
	os.WriteFile(filepath.Join(s.dir, "held.release"), nil, 0o644)
	conns[0].SetDeadline(time.Now().Add(30 * time.Second))
	if resp, body := readResponseTo(t, bufio.NewReader(conns[0]), "GET"); resp.StatusCode != 200 || body != "released" {
		t.Fatalf("the blocked request: %d %q", resp.StatusCode, body)
	}
}

// TestAcceptAfterEMFILE: an app thread that holds every descriptor the
// process may open for a while (the server's accept fails with EMFILE
// meanwhile) leaves the server accepting once it lets them go, on each
// backend, although none of the server's own connections closed. Before,
// accept waited for one of them to close and stayed deaf for good.
func TestAcceptAfterEMFILE(t *testing.T) {
	requireCommand(t, "prlimit")
	for _, v := range variants[:2] {
		t.Run(v.name, func(t *testing.T) {
			s := startCommand(t, v, []string{"prlimit", "--nofile=256"}, "--app-dir", appsDir(t),
				"--keepalive-timeout", "300", "reliability_app:wsgi")
			// The connection that asks stays open: its close would have
			// resumed accept the old way too.
			hog, err := net.DialTimeout("tcp", s.addr, 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer hog.Close()
			hog.SetDeadline(time.Now().Add(60 * time.Second))
			br := bufio.NewReader(hog)
			if _, err := hog.Write([]byte("GET /hog?1500 HTTP/1.1\r\nHost: h\r\n\r\n")); err != nil {
				t.Fatal(err)
			}
			resp, body := readResponseTo(t, br, "GET")
			if resp.StatusCode != 200 || body == "0" {
				t.Fatalf("/hog: %d %q\n%s", resp.StatusCode, body, s.logs)
			}
			// Queued in the backlog while accept fails; served once the
			// descriptors come back.
			client := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
			for i := 0; i < 3; i++ {
				resp, err := client.Get(s.url("/host"))
				if err != nil {
					t.Fatalf("request %d after the descriptors came back: %v\n%s", i, err, s.logs)
				}
				resp.Body.Close()
				if resp.StatusCode != 200 {
					t.Fatalf("request %d: %d", i, resp.StatusCode)
				}
			}
			s.stop()
			logs := s.logs.String()
			if !strings.Contains(logs, "too many open files; accepting pauses") || !strings.Contains(logs, "accepting connections again") {
				t.Errorf("want a line for the pause and one for the resumption:\n%s", logs)
			}
		})
	}
}
