//go:build linux

package server

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// asgiAllocChild marks the child process that runs the ASGI allocation
// check: Python starts once per process, and the WSGI check may already
// have started (and finalised) it in this one.
const asgiAllocChild = "M0_SERVER_TEST_ASGI_CHILD"

// TestASGIRequestAllocatesNothing: the ASGI path through the server (loop,
// the pool's wrap with its owner note, the executor, Complete) allocates
// nothing per keep-alive request in steady state, for examples/
// hello_asgi.py's single-body, streamed and request-body routes.
func TestASGIRequestAllocatesNothing(t *testing.T) {
	if os.Getenv(asgiAllocChild) == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestASGIRequestAllocatesNothing$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), asgiAllocChild+"=1")
		out, err := cmd.CombinedOutput()
		// The PASS line proves the check ran there, not a filtered-out run.
		if err != nil || !strings.Contains(string(out), "--- PASS: TestASGIRequestAllocatesNothing") {
			t.Fatalf("the child process: %v\n%s", err, out)
		}
		return
	}
	checkRequestsAllocateNothing(t, "hello_asgi:app", []allocCase{
		{"single body", "GET / HTTP/1.1\r\nHost: x\r\n\r\n", "Hello, World!\n"},
		{"streamed body", "GET /stream HTTP/1.1\r\nHost: x\r\n\r\n", "line 9\n\r\n0\r\n\r\n"},
		{"request body", "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello", "hello"},
	})
}
