//go:build linux

package tests

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

var (
	masterLine      = regexp.MustCompile(`m0serve: master \(pid ([0-9]+)\) on https?://([0-9.]+:[0-9]+)`)
	workersReady    = regexp.MustCompile(`m0serve: [0-9]+ workers? ready`)
	workerReadyLine = regexp.MustCompile(`worker ([0-9]+) \(pid ([0-9]+)\): ready`)
)

// workersAppDir is a temporary copy of tests/apps/workers_app.py with its
// version.txt, which a test may change (or break) before a reload.
func workersAppDir(t *testing.T, version string) string {
	t.Helper()
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join(appsDir(t), "workers_app.py"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "workers_app.py"), string(src))
	writeFile(t, filepath.Join(dir, "version.txt"), version)
	return dir
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// workersServer is a master and its workers.
type workersServer struct {
	*server
	master int
}

// startWorkers runs the master on a free port with args (--workers among
// them) serving workers_app from dir, and waits until every worker is
// ready.
func startWorkers(t *testing.T, dir string, env []string, args ...string) *workersServer {
	t.Helper()
	return startWorkersApp(t, dir, "workers_app:app", env, args...)
}

// startWorkersApp is startWorkers serving target from dir.
func startWorkersApp(t *testing.T, dir, target string, env []string, args ...string) *workersServer {
	t.Helper()
	s, ready := launchWorkersApp(t, dir, target, env, args...)
	return s.awaitReady(t, ready, env)
}

// launchWorkersApp starts a master serving target from dir without
// waiting for its workers (awaitReady does).
func launchWorkersApp(t *testing.T, dir, target string, env []string, args ...string) (*server, *starting) {
	t.Helper()
	return launchWorkersBinary(t, binary, dir, target, env, args...)
}

// launchWorkersBinary is launchWorkersApp running the m0serve at exe.
func launchWorkersBinary(t *testing.T, exe, dir, target string, env []string, args ...string) (*server, *starting) {
	t.Helper()
	argv := append([]string{"--host", "127.0.0.1", "--port", "0", "--app-dir", dir}, args...)
	if target != "" { // "": the args mount the apps
		argv = append(argv, target)
	}
	cmd := exec.Command(exe, argv...)
	cmd.Env = append(cleanEnv(), env...)
	// A group of its own, as a shell gives a job: a test can signal the
	// group as a terminal's Ctrl-C does.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return startLaunch(t, cmd, "m0serve", workersReady, 1)
}

// awaitReady waits for the workers of a master launchWorkersApp started.
func (s *server) awaitReady(t *testing.T, starting *starting, env []string) *workersServer {
	t.Helper()
	starting.wait(t)
	m := masterLine.FindStringSubmatch(s.logs.String())
	if m == nil {
		t.Fatalf("no master line:\n%s", s.logs)
	}
	s.addr = m[2]
	for _, kv := range env {
		backend, ok := strings.CutPrefix(kv, "M0_BACKEND=")
		want := map[string]string{"uring": "serving on http://" + s.addr + " (io_uring", "epoll": "serving on http://" + s.addr + " (epoll"}[backend]
		if ok && !strings.Contains(s.logs.String(), want) {
			t.Fatalf("M0_BACKEND=%s: no worker line with %q:\n%s", backend, want, s.logs)
		}
	}
	pid, _ := strconv.Atoi(m[1])
	return &workersServer{server: s, master: pid}
}

// waitLog waits until the log matches pattern at least n times.
func (s *workersServer) waitLog(t *testing.T, pattern string, n int, limit time.Duration) {
	t.Helper()
	re := regexp.MustCompile(pattern)
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if len(re.FindAllString(s.logs.String(), -1)) >= n {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("log did not show %q %d times within %v:\n%s", pattern, n, limit, s.logs)
}

// readyPids maps each slot to the pid of its latest ready worker.
func (s *workersServer) readyPids() map[int]int {
	pids := map[int]int{}
	for _, m := range workerReadyLine.FindAllStringSubmatch(s.logs.String(), -1) {
		slot, _ := strconv.Atoi(m[1])
		pid, _ := strconv.Atoi(m[2])
		pids[slot] = pid
	}
	return pids
}

func (s *workersServer) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := syscall.Kill(s.master, sig); err != nil {
		t.Fatal(err)
	}
}

// oneShot is a client that opens a connection per request.
func oneShot() *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
}

