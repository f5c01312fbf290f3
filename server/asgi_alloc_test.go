//go:build linux

package server

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// allocChild names the test a child process of the test binary runs:
// Python starts once per process, so each allocation check that starts the
// interpreter runs in a process of its own (also under -count=N).
const allocChild = "M0_SERVER_TEST_ALLOC_CHILD"

// inOwnProcess reports whether this is the child running test; if not, it
// runs test in a child and fails t unless the child passed it.
func inOwnProcess(t *testing.T, test string) bool {
	t.Helper()
	if os.Getenv(allocChild) == test {
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), allocChild+"="+test)
	out, err := cmd.CombinedOutput()
	// The PASS line proves the check ran there, not a filtered-out run.
	if err != nil || !strings.Contains(string(out), "--- PASS: "+test) {
		t.Fatalf("the child process: %v\n%s", err, out)
	}
	return false
}

// TestASGIRequestAllocatesNothing: the ASGI path through the server (loop,
// the pool's wrap with its owner note, the event loop stepped by the loop
// thread, Complete) allocates nothing per keep-alive request in steady
// state, for examples/hello_asgi.py's single-body, streamed and
// request-body routes.
func TestASGIRequestAllocatesNothing(t *testing.T) {
	if !inOwnProcess(t, "TestASGIRequestAllocatesNothing") {
		return
	}
	checkRequestsAllocateNothing(t, "hello_asgi:app", asgiAllocCases)
}

// TestASGIExecutorRequestAllocatesNothing is the same with the event loop
// on a thread of its own (--asgi-thread executor).
func TestASGIExecutorRequestAllocatesNothing(t *testing.T) {
	if !inOwnProcess(t, "TestASGIExecutorRequestAllocatesNothing") {
		return
	}
	checkRequestsAllocateNothing(t, "hello_asgi:app", asgiAllocCases, func(cfg *Config) { cfg.ASGIThread = "executor" })
}

var asgiAllocCases = []allocCase{
	{"single body", "GET / HTTP/1.1\r\nHost: x\r\n\r\n", "Hello, World!\n"},
	{"streamed body", "GET /stream HTTP/1.1\r\nHost: x\r\n\r\n", "line 9\n\r\n0\r\n\r\n"},
	{"request body", "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello", "hello"},
}
