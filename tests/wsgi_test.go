//go:build linux

package tests

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestWSGIExample serves examples/hello_wsgi.py (what `make run` serves)
// on every full backend, with the access log on.
func TestWSGIExample(t *testing.T) {
	examples, err := filepath.Abs("../examples")
	if err != nil {
		t.Fatal(err)
	}
	forEachVariant(t, true, func(t *testing.T, v variant) {
		s := start(t, v, "--app-dir", examples, "--access-log", "hello_wsgi:app")
		c := dial(t, s)
		defer c.Close()
		br := bufio.NewReader(c)
		// Pipelined: a plain GET, a HEAD, a POST body, a stream, a 404.
		io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"+
			"HEAD / HTTP/1.1\r\nHost: x\r\n\r\n"+
			"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\nhello world"+
			"GET /stream HTTP/1.1\r\nHost: x\r\n\r\n"+
			"GET /nope?q=1 HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, body := readResponseTo(t, br, "GET")
		if resp.StatusCode != 200 || body != "Hello, World!" || resp.ContentLength != 13 {
			t.Fatalf("GET /: %d %q length %d", resp.StatusCode, body, resp.ContentLength)
		}
		if got := resp.Header["Server"]; len(got) != 1 || got[0] != "m0serve" {
			t.Fatalf("Server fields %q", got)
		}
		resp, body = readResponseTo(t, br, "HEAD")
		if resp.StatusCode != 200 || body != "" || resp.Header.Get("Content-Length") != "13" {
			t.Fatalf("HEAD /: %d %q Content-Length %q", resp.StatusCode, body, resp.Header.Get("Content-Length"))
		}
		resp, body = readResponseTo(t, br, "POST")
		if resp.StatusCode != 200 || body != "hello world" {
			t.Fatalf("POST /echo: %d %q", resp.StatusCode, body)
		}
		resp, body = readResponseTo(t, br, "GET")
		// Chunked as it streams; or run on the I/O thread, gathered and
		// sent with its length.
		framed := len(resp.TransferEncoding) == 1 || wsgiInlineByDefault() && resp.ContentLength == int64(len(body))
		if resp.StatusCode != 200 || !framed || !strings.HasPrefix(body, "line 0\nline 1\n") || !strings.HasSuffix(body, "line 4\n") {
			t.Fatalf("GET /stream: %d %v %q", resp.StatusCode, resp.TransferEncoding, body)
		}
		resp, body = readResponseTo(t, br, "GET")
		if resp.StatusCode != 404 || body != "not found\n" {
			t.Fatalf("GET /nope: %d %q", resp.StatusCode, body)
		}
		// Expect: 100-continue: the app's first wsgi.input read asks for
		// the body.
		io.WriteString(c, "POST /echo HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n")
		line, err := br.ReadString('\n')
		if err != nil || line != "HTTP/1.1 100 Continue\r\n" {
			t.Fatalf("want 100 Continue, got %q %v", line, err)
		}
		if blank, _ := br.ReadString('\n'); blank != "\r\n" {
			t.Fatalf("100 Continue then %q", blank)
		}
		io.WriteString(c, "ping")
		resp, body = readResponseTo(t, br, "POST")
		if resp.StatusCode != 200 || body != "ping" {
			t.Fatalf("POST /echo after 100: %d %q", resp.StatusCode, body)
		}
		s.stop()
		logs := s.logs.String()
		for _, want := range []string{
			`"GET / HTTP/1.1" 200 13`,
			`"HEAD / HTTP/1.1" 200 -`,
			`"POST /echo HTTP/1.1" 200 11`,
			`"GET /stream HTTP/1.1" 200 35`,
			`"GET /nope?q=1 HTTP/1.1" 404 10`,
			`"POST /echo HTTP/1.1" 200 4`,
		} {
			line := regexp.MustCompile(`(?m)^127\.0\.0\.1 - - \[\d\d/[A-Z][a-z][a-z]/\d{4}:\d\d:\d\d:\d\d \+0000\] ` + regexp.QuoteMeta(want) + `$`)
			if !line.MatchString(logs) {
				t.Errorf("no access-log line %s in:\n%s", want, logs)
			}
		}
	})
}

