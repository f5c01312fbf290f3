//go:build linux

package tests

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// gate is workers_app's /gate: a request that stays in the app until the
// test opens it.
type gate struct{ dir string }

// waitEntered waits until n requests have entered /gate.
func (g gate) waitEntered(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		data, _ := os.ReadFile(filepath.Join(g.dir, "gate_entered"))
		if got := strings.Count(string(data), "\n"); got >= n {
			return
		} else if time.Now().After(deadline) {
			t.Fatalf("%d requests entered /gate, want %d", got, n)
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
	g.waitEntered(t, 1)
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

// A master killed outright (kill -9, the OOM killer) leaves its workers to
// finish what they serve: one graceful drain each, however many times and
// ways the kernel and the control socket say the master is gone, then
// they exit (issue 26 item 3: every request was cut off).
func TestWorkersMasterKilledDrains(t *testing.T) {
	dir := workersAppDir(t, "v1")
	const inFlight = 6
	// As many threads a worker as requests: every request is in the app,
	// whichever worker its connection went to.
	s := startWorkers(t, dir, nil, "--workers", "2", "--threads", strconv.Itoa(inFlight))
	pids := s.readyPids()
	g := gate{dir}
	var answers []chan string
	for i := 0; i < inFlight; i++ {
		answers = append(answers, gated(s))
	}
	g.waitEntered(t, inFlight)
	s.signal(t, syscall.SIGKILL)
	s.waitLog(t, `the master is gone: draining`, 2, 10*time.Second)
	// The kernel sends the death signal again as each of the master's
	// threads exits, all before the master is a zombie; a worker that
	// took one as a second SIGTERM was gone a moment later.
	for deadline := time.Now().Add(10 * time.Second); alive(s.master); {
		if time.Now().After(deadline) {
			t.Fatal("the killed master is not a zombie after 10 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond)
	for _, pid := range pids {
		if !alive(pid) {
			t.Fatalf("worker %d exited with requests in flight\n%s", pid, s.logs)
		}
	}
	g.open(t)
	for i, answer := range answers {
		if got := <-answer; !strings.HasPrefix(got, "200 ") {
			t.Errorf("request %d in flight got %q", i, got)
		}
	}
	if strings.Contains(s.logs.String(), "exiting now") {
		t.Errorf("a worker took the master's death as a second signal:\n%s", s.logs)
	}
	deadline := time.Now().Add(20 * time.Second)
	for _, pid := range pids {
		for alive(pid) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if alive(pid) {
			t.Fatalf("worker %d still running after draining\n%s", pid, s.logs)
		}
	}
	s.waitExit(10 * time.Second) // the log's pipe closes with the workers
}

// SIGTERM to every process of the service at once, as systemd's default
// KillMode=control-group sends it: each worker hears it from the
// operator and is then told by its master to stop, and drains once; the
// request in flight is answered.
func TestWorkersTermToEveryProcess(t *testing.T) {
	dir := workersAppDir(t, "v1")
	s := startWorkers(t, dir, nil, "--workers", "2")
	pids := s.readyPids()
	g := gate{dir}
	answer := gated(s)
	g.waitEntered(t, 1)
	for _, pid := range append([]int{s.master}, pids[0], pids[1]) {
		if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
	}
	s.waitLog(t, `worker [01] \(pid [0-9]+\): .*draining`, 2, 10*time.Second)
	time.Sleep(500 * time.Millisecond) // the master's word reaches the workers
	g.open(t)
	if got := <-answer; !strings.HasPrefix(got, "200 ") {
		t.Fatalf("the request in flight got %q\n%s", got, s.logs)
	}
	if err := s.waitExit(20 * time.Second); err != nil {
		t.Fatalf("master: %v\n%s", err, s.logs)
	}
	if strings.Contains(s.logs.String(), "exiting now") {
		t.Errorf("a worker took its master's stop as a second signal:\n%s", s.logs)
	}
}
