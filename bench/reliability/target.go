package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Target is a server the campaign attacks: one command line, run as it
// comes (the peers with their defaults), serving bench/apps/reliability.py
// or m0serve's native hello.
type Target struct {
	Name string `json:"name"`
	// Server is m0serve, uvicorn or gunicorn; Interface native, wsgi or
	// asgi.
	Server    string   `json:"server"`
	Interface string   `json:"interface"`
	Argv      []string `json:"command"`
	// Requires are files (relative to the repository root when not
	// absolute) whose absence skips the target.
	Requires []string `json:"-"`
}

// targets are every server the campaign knows; a probe picks those it
// applies to by name.
func targets() map[string]Target {
	m0 := func(name, iface string, args ...string) Target {
		argv := append([]string{"bin/m0serve", "--host", "{host}", "--port", "{port}"}, args...)
		return Target{Name: name, Server: "m0serve", Interface: iface, Argv: argv,
			Requires: []string{"bin/m0serve"}}
	}
	app := []string{"--app-dir", "bench/apps"}
	list := []Target{
		m0("m0serve-native", "native", "--native", "hello"),
		m0("m0serve-wsgi", "wsgi", append(app, "reliability:wsgi")...),
		m0("m0serve-asgi", "asgi", append(app, "reliability:asgi")...),
		m0("m0serve-wsgi-uring", "wsgi", append(app, "--backend", "uring", "reliability:wsgi")...),
		m0("m0serve-wsgi-epoll", "wsgi", append(app, "--backend", "epoll", "reliability:wsgi")...),
		// 2 GiB is over m0serve's default --max-body-size (1 GiB); the
		// peers have no limit.
		m0("m0serve-wsgi-4G", "wsgi", append(app, "--max-body-size", "4G", "reliability:wsgi")...),
		{Name: "uvicorn", Server: "uvicorn", Interface: "asgi",
			// Defaults but the access log, which m0serve and gunicorn do
			// not write by default either.
			Argv: []string{"/usr/bin/python3", "-m", "uvicorn", "--host", "{host}", "--port", "{port}",
				"--no-access-log", "--app-dir", "bench/apps", "reliability:asgi"},
			Requires: []string{"/usr/lib/python3/dist-packages/uvicorn/__init__.py"}},
		{Name: "gunicorn", Server: "gunicorn", Interface: "wsgi",
			Argv: []string{"/usr/bin/python3", "-m", "gunicorn", "-b", "{host}:{port}",
				"--chdir", "bench/apps", "reliability:wsgi"},
			Requires: []string{"/usr/lib/python3/dist-packages/gunicorn/__init__.py"}},
	}
	m := make(map[string]Target, len(list))
	for _, t := range list {
		m[t.Name] = t
	}
	return m
}

// missing names the first required file that is absent ("" when none).
func (t Target) missing(root string) string {
	for _, path := range t.Requires {
		if !filepath.IsAbs(path) {
			path = filepath.Join(root, path)
		}
		if _, err := os.Stat(path); err != nil {
			return path
		}
	}
	return ""
}

// Process is a running target.
type Process struct {
	Target  Target
	Addr    string
	LogPath string
	cmd     *exec.Cmd
	exited  chan struct{}
	waitErr error
}

// launch starts t on a free loopback port in its own process group, its
// output in a file under logDir, and waits until it answers GET /.
func launch(t Target, root, host, logDir string) (*Process, error) {
	port, err := freePort(host)
	if err != nil {
		return nil, err
	}
	argv := make([]string, len(t.Argv))
	for i, a := range t.Argv {
		a = strings.ReplaceAll(a, "{host}", host)
		argv[i] = strings.ReplaceAll(a, "{port}", strconv.Itoa(port))
	}
	logFile, err := os.CreateTemp(logDir, t.Name+"-*.log")
	if err != nil {
		return nil, fmt.Errorf("log for %s: %w", t.Name, err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = root
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start %s: %w", t.Name, err)
	}
	p := &Process{Target: t, Addr: net.JoinHostPort(host, strconv.Itoa(port)), LogPath: logFile.Name(),
		cmd: cmd, exited: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		logFile.Close()
		close(p.exited)
	}()
	if err := p.waitReady(30 * time.Second); err != nil {
		p.Stop()
		return nil, err
	}
	return p, nil
}

// freePort asks the kernel for a port nothing listens on.
func freePort(host string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitReady waits for a 200 to GET /, the process to exit or the timeout.
func (p *Process) waitReady(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if !p.Alive() {
			return fmt.Errorf("%s exited at start (%v): %s", p.Target.Name, p.waitErr, p.LogTail())
		}
		if status, err := getOnce(p.Addr, "/", 2*time.Second); err == nil && status == 200 {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%s not answering on %s after %v: %s", p.Target.Name, p.Addr, timeout, p.LogTail())
}

// Alive says whether the process is still running.
func (p *Process) Alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// Stop sends the process group SIGTERM, then SIGKILL after 5 s (a
// gunicorn worker stuck on a slow client would take its 30 s graceful
// timeout).
func (p *Process) Stop() {
	if !p.Alive() {
		return
	}
	pgid := p.cmd.Process.Pid // Setpgid made it its group's leader
	if err := syscall.Kill(-pgid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		fmt.Fprintf(os.Stderr, "reliability: SIGTERM %s: %v\n", p.Target.Name, err)
	}
	select {
	case <-p.exited:
	case <-time.After(5 * time.Second):
		syscall.Kill(-pgid, syscall.SIGKILL)
		<-p.exited
	}
}

// RSS is the resident memory in bytes of the process and its descendants
// (gunicorn's worker under its arbiter), from /proc/PID/status.
func (p *Process) RSS() int64 {
	var total int64
	for _, pid := range processTree(p.cmd.Process.Pid) {
		total += residentBytes(pid)
	}
	return total
}

// processTree is pid and every descendant, found through /proc/*/stat.
func processTree(root int) []int {
	parents := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// The command name in parentheses may hold spaces: the fields
		// after the last ')' are state, then the parent's pid.
		fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
		if len(fields) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(fields[1]); err == nil {
			parents[ppid] = append(parents[ppid], pid)
		}
	}
	tree := []int{root}
	for i := 0; i < len(tree); i++ {
		tree = append(tree, parents[tree[i]]...)
	}
	return tree
}

// residentBytes is VmRSS of pid (0 when it is gone).
func residentBytes(pid int) int64 {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// LogTail is the end of the process's output, for error messages.
func (p *Process) LogTail() string {
	data, err := os.ReadFile(p.LogPath)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) > 3 {
		lines = lines[len(lines)-3:]
	}
	return strings.Join(lines, " | ")
}

// CrashLines are the first ten lines of the process's output that tell
// of a crash the process itself outlived: a Go panic or fatal error, a
// signal, a worker killed by its master (gunicorn's WORKER TIMEOUT) or
// replaced (m0serve's supervisor).
func (p *Process) CrashLines() []string {
	data, err := os.ReadFile(p.LogPath)
	if err != nil {
		return nil
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		for _, w := range []string{"panic:", "fatal error:", "SIGSEGV", "WORKER TIMEOUT", "exited with code", "signal 9"} {
			if strings.Contains(line, w) && len(out) < 10 {
				out = append(out, line)
				break
			}
		}
	}
	return out
}

// getOnce sends one GET on a new connection and returns the status.
func getOnce(addr, path string, timeout time.Duration) (int, error) {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(timeout))
	if _, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n"); err != nil {
		return 0, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, err
}
