package loop

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// deferredHarness runs handler on worker goroutines taking from a queue.
func deferredHarness(t *testing.T, inline Handler, work func(j *Job), configure func(*Config)) func(test func(t *testing.T, hs *harness)) {
	return func(test func(t *testing.T, hs *harness)) {
		for _, mode := range fakeModes {
			t.Run(mode.name, func(t *testing.T) {
				q := NewJobQueue(16)
				hs := newHarness(t, inline, func(c *Config) {
					c.Jobs = q
					if configure != nil {
						configure(c)
					}
				})
				hs.t = t
				hs.fb.provided, hs.fb.multishot = mode.provided, mode.multishot
				done := make(chan struct{})
				for i := 0; i < 2; i++ {
					go func() {
						defer func() { done <- struct{}{} }()
						for j := q.Take(); j != nil; j = q.Take() {
							work(j)
						}
					}()
				}
				test(t, hs)
				q.Close()
				<-done
				<-done
			})
		}
	}
}

func TestDeferredStreamingResponse(t *testing.T) {
	stream := func(j *Job) {
		for i := 0; i < 3; i++ {
			fmt.Fprintf(j, "part %d;", i)
		}
		j.Finish()
	}
	deferredHarness(t, deferEverything, stream, nil)(func(t *testing.T, hs *harness) {
		c := hs.connect()
		hs.fb.write(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n")
		got := hs.responses(c, 2)
		for _, r := range got {
			if !strings.Contains(r, "Transfer-Encoding: chunked\r\n") {
				t.Fatalf("not chunked:\n%s", r)
			}
			if body := dechunk(r[strings.Index(r, "\r\n\r\n")+4:]); body != "part 0;part 1;part 2;" {
				t.Fatalf("body %q", body)
			}
		}
	})
}

func dechunk(s string) string {
	var out strings.Builder
	for {
		line, rest, _ := strings.Cut(s, "\r\n")
		n := 0
		fmt.Sscanf(line, "%x", &n)
		if n == 0 {
			return out.String()
		}
		out.WriteString(rest[:n])
		s = rest[n+2:]
	}
}

func TestDeferWithoutQueueIs500(t *testing.T) {
	hs := newHarness(t, deferEverything, nil)
	hs.t = t
	c := hs.connect()
	hs.fb.write(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	if got := hs.responses(c, 1)[0]; !strings.HasPrefix(got, "HTTP/1.1 500 ") {
		t.Fatalf("want 500:\n%s", got)
	}
}

func TestHandlerAbortBeforeHeadIs500(t *testing.T) {
	deferredHarness(t, deferEverything, func(j *Job) { j.Abort() }, nil)(func(t *testing.T, hs *harness) {
		c := hs.connect()
		hs.fb.write(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		if got := hs.responses(c, 1)[0]; !strings.HasPrefix(got, "HTTP/1.1 500 ") {
			t.Fatalf("want 500:\n%s", got)
		}
		hs.lingerThenClose(c)
	})
}

func TestFullJobQueueHoldsJobs(t *testing.T) {
	release := make(chan struct{})
	q := NewJobQueue(2)
	hs := newHarness(t, deferEverything, func(c *Config) { c.Jobs = q })
	hs.t = t
	go func() {
		<-release
		for j := q.Take(); j != nil; j = q.Take() {
			j.Write([]byte("ok"))
			j.Finish()
		}
	}()
	defer q.Close()
	conns := make([]*fakeConn, 6)
	for i := range conns {
		conns[i] = hs.connect()
		hs.fb.write(conns[i], "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	}
	hs.passes(10)
	if len(hs.l.heldJobs) != 4 {
		t.Fatalf("%d jobs held back, want 4 beyond the queue's 2", len(hs.l.heldJobs))
	}
	close(release)
	for _, c := range conns {
		if got := hs.responses(c, 1)[0]; !strings.HasSuffix(got, "ok\r\n0\r\n\r\n") {
			t.Fatalf("response:\n%s", got)
		}
	}
}

// TestHeldCarriedJobReachesAHandler: a held-back job whose client left is
// dropped, unless it carries a response the inline handler began: only a
// handler can end that (its iterable's close, PEP 3333).
func TestHeldCarriedJobReachesAHandler(t *testing.T) {
	q := NewJobQueue(2)
	carry := HandlerFunc(func(r *Request, w *ResponseWriter) {
		if strings.HasPrefix(string(r.Bytes(r.Target)), "/carried") {
			w.DeferWith("begun")
			return
		}
		w.Defer()
	})
	hs := newHarness(t, carry, func(c *Config) {
		c.Jobs = q
		c.OnJobGone = func(any, JobGone) {} // keeps the receive armed: the reset is seen
	})
	hs.t = t
	defer q.Close()
	targets := []string{"/a", "/b", "/carried", "/plain"}
	conns := make([]*fakeConn, len(targets))
	for i, target := range targets {
		conns[i] = hs.connect()
		hs.fb.write(conns[i], "GET "+target+" HTTP/1.1\r\nHost: x\r\n\r\n")
		hs.passes(3)
	}
	if len(hs.l.heldJobs) != 2 {
		t.Fatalf("%d jobs held back, want 2 beyond the queue's 2", len(hs.l.heldJobs))
	}
	hs.fb.resetRecv(conns[2])
	hs.fb.resetRecv(conns[3])
	hs.until("resets seen", func() bool { return hs.l.heldJobs[0].detached && hs.l.heldJobs[1].detached })
	taken := make(chan string, 4)
	go func() {
		for j := q.Take(); j != nil; j = q.Take() {
			taken <- fmt.Sprintf("%s %v", j.Request.Bytes(j.Request.Target), j.Carried)
			j.Finish()
		}
	}()
	var got []string
	for len(got) < 3 {
		hs.passes(1)
		select {
		case s := <-taken:
			got = append(got, s)
		case <-time.After(10 * time.Millisecond):
		}
	}
	hs.passes(5)
	select {
	case s := <-taken:
		got = append(got, s)
	default:
	}
	if want := []string{"/a <nil>", "/b <nil>", "/carried begun"}; !slices.Equal(got, want) {
		t.Fatalf("jobs taken %q, want %q", got, want)
	}
}
