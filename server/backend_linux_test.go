//go:build linux

package server

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/m0serve/m0serve/internal/testtool"

	"golang.org/x/sys/unix"

	"github.com/m0serve/m0serve/epoll"
	"github.com/m0serve/m0serve/loop"
	"github.com/m0serve/m0serve/uring"
)

// logLines collects what newBackend logs.
type logLines []string

func (l *logLines) logf(format string, args ...any) {
	*l = append(*l, fmt.Sprintf(format, args...))
}

// withURing replaces the io_uring constructor for one test.
func withURing(t *testing.T, constructor func() (loop.Backend, error)) {
	saved := newURingBackend
	newURingBackend = constructor
	t.Cleanup(func() { newURingBackend = saved })
}

func closeBackend(t *testing.T, b loop.Backend) {
	if err := b.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

func TestBackendKinds(t *testing.T) {
	var logs logLines
	b, err := newBackend("epoll", logs.logf)
	if err != nil {
		t.Fatalf("--backend epoll: %v", err)
	}
	if _, ok := b.(*epoll.Backend); !ok {
		t.Fatalf("--backend epoll gave %T (%s)", b, b.Name())
	}
	closeBackend(t, b)

	if _, err := newBackend("kqueue", logs.logf); err == nil || err.Error() != "--backend kqueue: not available on linux" {
		t.Fatalf("--backend kqueue: error %v, want \"--backend kqueue: not available on linux\"", err)
	}
	if _, err := newBackend("iocp", logs.logf); err == nil || !strings.Contains(err.Error(), "unknown backend") {
		t.Fatalf("--backend iocp: error %v, want an unknown backend error", err)
	}
	if len(logs) != 0 {
		t.Fatalf("logged %q, want nothing", logs)
	}
}

func TestAutoTakesURingWhenItWorks(t *testing.T) {
	stand, err := epoll.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeBackend(t, stand) })
	withURing(t, func() (loop.Backend, error) { return stand, nil })
	var logs logLines
	b, err := newBackend("auto", logs.logf)
	if err != nil || b != loop.Backend(stand) {
		t.Fatalf("--backend auto: %v, %v; want the io_uring constructor's backend", b, err)
	}
	if len(logs) != 0 {
		t.Fatalf("logged %q, want nothing", logs)
	}
}

func TestAutoFallsBackWhenURingUnavailable(t *testing.T) {
	refused := fmt.Errorf("%w: refused by seccomp: %w", uring.ErrUnavailable, unix.EPERM)
	withURing(t, func() (loop.Backend, error) { return nil, refused })
	var logs logLines
	b, err := newBackend("auto", logs.logf)
	if err != nil {
		t.Fatalf("--backend auto: %v", err)
	}
	defer closeBackend(t, b)
	if _, ok := b.(*epoll.Backend); !ok {
		t.Fatalf("--backend auto gave %T, want epoll", b)
	}
	if len(logs) != 1 || !strings.Contains(logs[0], "falling back to epoll") || !strings.Contains(logs[0], "refused by seccomp") {
		t.Fatalf("logged %q, want one line with the fallback and its reason", logs)
	}

	// Asked for by name, io_uring is not replaced.
	logs = nil
	if _, err := newBackend("uring", logs.logf); !errors.Is(err, uring.ErrUnavailable) {
		t.Fatalf("--backend uring: error %v, want uring.ErrUnavailable", err)
	}
	if len(logs) != 0 {
		t.Fatalf("logged %q, want nothing", logs)
	}
}

func TestAutoKeepsOtherURingErrors(t *testing.T) {
	broken := errors.New("buffer ring: BufferCount 3 is not a power of two")
	withURing(t, func() (loop.Backend, error) { return nil, broken })
	var logs logLines
	b, err := newBackend("auto", logs.logf)
	if !errors.Is(err, broken) || b != nil {
		t.Fatalf("--backend auto: %v, %v; want the io_uring error and no backend", b, err)
	}
	if len(logs) != 0 {
		t.Fatalf("logged %q, want nothing", logs)
	}
}

// childVariable marks the test binary run under noiouring by
// TestAutoFallsBackUnderSeccomp.
const childVariable = "M0_SERVER_BACKEND_CHILD"

// TestAutoFallsBackUnderSeccomp runs the real selection where
// io_uring_setup is refused by seccomp, as in a default Docker container.
func TestAutoFallsBackUnderSeccomp(t *testing.T) {
	helper := testtool.BuildNoIOURing(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command(helper, self)
	child.Env = append(os.Environ(), childVariable+"=1")
	out, err := child.CombinedOutput()
	if err != nil {
		t.Fatalf("child under noiouring: %v\n%s", err, out)
	}
	text := string(out)
	if !strings.Contains(text, "backend: epoll") ||
		strings.Count(text, "log: ") != 1 ||
		!strings.Contains(text, "log: m0serve: warning: falling back to epoll: io_uring unavailable") ||
		!strings.Contains(text, "seccomp") {
		t.Fatalf("under noiouring, --backend auto said:\n%s\nwant epoll and one log line naming seccomp", text)
	}
}

// TestMain runs the child side of TestAutoFallsBackUnderSeccomp when the
// test binary is started as that child, and the tests otherwise.
func TestMain(m *testing.M) {
	if os.Getenv(childVariable) != "" {
		os.Exit(autoBackendChild())
	}
	os.Exit(m.Run())
}

// autoBackendChild selects --backend auto and prints what it chose and
// logged, for the parent to read.
func autoBackendChild() int {
	b, err := newBackend("auto", func(format string, args ...any) {
		fmt.Printf("log: "+format+"\n", args...)
	})
	if err != nil {
		fmt.Printf("--backend auto: %v\n", err)
		return 1
	}
	fmt.Printf("backend: %s\n", b.Name())
	if err := b.Close(); err != nil {
		fmt.Printf("close: %v\n", err)
		return 1
	}
	return 0
}

// TestAutoBackendNamesTheChoice: what --version reports is what auto
// takes: io_uring when it sets up (and the probe's ring is closed),
// epoll with the reason when io_uring is unavailable, none when auto
// would stop.
func TestAutoBackendNamesTheChoice(t *testing.T) {
	closed := false
	withURing(t, func() (loop.Backend, error) { return &closeCounter{closed: &closed}, nil })
	if name, why := AutoBackend(); name != "io_uring" || why != nil || !closed {
		t.Errorf("io_uring sets up: %q, %v, closed %v; want io_uring, nil, closed", name, why, closed)
	}
	unavailable := fmt.Errorf("io_uring_setup: operation not permitted: %w", uring.ErrUnavailable)
	withURing(t, func() (loop.Backend, error) { return nil, unavailable })
	if name, why := AutoBackend(); name != "epoll" || why != unavailable {
		t.Errorf("io_uring unavailable: %q, %v; want epoll and the reason", name, why)
	}
	broken := errors.New("io_uring: register buffers: cannot allocate memory")
	withURing(t, func() (loop.Backend, error) { return nil, broken })
	if name, why := AutoBackend(); name != "" || why != broken {
		t.Errorf("io_uring failing otherwise: %q, %v; want none and the failure", name, why)
	}
}

// closeCounter is a backend that only records its Close.
type closeCounter struct {
	loop.Backend
	closed *bool
}

func (c *closeCounter) Close() error {
	*c.closed = true
	return nil
}
