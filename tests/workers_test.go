//go:build linux

package tests

import (
	"net"
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
	// SIGSTOP takes effect asynchronously, thread by thread: a connection
	// accepted before it did would be lost with the process, as on any
	// server.
	waitStopped(t, victim)
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

// An app that fails at import: exit 2 within seconds (a single
// process's status for it), one traceback.
func TestWorkersBootFailure(t *testing.T) {
	dir := workersAppDir(t, "v1")
	env := append(cleanEnv(), "WORKERS_APP_FAIL=1")
	started := time.Now()
	code, out := runToExit(t, env, "--port", "0", "--workers", "4", "--app-dir", dir, "workers_app:app")
	if code != 2 {
		t.Fatalf("exit status %d, want 2:\n%s", code, out)
	}
	if single, _ := runToExit(t, env, "--port", "0", "--app-dir", dir, "workers_app:app"); single != code {
		t.Fatalf("exit status %d single, %d under --workers", single, code)
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

// The master needs no writable directory: its heartbeat files are in
// memory (issue 25 item 2: "heartbeat file: open /tmp/m0serve-heartbeat-…:
// read-only file system", exit 1, under Kubernetes' readOnlyRootFilesystem).
func TestWorkersNoWritableTmp(t *testing.T) {
	s := startWorkers(t, workersAppDir(t, "v1"), []string{"TMPDIR=/nonexistent/m0serve-test"}, "--workers", "2")
	if status, body, err := fetch(oneShot(), s.url("/pid")); err != nil || status != 200 {
		t.Fatalf("GET /pid: %d %q %v\n%s", status, body, err, s.logs)
	}
}
