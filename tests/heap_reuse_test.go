//go:build linux

package tests

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestHeapReusedAcrossRequests: memory a request frees is there for the
// next one, not handed back to the kernel and faulted in again. A
// request of deflate_app frees zlib's buffers (some 300 KB); with
// glibc's start-up thresholds (trim past 128 KiB) each request faulted
// about 20 pages back in.
func TestHeapReusedAcrossRequests(t *testing.T) {
	s := start(t, variants[0], "--app-dir", appsDir(t), "deflate_app:app")
	defer s.stop()
	get := func() {
		resp, err := http.Get(s.url("/"))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("status %d", resp.StatusCode)
		}
	}
	for i := 0; i < 50; i++ { // warm: imports, first allocations
		get()
	}
	pid := s.cmd.Process.Pid
	before := minorFaults(t, pid)
	const requests = 400
	for i := 0; i < requests; i++ {
		get()
	}
	faults := minorFaults(t, pid) - before
	if perRequest := float64(faults) / requests; perRequest > 2 {
		t.Fatalf("%.1f minor page faults per request (%d over %d requests), want the heap reused (under 2)",
			perRequest, faults, requests)
	}
}

// minorFaults is a process's minor page faults so far (minflt, the tenth
// field of /proc/PID/stat).
func minorFaults(t *testing.T, pid int) int {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(string(data)[strings.LastIndexByte(string(data), ')')+1:])
	n, err := strconv.Atoi(fields[7])
	if err != nil {
		t.Fatal(err)
	}
	return n
}
