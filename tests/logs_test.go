//go:build linux

package tests

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// accessLine is one Common Log Format line from 127.0.0.1.
func accessLine(request string, status string) *regexp.Regexp {
	return regexp.MustCompile(`(?m)^127\.0\.0\.1 - - \[\d\d/\w{3}/\d{4}:\d\d:\d\d:\d\d \+0000\] "` +
		regexp.QuoteMeta(request) + `" ` + status + ` (\d+|-)$`)
}

// TestAccessLogLoopResponses: the responses the loop answers itself (a
// malformed request, a head over the limit, a body over the limit) appear
// in the access log as the app's responses do.
func TestAccessLogLoopResponses(t *testing.T) {
	s := startWSGI(t, "stuck_app:app", "--access-log", "--max-head-size", "1024", "--max-body-size", "16")
	if resp, _ := get(t, s.url("/ok")); resp.StatusCode != 200 {
		t.Fatalf("/ok: %d", resp.StatusCode)
	}
	exchanges := []struct{ name, request, status string }{
		{"malformed", "NOT A REQUEST\r\n\r\n", "400"},
		{"head over the limit", "GET /big HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 2000) + "\r\n\r\n", "431"},
		{"body over the limit", "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n", "413"},
	}
	for _, e := range exchanges {
		out, _ := rawExchange(t, s.addr, e.request, 10*time.Second)
		if !strings.HasPrefix(out, "HTTP/1.1 "+e.status+" ") {
			t.Fatalf("%s: got %q, want %s", e.name, out, e.status)
		}
	}
	want := []*regexp.Regexp{
		accessLine("GET /ok HTTP/1.1", "200"),
		accessLine("-", "400"),
		accessLine("-", "431"),
		accessLine("POST /upload HTTP/1.1", "413"),
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, re := range want {
		for !re.MatchString(s.logs.String()) {
			if time.Now().After(deadline) {
				t.Fatalf("no access-log line matching %s:\n%s", re, s.logs)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// logTimestamp begins every line of the server's own log (Go's log
// package, LstdFlags in UTC).
var logTimestamp = regexp.MustCompile(`^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d `)

// logLevel follows the time stamp on every line of the server's own log,
// in brackets as gunicorn writes it.
var logLevel = regexp.MustCompile(`^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d \[(TRACE|DEBUG|INFO|WARNING|ERROR|CRITICAL)\] `)

// TestLogLinesTimestamped: with an app that raises (and, for ASGI, the
// lifespan notice), every line the server writes carries the logger's
// timestamp and its level, except the lines of a Python traceback, which
// follow an ERROR line naming the request.
func TestLogLinesTimestamped(t *testing.T) {
	for _, app := range []struct{ name, target, header string }{
		{"wsgi", "logs_app:app", "m0serve: GET /raise: the WSGI application raised"},
		{"asgi", "logs_app:asgi_app", "m0serve: GET /raise: the ASGI application raised"},
	} {
		t.Run(app.name, func(t *testing.T) {
			s := startWSGI(t, app.target)
			if resp, _ := get(t, s.url("/raise")); resp.StatusCode != 500 {
				t.Fatalf("/raise: %d, want 500", resp.StatusCode)
			}
			waitForLog(t, s, 0, "m0test raised", true)
			s.stop()
			lines := strings.Split(s.logs.String(), "\n")
			traceback, headers := false, 0
			for i, line := range lines {
				switch {
				case line == "Traceback (most recent call last):":
					if i == 0 || !strings.HasSuffix(lines[i-1], "[ERROR] "+app.header) || !logTimestamp.MatchString(lines[i-1]) {
						t.Fatalf("the traceback does not follow a timestamped [ERROR] %q line:\n%s", app.header, s.logs)
					}
					traceback = true
					headers++
				case traceback && strings.HasPrefix(line, " "):
				case traceback:
					traceback = false // the exception's own line ends the traceback
				case !logLevel.MatchString(line):
					t.Fatalf("line %d has no timestamp and level: %q\n%s", i, line, s.logs)
				}
			}
			if headers != 1 {
				t.Fatalf("%d tracebacks, want 1:\n%s", headers, s.logs)
			}
		})
	}
}

// TestStartLine: the one start line names the app, its interface, the
// threads or event loop it runs on, the virtualenv and the backend.
func TestStartLine(t *testing.T) {
	venv := t.TempDir()
	if out, err := exec.Command(systemPython, "-m", "venv", "--without-pip", venv).CombinedOutput(); err != nil {
		t.Fatalf("making a venv: %v\n%s", err, out)
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--threads", "4", "--venv", venv, "logs_app:app"}, "WSGI app logs_app:app on 4 handler threads, venv " + venv + ", Python 3."},
		{[]string{"--threads", "0", "logs_app:app"}, "WSGI app logs_app:app on the I/O thread (1 handler thread for requests with a body), Python 3."},
		{[]string{"--loop", "asyncio", "--venv", venv, "logs_app:asgi_app"}, "ASGI app logs_app:asgi_app on the asyncio event loop on the I/O thread, venv " + venv + ", Python 3."},
	}
	for _, tc := range cases {
		s := start(t, variant{name: "epoll", env: []string{"M0_BACKEND=epoll"}}, append([]string{"--app-dir", appsDir(t)}, tc.args...)...)
		var line string
		for _, l := range strings.Split(s.logs.String(), "\n") {
			if servingLine.MatchString(l) {
				line = l
			}
		}
		if !logTimestamp.MatchString(line) || !strings.Contains(line, "m0serve: "+tc.want) || !strings.Contains(line, "(epoll") {
			t.Errorf("%v: start line %q, want %q and the backend", tc.args, line, tc.want)
		}
		s.stop()
	}
}

// TestStartLineForPeople: the start line says where to point a browser
// and how to stop, as uvicorn's does, without the io_uring feature list,
// which --log-level debug shows on a line of its own; under a master the
// master's line says it, in English for one worker.
func TestStartLineForPeople(t *testing.T) {
	s := start(t, variant{name: "uring", env: []string{"M0_BACKEND=uring"}}, "--app-dir", appsDir(t), "logs_app:app")
	s.stop()
	logs := s.logs.String()
	want := regexp.MustCompile(`(?m)^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d \[INFO\] m0serve: WSGI app logs_app:app on [^\n]*: serving on http://` +
		regexp.QuoteMeta(s.addr) + ` \(io_uring\) \(Press CTRL\+C to quit\)$`)
	if !want.MatchString(logs) || strings.Contains(logs, "multishot") || strings.Contains(logs, "[DEBUG]") {
		t.Errorf("start line:\n%s", logs)
	}

	s = start(t, variant{name: "uring", env: []string{"M0_BACKEND=uring"}}, "--log-level", "debug", "--app-dir", appsDir(t), "logs_app:app")
	s.stop()
	if !regexp.MustCompile(`(?m)\[DEBUG\] m0serve: io_uring features: .*multishot`).MatchString(s.logs.String()) {
		t.Errorf("--log-level debug: no io_uring features line:\n%s", s.logs)
	}

	for _, tc := range []struct{ n, want, ready string }{
		{"1", "1 worker (slot 0)", "1 worker ready"},
		{"2", "2 workers (slots 0-1)", "2 workers ready"},
	} {
		w, starting := launchWorkersApp(t, appsDir(t), "logs_app:app", nil, "--workers", tc.n)
		starting.wait(t)
		w.stop()
		logs := w.logs.String()
		master := regexp.MustCompile(`\[INFO\] m0serve: master \(pid \d+\) on http://[0-9.:]+: ` + regexp.QuoteMeta(tc.want) +
			`, one SO_REUSEPORT socket per worker \(Press CTRL\+C to quit\)`)
		if !master.MatchString(logs) || !strings.Contains(logs, "m0serve: "+tc.ready) || strings.Contains(logs, "1 workers") ||
			regexp.MustCompile(`worker \d \(pid \d+\): .*Press CTRL`).MatchString(logs) {
			t.Errorf("--workers %s:\n%s", tc.n, logs)
		}
	}
}

// TestIdleFlagsWarned: a flag given that does nothing for the app's
// interface is one WARNING line at start (one for all the workers);
// flags that apply are not.
func TestIdleFlagsWarned(t *testing.T) {
	cases := []struct {
		args []string
		want string // "" for no warning
	}{
		{[]string{"--threads", "4", "logs_app:asgi_app"}, "[WARNING] m0serve: --threads: nothing to do for an ASGI app"},
		{[]string{"--loop", "asyncio", "--lifespan", "on", "logs_app:app"}, "[WARNING] m0serve: --loop and --lifespan: nothing to do for a WSGI app"},
		{[]string{"--threads", "4", "logs_app:app"}, ""},
		{[]string{"--loop", "asyncio", "logs_app:asgi_app"}, ""},
	}
	for _, tc := range cases {
		s := start(t, variant{name: "epoll", env: []string{"M0_BACKEND=epoll"}}, append([]string{"--app-dir", appsDir(t)}, tc.args...)...)
		s.stop()
		logs := s.logs.String()
		n := strings.Count(logs, "nothing to do for")
		if tc.want == "" && n != 0 || tc.want != "" && (n != 1 || !strings.Contains(logs, tc.want)) {
			t.Errorf("%v: want %q once:\n%s", tc.args, tc.want, logs)
		}
	}
	w, starting := launchWorkersApp(t, appsDir(t), "logs_app:asgi_app", nil, "--workers", "2", "--threads", "2")
	starting.wait(t)
	w.stop()
	if n := strings.Count(w.logs.String(), "--threads: nothing to do for an ASGI app"); n != 1 {
		t.Errorf("--workers 2: %d warnings, want 1:\n%s", n, w.logs)
	}
}

// TestLoopAutoAsHelpSays: --loop auto runs what --help says it runs:
// asyncio on the I/O thread, uvloop (installed for the tests) on the
// executor's thread.
func TestLoopAutoAsHelpSays(t *testing.T) {
	_, help := runToExit(t, cleanEnv(), "--help")
	if !strings.Contains(help, "(auto: asyncio on the I/O thread; with --asgi-thread executor uvloop if it imports)") {
		t.Fatalf("--help on --loop:\n%s", help)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--loop", "auto"}, "ASGI app logs_app:asgi_app on the asyncio event loop on the I/O thread"},
		{[]string{"--loop", "auto", "--asgi-thread", "executor"}, "ASGI app logs_app:asgi_app on the uvloop event loop,"},
	} {
		s := start(t, variant{name: "epoll", env: []string{"M0_BACKEND=epoll"}}, append(append([]string{"--app-dir", appsDir(t)}, tc.args...), "logs_app:asgi_app")...)
		s.stop()
		if !strings.Contains(s.logs.String(), tc.want) {
			t.Errorf("%v: want %q:\n%s", tc.args, tc.want, s.logs)
		}
	}
}
