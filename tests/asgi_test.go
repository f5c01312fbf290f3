//go:build linux

package tests

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestASGIExample: examples/hello_asgi.py on io_uring and epoll, on both
// event loops on a thread of their own and on asyncio's stepped by the
// I/O thread: routes, a streamed (chunked) response, a request body
// echoed, keep-alive across them, the access log.
func TestASGIExample(t *testing.T) {
	examples, err := filepath.Abs("../examples")
	if err != nil {
		t.Fatal(err)
	}
	forEachVariant(t, true, func(t *testing.T, v variant) {
		for _, c := range []struct{ loopName, thread, describes string }{
			{"asyncio", "executor", "on the asyncio event loop, "},
			{"uvloop", "executor", "on the uvloop event loop, "},
			{"asyncio", "loop", "on the asyncio event loop on the I/O thread"},
		} {
			t.Run(c.loopName+"-"+c.thread, func(t *testing.T) {
				s := start(t, v, "--app-dir", examples, "--access-log", "--loop", c.loopName, "--asgi-thread", c.thread, "hello_asgi:app")
				if !strings.Contains(s.logs.String(), c.describes) {
					t.Fatalf("log does not say %q:\n%s", c.describes, s.logs)
				}
				c, err := net.Dial("tcp", s.addr)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				br := bufio.NewReader(c)
				fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
				resp, body := readResponseTo(t, br, "GET")
				if resp.StatusCode != 200 || body != "Hello, World!\n" || resp.ContentLength != 14 || resp.Status != "200 OK" {
					t.Fatalf("GET /: %s %q length %d", resp.Status, body, resp.ContentLength)
				}
				fmt.Fprintf(c, "GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
				resp, body = readResponseTo(t, br, "GET")
				if len(resp.TransferEncoding) != 1 || resp.TransferEncoding[0] != "chunked" || !strings.HasPrefix(body, "line 0\nline 1\n") || !strings.HasSuffix(body, "line 9\n") {
					t.Fatalf("GET /stream: %v %q", resp.TransferEncoding, body)
				}
				fmt.Fprintf(c, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\nhello there")
				resp, body = readResponseTo(t, br, "POST")
				if resp.StatusCode != 200 || body != "hello there" {
					t.Fatalf("POST /echo: %d %q", resp.StatusCode, body)
				}
				fmt.Fprintf(c, "HEAD / HTTP/1.1\r\nHost: x\r\n\r\n")
				resp, body = readResponseTo(t, br, "HEAD")
				if resp.StatusCode != 200 || body != "" {
					t.Fatalf("HEAD /: %d %q", resp.StatusCode, body)
				}
				fmt.Fprintf(c, "GET /missing HTTP/1.1\r\nHost: x\r\n\r\n")
				resp, _ = readResponseTo(t, br, "GET")
				if resp.Status != "404 Not Found" {
					t.Fatalf("GET /missing: %s", resp.Status)
				}
				checkNoTraceback(t, s)
				if !strings.Contains(s.logs.String(), `"POST /echo HTTP/1.1" 200 11`) {
					t.Fatalf("access log lacks the POST:\n%s", s.logs)
				}
			})
		}
	})
}

// TestASGISpec: checks written from the ASGI 3.0 HTTP spec, each with
// its counterpart, on io_uring and epoll.
func TestASGISpec(t *testing.T) {
	forEachVariant(t, true, func(t *testing.T, v variant) {
		s := startASGI(t, v, "asgi_spec_app:app")

		// Message order: start then body is served; body before start is
		// the app's error, answered 500 since nothing was sent; a task
		// returning without a response is a 500 too.
		if resp, body := get(t, s.url("/ordered")); resp.StatusCode != 200 || body != "in order" {
			t.Fatalf("ordered: %d %q", resp.StatusCode, body)
		}
		if resp, body := get(t, s.url("/body-first")); resp.StatusCode != 500 || strings.Contains(body, "too soon") {
			t.Fatalf("body before start: %d %q", resp.StatusCode, body)
		}
		if resp, _ := get(t, s.url("/no-response")); resp.StatusCode != 500 {
			t.Fatalf("no response: %d", resp.StatusCode)
		}

		// more_body: pieces (one empty) join into one chunked body ended
		// by the piece without more_body; an app failing after the head
		// leaves the body without its end (no last chunk), and the
		// connection closes.
		resp, body := get(t, s.url("/pieces"))
		if body != "one;two;three" || len(resp.TransferEncoding) == 0 {
			t.Fatalf("pieces: %q %v", body, resp.TransferEncoding)
		}
		out, _ := rawExchange(t, s.addr, "GET /fail-midway HTTP/1.1\r\nHost: x\r\n\r\n", 20*time.Second)
		if !strings.Contains(out, "200 OK") || !strings.Contains(out, "partial") || strings.HasSuffix(out, "0\r\n\r\n") {
			t.Fatalf("failing midway: %q", out)
		}

		// Trailers follow the chunked body's last chunk, on the wire and
		// as a client reads them (the refused content-type dropped); a
		// HEAD answer carries none, and the connection stays framed
		// for the next request. pathsend sends the file it names.
		out, _ = rawExchange(t, s.addr, "GET /trailers HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 20*time.Second)
		if !strings.HasSuffix(out, "\r\n\r\nd\r\nwith trailers\r\n0\r\nx-checksum: 1\r\nx-count: 2\r\n\r\n") {
			t.Fatalf("trailers on the wire: %q", out)
		}
		checkTrailers(t, s.addr)
		source, err := os.ReadFile(filepath.Join(appsDir(t), "asgi_spec_app.py"))
		if err != nil {
			t.Fatal(err)
		}
		resp, body = get(t, s.url("/pathsend"))
		if resp.StatusCode != 200 || body != string(source) || resp.ContentLength != int64(len(source)) {
			t.Fatalf("pathsend: %d length %d, body equal %v", resp.StatusCode, resp.ContentLength, body == string(source))
		}

		// Request body pieces: a chunked upload sent in two parts with a
		// pause between arrives with more_body true until the last.
		c, err := net.Dial("tcp", s.addr)
		if err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(c)
		fmt.Fprintf(c, "POST /request-pieces HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nfirst\r\n")
		time.Sleep(200 * time.Millisecond) // lets the first piece be read alone; the check holds either way
		fmt.Fprintf(c, "6\r\nsecond\r\n0\r\n\r\n")
		resp, body = readResponseTo(t, br, "POST")
		c.Close()
		pieces := strings.Split(body, ",")
		if resp.StatusCode != 200 {
			t.Fatalf("request pieces: %d %q", resp.StatusCode, body)
		}
		total := 0
		for i, p := range pieces {
			var n int
			var more string
			fmt.Sscanf(strings.Replace(p, ":", " ", 1), "%d %s", &n, &more)
			total += n
			if (more == "True") != (i < len(pieces)-1) {
				t.Fatalf("more_body wrong at piece %d: %q", i, body)
			}
		}
		if total != 11 {
			t.Fatalf("request pieces carry %d bytes, want 11: %q", total, body)
		}

		// Disconnect: after the response is done receive says
		// http.disconnect; and a task waiting on receive while the client
		// is still there learns of it when the client leaves.
		if _, body := get(t, s.url("/disconnect-after?after")); body != "done" {
			t.Fatalf("disconnect-after: %q", body)
		}
		s.waitFile(t, "after", "http.disconnect")
		c, err = net.Dial("tcp", s.addr)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "GET /wait-disconnect?waiting HTTP/1.1\r\nHost: x\r\n\r\n")
		c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		if n, _ := c.Read(make([]byte, 1)); n != 0 {
			t.Fatal("the long poll answered while its client was there")
		}
		c.Close()
		s.waitFile(t, "waiting", "http.disconnect")
		// A client that leaves at once, before or after the executor has
		// taken its request (either way round; both must tell the task).
		for i := 0; i < 5; i++ {
			c, err = net.Dial("tcp", s.addr)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(c, "GET /wait-disconnect?early%d HTTP/1.1\r\nHost: x\r\n\r\n", i)
			c.Close()
			s.waitFile(t, fmt.Sprintf("early%d", i), "http.disconnect")
		}

		checkNoTraceback(t, s.server, "RuntimeError: m0 failed after the head",
			"RuntimeError: unexpected ASGI message 'http.response.body'")
	})
}

// TestASGILifespan: a startup the app fails exits 3 with the app's
// message, and serves with --lifespan off; an app raising on the
// lifespan scope is served under auto and fails the start under on.
func TestASGILifespan(t *testing.T) {
	run := func(args ...string) (int, string) {
		return runToExit(t, cleanEnv(), append([]string{"--port", "0", "--app-dir", appsDir(t)}, args...)...)
	}
	if status, out := run("asgi_spec_app:failing_startup"); status != 3 || !strings.Contains(out, "m0 database unreachable") || strings.Contains(out, "serving on") {
		t.Fatalf("failed startup: status %d\n%s", status, out)
	}
	if status, out := run("--lifespan", "on", "asgi_spec_app:raising_lifespan"); status != 3 || !strings.Contains(out, "ValueError: m0 no lifespan here") {
		t.Fatalf("raising lifespan, on: status %d\n%s", status, out)
	}
	s := startASGI(t, wsgiVariant("M0_LIFESPAN=off"), "asgi_spec_app:failing_startup")
	if _, body := get(t, s.url("/")); body != "served without lifespan" {
		t.Fatalf("lifespan off: %q", body)
	}
	s.stop()
	s = startASGI(t, wsgiVariant(), "asgi_spec_app:raising_lifespan")
	if _, body := get(t, s.url("/")); body != "served despite lifespan" {
		t.Fatalf("raising lifespan, auto: %q", body)
	}
	s.stop()
}

// TestASGI2: a double-callable class is served under --interface asgi.
func TestASGI2(t *testing.T) {
	s := startASGI(t, wsgiVariant(), "asgi_spec_app:ASGI2App", "--interface", "asgi")
	if resp, body := get(t, s.url("/two")); resp.StatusCode != 200 || body != "asgi2 /two" {
		t.Fatalf("asgi2: %d %q", resp.StatusCode, body)
	}
	checkNoTraceback(t, s.server)
}

// checkTrailers reads /trailers as Go's client does, after a HEAD on the
// same connection: the trailer fields arrive in resp.Trailer once the
// body is read, and the connection serves the next request.
func checkTrailers(t *testing.T, addr string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	br := bufio.NewReader(c)
	fmt.Fprintf(c, "HEAD /trailers HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, body := readResponseTo(t, br, "HEAD")
	if resp.StatusCode != 200 || body != "" || resp.Trailer.Get("X-Checksum") != "" {
		t.Fatalf("HEAD /trailers: %d %q trailers %v", resp.StatusCode, body, resp.Trailer)
	}
	for i := 0; i < 2; i++ {
		fmt.Fprintf(c, "GET /trailers HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, body = readResponseTo(t, br, "GET")
		if resp.StatusCode != 200 || body != "with trailers" || len(resp.TransferEncoding) == 0 ||
			resp.Trailer.Get("X-Checksum") != "1" || resp.Trailer.Get("X-Count") != "2" || resp.Trailer.Get("Content-Type") != "" {
			t.Fatalf("GET /trailers #%d: %d %q %v trailers %v", i, resp.StatusCode, body, resp.TransferEncoding, resp.Trailer)
		}
	}
}

// TestASGILifespanOwnsItsTasks: at shutdown a task the lifespan started
// is left for the lifespan to end, as uvicorn does; only the requests'
// tasks are cancelled before lifespan shutdown. Cancelling every task
// first made anyio (Litestar's event emitter, a task group in the
// lifespan) cancel the lifespan itself: "lifespan shutdown failed:
// CancelledError".
func TestASGILifespanOwnsItsTasks(t *testing.T) {
	for _, thread := range []string{"loop", "executor"} {
		t.Run(thread, func(t *testing.T) {
			s := startASGI(t, wsgiVariant(), "asgi_lifespan_tasks_app:app", "--asgi-thread", thread)
			if _, body := get(t, s.url("/")); body != "ok" {
				t.Fatalf("GET /: %q", body)
			}
			checkNoTraceback(t, s.server)
			s.waitFile(t, "shutdown", "owned task running")
		})
	}
}
