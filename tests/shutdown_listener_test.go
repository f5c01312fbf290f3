//go:build linux

package tests

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestListenerClosedWhileDraining: from SIGTERM on a single process
// refuses new connections (ECONNREFUSED) while the request in flight
// finishes. The listening socket used to stay open until exit: a client
// connecting during the drain completed its handshake into the backlog,
// got no response, and was reset at exit.
func TestListenerClosedWhileDraining(t *testing.T) {
	cases := []struct {
		name    string
		variant variant
		args    []string
	}{
		{"uring", variants[0], nil},
		{"epoll", variants[1], nil},
		// The loop thread is in the app: the listener closes all the same.
		{"uring-inline", variants[0], []string{"--threads", "0"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--app-dir", appsDir(t), "--graceful-timeout", "30s"}, tc.args...)
			s := start(t, tc.variant, append(args, "stuck_app:app")...)
			answer := sendStuck(t, s, "/sleep?s=5")
			offset := len(s.logs.String())
			s.cmd.Process.Signal(syscall.SIGTERM)
			waitForLog(t, s, offset, "draining", false)
			deadline := time.Now().Add(4 * time.Second)
			for {
				c, err := net.DialTimeout("tcp", s.addr, time.Second)
				if err == nil {
					c.Close()
				} else if errors.Is(err, syscall.ECONNREFUSED) {
					break
				} else if errors.Is(err, syscall.ECONNRESET) {
					// A handshake that raced the listener's shutdown: the
					// kernel resets what its queue held. Dial again.
				} else {
					t.Fatalf("dial while draining: %v, want connection refused", err)
				}
				if time.Now().After(deadline) {
					t.Fatalf("connections still accepted by the kernel while draining\n%s", s.logs)
				}
				time.Sleep(20 * time.Millisecond)
			}
			select {
			case got := <-answer:
				t.Fatalf("the request in flight ended (%q) before the refusal was seen: the test proves nothing", got)
			default:
			}
			if got := <-answer; !strings.HasPrefix(got, "200 OK done") {
				t.Fatalf("the request in flight got %q, want 200 done", got)
			}
			if err := s.waitExit(30 * time.Second); err != nil {
				t.Fatalf("exit after the drain: %v\n%s", err, s.logs)
			}
		})
	}
}

// TestWorkersDrainingWorkerGetsNoConnections: with --workers, a worker
// draining after a reload (held in the drain by a request in flight)
// takes no new connection; every one made during its drain is answered
// by its replacement, and the request in flight completes.
func TestWorkersDrainingWorkerGetsNoConnections(t *testing.T) {
	forEachWorkerBackend(t, func(t *testing.T, env []string) {
		s := startWorkers(t, workersAppDir(t, "v1"), env, "--workers", "1", "--graceful-timeout", "30s")
		old := strconv.Itoa(s.readyPids()[0])
		slow := make(chan string, 1)
		go func() {
			status, body, err := fetch(oneShot(), s.url("/sleep?s=5"))
			slow <- fmt.Sprint(status, " ", body, " ", err)
		}()
		// The old worker has the slow request once it answers no other:
		// with one handler thread a /pid behind it would wait.
		waitBusy(t, s, old)
		s.signal(t, syscall.SIGHUP)
		s.waitLog(t, `draining: a new worker serves this slot`, 1, 30*time.Second)
		// The line comes as the worker starts its drain: until its loop has
		// stopped accepting (a pass), a connection may still reach it, and
		// it serves it. Every request is answered; once the new worker has
		// answered one, the old worker gets none.
		for i, fresh := 0, 0; fresh < 20; i++ {
			status, pid, err := fetch(oneShot(), s.url("/pid"))
			switch {
			case err != nil || status != 200:
				t.Fatalf("request %d during the drain: %d %q %v", i, status, pid, err)
			case pid != old:
				fresh++
			case fresh > 0 || i >= 20:
				t.Fatalf("request %d during the drain went to the draining worker %s after %d to the new one", i, old, fresh)
			}
		}
		oldPid, _ := strconv.Atoi(old)
		if !alive(oldPid) {
			t.Fatalf("the old worker %s ended before the requests: its drain was not tested", old)
		}
		if got := <-slow; got != "200 slept <nil>" {
			t.Fatalf("the request in flight in the draining worker got %q", got)
		}
	})
}

// waitBusy waits until a request to /pid on a keep-alive connection that
// worker pid holds is not answered at once: the slow request is in its
// handler thread. Bounded; a failing test ends at the limit.
func waitBusy(t *testing.T, s *workersServer, pid string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		client := &http.Client{Timeout: 300 * time.Millisecond, Transport: &http.Transport{DisableKeepAlives: true}}
		_, got, err := fetch(client, s.url("/pid"))
		if err != nil {
			return // timed out behind the slow request
		}
		if got != pid {
			t.Fatalf("/pid answered by %s, want the only worker %s", got, pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the slow request never occupied the worker")
}
