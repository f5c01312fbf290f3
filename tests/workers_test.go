//go:build linux

package tests

import (
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Two workers share 1000 one-request connections, and the master holds
// one SO_REUSEPORT socket per worker (one socket with --listener shared).
func TestWorkersSpread(t *testing.T) {
	for _, listener := range []string{"reuseport", "shared"} {
		t.Run(listener, func(t *testing.T) {
			s := startWorkers(t, workersAppDir(t, "v1"), nil, "--workers", "2", "--listener", listener)
			want := map[string]int{"reuseport": 2, "shared": 1}[listener]
			if n := listeningSockets(t, portOf(s.addr)); n != want {
				t.Fatalf("%d listening sockets on the port, want %d", n, want)
			}
			counts := map[string]int{}
			var mu sync.Mutex
			var wg sync.WaitGroup
			failures := 0
			for c := 0; c < 4; c++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					client := oneShot()
					for i := 0; i < 250; i++ {
						status, body, err := fetch(client, s.url("/pid"))
						mu.Lock()
						if err != nil || status != 200 {
							failures++
						} else {
							counts[body]++
						}
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			t.Logf("answers by pid: %v", counts)
			if failures > 0 {
				t.Fatalf("%d failures, answers by pid %v", failures, counts)
			}
			if listener == "shared" {
				// One socket: the kernel wakes one waiting process per
				// connection, whichever waits first (README: measured).
				return
			}
			if len(counts) != 2 {
				t.Fatalf("answers by pid %v: want both workers", counts)
			}
			for pid, n := range counts {
				if n < 300 || n > 700 {
					t.Errorf("pid %s served %d of 1000, want 30-70%%", pid, n)
				}
			}
		})
	}
}

// A stopped worker's socket queues connections; killed, its replacement
// inherits the socket and answers every one of them.
func TestWorkersQueuedConnectionsSurviveKill(t *testing.T) {
	forEachWorkerBackend(t, testQueuedConnectionsSurviveKill)
}

// forEachWorkerBackend runs test with the workers on io_uring and on epoll,
// whose accept paths differ.
func forEachWorkerBackend(t *testing.T, test func(t *testing.T, env []string)) {
	for _, backend := range []string{"uring", "epoll"} {
		t.Run(backend, func(t *testing.T) { test(t, []string{"M0_BACKEND=" + backend}) })
	}
}

func testQueuedConnectionsSurviveKill(t *testing.T, env []string) {
	s := startWorkers(t, workersAppDir(t, "v1"), env, "--workers", "2", "--worker-timeout", "0")
	victim := s.readyPids()[0]
	syscall.Kill(victim, syscall.SIGSTOP)
	// SIGSTOP takes effect asynchronously: a connection accepted before it
	// did would be lost with the process, as on any server.
	waitState(t, victim, "T")
	type queued struct {
		conn   net.Conn
		answer chan string
	}
	var stuck []queued
	for i := 0; i < 400 && len(stuck) < 20; i++ {
		c, err := net.Dial("tcp", s.addr)
		if err != nil {
			t.Fatal(err)
		}
		c.Write([]byte("GET /pid HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"))
		q := queued{c, make(chan string, 1)}
		go func() {
			c.SetReadDeadline(time.Now().Add(30 * time.Second))
			var all []byte
			buf := make([]byte, 4096)
			for {
				n, err := c.Read(buf)
				all = append(all, buf[:n]...)
				if err != nil {
					break
				}
			}
			q.answer <- string(all)
		}()
		select {
		case <-q.answer:
			c.Close() // answered by the other worker
		case <-time.After(200 * time.Millisecond):
			stuck = append(stuck, q)
		}
	}
	if len(stuck) < 20 {
		t.Fatalf("only %d connections queued behind the stopped worker", len(stuck))
	}
	syscall.Kill(victim, syscall.SIGKILL)
	for i, q := range stuck {
		answer := <-q.answer
		q.conn.Close()
		if !strings.HasPrefix(answer, "HTTP/1.1 200 ") || strings.HasSuffix(answer, "\n"+strconv.Itoa(victim)) {
			t.Fatalf("queued connection %d got %q", i, answer)
		}
	}
	s.waitLog(t, `worker 0 \(pid [0-9]+\): died: killed by signal 9`, 1, 5*time.Second)
}

// While a slot's worker is dead and its replacement not yet ready, new
// connections go to the other workers instead of waiting in its socket.
func TestWorkersSteerAroundDeadWorker(t *testing.T) {
	dir := workersAppDir(t, "v1")
	s := startWorkers(t, dir, nil, "--workers", "2")
	pids := s.readyPids()
	writeFile(t, filepath.Join(dir, "slow_import"), "")
	syscall.Kill(pids[0], syscall.SIGKILL)
	s.waitLog(t, `(?m)new connections go to workers 1$`, 1, 10*time.Second)
	client := oneShot()
	for i := 0; i < 20; i++ {
		if status, body, err := fetch(client, s.url("/pid")); err != nil || status != 200 || body != strconv.Itoa(pids[1]) {
			t.Fatalf("request %d while worker 0 boots: %d %q %v\n%s", i, status, body, err, s.logs)
		}
	}
	if len(workerReadyLine.FindAllString(s.logs.String(), -1)) != 2 {
		t.Fatalf("the replacement was ready before the requests were answered (10 s import):\n%s", s.logs)
	}
	s.waitLog(t, `(?m)new connections go to workers 0 1$`, 1, 30*time.Second)
}

// A worker that crashes (os._exit, a segfault) is respawned; the other
// keeps serving, and only requests on the crashed worker can fail.
func TestWorkersCrash(t *testing.T) {
	s := startWorkers(t, workersAppDir(t, "v1"), nil, "--workers", "2")
	l := startLoad(s, 4, "/pid")
	l.waitRequests(t, 200)
	for i, how := range []string{"exit", "segv"} {
		status, _, err := fetch(oneShot(), s.url("/crash?how="+how))
		if err == nil {
			t.Fatalf("/crash?how=%s answered %d", how, status)
		}
		s.waitLog(t, `: ready in`, 3+i, 20*time.Second)
		l.waitRequests(t, 200)
	}
	pids, errors := l.finish()
	// Each crash may take down what the 4 clients had in flight on it.
	if len(errors) > 8 {
		t.Fatalf("%d client errors: %v", len(errors), errors)
	}
	t.Logf("answers by pid: %v", pids)
	// The respawned workers answer (the looping clients' keep-alive
	// connections may all have landed on the other one).
	for slot, pid := range s.readyPids() {
		seen := false
		for i := 0; i < 200 && !seen; i++ {
			_, body, _ := fetch(oneShot(), s.url("/pid"))
			seen = body == strconv.Itoa(pid)
		}
		if !seen {
			t.Errorf("worker %d (pid %d) never answered", slot, pid)
		}
	}
	logs := s.logs.String()
	// A segfault in C code is caught by the Go runtime, which prints the
	// signal and the stacks and exits with status 2.
	for _, want := range []string{"died: exit status 1", "SIGSEGV", "died: exit status 2"} {
		if !strings.Contains(logs, want) {
			t.Errorf("log lacks %q:\n%s", want, logs)
		}
	}
}

// ASGI workers are ready after lifespan startup; one that fails stops the
// master with status 3 and the app's message once, nothing served.
func TestWorkersASGI(t *testing.T) {
	code, out := runToExit(t, cleanEnv(), "--port", "0", "--workers", "2", "--app-dir", appsDir(t), "asgi_spec_app:failing_startup")
	if code != 3 || strings.Count(out, "m0 database unreachable") != 1 || strings.Contains(out, "serving on") {
		t.Fatalf("failed lifespan startup: exit %d\n%s", code, out)
	}
	s := startWorkersApp(t, appsDir(t), "asgi_spec_app:app", nil, "--workers", "2")
	for i := 0; i < 10; i++ {
		if status, body, err := fetch(oneShot(), s.url("/ordered")); err != nil || status != 200 || body != "in order" {
			t.Fatalf("ASGI through workers: %d %q %v", status, body, err)
		}
	}
	s.stop()
	if n := strings.Count(s.logs.String(), "Traceback"); n != 0 {
		t.Fatalf("%d tracebacks:\n%s", n, s.logs)
	}
}

// An app that fails at import: exit 3 within seconds, one traceback.
func TestWorkersBootFailure(t *testing.T) {
	dir := workersAppDir(t, "v1")
	env := append(cleanEnv(), "WORKERS_APP_FAIL=1")
	started := time.Now()
	code, out := runToExit(t, env, "--port", "0", "--workers", "4", "--app-dir", dir, "workers_app:app")
	if code != 3 {
		t.Fatalf("exit status %d, want 3:\n%s", code, out)
	}
	if n := strings.Count(out, "Traceback"); n != 1 {
		t.Fatalf("%d tracebacks, want 1:\n%s", n, out)
	}
	if !strings.Contains(out, "failed to boot") || time.Since(started) > 20*time.Second {
		t.Fatalf("after %v:\n%s", time.Since(started), out)
	}
}

// A worker that keeps crashing after it was ready is respawned with a
// growing delay.
func TestWorkersCrashBackoff(t *testing.T) {
	s := startWorkers(t, workersAppDir(t, "v1"), nil, "--workers", "1")
	for i := 0; i < 4; i++ {
		fetch(oneShot(), s.url("/crash?how=exit"))
		s.waitLog(t, `: ready in`, 2+i, 20*time.Second)
	}
	logs := s.logs.String()
	delays := regexp.MustCompile(`respawning in ([0-9.]+m?s) \(backoff\)`).FindAllStringSubmatch(logs, -1)
	if len(delays) != 3 || delays[0][1] != "100ms" || delays[1][1] != "200ms" || delays[2][1] != "400ms" {
		t.Fatalf("backoff delays %v, want 100ms, 200ms, 400ms after an immediate first respawn:\n%s", delays, logs)
	}
}

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

// --max-worker-rss: memory kept past the limit recycles the worker with
// no failed request; a spike shorter than two samples does not.
func TestWorkersMaxRSS(t *testing.T) {
	s := startWorkers(t, workersAppDir(t, "v1"), nil, "--workers", "1", "--max-worker-rss", "80", "--rss-check-interval", "1")
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

// SIGTERM lets a request in flight finish, then every worker is gone.
func TestWorkersTerm(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "m0serve.pid")
	s := startWorkers(t, workersAppDir(t, "v1"), nil, "--workers", "2", "--pid-file", pidFile)
	if data, err := os.ReadFile(pidFile); err != nil || string(data) != strconv.Itoa(s.master)+"\n" {
		t.Fatalf("--pid-file holds %q (%v), want the master's pid %d", data, err, s.master)
	}
	pids := s.readyPids()
	answer := make(chan string, 1)
	go func() {
		status, body, err := fetch(oneShot(), s.url("/sleep?s=3"))
		answer <- strconv.Itoa(status) + " " + body + " " + errString(err)
	}()
	time.Sleep(500 * time.Millisecond)
	s.signal(t, syscall.SIGTERM)
	if got := <-answer; got != "200 slept " {
		t.Fatalf("the request in flight got %q", got)
	}
	if err := s.waitExit(20 * time.Second); err != nil {
		t.Fatalf("master: %v\n%s", err, s.logs)
	}
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("worker %d outlived its master", pid)
		}
	}
	if _, err := os.Stat(pidFile); !os.IsNotExist(err) {
		t.Errorf("--pid-file left behind: %v", err)
	}
}

