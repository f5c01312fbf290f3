//go:build linux

package tests

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// environRequests are sent byte for byte to both servers. Each ends with
// Connection: close, so the response ends with the connection.
var environRequests = []struct{ name, raw string }{
	{"plain", "GET /plain HTTP/1.1\r\nHost: example.test:8080\r\nUser-Agent: m0-diff\r\nConnection: close\r\n\r\n"},
	{"percent-decoding", "GET /a%20b/caf%C3%A9/x%2Fy/%E9?x=1&y=%20z+w&e= HTTP/1.1\r\nHost: example.test:8080\r\nConnection: close\r\n\r\n"},
	{"empty query", "GET /q? HTTP/1.1\r\nHost: example.test:8080\r\nConnection: close\r\n\r\n"},
	{"dot segments", "GET /a/./b/../c HTTP/1.1\r\nHost: example.test:8080\r\nConnection: close\r\n\r\n"},
	{"form post", "POST /form HTTP/1.1\r\nHost: example.test:8080\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 13\r\nConnection: close\r\n\r\nname=m0&x=%41"},
	{"chunked put", "PUT /chunked HTTP/1.1\r\nHost: example.test:8080\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"},
	{"empty post", "POST /empty HTTP/1.1\r\nHost: example.test:8080\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"},
	{"repeated fields", "GET /headers HTTP/1.1\r\nHost: example.test:8080\r\nX-Multi: a\r\nX-Multi: b\r\nAccept: text/html\r\nAccept: */*\r\n" +
		"Cookie: a=1\r\nCookie: b=2\r\nX-Latin: caf\xe9\r\nX-Empty:\r\nx-lower-case: v\r\nConnection: close\r\n\r\n"},
	{"underscore field", "GET /underscore HTTP/1.1\r\nHost: example.test:8080\r\nX_Forwarded_For: 6.6.6.6\r\nX-Forwarded-For: 10.0.0.1\r\nConnection: close\r\n\r\n"},
	{"http/1.0", "GET /old HTTP/1.0\r\nHost: example.test:8080\r\n\r\n"},
	{"no host", "GET /nohost HTTP/1.0\r\n\r\n"},
	{"absolute form", "GET http://example.test:8080/abs?q=1 HTTP/1.1\r\nHost: example.test:8080\r\nConnection: close\r\n\r\n"},
	{"delete", "DELETE /thing/1 HTTP/1.1\r\nHost: example.test:8080\r\nConnection: close\r\n\r\n"},
}

// environExceptions are where m0serve deliberately differs from gunicorn
// 27 (tests/.venv, sync worker): the key, on the request named, and the
// value m0serve must give instead (checked, not skipped). Every other PEP
// 3333 key must match gunicorn's exactly, present or absent alike, on
// every request. A field named with _ is dropped by both (gunicorn 20.1
// merged X_Forwarded_For into HTTP_X_FORWARDED_FOR; 22 and later drop it,
// as m0serve, nginx and bjoern do), so it is no exception any more.
var environExceptions = []struct {
	request, key, m0serve, reason string
}{
	{"*", "SERVER_PORT", "", "each server's own listening port: checked against it"},
	{"*", "wsgi.multithread", "true", "a spare thread (--max-client-waits) may call the app while a handler thread waits on a slow client; gunicorn's sync worker never has two calls at once"},
	{"*", "wsgi.errors", "stderr", "gunicorn passes its error-log wrapper, m0serve sys.stderr itself; both reach the server's stderr"},
	{"repeated fields", "HTTP_ACCEPT", "text/html, */*", `repeated fields joined with ", " (RFC 9110 §5.3), as nginx, uWSGI and Granian do; gunicorn joins with ","`},
	{"repeated fields", "HTTP_X_MULTI", "a, b", `as HTTP_ACCEPT`},
	{"repeated fields", "HTTP_COOKIE", "a=1; b=2", `Cookie fields joined with "; " (RFC 6265 §5.4): "," would corrupt a cookie value`},
}

// environException returns the exception for key on request, if any.
func environException(request, key string) (m0serve string, ok bool) {
	for _, e := range environExceptions {
		if (e.request == "*" || e.request == request) && e.key == key {
			return e.m0serve, true
		}
	}
	return "", false
}

// environCases: the app at the root, and mounted under a prefix
// (gunicorn takes SCRIPT_NAME from its environment, m0serve from
// --root-path).
var environCases = []struct {
	name, root string
}{
	{"root", ""},
	{"mounted", "/mount"},
}

