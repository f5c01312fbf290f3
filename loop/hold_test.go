package loop

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/m0serve/m0serve/realtime"
)

// holdView holds every request on the channel its path names, as the
// server's bridge does for M0-Hold: stream.
func holdView(j *Job) {
	channel := strings.TrimPrefix(string(j.Request.Bytes(j.Request.Path)), "/")
	last, _ := strconv.ParseInt(string(j.Request.Header.Get("last-event-id")), 10, 64)
	if err := j.Hold(channel, last); err != nil {
		j.WriteHeader(500, 0)
		j.Finish()
		return
	}
	j.SetHeader("Content-Type", "text/event-stream")
	j.WriteHeader(200, -1)
	j.Write([]byte(": connected\n\n"))
	j.Finish()
}

func holdHarness(t *testing.T) (func(test func(t *testing.T, hs *harness)), *realtime.Counter) {
	page, err := realtime.NewPage()
	if err != nil {
		t.Fatal(err)
	}
	counter, err := realtime.MapCounter(page)
	if err != nil {
		t.Fatal(err)
	}
	return deferredHarness(t, deferEverything, holdView, func(c *Config) {
		c.Realtime = &Realtime{Counter: counter, ReplayFrames: 2}
	}), counter
}

// publish takes an id and posts a frame from another goroutine, as the
// server's bus reader does.
func publish(l *Loop, counter *realtime.Counter, channel, data string) {
	id := counter.Next()
	frame := realtime.AppendEvent(nil, id, "", []byte(data))
	done := make(chan struct{})
	go func() {
		l.Broadcast(realtime.AppendDatagram(nil, id, channel, frame))
		close(done)
	}()
	<-done
}

func (h *harness) holdOutput(c *fakeConn, want string) {
	h.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.HasSuffix(h.fb.output(c), want) {
		if time.Now().After(deadline) {
			h.t.Fatalf("the stream did not end with %q; it is %q", want, h.fb.output(c))
		}
		h.passes(1)
	}
}

// TestHoldDeliversToItsChannel: a held response's head is unframed and
// keep-alive, its body first; a broadcast reaches every connection of its
// channel and no other; a client's close takes it off its channel.
func TestHoldDeliversToItsChannel(t *testing.T) {
	run, counter := holdHarness(t)
	run(func(t *testing.T, hs *harness) {
		a1, a2, b := hs.connect(), hs.connect(), hs.connect()
		for _, c := range []*fakeConn{a1, a2} {
			hs.fb.write(c, "GET /a HTTP/1.1\r\nHost: x\r\n\r\n")
		}
		hs.fb.write(b, "GET /b HTTP/1.1\r\nHost: x\r\n\r\n")
		for _, c := range []*fakeConn{a1, a2, b} {
			hs.holdOutput(c, "\r\n\r\n: connected\n\n")
		}
		hs.until("three holds", func() bool { return hs.l.Holds() == 3 })
		head := hs.fb.output(a1)
		for _, want := range []string{"HTTP/1.1 200 OK\r\n", "Connection: keep-alive\r\n", "X-Accel-Buffering: no\r\n"} {
			if !strings.Contains(head, want) {
				t.Fatalf("head has no %q:\n%s", want, head)
			}
		}
		if strings.Contains(head, "Transfer-Encoding") || strings.Contains(head, "Content-Length") {
			t.Fatalf("a held stream is framed:\n%s", head)
		}
		start := counter.Head() // one counter for every mode's loop
		hello := string(realtime.AppendEvent(nil, start+1, "", []byte("hello")))
		publish(hs.l, counter, "a", "hello")
		hs.holdOutput(a1, hello)
		hs.holdOutput(a2, hello)
		hs.passes(3)
		if strings.Contains(hs.fb.output(b), "hello") {
			t.Fatal("channel b got a's frame")
		}
		hs.fb.shutdownWrite(a1)
		hs.until("a1 closed", func() bool { return hs.fb.isClosed(a1) })
		publish(hs.l, counter, "a", "again")
		hs.holdOutput(a2, string(realtime.AppendEvent(nil, start+2, "", []byte("again"))))
		if hs.l.Holds() != 2 {
			t.Fatalf("%d holds after a close, want 2", hs.l.Holds())
		}
	})
}

// TestHoldReplaysAndDrains: a reconnecting client gets what it missed, or
// m0-gap past the journal; a shutdown sends ": close" and closes.
func TestHoldReplaysAndDrains(t *testing.T) {
	run, counter := holdHarness(t)
	run(func(t *testing.T, hs *harness) {
		start := counter.Head()
		first := hs.connect()
		hs.fb.write(first, "GET /r HTTP/1.1\r\nHost: x\r\n\r\n")
		hs.holdOutput(first, ": connected\n\n")
		for _, data := range []string{"1", "2", "3", "4"} {
			publish(hs.l, counter, "r", data)
		}
		want := func(n int64) string {
			return string(realtime.AppendEvent(nil, start+n, "", []byte(strconv.FormatInt(n, 10))))
		}
		hs.holdOutput(first, want(1)+want(2)+want(3)+want(4))
		// The journal keeps 2 frames: after start+2, it has all; after
		// start+1, it may have lost one.
		again := hs.connect()
		hs.fb.write(again, "GET /r HTTP/1.1\r\nHost: x\r\nLast-Event-ID: "+strconv.FormatInt(start+2, 10)+"\r\n\r\n")
		hs.holdOutput(again, ": connected\n\n"+want(3)+want(4))
		late := hs.connect()
		hs.fb.write(late, "GET /r HTTP/1.1\r\nHost: x\r\nLast-Event-ID: "+strconv.FormatInt(start+1, 10)+"\r\n\r\n")
		hs.holdOutput(late, `event: m0-gap`+"\n"+`data: {"last_event_id":`+strconv.FormatInt(start+1, 10)+`,"head":`+strconv.FormatInt(start+4, 10)+"}\n\n")

		hs.l.Shutdown(time.Minute)
		for _, c := range []*fakeConn{first, again, late} {
			hs.holdOutput(c, ": close\n\n")
			hs.until("the close", func() bool { return hs.fb.isClosed(c) })
		}
	})
}

// TestHoldDropsAClientTooFarBehind: a held client that reads nothing is
// closed once holdOutLimit is queued behind its send, and the other
// connections of its channel (before and after it in the list) go on.
func TestHoldDropsAClientTooFarBehind(t *testing.T) {
	run, counter := holdHarness(t)
	run(func(t *testing.T, hs *harness) {
		conns := []*fakeConn{hs.connect(), hs.connect(), hs.connect()}
		for _, c := range conns {
			hs.fb.write(c, "GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
			hs.holdOutput(c, ": connected\n\n")
		}
		hs.until("three holds", func() bool { return hs.l.Holds() == 3 })
		stuck := conns[1]
		hs.fb.stallSends(stuck)
		big := strings.Repeat("x", 200<<10)
		for range 2 + holdOutLimit/len(big) {
			publish(hs.l, counter, "slow", big)
			hs.passes(2) // its send under way, the next ones wait behind it
		}
		hs.until("the stuck client closed", func() bool { return hs.fb.isClosed(stuck) })
		publish(hs.l, counter, "slow", "after")
		for _, c := range []*fakeConn{conns[0], conns[2]} {
			hs.holdOutput(c, "data: after\n\n")
		}
		if hs.l.Holds() != 2 {
			t.Fatalf("%d holds, want 2", hs.l.Holds())
		}
	})
}
