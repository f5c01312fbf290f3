package loop

import (
	"strings"
	"sync/atomic"
	"testing"
)

// A connection accepted while the loop's deferred requests fill what its
// PassOn weighs goes to PassOn, not to a slot.
func TestPassOnWhileJobsOut(t *testing.T) {
	q := NewJobQueue(4)
	defer q.Close()
	var jobsOut atomic.Int32 // what PassOn was last told
	passed := make(chan int, 4)
	hs := newHarness(t, deferEverything, func(c *Config) {
		c.Jobs = q
		c.PassOn = func(fd, out int) bool {
			jobsOut.Store(int32(out))
			if out < 1 {
				return false
			}
			passed <- fd
			return true
		}
	})
	hs.t = t
	first := hs.connect()
	hs.fb.write(first, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	hs.until("the job out", func() bool { return hs.l.jobsOut == 1 })
	second := hs.fb.dial()
	if fd := untilReceived(hs, "the pass on", passed); fd != second.fd {
		t.Fatalf("passed fd %d, want the second connection's %d", fd, second.fd)
	}
	hs.passes(3)
	if second.recvArm || hs.l.active != 1 {
		t.Fatalf("the passed connection was served here too (receive armed %v, %d open)", second.recvArm, hs.l.active)
	}
	j := q.Take()
	j.Write([]byte("ok"))
	j.Finish()
	hs.responses(first, 1)
	hs.until("the job released", func() bool { return hs.l.jobsOut == 0 })
	third := hs.connect()
	if jobsOut.Load() != 0 {
		t.Fatalf("PassOn told of %d jobs out, want 0", jobsOut.Load())
	}
	hs.fb.write(third, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	hs.until("a job for the kept connection", func() bool { return hs.l.jobsOut == 1 })
	if len(passed) != 0 {
		t.Fatal("a connection passed on with no job out")
	}
}

// An adopted connection is served as an accepted one.
func TestAdoptServes(t *testing.T) {
	hs := newHarness(t, hello, nil)
	hs.t = t
	hs.fb.mu.Lock()
	hs.fb.nextFD++
	c := &fakeConn{fd: hs.fb.nextFD, accepted: true}
	hs.fb.conns = append(hs.fb.conns, c)
	hs.fb.mu.Unlock()
	hs.l.Adopt(c.fd)
	hs.fb.write(c, "GET /adopted HTTP/1.1\r\nHost: x\r\n\r\n")
	if got := hs.responses(c, 1)[0]; !strings.Contains(got, "X-Path: /adopted") {
		t.Fatalf("response:\n%s", got)
	}
}

// MaxKeepAliveRequests: the Nth response says Connection: close, and the
// connection closes after it.
func TestMaxKeepAliveRequests(t *testing.T) {
	hs := newHarness(t, hello, func(c *Config) { c.MaxKeepAliveRequests = 2 })
	hs.t = t
	c := hs.connect()
	hs.fb.write(c, "GET /1 HTTP/1.1\r\nHost: x\r\n\r\n")
	if got := hs.responses(c, 1)[0]; strings.Contains(got, "Connection: close") {
		t.Fatalf("first response closes:\n%s", got)
	}
	hs.fb.write(c, "GET /2 HTTP/1.1\r\nHost: x\r\n\r\n")
	if got := hs.responses(c, 2)[1]; !strings.Contains(got, "Connection: close") {
		t.Fatalf("second response keeps the connection:\n%s", got)
	}
	hs.until("the close", func() bool { return hs.fb.isClosed(c) })
}
