package loop

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"
)

// tryReadEcho reads the body with TryRead only, waiting on readable
// between pending reads as an event-loop handler would, and echoes it.
// Each pending TryRead must be answered by exactly one OnJobReadable.
func tryReadEcho(t *testing.T, readable <-chan any, pending *atomic.Int32) func(j *Job) {
	return func(j *Job) {
		j.SetOwner(j)
		var body []byte
		buf := make([]byte, 3000)
		for {
			n, wait, err := j.TryRead(buf)
			if wait {
				pending.Add(1)
				if owner := <-readable; owner != j {
					t.Errorf("OnJobReadable(%v), want the job", owner)
				}
				continue
			}
			body = append(body, buf[:n]...)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				j.Abort()
				return
			}
		}
		j.WriteHeader(200, int64(len(body)))
		j.Write(body)
		j.Finish()
	}
}

// tryReadHarness is deferredHarness with tryReadEcho as the handler,
// OnJobReadable feeding it; pending counts its pending reads, readable
// holds any OnJobReadable left unanswered.
func tryReadHarness(t *testing.T) (run func(func(*testing.T, *harness)), pending *atomic.Int32, readable chan any) {
	readable = make(chan any, 1)
	pending = new(atomic.Int32)
	configure := func(c *Config) { c.OnJobReadable = func(owner any) { readable <- owner } }
	return deferredHarness(t, deferEverything, tryReadEcho(t, readable, pending), configure), pending, readable
}

// TryRead never waits: a read that finds nothing is answered by
// OnJobReadable once bytes, the end or an error arrive, and the body
// comes through whole, in order, however it is cut, chunked or not, with
// Expect: 100-continue sent only once the handler reads.
func TestTryReadAndOnJobReadable(t *testing.T) {
	body := strings.Repeat("0123456789abcdef", 9000) // 144 kB: past the inbox limit
	cases := []struct{ name, head, body string }{
		{"content-length", fmt.Sprintf("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", len(body)), body},
		{"chunked", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n", chunk(body[:70000]) + chunk(body[70000:]) + "0\r\n\r\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			run, pending, readable := tryReadHarness(t)
			run(func(t *testing.T, hs *harness) {
				pending.Store(0)
				c := hs.connect()
				raw := tc.head + tc.body
				for i := 0; i < len(raw); i += 7001 {
					hs.fb.write(c, raw[i:min(i+7001, len(raw))])
					hs.passes(1)
				}
				got := hs.responses(c, 1)[0]
				if !strings.HasSuffix(got, "\r\n\r\n"+body) {
					t.Fatalf("echoed body differs (response %d bytes)", len(got))
				}
				if pending.Load() == 0 || len(readable) != 0 {
					t.Fatalf("%d pending reads, %d OnJobReadable left over", pending.Load(), len(readable))
				}
			})
		})
	}
	t.Run("expect 100-continue", func(t *testing.T) {
		run, _, _ := tryReadHarness(t)
		run(func(t *testing.T, hs *harness) {
			c := hs.connect()
			hs.fb.write(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
			if got := hs.responses(c, 1)[0]; got != continue100 {
				t.Fatalf("want the 100 alone first, got %q", got)
			}
			hs.fb.write(c, "hello")
			if got := hs.responses(c, 2)[1]; !strings.HasSuffix(got, "\r\n\r\nhello") {
				t.Fatalf("final response:\n%s", got)
			}
		})
	})
}

// A client that leaves while a TryRead is pending: OnJobReadable comes
// (after OnJobGone), and the read then fails rather than waiting forever.
func TestTryReadPendingWhenClientLeaves(t *testing.T) {
	readable := make(chan any, 1)
	failed := make(chan error, 1)
	work := func(j *Job) {
		j.SetOwner(j)
		buf := make([]byte, 100)
		for {
			_, wait, err := j.TryRead(buf)
			if wait {
				<-readable
				continue
			}
			if err != nil {
				failed <- err
				j.Finish()
				return
			}
		}
	}
	configure := func(c *Config) {
		c.OnJobReadable = func(owner any) { readable <- owner }
		c.OnJobGone = func(any, JobGone) {}
	}
	deferredHarness(t, deferEverything, work, configure)(func(t *testing.T, hs *harness) {
		c := hs.connect()
		hs.fb.write(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n\r\nabc")
		hs.passes(3)
		hs.fb.resetRecv(c)
		err := untilReceived(hs, "the read's failure", failed)
		if err == nil || errors.Is(err, io.EOF) {
			t.Fatalf("read after the client left: %v, want an error", err)
		}
	})
}
