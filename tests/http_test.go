//go:build linux

package tests

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
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
			s := startWSGI(t, c.target, withVenv(t, c.args...)...)
			get, head, body := headAfterGet(t, s, "/stream")
			if get.StatusCode != 200 || body != "one two" {
				t.Fatalf("GET /stream: %d %q", get.StatusCode, body)
			}
			gathered := c.name == "wsgi-threads-0" || c.name == "wsgi" && wsgiInlineByDefault()
			if !gathered && (len(get.TransferEncoding) == 0 || get.Header.Get("Content-Length") != "") {
				// --threads 0 gathers a streamed body whole: it has a
				// length; --wsgi-inline auto gathers it when the I/O
				// thread runs it, which it may or may not.
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

// The app's own hop-by-hop fields no longer fail the request: its
// Connection: close closes the connection after the response (as under
// gunicorn and uvicorn); Keep-Alive, Upgrade and Proxy-Connection are
// dropped, with one warning, and the connection stays framed.
func TestHTTPAppHopByHopFields(t *testing.T) {
	for _, c := range []struct {
		name, target string
		args         []string
	}{
		{"wsgi", "http_app:app", nil},
		{"wsgi-threads-0", "http_app:app", []string{"--threads", "0"}},
		{"asgi", "http_asgi_app:app", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := startWSGI(t, c.target, withVenv(t, c.args...)...)
			conn := dial(t, s)
			defer conn.Close()
			br := bufio.NewReader(conn)
			for i := 0; i < 2; i++ {
				fmt.Fprint(conn, "GET /hop HTTP/1.1\r\nHost: x\r\n\r\n")
				resp, body := readResponseTo(t, br, "GET")
				if resp.StatusCode != 200 || body != "hop\n" && body != "/hop\n" || resp.Close || resp.Header.Get("X-Kept") != "yes" {
					t.Fatalf("GET /hop: %d %q close %v %v", resp.StatusCode, body, resp.Close, resp.Header)
				}
				for _, name := range []string{"Keep-Alive", "Upgrade", "Proxy-Connection"} {
					if v := resp.Header.Get(name); v != "" {
						t.Errorf("GET /hop: the app's %s: %q went out", name, v)
					}
				}
			}
			fmt.Fprint(conn, "GET /close HTTP/1.1\r\nHost: x\r\n\r\n")
			resp, _ := readResponseTo(t, br, "GET")
			if resp.StatusCode != 200 || !resp.Close { // Close: the head said "Connection: close"
				t.Fatalf("GET /close: %d close %v", resp.StatusCode, resp.Close)
			}
			conn.SetReadDeadline(time.Now().Add(20 * time.Second))
			if n, err := br.Read(make([]byte, 1)); err != io.EOF {
				t.Errorf("after the app's Connection: close the connection is open: read %d, %v", n, err)
			}
			s.stop()
			logs := s.logs.String()
			if n := strings.Count(logs, "hop-by-hop response field"); n != 1 || strings.Contains(logs, "Traceback") {
				t.Errorf("want one hop-by-hop warning (got %d) and no traceback:\n%s", n, logs)
			}
		})
	}
}

// The app's own Server and Date go out instead of the server's (as
// uvicorn keeps them); --no-server-header and --no-date-header leave the
// server's out; --header (M0_HEADER, one per line) adds a field to every
// response that does not set it, the server's own error answers too.
func TestHTTPServerDateAndDefaultHeaders(t *testing.T) {
	for _, c := range []struct {
		name, target string
		args         []string
	}{
		{"wsgi", "http_app:app", nil},
		{"wsgi-threads-0", "http_app:app", []string{"--threads", "0"}},
		{"asgi", "http_asgi_app:app", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := startWSGI(t, c.target, withVenv(t, c.args...)...)
			resp, _ := get(t, s.url("/hello"))
			if resp.Header.Get("Server") != "m0serve" || resp.Header.Get("Date") == "" {
				t.Errorf("GET /hello: Server %q Date %q", resp.Header.Get("Server"), resp.Header.Get("Date"))
			}
			resp, _ = get(t, s.url("/own-server"))
			if v := resp.Header.Values("Server"); len(v) != 1 || v[0] != "app-server/1.0" {
				t.Errorf("GET /own-server: Server %q, want the app's only", v)
			}
			if v := resp.Header.Values("Date"); len(v) != 1 || v[0] != "Thu, 01 Jan 2026 00:00:00 GMT" {
				t.Errorf("GET /own-server: Date %q, want the app's only", v)
			}
			s.stop()

			v := wsgiVariant("M0_HEADER=X-Frame-Options: DENY\nX-Extra:1")
			s = start(t, v, append(append([]string{"--app-dir", appsDir(t), "--no-server-header", "--no-date-header",
				"--header", "Strict-Transport-Security: max-age=60"}, c.args...), c.target)...)
			resp, _ = get(t, s.url("/hello"))
			if resp.Header.Get("Server") != "" || resp.Header.Get("Date") != "" ||
				resp.Header.Get("X-Frame-Options") != "DENY" || resp.Header.Get("X-Extra") != "1" ||
				resp.Header.Get("Strict-Transport-Security") != "max-age=60" {
				t.Errorf("GET /hello with flags: %v", resp.Header)
			}
			resp, _ = get(t, s.url("/own-server"))
			if resp.Header.Get("Server") != "app-server/1.0" || resp.Header.Get("Date") == "" ||
				len(resp.Header.Values("X-Frame-Options")) != 1 || resp.Header.Get("X-Frame-Options") != "SAMEORIGIN" ||
				resp.Header.Get("X-Extra") != "1" {
				t.Errorf("GET /own-server with flags: %v", resp.Header)
			}
			out, _ := rawExchange(t, s.addr, "GET / HTTP/1.1\r\n\r\n", 20*time.Second) // no Host: the server's 400
			if !strings.HasPrefix(out, "HTTP/1.1 400") || !strings.Contains(out, "\r\nX-Extra: 1\r\n") ||
				strings.Contains(out, "\r\nServer:") || strings.Contains(out, "\r\nDate:") {
				t.Errorf("the server's 400 with flags: %q", out)
			}
			s.stop()
		})
	}
}

