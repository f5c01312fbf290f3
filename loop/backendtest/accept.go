package backendtest

import (
	"net"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/m0serve/m0serve/loop"
)

func testWaitTimesOut(t *testing.T, newBackend func(t *testing.T) loop.Backend) {
	d := newDriver(t, newBackend, 8)
	if n := d.wait(20 * time.Millisecond); n != 0 {
		t.Fatalf("Wait with nothing queued returned %d completions: %s", n, describe(d.waiting[0]))
	}
}

// acceptedSocket checks an OpAccept that carries a connection.
func acceptedSocket(t *testing.T, c loop.Completion) int {
	t.Helper()
	if c.Op != loop.OpAccept || c.Slot != 0 || c.Res < 0 {
		t.Fatalf("got %s, want an accept with a socket", describe(c))
	}
	fd := int(c.Res)
	flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil {
		t.Fatalf("F_GETFL on accepted fd %d: %v", fd, err)
	}
	if flags&unix.O_NONBLOCK == 0 {
		t.Fatalf("accepted fd %d is blocking", fd)
	}
	fdFlags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
	if err != nil {
		t.Fatalf("F_GETFD on accepted fd %d: %v", fd, err)
	}
	if fdFlags&unix.FD_CLOEXEC == 0 {
		t.Fatalf("accepted fd %d is not close-on-exec", fd)
	}
	return fd
}

func testAcceptMany(t *testing.T, newBackend func(t *testing.T) loop.Backend) {
	const connections = 200
	// An out shorter than the burst: completions that do not fit must wait
	// for the next Wait, not vanish.
	d := newDriver(t, newBackend, 7)
	l := listen(t)
	d.backend.QueueAccept(l.fd)

	type dialResult struct {
		clients []net.Conn
		err     error
	}
	dialed := make(chan dialResult, 1)
	go func() {
		var r dialResult
		for i := 0; i < connections && r.err == nil; i++ {
			var c net.Conn
			if c, r.err = net.Dial("tcp", l.addr); r.err == nil {
				r.clients = append(r.clients, c)
			}
		}
		dialed <- r
	}()
	var result *dialResult
	dialDone := func() *dialResult {
		if result == nil {
			r := <-dialed
			result = &r
		}
		return result
	}
	defer func() {
		for _, c := range dialDone().clients {
			c.Close()
		}
	}()

	accepted := make(map[int]bool, connections)
	defer func() {
		for fd := range accepted {
			unix.Close(fd)
		}
	}()
	for len(accepted) < connections {
		c := d.next()
		fd := acceptedSocket(t, c)
		if accepted[fd] {
			t.Fatalf("fd %d accepted twice", fd)
		}
		accepted[fd] = true
		if !c.More {
			d.backend.QueueAccept(l.fd)
		}
	}
	if err := dialDone().err; err != nil {
		t.Fatalf("dial: %v", err)
	}
	d.backend.StopAccept()
	if c := d.next(); c.Op != loop.OpAcceptStopped {
		t.Fatalf("after StopAccept: got %s, want accept stopped", describe(c))
	}
	d.expectNone(50*time.Millisecond, "after 200 accepts")
}

func testStopAndRearmAccept(t *testing.T, newBackend func(t *testing.T) loop.Backend) {
	d := newDriver(t, newBackend, 8)
	l := listen(t)
	d.backend.QueueAccept(l.fd)
	l.dial(t)
	c := d.next()
	unix.Close(acceptedSocket(t, c))

	d.backend.StopAccept()
	// With no new connection, the one report is that the accept ended.
	if c := d.next(); c.Op != loop.OpAcceptStopped {
		t.Fatalf("after StopAccept with no new connection: got %s", describe(c))
	}

	// A connection while disarmed waits in the backlog.
	l.dial(t)
	d.expectNone(50*time.Millisecond, "connection while accept is stopped")

	// Re-arming picks it up, although it arrived while nobody listened
	// for readiness on the listener.
	d.backend.QueueAccept(l.fd)
	unix.Close(acceptedSocket(t, d.next()))
}

// testStopAcceptLosesNothing: a connection that arrives as accept is
// stopped, before the stop reaches the kernel, is either reported before
// OpAcceptStopped or still queued in the listener after it; nothing of
// the stopped accept comes later.
func testStopAcceptLosesNothing(t *testing.T, newBackend func(t *testing.T) loop.Backend) {
	d := newDriver(t, newBackend, 8)
	l := listen(t)
	d.backend.QueueAccept(l.fd)
	d.wait(0) // the accept is in the kernel
	l.dial(t)
	d.backend.StopAccept()
	accepted := 0
	for {
		c := d.next()
		if c.Op == loop.OpAcceptStopped {
			break
		}
		unix.Close(acceptedSocket(t, c))
		accepted++
	}
	d.expectNone(50*time.Millisecond, "after OpAcceptStopped")
	if accepted == 0 {
		unix.Close(l.acceptRaw(t))
	}
}
