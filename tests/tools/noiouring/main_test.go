//go:build linux

package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The test binary plays three parts, chosen by roleVariable: the helper
// itself (run), and a probe that reports what io_uring_setup and a
// harmless syscall return where it runs.
const (
	roleVariable = "NOIOURING_TEST_ROLE"
	nextVariable = "NOIOURING_TEST_NEXT_ROLE"
)

func TestMain(m *testing.M) {
	switch os.Getenv(roleVariable) {
	case "helper":
		os.Setenv(roleVariable, os.Getenv(nextVariable))
		os.Exit(run(os.Args[1:], os.Stderr))
	case "probe":
		probe(os.Stdout)
		os.Exit(0)
	case "exit7":
		os.Exit(7)
	}
	os.Exit(m.Run())
}

// probe prints the errno of io_uring_setup and of eventfd2 (0: it
// worked), and its arguments.
func probe(out io.Writer) {
	var params [120]byte // struct io_uring_params, zeroed
	fd, _, setupErrno := unix.Syscall(ioURingSetup, 1, uintptr(unsafe.Pointer(&params)), 0)
	if setupErrno == 0 {
		unix.Close(int(fd))
	}
	eventFD, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
	var eventErrno unix.Errno
	if err != nil {
		errors.As(err, &eventErrno)
	} else {
		unix.Close(eventFD)
	}
	fmt.Fprintf(out, "io_uring_setup=%d eventfd=%d args=%q\n", int(setupErrno), int(eventErrno), os.Args[1:])
}

func self(t *testing.T) string {
	t.Helper()
	path, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// underHelper runs the test binary through run in the role next.
func underHelper(t *testing.T, next string, args ...string) *exec.Cmd {
	cmd := exec.Command(self(t), append([]string{self(t)}, args...)...)
	cmd.Env = append(os.Environ(), roleVariable+"=helper", nextVariable+"="+next)
	return cmd
}

func TestRefusesIOURingSetup(t *testing.T) {
	out, err := underHelper(t, "probe", "--flag", "two words").CombinedOutput()
	if err != nil {
		t.Fatalf("probe under noiouring: %v\n%s", err, out)
	}
	want := fmt.Sprintf("io_uring_setup=%d eventfd=0 args=%q\n", int(unix.EPERM), []string{"--flag", "two words"})
	if string(out) != want {
		t.Fatalf("under noiouring the probe says %q, want %q", out, want)
	}
}

// TestProbeUnfiltered is the control: without the helper, io_uring_setup
// is not refused with EPERM, so the EPERM above is the filter's doing.
func TestProbeUnfiltered(t *testing.T) {
	cmd := exec.Command(self(t))
	cmd.Env = append(os.Environ(), roleVariable+"=probe")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("probe: %v\n%s", err, out)
	}
	if strings.HasPrefix(string(out), fmt.Sprintf("io_uring_setup=%d ", int(unix.EPERM))) {
		t.Skipf("io_uring_setup already fails with EPERM on this host (%s): the filter cannot be told apart here", strings.TrimSpace(string(out)))
	}
	if !strings.HasPrefix(string(out), "io_uring_setup=") || !strings.Contains(string(out), " eventfd=0 ") {
		t.Fatalf("probe says %q", out)
	}
}

func TestExitStatusPassesThrough(t *testing.T) {
	err := underHelper(t, "exit7").Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 7 {
		t.Fatalf("command exiting 7 under noiouring: %v, want exit status 7", err)
	}
}

func TestUsage(t *testing.T) {
	var stderr strings.Builder
	if status := run(nil, &stderr); status != 2 || !strings.Contains(stderr.String(), "usage:") {
		t.Fatalf("run with no command: status %d, stderr %q; want 2 and a usage line", status, stderr.String())
	}
	stderr.Reset()
	if status := run([]string{"/nonexistent/m0serve-test-command"}, &stderr); status != 127 {
		t.Fatalf("run of a missing command: status %d, stderr %q; want 127", status, stderr.String())
	}
}
