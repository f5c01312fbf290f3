//go:build linux

package tests

import (
	"net"
	"strings"
	"testing"
	"time"
)

// TestRSSReturnedAfterSlowClients: memory taken by a peak of slow clients
// (3000 connections each holding most of a request head) goes back to the
// OS once they are gone. Every free connection slot used to keep its
// parsed request pointing into its old receive buffer, and the free lists
// kept up to 1024 more: the resident set stayed at its peak for good.
func TestRSSReturnedAfterSlowClients(t *testing.T) {
	forEachVariant(t, true, func(t *testing.T, v variant) {
		s := start(t, v, "--app-dir", appsDir(t), "exit_app:app")
		get(t, s.url("/ok"))
		pid := s.cmd.Process.Pid
		base := processRSS(t, pid)
		head := "GET /ok HTTP/1.1\r\nHost: x\r\nX-Pad: " + strings.Repeat("a", 6000)
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for i := 0; i < 3000; i++ {
			c, err := net.DialTimeout("tcp", s.addr, 10*time.Second)
			if err != nil {
				t.Fatalf("connection %d: %v", i, err)
			}
			conns = append(conns, c)
			if _, err := c.Write([]byte(head)); err != nil {
				t.Fatalf("connection %d: %v", i, err)
			}
		}
		// The peak: the resident set grown and no longer growing (every
		// head received), bounded.
		var peak, last int64
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
			last, peak = peak, processRSS(t, pid)
			if peak-base > 12<<20 && peak == last {
				break
			}
		}
		if peak-base <= 12<<20 {
			t.Fatalf("3000 slow clients took %d MiB: the test measures nothing", (peak-base)>>20)
		}
		for _, c := range conns {
			c.Close()
		}
		conns = nil
		want := base + (peak-base)/2
		var now int64
		for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			if now = processRSS(t, pid); now <= want {
				break
			}
		}
		if now > want {
			t.Fatalf("resident %d MiB after the slow clients left (%d before them, %d at the peak), want at most %d",
				now>>20, base>>20, peak>>20, want>>20)
		}
		t.Logf("resident: %d MiB before, %d at the peak, %d after", base>>20, peak>>20, now>>20)
		get(t, s.url("/ok"))
	})
}

// TestRSSReturnedAfterLargeInlineResponse: with --threads 0 a response is
// gathered whole (in the bridge's arena, then the connection's send
// buffer); after a 64 MiB one the memory goes back to the OS without
// waiting for another request. The arena used to keep it until the next
// request and the dropped send buffer until a garbage collection.
func TestRSSReturnedAfterLargeInlineResponse(t *testing.T) {
	s := startWSGI(t, "big_app:app", "--threads", "0")
	get(t, s.url("/ok"))
	pid := s.cmd.Process.Pid
	base := processRSS(t, pid)
	resp, body := get(t, s.url("/big?mb=64"))
	if resp.StatusCode != 200 || len(body) != 64<<20 {
		t.Fatalf("/big?mb=64: %d with %d bytes", resp.StatusCode, len(body))
	}
	want := base + 16<<20
	var now int64
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if now = processRSS(t, pid); now <= want {
			break
		}
	}
	if now > want {
		t.Fatalf("resident %d MiB after a 64 MiB response (%d before it), want at most %d", now>>20, base>>20, want>>20)
	}
}
