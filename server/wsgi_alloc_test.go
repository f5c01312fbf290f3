//go:build linux

package server

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"regexp"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestWSGIRequestAllocatesNothing runs the whole server in one process
// (loop, handler thread, embedded Python serving examples/hello_wsgi.py)
// and counts Go allocations per request across the process, client
// included: in steady state a keep-alive request allocates nothing,
// whether the body is a list (Complete), a generator (Streamed) or a
// request body read through wsgi.input. With the default --wsgi-inline
// auto the first two run on the loop thread and the third is handed off;
// TestWSGIHandoffAllocatesNothing hands every one off.
func TestWSGIRequestAllocatesNothing(t *testing.T) {
	if !inOwnProcess(t, "TestWSGIRequestAllocatesNothing") {
		return
	}
	cases := slices.Clone(wsgiAllocCases)
	// A generator body run on the loop thread is gathered and sent with
	// its length (a chunked one, handed off past the inline budget, ends
	// with the same line).
	cases[1].body = "line 4\n"
	checkRequestsAllocateNothing(t, "hello_wsgi:app", cases)
}

// TestWSGIHandoffAllocatesNothing is TestWSGIRequestAllocatesNothing
// with --wsgi-inline off.
func TestWSGIHandoffAllocatesNothing(t *testing.T) {
	if !inOwnProcess(t, "TestWSGIHandoffAllocatesNothing") {
		return
	}
	allocInline = "off"
	checkRequestsAllocateNothing(t, "hello_wsgi:app", wsgiAllocCases)
}

// allocInline is the --wsgi-inline the alloc tests run with.
var allocInline = Defaults.WSGIInline

var wsgiAllocCases = []allocCase{
	{"list body", "GET / HTTP/1.1\r\nHost: x\r\n\r\n", "Hello, World!"},
	{"generator body", "GET /stream HTTP/1.1\r\nHost: x\r\n\r\n", "line 4\n\r\n0\r\n\r\n"},
	{"request body", "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello", "hello"},
}

// allocCase is one keep-alive request and the end of its response.
type allocCase struct {
	name, request string
	body          string // the body the response ends with
}

// checkRequestsAllocateNothing serves app (from examples/) with Run in
// this process and counts Go allocations per request for each case.
func checkRequestsAllocateNothing(t *testing.T, app string, cases []allocCase, configure ...func(*Config)) {
	addr, stop := serveForAllocs(t, app, configure...)
	defer stop()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	br := bufio.NewReaderSize(conn, 64<<10)
	buf := make([]byte, 64<<10)
	for _, tc := range cases {
		request := []byte(tc.request)
		roundTrip := func() {
			if _, err := conn.Write(request); err != nil {
				t.Fatal(err)
			}
			if err := readUntil(br, buf, tc.body); err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
		}
		for i := 0; i < 200; i++ { // the job pool, arenas and caches grow to size
			roundTrip()
		}
		if allocs := testing.AllocsPerRun(500, roundTrip); allocs > 0 {
			t.Errorf("%s: %.2f allocations per request, want 0", tc.name, allocs)
		}
	}
}

// serveForAllocs runs app (from examples/) with Run in this process and
// returns its address, and stop, which ends it and fails t if its log
// shows a traceback.
func serveForAllocs(t *testing.T, app string, configure ...func(*Config)) (addr string, stop func()) {
	examples, err := filepath.Abs("../examples")
	if err != nil {
		t.Fatal(err)
	}
	cfg := Defaults
	cfg.Port = 0
	cfg.App = app
	cfg.AppDir = examples
	cfg.Backend = "epoll" // either backend; epoll needs no io_uring here
	cfg.WSGIInline = allocInline
	for _, f := range configure {
		f(&cfg)
	}
	addrc := make(chan string, 1)
	var logMu sync.Mutex
	var logs bytes.Buffer
	serving := regexp.MustCompile(`serving on http://(\S+)`)
	logf := func(format string, args ...any) {
		line := fmt.Sprintf(format, args...)
		logMu.Lock()
		logs.WriteString(line + "\n")
		logMu.Unlock()
		if m := serving.FindStringSubmatch(line); m != nil {
			addrc <- m[1]
		}
	}
	done := make(chan error, 1)
	go func() { done <- Run(cfg, logf) }()
	select {
	case addr = <-addrc:
	case err := <-done:
		t.Fatalf("Run: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the server did not start")
	}
	return addr, func() {
		syscall.Kill(syscall.Getpid(), syscall.SIGTERM)
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("Run did not return after SIGTERM")
		}
		logMu.Lock()
		defer logMu.Unlock()
		if bytes.Contains(logs.Bytes(), []byte("Traceback")) {
			t.Fatalf("server log:\n%s", logs.String())
		}
	}
}

// readUntil reads one response that ends with end (the test's responses
// have no other occurrence of it), without allocating.
func readUntil(br *bufio.Reader, buf []byte, end string) error {
	n := 0
	for {
		b, err := br.ReadByte()
		if err != nil {
			if err == io.EOF {
				return fmt.Errorf("connection closed after %q", buf[:n])
			}
			return err
		}
		if n == len(buf) {
			return fmt.Errorf("response over %d bytes", len(buf))
		}
		buf[n] = b
		n++
		if n >= len(end) && string(buf[n-len(end):n]) == end {
			return nil
		}
	}
}
