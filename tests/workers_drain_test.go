//go:build linux

package tests

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// gate is workers_app's /gate: a request that stays in the app until the
// test opens it.
type gate struct{ dir string }

// waitEntered waits until n requests have entered /gate (one file, so
// one is enough to see with n = 1).
func (g gate) waitEntered(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(g.dir, "gate_entered")); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no request entered /gate")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (g gate) open(t *testing.T) { writeFile(t, filepath.Join(g.dir, "gate_open"), "") }

// gated sends GET /gate and reports its status and body (a worker's pid).
func gated(s *workersServer) chan string {
	answer := make(chan string, 1)
	go func() {
		status, body, err := fetch(oneShot(), s.url("/gate"))
		answer <- strconv.Itoa(status) + " " + body + errString(err)
	}()
	return answer
}

// While the master drains, a new connection is refused at once, as a
// single process refuses it, rather than completed into a backlog nobody
// accepts from and reset when the last worker exits (issue 25 item 4).
func TestWorkersDrainRefusesConnections(t *testing.T) {
	forEachWorkerBackend(t, testWorkersDrainRefusesConnections)
}

func testWorkersDrainRefusesConnections(t *testing.T, env []string) {
	dir := workersAppDir(t, "v1")
	s := startWorkers(t, dir, env, "--workers", "2")
	g := gate{dir}
	answer := gated(s)
	g.waitEntered(t)
	s.signal(t, syscall.SIGTERM)
	s.waitLog(t, `draining 2 workers`, 1, 10*time.Second)

	// The request in /gate holds the drain open for as long as the test
	// wants: the refusal comes while it does.
	refused := false
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); {
		c, err := net.Dial("tcp", s.addr)
		if errors.Is(err, syscall.ECONNREFUSED) {
			refused = true
			break
		}
		if err != nil {
			t.Fatalf("dialing the draining master: %v", err)
		}
		c.Close()
		time.Sleep(20 * time.Millisecond)
	}
	if !refused {
		t.Fatalf("new connections still completed 15 s into the drain\n%s", s.logs)
	}
	g.open(t)
	if got := <-answer; got[:4] != "200 " {
		t.Fatalf("the request in flight got %q\n%s", got, s.logs)
	}
	if err := s.waitExit(20 * time.Second); err != nil {
		t.Fatalf("master: %v\n%s", err, s.logs)
	}
}
