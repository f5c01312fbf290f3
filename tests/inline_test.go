//go:build linux

package tests

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// threadOf asks inline_app which OS thread served a GET (no body) or a
// POST (a body), on one keep-alive connection.
func threadOf(t *testing.T, br *bufio.Reader, c interface{ Write([]byte) (int, error) }, method string) string {
	t.Helper()
	switch method {
	case "GET":
		fmt.Fprint(c, "GET /thread HTTP/1.1\r\nHost: x\r\n\r\n")
	case "POST":
		fmt.Fprint(c, "POST /thread HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello")
	}
	resp, body := readResponseTo(t, br, method)
	var thread string
	var length int
	if _, err := fmt.Sscanf(body, "%s %d", &thread, &length); err != nil || resp.StatusCode != 200 {
		t.Fatalf("%s /thread: %d %q: %v", method, resp.StatusCode, body, err)
	}
	if want := map[string]int{"GET": 0, "POST": 5}[method]; length != want {
		t.Fatalf("%s /thread read %d body bytes, want %d", method, length, want)
	}
	if resp.Header.Get("X-Inline-Test") != "yes" {
		t.Fatalf("%s /thread lost the app's header: %v", method, resp.Header)
	}
	return thread
}

// TestWSGIThreadsZero: with --threads 0, and with --wsgi-inline auto
// while the app is quick and idle, a request without a body runs on the
// loop thread (every such request on the same thread, another than the
// one requests with a body run on); with --wsgi-inline off every request
// runs on the one handler thread. All answer alike.
func TestWSGIThreadsZero(t *testing.T) {
	for _, mode := range []string{"0", "1", "auto"} {
		t.Run("threads="+mode, func(t *testing.T) {
			args := []string{"--threads", mode, "--wsgi-inline", "off"}
			if mode == "auto" {
				args = []string{"--threads", "1", "--wsgi-inline", "auto"}
			}
			s := startWSGI(t, "inline_app:app", args...)
			c := dial(t, s)
			defer c.Close()
			br := bufio.NewReader(c)
			if mode == "auto" {
				// auto starts an app handed off, until it has been quick
				// for a while: GET until one runs elsewhere than a POST
				// (bounded; on a busy machine a preempted request starts
				// the count again).
				handler := threadOf(t, br, c, "POST")
				for i := 0; i < 2000 && threadOf(t, br, c, "GET") == handler; i++ {
				}
			}
			get1, post, get2 := threadOf(t, br, c, "GET"), threadOf(t, br, c, "POST"), threadOf(t, br, c, "GET")
			if get1 != get2 {
				t.Fatalf("two GETs ran on threads %s and %s", get1, get2)
			}
			if inline := get1 != post; inline != (mode != "1") {
				t.Fatalf("%v: GET on thread %s, POST on %s", args, get1, post)
			}
			checkValidatorLog(t, s)
		})
	}
}

// TestWSGIThreadsZeroResponses: the inline path's answers match the
// handler thread's: a streamed body arrives whole (with its length when
// the I/O thread gathered it), HEAD
// sends no body, an app that raises gets a 500 and the next request is
// served, and the access log has a line per request.
func TestWSGIThreadsZeroResponses(t *testing.T) {
	s := startWSGI(t, "inline_app:app", "--threads", "0", "--access-log")
	c := dial(t, s)
	defer c.Close()
	br := bufio.NewReader(c)

	fmt.Fprint(c, "GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, body := readResponseTo(t, br, "GET")
	// Gathered, with its length; or, on a machine so busy that the
	// generator ran past the I/O thread's 1 ms, finished by the handler
	// thread, chunked.
	gathered := resp.ContentLength == 6 && len(resp.TransferEncoding) == 0
	chunked := resp.ContentLength == -1 && len(resp.TransferEncoding) == 1
	if resp.StatusCode != 200 || body != "abcdef" || !gathered && !chunked {
		t.Fatalf("GET /stream: %d %q length %d %v", resp.StatusCode, body, resp.ContentLength, resp.TransferEncoding)
	}

	fmt.Fprint(c, "HEAD /thread HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, body = readResponseTo(t, br, "HEAD")
	// Its length when the I/O thread gathered the (validator-wrapped)
	// body; none when a busy machine left it to the handler thread, which
	// streams it and, for HEAD, sends no framing at all.
	if length := resp.Header.Get("Content-Length"); resp.StatusCode != 200 || body != "" || length == "0" {
		t.Fatalf("HEAD /thread: %d %q %v", resp.StatusCode, body, resp.Header)
	}

	fmt.Fprint(c, "GET /raise HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, _ = readResponseTo(t, br, "GET")
	if resp.StatusCode != http.StatusInternalServerError {
		t.Fatalf("GET /raise: %d, want 500", resp.StatusCode)
	}
	// The connection may be closed after a 500; a new one is served.
	c2 := dial(t, s)
	defer c2.Close()
	threadOf(t, bufio.NewReader(c2), c2, "GET")

	s.stop()
	logs := s.logs.String()
	if !strings.Contains(logs, "RuntimeError: raised before start_response, on purpose") {
		t.Fatalf("no traceback for /raise in the log:\n%s", logs)
	}
	for _, line := range []string{`"GET /stream HTTP/1.1" 200 6`, `"HEAD /thread HTTP/1.1" 200 -`, `"GET /raise HTTP/1.1" 500`} {
		if !strings.Contains(logs, line) {
			t.Errorf("access log lacks %s:\n%s", line, logs)
		}
	}
}

// TestKeepAliveSparesASend: the idle deadline (--keepalive-timeout) is
// for a connection with nothing to do, not one whose response is still
// going out to a client that reads slowly: that is --send-timeout's to
// judge. A 64 MiB response the client starts reading after 3 s, with a
// 1 s keep-alive timeout, arrives whole (it was cut off at about the
// socket buffers' size before).
func TestKeepAliveSparesASend(t *testing.T) {
	for _, threads := range []string{"0", "1"} {
		t.Run("threads="+threads, func(t *testing.T) {
			s := startWSGI(t, "inline_app:app", "--threads", threads, "--keepalive-timeout", "1")
			c := dial(t, s)
			defer c.Close()
			fmt.Fprint(c, "GET /big?64 HTTP/1.1\r\nHost: x\r\n\r\n")
			time.Sleep(3 * time.Second)
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatal(err)
			}
			n, err := io.Copy(io.Discard, resp.Body)
			if err != nil || n != 64<<20 {
				t.Fatalf("read %d of %d body bytes: %v", n, 64<<20, err)
			}
		})
	}
}
