//go:build linux

// Package tests runs m0serve end to end: the binary, built once, against
// real clients (net/http, raw sockets, curl) on loopback, over every Linux
// backend and io_uring feature fallback.
package tests

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	binary    string // the m0serve binary under test
	noIOURing string // tests/tools/noiouring
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "m0serve-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	root, err := filepath.Abs("..")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	stamp, err := stampFlags(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	binary = filepath.Join(dir, "m0serve")
	noIOURing = filepath.Join(dir, "noiouring")
	for target, pkg := range map[string]string{binary: "./cmd/m0serve", noIOURing: "./tests/tools/noiouring"} {
		ldflags := "-ldflags=-checklinkname=0"
		if pkg == "./cmd/m0serve" {
			// Stripped of DWARF and the symbol table, as make build
			// ships it (TestStrippedBinary).
			ldflags += " -s -w " + stamp
		}
		args := []string{"build", ldflags, "-o", target}
		if os.Getenv("M0_E2E_RACE") != "" && pkg == "./cmd/m0serve" {
			// M0_E2E_RACE=1: the server under test runs with the race
			// detector (slower; for checking the loop/handler handoff).
			args = append(args, "-race")
		}
		build := exec.Command("go", append(args, pkg)...)
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "building %s: %v\n%s", pkg, err, out)
			return 1
		}
	}
	return m.Run()
}

// variant is one backend configuration of the matrix.
type variant struct {
	name string
	env  []string
	// full: also run the slow cases (timeouts, load, signals) on it.
	full bool
	// describes: a word the start line must show.
	describes string
}

// variants: every Linux backend, and io_uring with each optional feature
// forced off so the fallback paths this kernel would skip run too.
var variants = []variant{
	{"uring", []string{"M0_BACKEND=uring"}, true, "io_uring"},
	{"epoll", []string{"M0_BACKEND=epoll"}, true, "epoll"},
	{"uring-no-defer_taskrun", []string{"M0_BACKEND=uring", "M0_URING_DISABLE=defer_taskrun"}, false, "io_uring"},
	{"uring-no-taskrun-flags", []string{"M0_BACKEND=uring", "M0_URING_DISABLE=defer_taskrun,coop_taskrun"}, false, "io_uring"},
	{"uring-no-multishot_accept", []string{"M0_BACKEND=uring", "M0_URING_DISABLE=multishot_accept"}, false, "io_uring"},
	{"uring-no-multishot_recv", []string{"M0_BACKEND=uring", "M0_URING_DISABLE=multishot_recv"}, false, "io_uring"},
	{"uring-no-buf_ring", []string{"M0_BACKEND=uring", "M0_URING_DISABLE=buf_ring,multishot_recv"}, false, "io_uring"},
	{"uring-no-cancel_fd", []string{"M0_BACKEND=uring", "M0_URING_DISABLE=cancel_fd"}, false, "io_uring"},
}

// server is one running m0serve process.
type server struct {
	t    testing.TB
	cmd  *exec.Cmd
	addr string // host:port
	logs *logBuffer
	exit chan error
	done bool
}

var servingLine = regexp.MustCompile(`serving on https?://([0-9.]+:[0-9]+) \((.*)\)`)

// start runs m0serve with the variant's environment, on a free port,
// with args added, and waits for its start line.
func start(t testing.TB, v variant, args ...string) *server {
	t.Helper()
	return startCommand(t, v, nil, args...)
}

// startCommand is start with a wrapper command (e.g. noiouring) in front.
func startCommand(t testing.TB, v variant, wrapper []string, args ...string) *server {
	t.Helper()
	argv := append(append([]string{}, wrapper...), binary, "--host", "127.0.0.1", "--port", "0")
	argv = append(argv, args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(cleanEnv(), v.env...)
	s, m := launch(t, cmd, "m0serve", servingLine, 1)
	s.addr = m[1]
	if v.describes != "" && !strings.Contains(m[2], v.describes) {
		t.Fatalf("started on %q, want %s", m[2], v.describes)
	}
	return s
}

// cleanEnv is the test's environment without M0_* settings of its own.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "M0_") {
			env = append(env, kv)
		}
	}
	// M0_TEST_WSGI_INLINE=off runs the suite with WSGI requests always
	// handed to a handler thread (--wsgi-inline off), the default before
	// auto: `make test-wsgi-handoff`.
	if mode := os.Getenv("M0_TEST_WSGI_INLINE"); mode != "" {
		env = append(env, "M0_WSGI_INLINE="+mode)
	}
	// M0_E2E_ASGI_THREAD=loop|executor runs every server of the suite
	// with that --asgi-thread (a flag a test passes still wins), so the
	// ASGI tests cover both places the event loop runs.
	if mode := os.Getenv("M0_E2E_ASGI_THREAD"); mode != "" {
		env = append(env, "M0_ASGI_THREAD="+mode)
	}
	return env
}

// runToExit is runProgram for the binary itself.
func runToExit(t *testing.T, env []string, args ...string) (int, string) {
	t.Helper()
	return runProgram(t, env, binary, args...)
}

func (s *server) url(path string) string { return "http://" + s.addr + path }

// stop sends SIGTERM and expects exit status 0.
func (s *server) stop() {
	if s.done {
		return
	}
	s.done = true
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.exit:
		if err != nil {
			s.t.Errorf("m0serve exited with %v after SIGTERM\n%s", err, s.logs)
		}
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
		<-s.exit
		s.t.Errorf("m0serve did not exit after SIGTERM\n%s", s.logs)
	}
}

// waitExit waits for the process to end by itself and returns its error.
func (s *server) waitExit(limit time.Duration) error {
	s.done = true
	select {
	case err := <-s.exit:
		return err
	case <-time.After(limit):
		s.cmd.Process.Kill()
		<-s.exit
		return fmt.Errorf("still running after %v", limit)
	}
}

type logBuffer struct {
	mu    sync.Mutex
	lines []string
}

func (b *logBuffer) add(line string) {
	b.mu.Lock()
	b.lines = append(b.lines, line)
	b.mu.Unlock()
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Join(b.lines, "\n")
}

// forEachVariant runs test on every variant (full only: the slow ones).
func forEachVariant(t *testing.T, fullOnly bool, test func(t *testing.T, v variant)) {
	for _, v := range variants {
		if fullOnly && !v.full {
			continue
		}
		t.Run(v.name, func(t *testing.T) { test(t, v) })
	}
}

var _ = io.EOF