// TestWSGIErrors: each app error gets its documented outcome through the
// binary (pybridge/doc.go): before the head is final, a plain 500 and the
// traceback in the server's log; after it, a connection closed without a
// valid end (no terminal chunk). The next request is served either way,
// and every response iterable was closed.
func TestWSGIErrors(t *testing.T) {
	s := startWSGI(t, "errors_app:app")
	cases := []struct {
		path      string
		logged    string // in the log entry
		traceback bool   // the app raised: a Python traceback is logged
		aborted   bool   // the head went out: no valid end
		closed    string // the iterable whose close() was called
	}{
		{"/raise-before", "KeyError: 'm0test raised before start_response'", true, false, ""},
		{"/raise-after-start", "KeyError: 'm0test raised after start_response'", true, false, ""},
		{"/bad-status", "OK", true, false, ""},
		{"/bad-header", "X-Bad", true, false, ""},
		{"/non-bytes", "must be bytes, got str", false, false, ""},
		{"/no-start", "before calling start_response", false, false, "no-start"},
		{"/non-bytes-stream", "must be bytes, got str", false, true, "non-bytes-stream"},
		{"/raise-mid-stream", "RuntimeError: m0test mid-stream", true, true, "raise-mid-stream"},
	}
	// Clear the app's record of close() calls; each /ok then reports its
	// predecessor's close and the error case's.
	httpGet(t, http.DefaultClient, s.url("/ok"))
	for _, tc := range cases {
		t.Run(tc.path, func(t *testing.T) {
			before := len(s.logs.String())
			out, err := rawExchange(t, s.addr, "GET "+tc.path+" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 20*time.Second)
			if err != nil {
				t.Fatalf("reading the response: %v (got %q)", err, out)
			}
			aborted := tc.aborted
			if aborted && wsgiInlineByDefault() && strings.HasPrefix(out, "HTTP/1.1 500 ") {
				// Run on the I/O thread, the body was being gathered:
				// nothing had gone out, so the failure is a plain 500.
				aborted = false
			}
			if aborted {
				if !strings.HasPrefix(out, "HTTP/1.1 200 OK\r\n") || !strings.Contains(out, "Transfer-Encoding: chunked") {
					t.Fatalf("want a 200 chunked head before the abort, got %q", out)
				}
				if strings.HasSuffix(out, "0\r\n\r\n") {
					t.Fatalf("an aborted body ended validly: %q", out)
				}
			} else {
				resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(out)), nil)
				if err != nil {
					t.Fatalf("%v: %q", err, out)
				}
				body, err := io.ReadAll(resp.Body)
				if err != nil || resp.StatusCode != 500 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") || len(body) == 0 {
					t.Fatalf("want a plain 500, got %d %q %q (%v)", resp.StatusCode, resp.Header.Get("Content-Type"), body, err)
				}
				if strings.Contains(string(body), "Traceback") || strings.Contains(string(body), tc.logged) && tc.logged != "OK" {
					t.Fatalf("the 500's body shows the error to the client: %q", body)
				}
			}
			// The traceback is written before the response goes out, but
			// reaches us through a pipe: wait for it.
			waitForLog(t, s, before, tc.logged, tc.traceback)
			// The next request succeeds, and says which iterables were
			// closed since the last /ok.
			resp, body := httpGet(t, http.DefaultClient, s.url("/ok"))
			want := "fine; closed: ok"
			if tc.closed != "" {
				want += "," + tc.closed
			}
			if resp.StatusCode != 200 || body != want {
				t.Fatalf("next request: %d %q, want closed %q", resp.StatusCode, body, tc.closed)
			}
		})
	}
	s.stop()
	logs := s.logs.String()
	if strings.Contains(logs, "goroutine ") || strings.Contains(logs, "panic") {
		t.Fatalf("a Go panic in the log:\n%s", logs)
	}
}

