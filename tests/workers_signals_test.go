//go:build linux

package tests

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

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
	checkLogRotation(t, s.server, accessLog, func() { s.signal(t, syscall.SIGUSR1) }, 2) // slots 0 and 1 are left
}

// checkLogRotation renames accessLog, sends SIGUSR1 and waits until every
// serving process (pids of them, counted from the /pid answers) logs to a
// new file at the old name, and nothing to stderr.
func checkLogRotation(t *testing.T, s *server, accessLog string, sendSignal func(), workers int) {
	t.Helper()
	client := oneShot()
	fetch(client, s.url("/before-rotation"))
	waitFileContains(t, accessLog, "/before-rotation")
	if err := os.Rename(accessLog, accessLog+".1"); err != nil {
		t.Fatal(err)
	}
	sendSignal()
	// Each request names itself; the new file must show one answered by
	// every process.
	deadline := time.Now().Add(10 * time.Second)
	byPid := map[string][]string{}
	for n := 0; ; n++ {
		path := "/pid?after-rotation-" + strconv.Itoa(n)
		if _, pid, err := fetch(client, s.url(path)); err == nil {
			byPid[pid] = append(byPid[pid], path)
		}
		fresh, _ := os.ReadFile(accessLog)
		reopened := 0
		for _, paths := range byPid {
			for _, p := range paths {
				if strings.Contains(string(fresh), p+" ") {
					reopened++
					break
				}
			}
		}
		if reopened >= max(1, workers) && len(byPid) >= max(1, workers) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after SIGUSR1, %d of %d processes log to the new file (answers %v):\n%s\nstderr:\n%s", reopened, workers, byPid, fresh, s.logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	rotated, _ := os.ReadFile(accessLog + ".1")
	if !strings.Contains(string(rotated), "/before-rotation") || strings.Contains(s.logs.String(), "after-rotation") {
		t.Fatalf("rotated log:\n%s\nstderr:\n%s", rotated, s.logs)
	}
}

// waitFileContains waits until path holds text.
func waitFileContains(t *testing.T, path, text string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		data, _ := os.ReadFile(path)
		if strings.Contains(string(data), text) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s lacks %q:\n%s", path, text, data)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The single process (no --workers) reopens its log files on SIGUSR1 too.
func TestSingleProcessReopensLogs(t *testing.T) {
	accessLog := filepath.Join(t.TempDir(), "access.log")
	s := start(t, wsgiVariant(), "--app-dir", workersAppDir(t, "v1"), "--access-log-file", accessLog, "workers_app:app")
	checkLogRotation(t, s, accessLog, func() { s.cmd.Process.Signal(syscall.SIGUSR1) }, 1)
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
