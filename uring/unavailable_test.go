//go:build linux

package uring

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/m0serve/m0serve/internal/testtool"
)

// childEnv marks the re-executed test binary that runs New under the
// seccomp filter and reports what it got.
const childEnv = "M0_URING_TEST_SECCOMP_CHILD"

// Under a seccomp filter that refuses io_uring_setup with EPERM (Docker's
// default profile does), New must fail with ErrUnavailable and say why,
// so the server can fall back to epoll. The test re-runs itself under
// tests/tools/noiouring.
func TestUnavailableUnderSeccomp(t *testing.T) {
	if os.Getenv(childEnv) == "1" {
		runtime.LockOSThread()
		b, err := New(Options{})
		if err == nil {
			b.Close()
			fmt.Println("RESULT: New succeeded")
			return
		}
		fmt.Printf("RESULT: unavailable=%v error=%s\n", errors.Is(err, ErrUnavailable), err)
		return
	}

	tool := testtool.BuildNoIOURing(t)
	child := exec.Command(tool, os.Args[0], "-test.run=^TestUnavailableUnderSeccomp$", "-test.count=1")
	child.Env = append(os.Environ(), childEnv+"=1")
	out, err := child.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var result string
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "RESULT: ") {
			result = strings.TrimPrefix(line, "RESULT: ")
		}
	}
	t.Log(result)
	if !strings.HasPrefix(result, "unavailable=true ") || !strings.Contains(result, "seccomp") {
		t.Fatalf("New under a filter refusing io_uring_setup: %q; want ErrUnavailable naming seccomp\n%s", result, out)
	}
}
