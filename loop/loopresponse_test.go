package loop

import (
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/m0serve/m0serve/http1"
)

// loopResponses records what OnLoopResponse reports, as "status line"
// ("-" for no request).
type loopResponses struct {
	got []string
}

func (r *loopResponses) record(_ netip.AddrPort, req *http1.Request, status, body int) {
	line := "-"
	if req != nil {
		line = string(req.Bytes(req.Method)) + " " + string(req.Bytes(req.Target))
	}
	r.got = append(r.got, fmt.Sprintf("%d %s", status, line))
}

func TestLoopResponsesReported(t *testing.T) {
	cases := []struct {
		name, request, want string
	}{
		{"malformed", "GET / HTTP/1.1\r\nHost : x\r\n\r\n", "400 -"},
		{"head too large", "GET / HTTP/1.1\r\nHost: x\r\nX: " + strings.Repeat("a", 9000) + "\r\n\r\n", "431 -"},
		{"body over limit", "POST /up HTTP/1.1\r\nHost: x\r\nContent-Length: 2000\r\n\r\n", "413 POST /up"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var r loopResponses
			eachMode(t, hello, func(c *Config) {
				c.MaxBodySize = 1000
				c.OnLoopResponse = r.record
			}, func(t *testing.T, hs *harness) {
				r.got = nil
				c := hs.connect()
				hs.fb.write(c, tc.request)
				hs.responses(c, 1)
				if len(r.got) != 1 || r.got[0] != tc.want {
					t.Fatalf("reported %q, want [%q]", r.got, tc.want)
				}
			})
		})
	}
}

func TestHeaderTimeoutReported(t *testing.T) {
	var r loopResponses
	hs := newHarness(t, hello, func(c *Config) {
		c.HeaderTimeout = time.Second
		c.OnLoopResponse = r.record
	})
	hs.t = t
	c := hs.connect()
	hs.fb.write(c, "GET / HTTP/1.1\r\nHo")
	hs.passes(3)
	hs.advanceClock(2 * time.Second)
	hs.responses(c, 1)
	if len(r.got) != 1 || r.got[0] != "408 -" {
		t.Fatalf("reported %q, want [\"408 -\"]", r.got)
	}
}

// TestHandlerResponsesNotReported: a response a handler made (even the
// 500 the loop writes for a handler that aborted) is the handler's to log.
func TestHandlerResponsesNotReported(t *testing.T) {
	var r loopResponses
	deferredHarness(t, deferEverything, func(j *Job) { j.Abort() }, func(c *Config) {
		c.OnLoopResponse = r.record
	})(func(t *testing.T, hs *harness) {
		r.got = nil
		c := hs.connect()
		hs.fb.write(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		hs.responses(c, 1)
		if len(r.got) != 0 {
			t.Fatalf("reported %q, want nothing", r.got)
		}
	})
}

// TestCutOffRequestLogged: a request still in its handler when the
// shutdown deadline closes its connection is logged with its request line.
func TestCutOffRequestLogged(t *testing.T) {
	var (
		mu   sync.Mutex
		logs []string
	)
	block := make(chan struct{})
	deferredHarness(t, deferEverything, func(j *Job) {
		<-block
		j.Finish()
	}, func(c *Config) {
		c.Logf = func(format string, args ...any) {
			mu.Lock()
			logs = append(logs, fmt.Sprintf(format, args...))
			mu.Unlock()
		}
	})(func(t *testing.T, hs *harness) {
		busy := hs.connect()
		hs.fb.write(busy, "GET /slow?x=1 HTTP/1.1\r\nHost: x\r\n\r\n")
		hs.passes(3)
		hs.l.Shutdown(0)
		hs.until("forced close", func() bool { return hs.fb.isClosed(busy) })
		block <- struct{}{}
		mu.Lock()
		defer mu.Unlock()
		if len(logs) != 1 || !strings.Contains(logs[0], `cut off "GET /slow?x=1"`) {
			t.Fatalf("logged %q, want the cut-off request", logs)
		}
		logs = nil
	})
}
