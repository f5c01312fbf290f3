package loop

import (
	"strings"
	"testing"
	"time"
)

func TestHeaderTimeout(t *testing.T) {
	hs := newHarness(t, hello, func(c *Config) { c.HeaderTimeout = 3 * time.Second })
	hs.t = t
	c := hs.connect()
	hs.fb.write(c, "GET / HTTP/1.1\r\nHo")
	hs.passes(3)
	hs.advanceClock(2 * time.Second)
	if hs.fb.isClosed(c) || hs.fb.output(c) != "" {
		t.Fatal("cut off before the header timeout")
	}
	hs.advanceClock(2 * time.Second)
	got := hs.responses(c, 1)[0]
	if !strings.HasPrefix(got, "HTTP/1.1 408 ") {
		t.Fatalf("want 408, got:\n%s", got)
	}
	hs.lingerThenClose(c)
}

func TestIdleTimeoutClosesSilently(t *testing.T) {
	hs := newHarness(t, hello, func(c *Config) { c.KeepAliveTimeout = 2 * time.Second })
	hs.t = t
	c := hs.connect()
	hs.fb.write(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	first := hs.responses(c, 1)[0]
	hs.advanceClock(1 * time.Second)
	if hs.fb.isClosed(c) {
		t.Fatal("closed before the idle timeout")
	}
	hs.advanceClock(2 * time.Second)
	hs.until("close", func() bool { return hs.fb.isClosed(c) })
	if out := hs.fb.output(c); out != first {
		t.Fatalf("idle close wrote more: %q", out[len(first):])
	}
}

func TestBodyStallTimeout(t *testing.T) {
	deferredHarness(t, deferEverything, echoBody, func(c *Config) { c.BodyTimeout = 3 * time.Second })(func(t *testing.T, hs *harness) {
		c := hs.connect()
		hs.fb.write(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789")
		hs.passes(5)
		hs.advanceClock(2 * time.Second)
		if hs.fb.isClosed(c) {
			t.Fatal("closed before the body timeout")
		}
		hs.fb.write(c, "0123456789") // progress pushes the deadline out
		hs.passes(5)
		hs.advanceClock(2 * time.Second)
		if hs.fb.isClosed(c) {
			t.Fatal("closed although the body made progress")
		}
		hs.advanceClock(2 * time.Second)
		hs.until("close", func() bool { return hs.fb.isClosed(c) })
	})
}

// lingerThenClose checks the close after an error response: the server
// keeps reading (and dropping) until the client's EOF, then closes.
func (h *harness) lingerThenClose(c *fakeConn) {
	h.t.Helper()
	h.passes(3)
	if h.fb.isClosed(c) {
		h.t.Fatal("closed at once after an error response; want a lingering close")
	}
	h.fb.write(c, "more bytes the client was still sending")
	h.passes(3)
	if h.fb.isClosed(c) {
		h.t.Fatal("closed while the client was still sending")
	}
	h.fb.shutdownWrite(c)
	h.until("close at the client's EOF", func() bool { return h.fb.isClosed(c) })
}

func TestLingerEndsAtDeadline(t *testing.T) {
	eachMode(t, hello, nil, func(t *testing.T, hs *harness) {
		c := hs.connect()
		hs.fb.write(c, "GET / HTTP/2.0\r\nHost: x\r\n\r\n")
		if got := hs.responses(c, 1)[0]; !strings.HasPrefix(got, "HTTP/1.1 505 ") {
			t.Fatalf("want 505:\n%s", got)
		}
		hs.passes(3)
		hs.advanceClock(lingerTime + 2*time.Second)
		hs.until("close at the linger deadline", func() bool { return hs.fb.isClosed(c) })
	})
}
