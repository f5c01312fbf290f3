package loop

import (
	"strings"
	"testing"
	"time"
)

func TestGracefulShutdown(t *testing.T) {
	release := make(chan struct{})
	slow := func(j *Job) {
		<-release
		j.Write([]byte("late"))
		j.Finish()
	}
	deferredHarness(t, deferEverything, slow, nil)(func(t *testing.T, hs *harness) {
		idle := hs.connect()
		busy := hs.connect()
		hs.fb.write(busy, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		hs.passes(3)
		hs.l.Shutdown(time.Hour)
		hs.until("idle closed", func() bool { return hs.fb.isClosed(idle) })
		if hs.fb.isClosed(busy) || hs.l.stopped {
			t.Fatal("a connection with a request in flight was closed")
		}
		release <- struct{}{}
		got := hs.responses(busy, 1)[0]
		if !strings.HasSuffix(got, "late\r\n0\r\n\r\n") || !strings.Contains(got, "Connection: close") {
			t.Fatalf("in-flight response:\n%s", got)
		}
		hs.until("stopped", func() bool { return hs.l.stopped })
		if !hs.fb.isClosed(busy) {
			t.Fatal("stopped with a connection open")
		}
	})
}

func TestSecondShutdownForcesClose(t *testing.T) {
	block := make(chan struct{})
	deferredHarness(t, deferEverything, func(j *Job) {
		<-block
		j.Finish()
	}, nil)(func(t *testing.T, hs *harness) {
		busy := hs.connect()
		hs.fb.write(busy, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		hs.passes(3)
		hs.l.Shutdown(time.Hour)
		hs.passes(3)
		if hs.fb.isClosed(busy) {
			t.Fatal("closed a busy connection within the grace period")
		}
		hs.l.Shutdown(0)
		hs.until("forced close", func() bool { return hs.fb.isClosed(busy) })
		hs.until("stopped", func() bool { return hs.l.stopped })
		block <- struct{}{} // let the handler finish its aborted job
	})
}