// A --header the server cannot send is a configuration mistake.
func TestHTTPHeaderFlagErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		env  string
		want string
	}{
		{[]string{"--header", "no-colon"}, "", `--header: "no-colon": want NAME:VALUE`},
		{[]string{"--header", "Bad Name: x"}, "", "want NAME:VALUE"},
		{[]string{"--header", "Content-Length: 5"}, "", "the server writes it"},
		{[]string{"--header", "Date: today"}, "", "--no-date-header"},
		{nil, "M0_HEADER=X-Ok: 1\nConnection: close", "--header: \"Connection: close\""},
	} {
		env := cleanEnv()
		if c.env != "" {
			env = append(env, c.env)
		}
		status, out := runToExit(t, env, append(c.args, "--port", "0", "--native", "hello")...)
		if status != 2 || !strings.Contains(out, c.want) || strings.Count(out, "\n") != 1 {
			t.Errorf("%q %q: exit %d, want 2 and one line with %q:\n%s", c.args, c.env, status, c.want, out)
		}
	}
}

// With --ws none a WebSocket handshake reaches an ASGI app as a plain
// HTTP request (tests/asgi_websocket_test.go has the websocket scope), and
// the connection serves on; a WSGI app, which has no WebSocket, gets it as
// a plain request.
func TestHTTPWebSocketHandshake(t *testing.T) {
	const handshake = "GET /ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n" +
		"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
	s := startWSGI(t, "http_asgi_app:app", "--ws", "none")
	conn := dial(t, s)
	defer conn.Close()
	br := bufio.NewReader(conn)
	for i := 0; i < 2; i++ {
		fmt.Fprint(conn, handshake)
		resp, body := readResponseTo(t, br, "GET")
		if resp.StatusCode != 200 || body != "/ws\n" || resp.Close {
			t.Fatalf("handshake with --ws none: %d %q close %v", resp.StatusCode, body, resp.Close)
		}
	}
	fmt.Fprint(conn, "GET /after HTTP/1.1\r\nHost: x\r\n\r\n")
	if resp, body := readResponseTo(t, br, "GET"); resp.StatusCode != 200 || body != "/after\n" {
		t.Fatalf("after the handshakes: %d %q", resp.StatusCode, body)
	}

	w := startWSGI(t, "environ_app:app")
	resp, body := rawResponse(t, w, handshake)
	if resp.StatusCode != 200 || !strings.Contains(body, `"HTTP_UPGRADE": "websocket"`) {
		t.Errorf("WSGI app: %d %q", resp.StatusCode, body)
	}
}

// rawResponse sends one raw request on a fresh connection and reads the
// response.
func rawResponse(t *testing.T, s *server, request string) (*http.Response, string) {
	t.Helper()
	conn := dial(t, s)
	defer conn.Close()
	fmt.Fprint(conn, request)
	return readResponseTo(t, bufio.NewReader(conn), "GET")
}

// --root-path matches whole path segments for WSGI: /app and /app/...
// are under /app, /appx/y is not and keeps its whole path; a trailing
// slash on the flag changes nothing. An ASGI path is the prefix and what
// the (stripping) proxy sent, as uvicorn makes it (TestRootPathAsUvicorn).
func TestHTTPRootPathSegments(t *testing.T) {
	for _, root := range []string{"/app", "/app/"} {
		w := startWSGI(t, "http_app:app", withVenv(t, "--root-path", root)...)
		for _, c := range []struct{ target, script, path string }{
			{"/app/x/y", "/app", "/x/y"},
			{"/appx/y", "/app", "/appx/y"},
			{"/other", "/app", "/other"},
		} {
			resp, body := get(t, w.url(c.target))
			var got struct {
				Script string `json:"script_name"`
				Path   string `json:"path_info"`
			}
			if err := json.Unmarshal([]byte(body), &got); resp.StatusCode != 200 || err != nil ||
				got.Script != c.script || got.Path != c.path {
				t.Errorf("--root-path %s, WSGI %s: %d %q, want SCRIPT_NAME %q PATH_INFO %q", root, c.target, resp.StatusCode, body, c.script, c.path)
			}
		}
		w.stop()

		a := startWSGI(t, "http_asgi_app:app", "--root-path", root)
		for _, c := range []struct{ target, path string }{
			{"/x/scope", "/app/x/scope"},
			{"/appx/scope", "/app/appx/scope"},
		} {
			resp, body := get(t, a.url(c.target))
			var got struct {
				Path     string `json:"path"`
				RootPath string `json:"root_path"`
			}
			if err := json.Unmarshal([]byte(body), &got); resp.StatusCode != 200 || err != nil ||
				got.Path != c.path || got.RootPath != "/app" {
				t.Errorf("--root-path %s, ASGI %s: %d %q, want path %q root_path /app", root, c.target, resp.StatusCode, body, c.path)
			}
		}
		a.stop()
	}
}