// Configuration mistakes: one line naming the flag, exit status 2.
func TestWorkersConfigErrors(t *testing.T) {
	dir := workersAppDir(t, "v1")
	cases := []struct {
		env  []string
		args []string
		want string
	}{
		{nil, []string{"--workers", "-1"}, "--workers: -1: want 1 to 1024"},
		{nil, []string{"--workers", "2", "--listener", "many"}, "--listener: \"many\": want reuseport or shared"},
		{nil, []string{"--max-requests", "10"}, "--max-requests: applies to worker processes: give --workers N too"},
		{[]string{"WEB_CONCURRENCY=lots"}, nil, "--workers: WEB_CONCURRENCY=\"lots\": want a number of workers"},
	}
	for _, tc := range cases {
		args := append(append([]string{"--port", "0", "--app-dir", dir}, tc.args...), "workers_app:app")
		code, out := runToExit(t, append(cleanEnv(), tc.env...), args...)
		if code != 2 || strings.TrimSpace(out) != "m0serve: "+tc.want {
			t.Errorf("%v %v: exit %d, %q; want 2, %q", tc.env, tc.args, code, out, tc.want)
		}
	}
}

// WEB_CONCURRENCY starts a master when neither --workers nor M0_WORKERS
// is given; M0_WORKERS wins over it.
func TestWorkersWebConcurrency(t *testing.T) {
	dir := workersAppDir(t, "v1")
	s := startWorkers(t, dir, []string{"WEB_CONCURRENCY=2"})
	if n := len(s.readyPids()); n != 2 {
		t.Fatalf("%d workers with WEB_CONCURRENCY=2", n)
	}
	s.stop()
	s = startWorkers(t, dir, []string{"WEB_CONCURRENCY=2", "M0_WORKERS=1"})
	if n := len(s.readyPids()); n != 1 {
		t.Fatalf("%d workers with M0_WORKERS=1 over WEB_CONCURRENCY=2", n)
	}
}

