//go:build linux

package tests

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestWorkersRequestTimeout: a request spinning in the app past
// --request-timeout is answered 504, Python's stacks (the spinning frame
// among them) are in the log first, and the worker is replaced: the next
// request is served by a new worker, and the old one's exit names the
// request it was stuck in.
func TestWorkersRequestTimeout(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, env []string) {
		// The graceful budget is long: the worker must not wait it out
		// for the stuck request once its others are done.
		s := startWorkers(t, workersAppDir(t, "v1"), env, "--workers", "1",
			"--request-timeout", "1s", "--graceful-timeout", "60s")
		old := strconv.Itoa(s.readyPids()[0])
		status, body, err := fetch(oneShot(), s.url("/spin?s=60"))
		if err != nil || status != 504 || body != "request timeout\n" {
			t.Fatalf("/spin?s=60: %d %q %v, want 504", status, body, err)
		}
		s.waitLog(t, `"GET /spin\?s=60" from 127\.0\.0\.1:[0-9]+: in the app for more than 1s \(--request-timeout\): 504`, 1, time.Second)
		s.waitLog(t, `File ".*workers_app\.py", line [0-9]+ in app`, 1, 10*time.Second)
		s.waitLog(t, `: ready in`, 2, 20*time.Second)
		_, pid, err := fetch(oneShot(), s.url("/pid"))
		if err != nil || pid == old {
			t.Fatalf("/pid after the timeout: %q %v, want a new worker (old %s)", pid, err, old)
		}
		s.waitLog(t, `pid `+old+`\): drained; a request is stuck in the app \(--request-timeout\): exiting without stopping Python`, 1, 20*time.Second)
		s.waitLog(t, `pid `+old+`\): exit status 0 after draining; in flight: "GET /spin\?s=60"`, 1, 20*time.Second)
		logs := s.logs.String()
		named := strings.Index(logs, "--request-timeout): 504")
		dump := strings.Index(logs, "line ")
		replaced := strings.Index(logs, "started (replacing pid "+old)
		if !(named < dump && dump < replaced) {
			t.Errorf("want the stuck request's line, then the stacks, then the replacement:\n%s", logs)
		}
	})
}

// TestRequestTimeoutConfig: --request-timeout recycles a worker, so a
// single process refuses it (exit 2, naming the flag and --workers), as
// does --threads 0, whose I/O thread runs the app and cannot time it out.
func TestRequestTimeoutConfig(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--request-timeout", "5"}, "--workers"},
		{[]string{"--workers", "1", "--threads", "0", "--request-timeout", "5"}, "--threads 0"},
		{[]string{"--workers", "1", "--request-timeout", "-1"}, "negative"},
	} {
		args := append(append([]string{"--app-dir", appsDir(t)}, tc.args...), "exit_app:app")
		status, out := runToExit(t, cleanEnv(), args...)
		if status != 2 || !strings.Contains(out, "request-timeout") || !strings.Contains(out, tc.want) {
			t.Errorf("%v: status %d, output %q; want 2 and a line naming --request-timeout and %q", tc.args, status, out, tc.want)
		}
	}
}

// TestWorkersRequestTimeoutASGI: an ASGI app blocking its event loop is
// timed out the same way, and the replacement serves.
func TestWorkersRequestTimeoutASGI(t *testing.T) {
	s := startWorkersApp(t, appsDir(t), "stuck_app:asgi_blocking", nil, "--workers", "1",
		"--request-timeout", "1s", "--graceful-timeout", "2s")
	status, body, err := fetch(oneShot(), s.url("/sleep?s=60"))
	if err != nil || status != 504 {
		t.Fatalf("/sleep?s=60: %d %q %v, want 504", status, body, err)
	}
	s.waitLog(t, `File ".*stuck_app\.py", line [0-9]+ in asgi_blocking`, 1, 10*time.Second)
	s.waitLog(t, `: ready in`, 2, 20*time.Second)
	if status, body, err := fetch(oneShot(), s.url("/ok")); err != nil || status != 200 || body != "done" {
		t.Fatalf("/ok after the timeout: %d %q %v", status, body, err)
	}
	// The ASGI executor's requests are in the heartbeat's table too.
	s.waitLog(t, `after draining; in flight: "GET /sleep\?s=60"`, 1, 20*time.Second)
}

// TestRequestTimeoutQueued: a request queued behind a stuck one times out
// too, and its log line says it was queued, not in the app.
func TestRequestTimeoutQueued(t *testing.T) {
	dir := t.TempDir()
	s := startWorkersApp(t, appsDir(t), "reliability_app:wsgi", []string{"E2E_DIR=" + dir}, "--workers", "1",
		"--threads", "1", "--request-timeout", "1s", "--graceful-timeout", "5s")
	defer os.WriteFile(filepath.Join(dir, "stuck.release"), nil, 0o644)
	stuck := make(chan int, 1)
	go func() {
		status, _, _ := fetch(oneShot(), s.url("/block?stuck"))
		stuck <- status
	}()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(dir, "stuck.entered")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the app never began /block\n%s", s.logs)
		}
		time.Sleep(10 * time.Millisecond)
	}
	status, _, err := fetch(oneShot(), s.url("/host"))
	if err != nil || status != 504 {
		t.Fatalf("/host behind the stuck request: %d %v, want 504", status, err)
	}
	if status := <-stuck; status != 504 {
		t.Errorf("/block: %d, want 504", status)
	}
	s.waitLog(t, `"GET /block\?stuck" from 127\.0\.0\.1:[0-9]+: in the app for more than 1s \(--request-timeout\): 504`, 1, time.Second)
	s.waitLog(t, `"GET /host" from 127\.0\.0\.1:[0-9]+: queued for more than 1s \(--request-timeout\): 504`, 1, time.Second)
}
