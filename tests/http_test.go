//go:build linux

package tests

import (
	"bufio"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// headAfterGet sends GET then HEAD of path on one connection and returns
// both responses (the HEAD one's body must be empty).
func headAfterGet(t *testing.T, s *server, path string) (get, head *http.Response, body string) {
	t.Helper()
	c := dial(t, s)
	defer c.Close()
	br := bufio.NewReader(c)
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: x\r\n\r\nHEAD %s HTTP/1.1\r\nHost: x\r\n\r\n", path, path)
	get, body = readResponseTo(t, br, "GET")
	head, headBody := readResponseTo(t, br, "HEAD")
	if headBody != "" {
		t.Fatalf("HEAD %s: body %q", path, headBody)
	}
	return get, head, body
}

// A HEAD answer carries the GET's framing or none (RFC 9110 §9.3.2): a
// streamed body of unknown length goes chunked to GET, and HEAD, whose
// body the framework dropped, gets no Content-Length rather than 0.
func TestHTTPHeadOfStream(t *testing.T) {
	for _, c := range []struct {
		name, target string
		args         []string
	}{
		{"wsgi", "http_app:app", nil},
		{"wsgi-threads-0", "http_app:app", []string{"--threads", "0"}},
		{"asgi", "http_asgi_app:app", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := startWSGI(t, c.target, c.args...)
			get, head, body := headAfterGet(t, s, "/stream")
			if get.StatusCode != 200 || body != "one two" {
				t.Fatalf("GET /stream: %d %q", get.StatusCode, body)
			}
			if c.name != "wsgi-threads-0" && (len(get.TransferEncoding) == 0 || get.Header.Get("Content-Length") != "") {
				// --threads 0 gathers a streamed body whole: it has a length.
				t.Errorf("GET /stream: Transfer-Encoding %v Content-Length %q, want chunked", get.TransferEncoding, get.Header.Get("Content-Length"))
			}
			if head.StatusCode != 200 || head.Header.Get("Content-Length") != "" || len(head.TransferEncoding) != 0 {
				t.Errorf("HEAD /stream: %d Content-Length %q Transfer-Encoding %v, want neither", head.StatusCode,
					head.Header.Get("Content-Length"), head.TransferEncoding)
			}
			// A length the app gave still goes out for HEAD.
			get, head, body = headAfterGet(t, s, "/hello")
			if want := get.Header.Get("Content-Length"); want == "" || head.Header.Get("Content-Length") != want {
				t.Errorf("HEAD /hello: Content-Length %q, GET's %q (%q)", head.Header.Get("Content-Length"), want, body)
			}
			s.stop()
			if strings.Contains(s.logs.String(), "Traceback") {
				t.Fatalf("traceback in the log:\n%s", s.logs)
			}
		})
	}
}