// waitForLog waits until the log past offset holds want (and a Python
// traceback, when the app raised).
func waitForLog(t *testing.T, s *server, offset int, want string, traceback bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		tail := s.logs.String()[offset:]
		if strings.Contains(tail, want) && (!traceback || strings.Contains(tail, "Traceback (most recent call last)")) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no log entry with %q (traceback %v):\n%s", want, traceback, tail)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestWSGIConcurrentThreads: 8 handler threads, an app that sleeps 100 ms,
// 64 concurrent requests: all succeed, and the app saw several requests
// inside it at once on several threads (counted by the app; no timing is
// asserted).
func TestWSGIConcurrentThreads(t *testing.T) {
	s := startWSGI(t, "sleep_app:app", "--threads", "8")
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := 0; i < 64; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 60 * time.Second}
			resp, err := client.Get(s.url("/sleep"))
			if err != nil {
				errs <- err
				return
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != 200 || string(body) != "slept" {
				errs <- fmt.Errorf("%d %q %v", resp.StatusCode, body, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	_, body := httpGet(t, http.DefaultClient, s.url("/max"))
	var inside, threads int
	if _, err := fmt.Sscanf(body, "%d %d", &inside, &threads); err != nil {
		t.Fatalf("/max: %q: %v", body, err)
	}
	t.Logf("at most %d requests inside the app at once, on %d threads", inside, threads)
	if inside < 2 || threads < 2 {
		t.Fatalf("the app never ran two requests at once (max %d inside, %d threads): handler threads did not run concurrently", inside, threads)
	}
	if inside > 8 || threads > 8 {
		t.Fatalf("%d requests inside at once on %d threads, with --threads 8", inside, threads)
	}
	checkValidatorLog(t, s)
}

// TestWSGIStartupErrors: an app that cannot be imported, or a bad option,
// exits with status 2 and one short message (the Python exception, no Go
// stack).
func TestWSGIStartupErrors(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "broken.py"), []byte("import no_such_module_m0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "raising.py"), []byte("def make():\n    raise ValueError('m0 factory failed')\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "coroutine.py"), []byte("async def app(scope, receive, send):\n    pass\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"broken:app"}, []string{"cannot load the application broken:app", "Traceback", "ModuleNotFoundError: No module named 'no_such_module_m0'"}},
		{[]string{"--factory", "raising:make"}, []string{"ValueError: m0 factory failed"}},
		{[]string{"raising:nothing"}, []string{"AttributeError", "nothing"}},
		{[]string{"--interface", "asgi", "--factory", "raising:make"}, []string{"ValueError: m0 factory failed"}},
		{[]string{"--loop", "trio", "coroutine:app"}, []string{`--loop: "trio": want auto, asyncio or uvloop`}},
		{[]string{"--lifespan", "maybe", "coroutine:app"}, []string{`--lifespan: "maybe": want auto, on or off`}},
		{[]string{"--threads", "-1", "raising:make"}, []string{"--threads: -1"}},
		{[]string{"raising:"}, []string{"module:attr"}},
		{[]string{"raising"}, []string{`raising: the module has no "application" or "app" attribute`}},
		{[]string{"--venv", dir, "raising:make"}, []string{"virtualenv", dir}},
	}
	for _, tc := range cases {
		status, out := runToExit(t, cleanEnv(), append([]string{"--port", "0", "--app-dir", dir}, tc.args...)...)
		if status != 2 {
			t.Errorf("%v: exit status %d, want 2\n%s", tc.args, status, out)
			continue
		}
		for _, want := range tc.want {
			if !strings.Contains(string(out), want) {
				t.Errorf("%v: output lacks %q:\n%s", tc.args, want, out)
			}
		}
		if strings.Contains(string(out), "goroutine ") || strings.Count(string(out), "\n") > 12 {
			t.Errorf("%v: not one short block:\n%s", tc.args, out)
		}
	}
}

// TestWSGIOptions: --root-path, --factory and M0_* variables reach the
// app.
func TestWSGIOptions(t *testing.T) {
	dir := t.TempDir()
	app := `import json
from wsgiref.validate import validator
def make():
    def app(environ, start_response):
        body = json.dumps([environ["SCRIPT_NAME"], environ["PATH_INFO"], environ["wsgi.multithread"]]).encode()
        start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
        return [body]
    return validator(app)
`
	if err := os.WriteFile(filepath.Join(dir, "made.py"), []byte(app), 0o644); err != nil {
		t.Fatal(err)
	}
	s := start(t, wsgiVariant("M0_ROOT_PATH=/mount", "M0_THREADS=3", "M0_FACTORY=1", "M0_APP_DIR="+dir), "made:make")
	_, body := httpGet(t, http.DefaultClient, s.url("/mount/a%20b"))
	if body != `["/mount", "/a b", true]` {
		t.Fatalf("got %s", body)
	}
	checkValidatorLog(t, s)
}

// TestWSGIFileWrapper: a wsgi.file_wrapper body over a regular file (1 MiB,
// many times the response outbox) arrives whole with its length, HEAD
// sends none of it, and the connection serves the next request.
func TestWSGIFileWrapper(t *testing.T) {
	data := make([]byte, 1<<20+123)
	for i := range data {
		data[i] = byte(i*7 + i>>11)
	}
	file := filepath.Join(t.TempDir(), "blob.bin")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	// The handler thread hands the file to the loop's zero-copy send; so
	// does --threads 0, the file being over the 1 MiB the loop thread
	// reads itself (the loop thread's response goes to the handler
	// thread whole).
	for _, threads := range []string{"1", "0"} {
		s := startWSGI(t, "file_app:app", "--threads", threads)
		c := dial(t, s)
		br := bufio.NewReader(c)
		for _, path := range []string{"/plain", "/sized"} {
			fmt.Fprintf(c, "GET %s?%s HTTP/1.1\r\nHost: x\r\n\r\nHEAD %s?%s HTTP/1.1\r\nHost: x\r\n\r\n", path, file, path, file)
			resp, body := readResponseTo(t, br, "GET")
			if resp.StatusCode != 200 || resp.ContentLength != int64(len(data)) || body != string(data) {
				t.Fatalf("--threads %s: GET %s: %d, length %d, body %d bytes equal %v", threads, path, resp.StatusCode, resp.ContentLength, len(body), body == string(data))
			}
			resp, body = readResponseTo(t, br, "HEAD")
			if resp.StatusCode != 200 || resp.Header.Get("Content-Length") != fmt.Sprint(len(data)) || body != "" {
				t.Fatalf("--threads %s: HEAD %s: %d, Content-Length %q, body %d bytes", threads, path, resp.StatusCode, resp.Header.Get("Content-Length"), len(body))
			}
		}
		c.Close()
		s.stop()
		if strings.Contains(s.logs.String(), "Traceback") {
			t.Fatalf("--threads %s: server log:\n%s", threads, s.logs)
		}
	}
}

// TestWSGIGracefulExit: SIGTERM with a request inside the app lets it
// finish, then the handler threads stop, Python is finalised (the app's
// atexit hook runs) and the process exits with status 0.
func TestWSGIGracefulExit(t *testing.T) {
	s := startWSGI(t, "sleep_app:app")
	c := dial(t, s)
	defer c.Close()
	io.WriteString(c, "GET /sleep HTTP/1.1\r\nHost: x\r\n\r\n")
	// Wait until the app has the request, so SIGTERM finds it in flight.
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, body := httpGet(t, http.DefaultClient, s.url("/max"))
		if strings.HasPrefix(body, "1 ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sleeping request never reached the app (/max %q)", body)
		}
		time.Sleep(5 * time.Millisecond)
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	resp, body := readResponseTo(t, bufio.NewReader(c), "GET")
	if resp.StatusCode != 200 || body != "slept" {
		t.Fatalf("in-flight request: %d %q", resp.StatusCode, body)
	}
	if err := s.waitExit(30 * time.Second); err != nil {
		t.Fatalf("exit: %v\n%s", err, s.logs)
	}
	logs := s.logs.String()
	if !strings.Contains(logs, "m0test: python finalized") || !strings.Contains(logs, "m0serve: stopped") {
		t.Fatalf("Python was not finalised before the exit:\n%s", logs)
	}
}