// Ctrl-C in a terminal signals the foreground process group: the master
// alone gets it (the workers have groups of their own) and drains them,
// so a request in flight is answered and no worker hears it twice.
func TestWorkersCtrlC(t *testing.T) {
	s := startWorkers(t, workersAppDir(t, "v1"), nil, "--workers", "2")
	answer := make(chan string, 1)
	go func() {
		status, body, err := fetch(oneShot(), s.url("/sleep?s=2"))
		answer <- strconv.Itoa(status) + " " + body + " " + errString(err)
	}()
	time.Sleep(500 * time.Millisecond) // the request reaches a worker
	if err := syscall.Kill(-s.master, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if got := <-answer; got != "200 slept " {
		t.Fatalf("the request in flight got %q\n%s", got, s.logs)
	}
	if err := s.waitExit(20 * time.Second); err != nil {
		t.Fatalf("master: %v\n%s", err, s.logs)
	}
	logs := s.logs.String()
	if strings.Count(logs, "interrupt") != 1 || strings.Contains(logs, "again") {
		t.Fatalf("SIGINT reached more than the master:\n%s", logs)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// A master killed outright takes its workers with it: the port is free.
func TestWorkersMasterKilled(t *testing.T) {
	s := startWorkers(t, workersAppDir(t, "v1"), nil, "--workers", "2")
	pids := s.readyPids()
	s.signal(t, syscall.SIGKILL)
	s.waitExit(5 * time.Second)
	deadline := time.Now().Add(2 * time.Second)
	for _, pid := range pids {
		for alive(pid) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if alive(pid) {
			t.Fatalf("worker %d alive 2 s after its master was killed", pid)
		}
	}
	// The socket goes with the last process holding it, once the kernel
	// has torn down its io_uring (which it does after the exit).
	for {
		l, err := net.Listen("tcp", s.addr)
		if err == nil {
			l.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the port is still bound 2 s after the master was killed: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// SIGTTIN and SIGTTOU add and remove a worker; SIGUSR1 reopens a renamed
// log file.
func TestWorkersSignals(t *testing.T) {
	logDir := t.TempDir()
	accessLog := filepath.Join(logDir, "access.log")
	s := startWorkers(t, workersAppDir(t, "v1"), nil, "--workers", "2", "--access-log-file", accessLog)
	s.signal(t, syscall.SIGTTIN)
	s.waitLog(t, `worker 2 \(pid [0-9]+\): ready`, 1, 20*time.Second)
	waitSockets(t, portOf(s.addr), 3)
	// A worker removed under load: its socket gets no new connections, and
	// what is queued in it is served before it closes.
	l := startOneShotLoad(s, 4, "/pid")
	l.waitRequests(t, 100)
	s.signal(t, syscall.SIGTTOU)
	s.waitLog(t, `worker 2 \(pid [0-9]+\): exit status 0 \(slot removed\)`, 1, 20*time.Second)
	waitSockets(t, portOf(s.addr), 2)
	l.waitRequests(t, 100)
	// And one more again, with the steering program in place.
	s.signal(t, syscall.SIGTTIN)
	s.waitLog(t, `worker 3 \(pid [0-9]+\): ready`, 1, 20*time.Second)
	l.waitRequests(t, 200)
	pids, errors := l.finish()
	if len(errors) > 0 {
		t.Fatalf("%d client errors around SIGTTOU: %v", len(errors), errors)
	}
	newest := strconv.Itoa(s.readyPids()[3])
	if pids[newest] == 0 {
		t.Errorf("the worker added after a removal got no connections: %v", pids)
	}
	s.signal(t, syscall.SIGTTOU)
	s.waitLog(t, `worker 3 \(pid [0-9]+\): exit status 0 \(slot removed\)`, 1, 20*time.Second)
	client := oneShot()
	fetch(client, s.url("/before-rotation"))
	if err := os.Rename(accessLog, accessLog+".1"); err != nil {
		t.Fatal(err)
	}
	s.signal(t, syscall.SIGUSR1)
	s.waitLog(t, `reopening log files`, 1, 5*time.Second)
	time.Sleep(200 * time.Millisecond) // the workers hear it over their control sockets
	for i := 0; i < 10; i++ {
		fetch(client, s.url("/after-rotation"))
	}
	s.stop()
	rotated, _ := os.ReadFile(accessLog + ".1")
	fresh, _ := os.ReadFile(accessLog)
	if !strings.Contains(string(rotated), "/before-rotation") || strings.Contains(string(rotated), "/after-rotation") ||
		strings.Count(string(fresh), "/after-rotation") != 10 {
		t.Fatalf("rotated log:\n%s\nnew log:\n%s", rotated, fresh)
	}
}

var _ = http.StatusOK

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

// The single process (no --workers) reopens its log files on SIGUSR1 too.
func TestSingleProcessReopensLogs(t *testing.T) {
	accessLog := filepath.Join(t.TempDir(), "access.log")
	s := start(t, wsgiVariant(), "--app-dir", workersAppDir(t, "v1"), "--access-log-file", accessLog, "workers_app:app")
	client := oneShot()
	fetch(client, s.url("/before-rotation"))
	if err := os.Rename(accessLog, accessLog+".1"); err != nil {
		t.Fatal(err)
	}
	s.cmd.Process.Signal(syscall.SIGUSR1)
	deadline := time.Now().Add(10 * time.Second)
	for {
		fetch(client, s.url("/after-rotation"))
		if _, err := os.Stat(accessLog); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no new access log after SIGUSR1:\n%s", s.logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
	fetch(client, s.url("/after-rotation"))
	s.stop()
	rotated, _ := os.ReadFile(accessLog + ".1")
	fresh, _ := os.ReadFile(accessLog)
	if !strings.Contains(string(rotated), "/before-rotation") || !strings.Contains(string(fresh), "/after-rotation") ||
		strings.Contains(s.logs.String(), "/after-rotation") {
		t.Fatalf("rotated log:\n%s\nnew log:\n%s\nstderr:\n%s", rotated, fresh, s.logs)
	}
}
