//go:build linux

package tests

import (
	"bufio"
	"errors"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// stuckApps serve tests/apps/stuck_app.py: a WSGI app on a handler thread,
// and an ASGI app on the event loop.
var stuckApps = []struct {
	name, target string
	args         []string
}{
	{"wsgi", "stuck_app:app", nil},
	{"asgi", "stuck_app:asgi_app", nil},
}

// sendStuck sends GET target on a fresh connection and waits until the
// app says the request is inside it. The returned channel gets the
// response's status and body, or the error reading it.
func sendStuck(t *testing.T, s *server, target string) <-chan string {
	t.Helper()
	offset := len(s.logs.String())
	c := dial(t, s)
	t.Cleanup(func() { c.Close() })
	io.WriteString(c, "GET "+target+" HTTP/1.1\r\nHost: x\r\n\r\n")
	answer := make(chan string, 1)
	go func() {
		c.SetReadDeadline(time.Now().Add(90 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			answer <- "error: " + err.Error()
			return
		}
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			answer <- "error: " + err.Error()
			return
		}
		answer <- resp.Status + " " + string(body)
	}()
	waitForLog(t, s, offset, "m0test: inside", false)
	return answer
}

// TestShutdownOneBudget: --graceful-timeout is one budget for the whole
// shutdown. With a 30 s request in flight, SIGTERM cuts the request at
// the deadline, logs it with its request line, and the process exits
// well before twice the budget (the loop's drain and Python's stop each
// waited the full budget before).
func TestShutdownOneBudget(t *testing.T) {
	const budget = 2 * time.Second
	// --threads 0: the app runs on the I/O thread itself, which then
	// cannot drain (nor log what it cuts off); the exit comes all the same.
	inline := struct {
		name, target string
		args         []string
	}{"wsgi-inline", "stuck_app:app", []string{"--threads", "0"}}
	for _, app := range append(stuckApps, inline) {
		t.Run(app.name, func(t *testing.T) {
			args := append([]string{"--graceful-timeout", budget.String()}, app.args...)
			s := startWSGI(t, app.target, args...)
			answer := sendStuck(t, s, "/sleep?s=30")
			s.cmd.Process.Signal(syscall.SIGTERM)
			if err := s.waitExit(2 * budget); err != nil {
				t.Fatalf("exit after SIGTERM with a %v budget: %v\n%s", budget, err, s.logs)
			}
			if got := <-answer; !strings.HasPrefix(got, "error: ") {
				t.Fatalf("the request past the deadline got %q, want it cut off", got)
			}
			if logs := s.logs.String(); app.args == nil && !strings.Contains(logs, `cut off "GET /sleep?s=30"`) {
				t.Fatalf("the cut-off request is not logged:\n%s", logs)
			}
		})
	}
}

// TestSecondSignalExitsNow: a second SIGINT or SIGTERM ends the process at
// once, whatever Python is doing (a request in time.sleep(60), on a
// handler thread or holding the ASGI event loop), with status 128+signal.
func TestSecondSignalExitsNow(t *testing.T) {
	apps := []struct{ name, target string }{
		{"wsgi", "stuck_app:app"},
		{"asgi-blocked-loop", "stuck_app:asgi_blocking"},
	}
	signals := []struct {
		sig    syscall.Signal
		status int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}}
	for _, app := range apps {
		for _, sig := range signals {
			t.Run(app.name+"-"+sig.sig.String(), func(t *testing.T) {
				s := startWSGI(t, app.target, "--graceful-timeout", "5m")
				sendStuck(t, s, "/sleep?s=60")
				offset := len(s.logs.String())
				s.cmd.Process.Signal(sig.sig)
				waitForLog(t, s, offset, "draining", false)
				s.cmd.Process.Signal(sig.sig)
				err := s.waitExit(10 * time.Second)
				var exit *exec.ExitError
				if !errors.As(err, &exit) || exit.ExitCode() != sig.status {
					t.Fatalf("after a second %v: %v, want exit status %d\n%s", sig.sig, err, sig.status, s.logs)
				}
				if logs := s.logs.String(); !strings.Contains(logs, "again: exiting now") {
					t.Fatalf("the forced exit is not logged:\n%s", logs)
				}
			})
		}
	}
}

// TestSIGHUPIgnored: SIGHUP during a request is logged and ignored: the
// request completes, and the server goes on serving.
func TestSIGHUPIgnored(t *testing.T) {
	for _, app := range stuckApps {
		t.Run(app.name, func(t *testing.T) {
			s := startWSGI(t, app.target)
			answer := sendStuck(t, s, "/sleep?s=1")
			offset := len(s.logs.String())
			s.cmd.Process.Signal(syscall.SIGHUP)
			waitForLog(t, s, offset, "SIGHUP: ignored", false)
			if got := <-answer; got != "200 OK done" {
				t.Fatalf("the request in flight at SIGHUP got %q", got)
			}
			if resp, body := get(t, s.url("/ok")); resp.StatusCode != 200 || body != "done" {
				t.Fatalf("after SIGHUP: %d %q", resp.StatusCode, body)
			}
			s.stop()
		})
	}
}
