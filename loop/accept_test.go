package loop

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestMaxConnectionsPausesAccept(t *testing.T) {
	hs := newHarness(t, hello, func(c *Config) { c.MaxConnections = 2 })
	hs.t = t
	a, b := hs.connect(), hs.connect()
	third := hs.fb.dial()
	hs.passes(5)
	if third.accepted {
		t.Fatal("accepted past --max-connections")
	}
	if hs.fb.stopAccepts == 0 {
		t.Fatal("StopAccept not called at the limit")
	}
	hs.fb.write(a, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	hs.until("third accepted", func() bool { return third.accepted })
	hs.fb.write(third, "GET /3 HTTP/1.1\r\nHost: x\r\n\r\n")
	if got := hs.responses(third, 1)[0]; !strings.Contains(got, "X-Path: /3") {
		t.Fatalf("third connection:\n%s", got)
	}
	_ = b
}

// TestAcceptResumesAfterEMFILE: accept failing for lack of descriptors
// held outside the loop (no connection of its own closes) is retried on a
// timer, and one line says it paused, one that it resumed.
func TestAcceptResumesAfterEMFILE(t *testing.T) {
	var logs []string
	hs := newHarness(t, hello, func(c *Config) {
		c.Logf = func(format string, args ...any) { logs = append(logs, fmt.Sprintf(format, args...)) }
	})
	hs.t = t
	hs.fb.failAccept(syscall.EMFILE)
	c := hs.fb.dial()
	for i := 0; i < 5; i++ {
		hs.advanceClock(10 * time.Millisecond)
	}
	if c.accepted {
		t.Fatal("accepted while accept fails")
	}
	hs.fb.failAccept(0)
	hs.advanceClock(2 * time.Second)
	hs.until("accept after the descriptors came back", func() bool { return c.accepted })
	hs.fb.write(c, "GET /after HTTP/1.1\r\nHost: x\r\n\r\n")
	if got := hs.responses(c, 1)[0]; !strings.Contains(got, "X-Path: /after") {
		t.Fatalf("after EMFILE:\n%s", got)
	}
	joined := strings.Join(logs, "\n")
	if strings.Count(joined, "accepting pauses") != 1 || strings.Count(joined, "accepting connections again") != 1 {
		t.Errorf("want one line for the pause and one for the resumption, got:\n%s", joined)
	}
}

// TestLimitConcurrencyIgnoresIdle: connections that never send a request,
// or wait for their next one, are not counted against LimitConcurrency;
// one with part of a request is.
func TestLimitConcurrencyIgnoresIdle(t *testing.T) {
	var logs []string
	hs := newHarness(t, hello, func(c *Config) {
		c.LimitConcurrency = 2
		c.Logf = func(format string, args ...any) { logs = append(logs, fmt.Sprintf(format, args...)) }
	})
	hs.t = t
	for i := 0; i < 10; i++ {
		hs.connect()
	}
	kept := hs.connect()
	hs.fb.write(kept, "GET /kept HTTP/1.1\r\nHost: x\r\n\r\n")
	hs.responses(kept, 1)
	c := hs.connect()
	hs.fb.write(c, "GET /real HTTP/1.1\r\nHost: x\r\n\r\n")
	if got := hs.responses(c, 1)[0]; !strings.Contains(got, "X-Path: /real") {
		t.Fatalf("beside 11 idle connections:\n%s", got)
	}
	// Two with half a head each, and a third request: one too many.
	for i := 0; i < 2; i++ {
		partial := hs.connect()
		hs.fb.write(partial, "GET /partial HTTP/1.1\r\n")
	}
	hs.passes(3)
	d := hs.connect()
	hs.fb.write(d, "GET /over HTTP/1.1\r\nHost: x\r\n\r\n")
	if got := hs.responses(d, 1)[0]; !strings.HasPrefix(got, "HTTP/1.1 503 ") {
		t.Fatalf("beyond the limit:\n%s", got)
	}
	if joined := strings.Join(logs, "\n"); !strings.Contains(joined, "beyond --limit-concurrency 2") {
		t.Errorf("no log line for the refusal: %q", joined)
	}
}