// fetch GETs url and returns the status and body, or the error.
func fetch(client *http.Client, url string) (int, string, error) {
	resp, err := client.Get(url)
	if err != nil {
		return 0, "", err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, string(body), err
}

// load runs clients that loop on path with keep-alive connections until
// stopped, counting every answer by pid and every failure.
type load struct {
	stop     atomic.Bool
	wg       sync.WaitGroup
	mu       sync.Mutex
	pids     map[string]int
	errors   []string
	requests atomic.Int64
}

func startLoad(s *workersServer, clients int, path string) *load {
	l := &load{pids: map[string]int{}}
	for i := 0; i < clients; i++ {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			// Raw keep-alive connections, as wrk's: net/http's client
			// would retry a request on a connection closed while idle and
			// hide the failure this counts.
			var conn net.Conn
			var reader *bufio.Reader
			for !l.stop.Load() {
				var err error
				if conn == nil {
					if conn, err = net.Dial("tcp", s.addr); err == nil {
						reader = bufio.NewReader(conn)
					}
				}
				var resp *http.Response
				var body []byte
				if err == nil {
					conn.SetDeadline(time.Now().Add(30 * time.Second))
					_, err = io.WriteString(conn, "GET "+path+" HTTP/1.1\r\nHost: test\r\n\r\n")
				}
				if err == nil {
					resp, err = http.ReadResponse(reader, nil)
				}
				if err == nil {
					body, err = io.ReadAll(resp.Body)
				}
				l.requests.Add(1)
				l.mu.Lock()
				switch {
				case err != nil:
					l.errors = append(l.errors, err.Error())
				case resp.StatusCode != 200:
					l.errors = append(l.errors, fmt.Sprintf("status %d: %s", resp.StatusCode, body))
				default:
					l.pids[string(body)]++
				}
				l.mu.Unlock()
				if err != nil || resp.Close {
					if conn != nil {
						conn.Close()
					}
					conn = nil
				}
			}
			if conn != nil {
				conn.Close()
			}
		}()
	}
	return l
}

// startOneShotLoad is startLoad with a new connection per request.
func startOneShotLoad(s *workersServer, clients int, path string) *load {
	l := &load{pids: map[string]int{}}
	for i := 0; i < clients; i++ {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			client := oneShot()
			for !l.stop.Load() {
				status, body, err := fetch(client, s.url(path))
				l.requests.Add(1)
				l.mu.Lock()
				switch {
				case err != nil:
					l.errors = append(l.errors, err.Error())
				case status != 200:
					l.errors = append(l.errors, fmt.Sprintf("status %d: %s", status, body))
				default:
					l.pids[body]++
				}
				l.mu.Unlock()
			}
		}()
	}
	return l
}

// waitRequests waits until the clients made n more requests than now.
func (l *load) waitRequests(t *testing.T, n int64) {
	t.Helper()
	target := l.requests.Load() + n
	deadline := time.Now().Add(30 * time.Second)
	for l.requests.Load() < target {
		if time.Now().After(deadline) {
			t.Fatalf("the clients made %d requests, want %d", l.requests.Load(), target)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (l *load) finish() (map[string]int, []string) {
	l.stop.Store(true)
	l.wg.Wait()
	return l.pids, l.errors
}

// alive reports whether pid is a live (not zombie) process.
func alive(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	fields := strings.Fields(string(data))
	return len(fields) > 2 && fields[2] != "Z"
}

// listeningSockets counts the sockets in LISTEN on port in /proc/net/tcp.
func listeningSockets(t *testing.T, port string) int {
	t.Helper()
	data, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		t.Fatal(err)
	}
	p, _ := strconv.Atoi(port)
	want := fmt.Sprintf(":%04X", p)
	n := 0
	for _, line := range strings.Split(string(data), "\n")[1:] {
		fields := strings.Fields(line)
		if len(fields) > 3 && strings.HasSuffix(fields[1], want) && fields[3] == "0A" {
			n++
		}
	}
	return n
}

func portOf(addr string) string {
	_, port, _ := net.SplitHostPort(addr)
	return port
}

// waitSockets waits until port has want sockets in LISTEN: a closed one
// lingers until the io_uring of the last worker holding it is torn down,
// which the kernel does after the process exits.
func waitSockets(t *testing.T, port string, want int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		n := listeningSockets(t, port)
		if n == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d listening sockets on port %s, want %d", n, port, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitStopped waits until every thread of pid is stopped (state T).
// The leader's state alone is not enough: SIGSTOP reaches each thread in
// turn, and the loop thread still running after the leader stopped took a
// connection that then died with the process (io_uring's worker threads,
// "iou-*", take no part in job control and are left out).
func waitStopped(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		running := runningThreads(t, pid)
		if len(running) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid %d: threads not stopped: %v", pid, running)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// runningThreads names pid's threads not in state T, with their states.
func runningThreads(t *testing.T, pid int) []string {
	t.Helper()
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var running []string
	for _, task := range tasks {
		data, err := os.ReadFile(filepath.Join(dir, task.Name(), "stat"))
		if err != nil {
			continue // the thread ended
		}
		text := string(data)
		open, end := strings.IndexByte(text, '('), strings.LastIndexByte(text, ')')
		if open < 0 || end < open {
			continue
		}
		name := text[open+1 : end]
		fields := strings.Fields(text[end+1:])
		if strings.HasPrefix(name, "iou-") || len(fields) == 0 || fields[0] == "T" {
			continue
		}
		running = append(running, task.Name()+" "+name+" "+fields[0])
	}
	return running
}
