//go:build linux

package tests

import (
	"regexp"
	"strconv"
	"testing"
	"time"
)

var busyLine = regexp.MustCompile(`new connections go to workers ([0-9]) \(busy: ([0-9])\)`)

// A worker whose one handler thread is held by a long request gets no new
// connections while the other has room: ten connections opened at once
// are all answered by the other worker while the long request is still
// in the app (issue 25 item 3: five of ten waited behind it, hashed to
// the busy worker's socket). Then the long one ends and the busy worker
// is back in the spread.
func TestWorkersBusyWorkerGetsNoNewConnections(t *testing.T) {
	forEachWorkerBackend(t, testWorkersBusyWorker)
}

func testWorkersBusyWorker(t *testing.T, env []string) {
	dir := workersAppDir(t, "v1")
	s := startWorkers(t, dir, env, "--workers", "2", "--log-level", "debug")
	pids := s.readyPids()
	g := gate{dir}
	long := gated(s)
	g.waitEntered(t, 1)
	s.waitLog(t, busyLine.String(), 1, 10*time.Second)
	m := busyLine.FindStringSubmatch(s.logs.String())
	roomy, _ := strconv.Atoi(m[1])
	busy, _ := strconv.Atoi(m[2])

	const n = 10
	answers := make(chan string, n)
	for i := 0; i < n; i++ {
		go func() {
			status, body, err := fetch(oneShot(), s.url("/pid"))
			answers <- strconv.Itoa(status) + " " + body + errString(err)
		}()
	}
	// The gate stays shut until all ten are answered: one queued behind
	// the long request would never be (the client gives up after 30 s).
	for i := 0; i < n; i++ {
		if got := <-answers; got != "200 "+strconv.Itoa(pids[roomy]) {
			t.Fatalf("connection %d got %q, want 200 from worker %d (pid %d); worker %d (pid %d) is busy\n%s",
				i, got, roomy, pids[roomy], busy, pids[busy], s.logs)
		}
	}
	g.open(t)
	if got := <-long; got != "200 "+strconv.Itoa(pids[busy]) {
		t.Fatalf("the long request got %q, want 200 from worker %d", got, busy)
	}
	s.waitLog(t, `new connections go to workers 0 1 \(none busy\)`, 1, 10*time.Second)
}
