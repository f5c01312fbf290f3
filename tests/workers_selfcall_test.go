//go:build linux

package tests

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A view that calls its own server does not wait on itself: with two
// workers of one handler thread each, the inner request's connection,
// whichever worker's socket the kernel hashes it to, is served by the
// worker whose thread is free (issue 38: it waited 10 s and failed in 1
// of 4 tries, then in most once the busy steering followed the stall).
// Three hundred in a row, so that the quick view also runs on the
// I/O thread (--wsgi-inline auto), where the handoff's rescue takes what
// its socket queues meanwhile.
func TestWorkersViewCallsItsOwnServer(t *testing.T) {
	forEachWorkerBackend(t, testWorkersViewCallsItsOwnServer)
}

func testWorkersViewCallsItsOwnServer(t *testing.T, env []string) {
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join(appsDir(t), "selfcall_app.py"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "selfcall_app.py"), string(src))
	s := startWorkersApp(t, dir, "selfcall_app:app", env, "--workers", "2", "--threads", "1", "--log-level", "debug")
	pids := s.readyPids()
	client := oneShot()
	seen := map[string]int{}
	for i := 0; i < 300; i++ {
		status, body, err := fetch(client, s.url("/outer"))
		if err != nil || status != 200 {
			t.Fatalf("request %d: %d %q %v\n%s", i, status, body, err, s.logs)
		}
		outer, inner, ok := strings.Cut(body, " ")
		if !ok || strings.Contains(inner, "failed") {
			t.Fatalf("request %d: the view's call to its own server: %q\n%s", i, body, s.logs)
		}
		seen[outer+">"+inner]++
	}
	// The inner request went to the other worker each time: the one
	// running the view had no thread free.
	for pair := range seen {
		outer, inner, _ := strings.Cut(pair, ">")
		if outer == inner {
			t.Fatalf("a view's inner request was served by its own worker (%s): %v", outer, seen)
		}
		if outer != strconv.Itoa(pids[0]) && outer != strconv.Itoa(pids[1]) {
			t.Fatalf("answered by pid %s, not a worker's (%v)", outer, pids)
		}
	}
}