// TestWSGIEnvironMatchesGunicorn sends the same requests to an
// environ-dumping app (under the validator) served by gunicorn and by
// m0serve, and compares every key PEP 3333 defines.
func TestWSGIEnvironMatchesGunicorn(t *testing.T) {
	testVenv(t)
	for _, ec := range environCases {
		t.Run(ec.name, func(t *testing.T) {
			gunicornAddr := startGunicorn(t, ec.root)
			args := []string{}
			if ec.root != "" {
				args = append(args, "--root-path", ec.root)
			}
			m0 := startWSGI(t, "environ_app:app", args...)
			for _, rq := range environRequests {
				raw := rq.raw
				if ec.root != "" {
					raw = mountTarget(raw, ec.root)
				}
				t.Run(rq.name, func(t *testing.T) {
					want := fetchEnviron(t, gunicornAddr, raw)
					got := fetchEnviron(t, m0.addr, raw)
					compareEnviron(t, rq.name, want, got, gunicornAddr, m0.addr)
				})
			}
			checkValidatorLog(t, m0)
		})
	}
}

// mountTarget puts root in front of the request target's path.
func mountTarget(raw, root string) string {
	method, rest, _ := strings.Cut(raw, " ")
	if strings.HasPrefix(rest, "http://") {
		scheme, after, _ := strings.Cut(rest[len("http://"):], "/")
		return method + " http://" + scheme + root + "/" + after
	}
	return method + " " + root + rest
}

// pep3333Key reports whether the test compares key: the CGI variables and
// wsgi.* keys PEP 3333 defines, HTTP_*, REMOTE_ADDR, RAW_URI (both
// servers set it), and the body the app read. REMOTE_PORT is each
// connection's own.
func pep3333Key(key string) bool {
	switch key {
	case "REQUEST_METHOD", "SCRIPT_NAME", "PATH_INFO", "QUERY_STRING", "CONTENT_TYPE",
		"CONTENT_LENGTH", "SERVER_NAME", "SERVER_PORT", "SERVER_PROTOCOL", "body",
		"REMOTE_ADDR", "RAW_URI":
		return true
	}
	return strings.HasPrefix(key, "HTTP_") || strings.HasPrefix(key, "wsgi.")
}

func compareEnviron(t *testing.T, request string, want, got map[string]any, wantAddr, gotAddr string) {
	t.Helper()
	keys := map[string]bool{}
	for k := range want {
		keys[k] = true
	}
	for k := range got {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		if pep3333Key(k) {
			sorted = append(sorted, k)
		}
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		w, inWant := want[k]
		g, inGot := got[k]
		if k == "SERVER_PORT" {
			_, wantPort, _ := net.SplitHostPort(wantAddr)
			_, gotPort, _ := net.SplitHostPort(gotAddr)
			if w != wantPort || g != gotPort {
				t.Errorf("SERVER_PORT: gunicorn %v (listening on %s), m0serve %v (listening on %s)", w, wantPort, g, gotPort)
			}
			continue
		}
		if m0serve, excepted := environException(request, k); excepted {
			if fmt.Sprint(g) != m0serve || !inGot {
				t.Errorf("%s: m0serve %s, want %q (gunicorn %s)", k, describe(g, inGot), m0serve, describe(w, inWant))
			}
			continue
		}
		if inWant != inGot || fmt.Sprint(w) != fmt.Sprint(g) {
			t.Errorf("%s: gunicorn %s, m0serve %s", k, describe(w, inWant), describe(g, inGot))
		}
	}
}

func describe(v any, present bool) string {
	if !present {
		return "absent"
	}
	return fmt.Sprintf("%#v", v)
}

// fetchEnviron sends raw and decodes the app's JSON answer.
func fetchEnviron(t *testing.T, addr, raw string) map[string]any {
	t.Helper()
	out, err := rawExchange(t, addr, raw, 20*time.Second)
	if err != nil {
		t.Fatalf("%s: %v (got %q)", addr, err, out)
	}
	resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(out)), nil)
	if err != nil {
		t.Fatalf("%s: %v: %q", addr, err, out)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("%s: %d %v: %q", addr, resp.StatusCode, err, body)
	}
	var env map[string]any
	if err := json.Unmarshal(body, &env); err != nil {
		t.Fatalf("%s: %v: %q", addr, err, body)
	}
	return env
}

// startGunicorn runs tests/.venv's gunicorn (one sync worker) on a free
// loopback port serving environ_app:app, and waits until it accepts.
func startGunicorn(t *testing.T, root string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(venvPython(t), "-m", "gunicorn", "--bind", addr, "--workers", "1",
		"--chdir", appsDir(t), "--log-level", "warning", "environ_app:app")
	cmd.Env = append(cleanEnv(), "PYTHONDONTWRITEBYTECODE=1")
	if root != "" {
		cmd.Env = append(cmd.Env, "SCRIPT_NAME="+root)
	}
	logs := &logBuffer{}
	cmd.Stdout, cmd.Stderr = logWriter{logs}, logWriter{logs}
	if err := cmd.Start(); err != nil {
		t.Fatalf("gunicorn: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return addr
		}
		select {
		case err := <-exited:
			t.Fatalf("gunicorn exited: %v\n%s", err, logs)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("gunicorn did not start on %s:\n%s", addr, logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

type logWriter struct{ b *logBuffer }

func (w logWriter) Write(p []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		w.b.add(line)
	}
	return len(p), nil
}
