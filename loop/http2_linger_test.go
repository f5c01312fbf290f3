package loop

import (
	"testing"
	"time"

	"golang.org/x/net/http2"
)

// A stream answered before its request body ends, whose client then sends
// one byte and goes silent (issue 37: the connection was still open ten
// simulated minutes on): once the body has stopped for --body-timeout the
// stream is cut off (RST_STREAM NO_ERROR, RFC 9113 §8.1), and the
// connection, idle, closes after --keepalive-timeout with a GOAWAY.
func TestHTTP2LingeringStreamDeadline(t *testing.T) {
	hs := newHarness(t, helloInline, h2Config)
	cl := newH2Client()
	c := hs.connect()
	hs.fb.write(c, cl.open())
	hs.fb.write(c, cl.headers(1, "POST", "/fast", false))
	cl.fr.WriteData(1, false, []byte("x"))
	hs.fb.write(c, cl.take())
	hs.until("the answer", func() bool {
		s := parseH2Output(t, hs.fb.output(c)).streams[1]
		return s != nil && s.ended
	})
	start := hs.clock
	for hs.clock-start < int64(10*time.Minute) && !hs.fb.isClosed(c) {
		hs.advanceClock(time.Second)
	}
	took := time.Duration(hs.clock - start)
	if !hs.fb.isClosed(c) {
		t.Fatalf("the connection still open %v on", took)
	}
	out := parseH2Output(t, hs.fb.output(c))
	if s := out.streams[1]; !s.reset || s.resetCode != http2.ErrCodeNo {
		t.Fatalf("stream 1: reset %v (%v), want RST_STREAM NO_ERROR", s.reset, s.resetCode)
	}
	if len(out.goAways) == 0 {
		t.Fatal("closed without a GOAWAY")
	}
	if limit := 2*DefaultBodyTimeout + DefaultKeepAliveTimeout + 5*time.Second; took > limit {
		t.Fatalf("closed %v on, past %v", took, limit)
	}
	t.Logf("closed %v after the answer", took)
}
