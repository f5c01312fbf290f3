package loop

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

var answerOK = HandlerFunc(func(_ *Request, w *ResponseWriter) { w.Respond(200, []byte("ok")) })

// Drain keeps a keep-alive connection whose client may be sending its
// next request right now, answers that request with Connection: close,
// and only then closes it; Shutdown closes it idle.
func TestDrainAnswersTheNextRequestWithClose(t *testing.T) {
	hs := newHarness(t, answerOK, nil)
	c := hs.connect()
	hs.fb.write(c, "GET /1 HTTP/1.1\r\nHost: x\r\n\r\n")
	if got := hs.responses(c, 1)[0]; strings.Contains(got, "Connection: close") {
		t.Fatalf("before the drain:\n%s", got)
	}
	hs.l.Drain(time.Hour)
	hs.passes(5)
	if hs.fb.isClosed(c) || hs.l.stopped {
		t.Fatal("drain closed an idle keep-alive connection")
	}
	hs.fb.write(c, "GET /2 HTTP/1.1\r\nHost: x\r\n\r\n")
	if got := hs.responses(c, 2)[1]; !strings.HasPrefix(got, "HTTP/1.1 200 ") || !strings.Contains(got, "Connection: close") {
		t.Fatalf("the request after the drain:\n%s", got)
	}
	hs.until("closed", func() bool { return hs.fb.isClosed(c) })
	hs.until("stopped", func() bool { return hs.l.stopped })
}

// A drained connection that stays idle closes at its keep-alive timeout.
func TestDrainClosesIdleAtKeepAliveTimeout(t *testing.T) {
	hs := newHarness(t, answerOK, func(c *Config) { c.KeepAliveTimeout = 2 * time.Second })
	c := hs.connect()
	hs.fb.write(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	hs.responses(c, 1)
	hs.l.Drain(time.Hour)
	hs.passes(3)
	if hs.fb.isClosed(c) {
		t.Fatal("closed at once")
	}
	hs.advanceClock(3 * time.Second)
	hs.until("stopped", func() bool { return hs.l.stopped })
}

// The heartbeat carries the loop's clock, stamped by its tick.
func TestHeartbeat(t *testing.T) {
	var beat atomic.Int64
	hs := newHarness(t, answerOK, func(c *Config) { c.Heartbeat = &beat })
	if beat.Load() != hs.clock {
		t.Fatalf("heartbeat %d at start, want %d", beat.Load(), hs.clock)
	}
	hs.advanceClock(3 * time.Second)
	if beat.Load() != hs.clock {
		t.Fatalf("heartbeat %d after a tick, want %d", beat.Load(), hs.clock)
	}
}
