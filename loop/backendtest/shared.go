package backendtest

import (
	"bufio"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/m0serve/m0serve/loop"
)

// sharedLoop is a loop serving "ok" on a listener other loops share, as
// the old and the new worker of a --workers slot share theirs during a
// rolling reload.
type sharedLoop struct {
	loop   *loop.Loop
	passes atomic.Int64
	done   chan error
	// onPassEnd, when set, runs on the loop thread at the end of a pass.
	onPassEnd atomic.Pointer[func(*sharedLoop)]
}

func startSharedLoop(t *testing.T, newBackend func(t *testing.T) loop.Backend, listenFD int) *sharedLoop {
	t.Helper()
	s := &sharedLoop{done: make(chan error, 1)}
	l, err := loop.New(loop.Config{
		// newBackend's t.Fatal would run off the test goroutine: only a
		// backend that cannot start at all (checked by every other case).
		NewBackend: func() (loop.Backend, error) { return newBackend(t), nil },
		ListenFD:   listenFD,
		Handler: loop.HandlerFunc(func(_ *loop.Request, w *loop.ResponseWriter) {
			w.Respond(200, []byte("ok"))
		}),
		OnPassEnd: func() {
			s.passes.Add(1)
			if f := s.onPassEnd.Load(); f != nil {
				(*f)(s)
			}
		},
	})
	if err != nil {
		t.Fatalf("loop.New: %v", err)
	}
	s.loop = l
	go func() { s.done <- l.Run() }()
	t.Cleanup(func() {
		l.Shutdown(0)
		select {
		case err := <-s.done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(hangGuard):
			t.Errorf("the loop did not return within %v of Shutdown", hangGuard)
		}
	})
	return s
}

// waitPasses waits until s has ended n passes (its first Wait has
// submitted its accept once it ended one).
func (s *sharedLoop) waitPasses(t *testing.T, n int64) {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for s.passes.Load() < n {
		if time.Now().After(deadline) {
			t.Fatalf("the loop ended %d passes within %v, want %d", s.passes.Load(), hangGuard, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// get sends one request on c and reads the response.
func get(t *testing.T, c net.Conn) *http.Response {
	t.Helper()
	c.SetDeadline(time.Now().Add(hangGuard))
	if _, err := c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
		t.Fatalf("write: %v", err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no response within %v: %v", hangGuard, err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d, want 200", resp.StatusCode)
	}
	return resp
}

// testDrainWithConnectionWaiting: two loops share a listener; the one
// that accepts first drains, and a connection arrives in the pass that
// stops its accept, before the stop reaches the kernel. The connection is
// served by one of them. With io_uring the connection's wake-up goes to
// the draining loop's accept alone (exclusive wait), so unless that loop
// takes the connection itself, nobody does until another one arrives.
func testDrainWithConnectionWaiting(t *testing.T, newBackend func(t *testing.T) loop.Backend) {
	l := listen(t)
	old := startSharedLoop(t, newBackend, l.fd)
	// Armed first, so first in line for a connection's wake-up; the
	// request proves it.
	get(t, l.dial(t))
	replacement := startSharedLoop(t, newBackend, l.fd)
	replacement.waitPasses(t, 1)

	dialed := make(chan net.Conn, 1)
	step := 0
	onPassEnd := func(s *sharedLoop) {
		switch step {
		case 0:
			s.loop.Drain(time.Hour)
		case 1:
			// The pass in which the drain stopped accepting: the stop is
			// queued, not yet submitted.
			c, err := net.Dial("tcp", l.addr)
			if err != nil {
				t.Errorf("dial %s: %v", l.addr, err)
			}
			dialed <- c
		default:
			return
		}
		step++
	}
	// The loop ends a pass at least every second (its tick).
	old.onPassEnd.Store(&onPassEnd)
	c := <-dialed
	if c == nil {
		t.FailNow()
	}
	defer c.Close()
	get(t, c)
}
