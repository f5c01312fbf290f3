//go:build linux

package tests

import (
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// SIGHUP under load: no client error, the new code answers, every worker
// is new. With a broken app on disk the old workers keep serving.
func TestWorkersReload(t *testing.T) {
	forEachWorkerBackend(t, testReload)
}

func testReload(t *testing.T, env []string) {
	dir := workersAppDir(t, "v1")
	s := startWorkers(t, dir, env, "--workers", "2")
	before := s.readyPids()
	l := startLoad(s, 4, "/pid")
	l.waitRequests(t, 200)
	writeFile(t, filepath.Join(dir, "version.txt"), "v2")
	s.signal(t, syscall.SIGHUP)
	s.waitLog(t, `reload complete`, 1, 30*time.Second)
	s.waitLog(t, `after draining`, 2, 30*time.Second)
	l.waitRequests(t, 200)
	pids, errors := l.finish()
	if len(errors) > 0 {
		t.Fatalf("%d client errors during the reload: %v", len(errors), errors)
	}
	after := s.readyPids()
	for slot, pid := range before {
		if after[slot] == pid || alive(pid) {
			t.Errorf("slot %d: pid %d still serving after the reload (now %d)", slot, pid, after[slot])
		}
	}
	if _, version, _ := fetch(oneShot(), s.url("/version")); version != "v2" {
		t.Fatalf("/version %q after the reload, want v2", version)
	}
	t.Logf("answers by pid: %v", pids)

	writeFile(t, filepath.Join(dir, "workers_app.py"), "this is not python\n")
	s.signal(t, syscall.SIGHUP)
	s.waitLog(t, `reload aborted, the old workers keep serving`, 1, 30*time.Second)
	for slot, pid := range after {
		if !alive(pid) {
			t.Errorf("slot %d: pid %d gone after a failed reload", slot, pid)
		}
	}
	for i := 0; i < 10; i++ {
		if status, version, err := fetch(oneShot(), s.url("/version")); err != nil || status != 200 || version != "v2" {
			t.Fatalf("after a failed reload: %d %q %v", status, version, err)
		}
	}
}

// --max-requests with no jitter: each replaced worker served exactly N.
func TestWorkersMaxRequests(t *testing.T) {
	const limit = 25
	s := startWorkers(t, workersAppDir(t, "v1"), nil, "--workers", "2", "--max-requests", strconv.Itoa(limit))
	counts := map[string]int{}
	client := oneShot()
	for i := 0; i < 5*limit; i++ {
		status, body, err := fetch(client, s.url("/pid"))
		if err != nil || status != 200 {
			t.Fatalf("request %d: %d %v", i, status, err)
		}
		counts[body]++
	}
	full := 0
	for pid, n := range counts {
		switch {
		case n == limit:
			full++
		case n > limit:
			t.Errorf("pid %s served %d, over --max-requests %d", pid, n, limit)
		}
	}
	if full < 3 {
		t.Fatalf("answers by pid %v: want at least 3 workers recycled at exactly %d", counts, limit)
	}
}

// --max-worker-rss (Granian's --workers-max-rss): memory kept past the
// limit recycles the worker with no failed request; a spike shorter than
// two samples does not.
func TestWorkersMaxRSS(t *testing.T) {
	for _, spelling := range []string{"--max-worker-rss", "--workers-max-rss"} {
		t.Run(spelling, func(t *testing.T) { testWorkersMaxRSS(t, spelling) })
	}
}

func testWorkersMaxRSS(t *testing.T, spelling string) {
	s := startWorkers(t, workersAppDir(t, "v1"), nil, "--workers", "1", spelling, "80", "--rss-check-interval", "1")
	first := s.readyPids()[0]
	if status, _, err := fetch(oneShot(), s.url("/spike?mb=80&s=0.1")); err != nil || status != 200 {
		t.Fatalf("/spike: %d %v", status, err)
	}
	time.Sleep(3 * time.Second) // three samples: the spike was seen by one at most
	if strings.Contains(s.logs.String(), "max-worker-rss") {
		t.Fatalf("a brief spike recycled the worker:\n%s", s.logs)
	}
	l := startLoad(s, 2, "/pid")
	if status, _, err := fetch(oneShot(), s.url("/grow?mb=100")); err != nil || status != 200 {
		t.Fatalf("/grow: %d %v", status, err)
	}
	s.waitLog(t, `over --max-worker-rss 80`, 1, 5*time.Second)
	s.waitLog(t, `pid `+strconv.Itoa(first)+`\): exit status 0 after draining`, 1, 10*time.Second)
	l.waitRequests(t, 50)
	pids, errors := l.finish()
	if len(errors) > 0 || len(pids) != 2 {
		t.Fatalf("answers by pid %v, errors %v", pids, errors)
	}
}

// --worker-timeout: a stopped loop is replaced; a long Python call is not
// (the loop thread stamps the heartbeat, not the app's).
func TestWorkersTimeout(t *testing.T) {
	s := startWorkers(t, workersAppDir(t, "v1"), nil, "--workers", "1", "--worker-timeout", "2")
	if status, body, err := fetch(oneShot(), s.url("/spin?s=5")); err != nil || status != 200 || body != "spun" {
		t.Fatalf("a 5 s CPU-bound request: %d %q %v\n%s", status, body, err, s.logs)
	}
	if strings.Contains(s.logs.String(), "has not turned") {
		t.Fatalf("a long Python call tripped the worker timeout:\n%s", s.logs)
	}
	victim := s.readyPids()[0]
	syscall.Kill(victim, syscall.SIGSTOP)
	s.waitLog(t, `pid `+strconv.Itoa(victim)+`\): its loop has not turned`, 1, 10*time.Second)
	s.waitLog(t, `: ready in`, 2, 20*time.Second)
	if _, body, err := fetch(oneShot(), s.url("/pid")); err != nil || body == strconv.Itoa(victim) {
		t.Fatalf("after the timeout: %q %v", body, err)
	}
}

// --max-worker-lifetime replaces workers under load with no failed request.
func TestWorkersMaxLifetime(t *testing.T) {
	s := startWorkers(t, workersAppDir(t, "v1"), nil, "--workers", "2", "--max-worker-lifetime", "1s")
	l := startLoad(s, 4, "/pid")
	s.waitLog(t, `after draining`, 4, 30*time.Second)
	l.waitRequests(t, 100)
	pids, errors := l.finish()
	if len(errors) > 0 {
		t.Fatalf("%d client errors: %v", len(errors), errors)
	}
	if len(pids) < 4 {
		t.Fatalf("answers by pid %v: want the replacements among them", pids)
	}
}
