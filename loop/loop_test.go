package loop

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakeModes are the ways a backend delivers received bytes: into the slot's
// buffer one receive at a time (epoll, io_uring without a buffer ring), or
// in backend-owned buffers from an armed multishot receive (io_uring).
var fakeModes = []struct {
	name                string
	provided, multishot bool
}{
	{"slot-buffer", false, false},
	{"provided", true, false},
	{"provided-multishot", true, true},
}

// eachMode runs test once per receive mode.
func eachMode(t *testing.T, h Handler, configure func(*Config), test func(t *testing.T, hs *harness)) {
	for _, mode := range fakeModes {
		t.Run(mode.name, func(t *testing.T) {
			hs := newHarness(t, h, configure)
			hs.t = t
			hs.fb.provided, hs.fb.multishot = mode.provided, mode.multishot
			test(t, hs)
		})
	}
}

// hello answers every request inline with its path in a field.
var hello = HandlerFunc(func(req *Request, w *ResponseWriter) {
	w.AddHeaderBytes([]byte("X-Path"), req.Bytes(req.Path))
	w.Respond(200, []byte("Hello, World!"))
})

func TestInlineResponse(t *testing.T) {
	eachMode(t, hello, nil, func(t *testing.T, hs *harness) {
		c := hs.connect()
		hs.fb.write(c, "GET /a HTTP/1.1\r\nHost: x\r\n\r\n")
		got := hs.responses(c, 1)[0]
		for _, want := range []string{"HTTP/1.1 200 OK\r\n", "X-Path: /a\r\n", "Content-Length: 13\r\n", "Server: test\r\n", "\r\n\r\nHello, World!"} {
			if !strings.Contains(got, want) {
				t.Errorf("response lacks %q:\n%s", want, got)
			}
		}
		if strings.Contains(got, "Connection: close") || hs.fb.isClosed(c) {
			t.Errorf("keep-alive connection closed:\n%s", got)
		}
	})
}

func TestPipelinedResponsesInOrderInOneSend(t *testing.T) {
	eachMode(t, hello, nil, func(t *testing.T, hs *harness) {
		c := hs.connect()
		var reqs strings.Builder
		for i := 0; i < 16; i++ {
			fmt.Fprintf(&reqs, "GET /%d HTTP/1.1\r\nHost: x\r\n\r\n", i)
		}
		hs.fb.write(c, reqs.String())
		got := hs.responses(c, 16)
		for i, r := range got {
			if want := fmt.Sprintf("X-Path: /%d\r\n", i); !strings.Contains(r, want) {
				t.Fatalf("response %d lacks %q:\n%s", i, want, r)
			}
		}
		if c.sends != 1 && !hs.fb.provided {
			t.Errorf("16 pipelined responses took %d sends, want 1", c.sends)
		}
	})
}

func TestPipelinedRequestSplitAcrossReceives(t *testing.T) {
	eachMode(t, hello, nil, func(t *testing.T, hs *harness) {
		c := hs.connect()
		raw := "GET /one HTTP/1.1\r\nHost: x\r\n\r\nGET /two HTTP/1.1\r\nHo"
		hs.fb.write(c, raw)
		hs.responses(c, 1)
		hs.passes(3)
		hs.fb.write(c, "st: x\r\n\r\n")
		got := hs.responses(c, 2)
		if !strings.Contains(got[1], "X-Path: /two") {
			t.Fatalf("second response:\n%s", got[1])
		}
	})
}

func TestConnectionClose(t *testing.T) {
	cases := []struct {
		name, request, want string
		closes              bool
	}{
		{"1.1 close", "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", "Connection: close\r\n", true},
		{"1.0 default", "GET / HTTP/1.0\r\n\r\n", "Connection: close\r\n", true},
		{"1.0 keep-alive", "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", "Connection: keep-alive\r\n", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hs := newHarness(t, hello, nil)
			hs.t = t
			c := hs.connect()
			hs.fb.write(c, tc.request)
			got := hs.responses(c, 1)[0]
			if !strings.Contains(got, tc.want) {
				t.Fatalf("response lacks %q:\n%s", tc.want, got)
			}
			if tc.closes {
				hs.until("close", func() bool { return hs.fb.isClosed(c) })
			} else {
				hs.passes(5)
				if hs.fb.isClosed(c) {
					t.Fatal("keep-alive connection closed")
				}
			}
		})
	}
}

func TestMalformedRequestAnsweredThenClosed(t *testing.T) {
	cases := []struct {
		name, request string
		status        int
	}{
		{"space before colon", "GET / HTTP/1.1\r\nHost : x\r\n\r\n", 400},
		{"version", "GET / HTTP/2.0\r\nHost: x\r\n\r\n", 505},
		{"no host", "GET / HTTP/1.1\r\n\r\n", 400},
		{"head too large", "GET / HTTP/1.1\r\nHost: x\r\nX: " + strings.Repeat("a", 9000) + "\r\n\r\n", 431},
		{"body over limit", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2000\r\n\r\n", 413},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			eachMode(t, hello, func(c *Config) { c.MaxBodySize = 1000 }, func(t *testing.T, hs *harness) {
				c := hs.connect()
				hs.fb.write(c, tc.request)
				got := hs.responses(c, 1)[0]
				if want := fmt.Sprintf("HTTP/1.1 %d ", tc.status); !strings.HasPrefix(got, want) {
					t.Fatalf("want %q, got:\n%s", want, got)
				}
				if !strings.Contains(got, "Connection: close\r\n") {
					t.Errorf("no Connection: close:\n%s", got)
				}
				hs.lingerThenClose(c)
			})
		})
	}
}

func TestHalfCloseGetsEveryResponse(t *testing.T) {
	eachMode(t, hello, nil, func(t *testing.T, hs *harness) {
		c := hs.connect()
		hs.fb.write(c, "GET /1 HTTP/1.1\r\nHost: x\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\n\r\n")
		hs.fb.shutdownWrite(c)
		got := hs.responses(c, 2)
		if !strings.Contains(got[1], "X-Path: /2") {
			t.Fatalf("second response:\n%s", got[1])
		}
		hs.until("close", func() bool { return hs.fb.isClosed(c) })
	})
}

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

func TestClientResetMidResponseFreesSlot(t *testing.T) {
	eachMode(t, hello, nil, func(t *testing.T, hs *harness) {
		c := hs.connect()
		hs.fb.resetNextSend(c)
		hs.fb.write(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		hs.until("slot freed", func() bool { return hs.l.active == 0 })
		d := hs.connect()
		hs.fb.write(d, "GET /after HTTP/1.1\r\nHost: x\r\n\r\n")
		if got := hs.responses(d, 1)[0]; !strings.Contains(got, "X-Path: /after") {
			t.Fatalf("after reset:\n%s", got)
		}
		if len(hs.l.slots) != 2 {
			t.Errorf("slot table grew to %d, want the freed slot reused", len(hs.l.slots)-1)
		}
	})
}

func TestStaleCompletionIgnored(t *testing.T) {
	hs := newHarness(t, hello, nil)
	hs.t = t
	c := hs.connect()
	s := hs.l.slots[1]
	hs.l.handle(&Completion{Op: OpRecv, Slot: 1, Gen: s.gen + 1, Res: 5, Data: []byte("GET /")})
	hs.l.handle(&Completion{Op: OpSend, Slot: 7, Gen: 0, Res: 5})
	hs.fb.write(c, "GET /ok HTTP/1.1\r\nHost: x\r\n\r\n")
	if got := hs.responses(c, 1)[0]; !strings.Contains(got, "X-Path: /ok") {
		t.Fatalf("response:\n%s", got)
	}
}

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

var deferEverything = HandlerFunc(func(_ *Request, w *ResponseWriter) { w.Defer() })

// echoBody answers with the body it read, with its length.
func echoBody(j *Job) {
	body, err := io.ReadAll(j)
	if err != nil {
		j.Finish()
		return
	}
	j.SetHeader("X-Method", string(j.Request.Bytes(j.Request.Method)))
	j.WriteHeader(200, int64(len(body)))
	j.Write(body)
	j.Finish()
}

func TestDeferredBodyStreaming(t *testing.T) {
	body := strings.Repeat("0123456789abcdef", 20000) // 320 kB: several inbox fills
	cases := []struct{ name, head, body string }{
		{"content-length", fmt.Sprintf("POST /e HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", len(body)), body},
		{"chunked", "POST /e HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n", chunk(body[:100000]) + chunk(body[100000:]) + "0\r\n\r\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			deferredHarness(t, deferEverything, echoBody, nil)(func(t *testing.T, hs *harness) {
				c := hs.connect()
				raw := tc.head + tc.body + "GET /next HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"
				for i := 0; i < len(raw); i += 7001 {
					hs.fb.write(c, raw[i:min(i+7001, len(raw))])
					hs.passes(1)
				}
				got := hs.responses(c, 2)
				if !strings.HasSuffix(got[0], "\r\n\r\n"+body) {
					t.Fatalf("echoed body differs (response %d bytes)", len(got[0]))
				}
				if !strings.Contains(got[1], "X-Method: GET") {
					t.Fatalf("pipelined request after the body:\n%s", got[1])
				}
			})
		})
	}
}

func chunk(s string) string { return fmt.Sprintf("%x\r\n%s\r\n", len(s), s) }

func TestExpectContinue(t *testing.T) {
	t.Run("deferred reader gets 100 first", func(t *testing.T) {
		deferredHarness(t, deferEverything, echoBody, nil)(func(t *testing.T, hs *harness) {
			c := hs.connect()
			hs.fb.write(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
			got := hs.responses(c, 1)[0]
			if got != continue100 {
				t.Fatalf("want the 100 alone first, got %q", got)
			}
			hs.fb.write(c, "hello")
			got2 := hs.responses(c, 2)[1]
			if !strings.HasSuffix(got2, "\r\n\r\nhello") || strings.Contains(got2, "Connection: close") {
				t.Fatalf("final response:\n%s", got2)
			}
		})
	})
	t.Run("inline handler: no 100, close", func(t *testing.T) {
		hs := newHarness(t, hello, nil)
		hs.t = t
		c := hs.connect()
		hs.fb.write(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
		got := hs.responses(c, 1)[0]
		if !strings.HasPrefix(got, "HTTP/1.1 200 ") || !strings.Contains(got, "Connection: close") {
			t.Fatalf("response:\n%s", got)
		}
		hs.until("close", func() bool { return hs.fb.isClosed(c) })
	})
}

func TestChunkedBodyOverLimit(t *testing.T) {
	deferredHarness(t, deferEverything, echoBody, func(c *Config) { c.MaxBodySize = 1000 })(func(t *testing.T, hs *harness) {
		c := hs.connect()
		hs.fb.write(c, "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"+chunk(strings.Repeat("a", 800))+chunk(strings.Repeat("b", 800)))
		got := hs.responses(c, 1)[0]
		if !strings.HasPrefix(got, "HTTP/1.1 413 ") {
			t.Fatalf("want 413:\n%s", got)
		}
		hs.lingerThenClose(c)
	})
}

// TestChunkedBodyLimitOnDeclaredSize: the limit holds against the chunk
// sizes as they are declared. A body summing to the limit is served; a
// chunk size that takes it past the limit is refused on sight, with no
// byte of that chunk sent.
func TestChunkedBodyLimitOnDeclaredSize(t *testing.T) {
	const head = "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
	first := chunk(strings.Repeat("a", 600))
	limit := func(c *Config) { c.MaxBodySize = 1000 }
	t.Run("deferred: at the limit", func(t *testing.T) {
		deferredHarness(t, deferEverything, echoBody, limit)(func(t *testing.T, hs *harness) {
			c := hs.connect()
			hs.fb.write(c, head+first+chunk(strings.Repeat("b", 400))+"0\r\n\r\n")
			got := hs.responses(c, 1)[0]
			if !strings.HasPrefix(got, "HTTP/1.1 200 ") || !strings.HasSuffix(got, strings.Repeat("b", 400)) {
				t.Fatalf("want the 1000 bytes echoed:\n%s", got)
			}
		})
	})
	t.Run("deferred: one byte over, declared", func(t *testing.T) {
		deferredHarness(t, deferEverything, echoBody, limit)(func(t *testing.T, hs *harness) {
			c := hs.connect()
			hs.fb.write(c, head+first+"191\r\n") // 401 more: 1001
			got := hs.responses(c, 1)[0]
			if !strings.HasPrefix(got, "HTTP/1.1 413 ") || !strings.Contains(got, "Connection: close") {
				t.Fatalf("want 413 and close:\n%s", got)
			}
			hs.lingerThenClose(c)
		})
	})
	t.Run("inline: at the limit, then the next request", func(t *testing.T) {
		eachMode(t, hello, limit, func(t *testing.T, hs *harness) {
			c := hs.connect()
			hs.fb.write(c, head+first+chunk(strings.Repeat("b", 400))+"0\r\n\r\nGET /next HTTP/1.1\r\nHost: x\r\n\r\n")
			if got := hs.responses(c, 2)[1]; !strings.Contains(got, "X-Path: /next") {
				t.Fatalf("second response:\n%s", got)
			}
		})
	})
	t.Run("inline: one byte over, declared", func(t *testing.T) {
		eachMode(t, hello, limit, func(t *testing.T, hs *harness) {
			c := hs.connect()
			hs.fb.write(c, head+first+"191\r\n")
			// The answer went out before the body; the connection cannot
			// go on past a body it refuses.
			hs.until("close", func() bool { return hs.fb.isClosed(c) })
		})
	})
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

func TestDeferredBodyHeldToDeclaredLength(t *testing.T) {
	cases := []struct {
		name, write, want string
	}{
		{"longer than declared", "hello", "hel"},
		{"shorter than declared", "h", "h"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			work := func(j *Job) {
				j.WriteHeader(200, 3)
				j.Write([]byte(tc.write))
				j.Finish()
			}
			deferredHarness(t, deferEverything, work, nil)(func(t *testing.T, hs *harness) {
				c := hs.connect()
				hs.fb.write(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
				hs.until("close", func() bool { return hs.fb.isClosed(c) })
				out := hs.fb.output(c)
				if !strings.Contains(out, "Content-Length: 3\r\n") || !strings.HasSuffix(out, "\r\n\r\n"+tc.want) {
					t.Fatalf("output:\n%q", out)
				}
			})
		})
	}
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

// TestIdleConnectionsHoldNoReceiveBuffer: with an armed receive that
// delivers in backend buffers, an idle keep-alive connection gives its
// receive buffer back.
func TestIdleConnectionsHoldNoReceiveBuffer(t *testing.T) {
	hs := newHarness(t, hello, nil)
	hs.t = t
	hs.fb.provided, hs.fb.multishot = true, true
	c := hs.connect()
	hs.fb.write(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	hs.responses(c, 1)
	hs.passes(3)
	if s := hs.l.slots[1]; s.recv != nil || s.send != nil {
		t.Fatalf("idle connection holds buffers: recv %d bytes, send %d", len(s.recv), cap(s.send))
	}
}

// An inline handler sees the head as received: the bytes its spans index.
func TestInlineRequestHead(t *testing.T) {
	echoHead := HandlerFunc(func(req *Request, w *ResponseWriter) {
		if got := string(req.Head()[req.Path.Start:req.Path.End]); got != string(req.Bytes(req.Path)) {
			w.Respond(500, []byte("spans do not index the head"))
			return
		}
		w.Respond(200, req.Head())
	})
	eachMode(t, echoHead, nil, func(t *testing.T, hs *harness) {
		c := hs.connect()
		head := "GET /head?q=1 HTTP/1.1\r\nHost: x\r\nX-A: b\r\n\r\n"
		hs.fb.write(c, head+head)
		for _, got := range hs.responses(c, 2) {
			if !strings.HasPrefix(got, "HTTP/1.1 200 OK\r\n") || !strings.HasSuffix(got, "\r\n\r\n"+head) {
				t.Fatalf("response:\n%q\nwant the head %q as its body", got, head)
			}
		}
	})
}

// PassReceives counts the receives of the pass that dispatches a request:
// three connections' requests arriving together each see three; one alone
// sees one.
func TestPassReceives(t *testing.T) {
	var seen []int
	h := HandlerFunc(func(req *Request, w *ResponseWriter) {
		seen = append(seen, req.PassReceives())
		w.Respond(200, nil)
	})
	hs := newHarness(t, h, nil)
	conns := []*fakeConn{hs.connect(), hs.connect(), hs.connect()}
	for _, c := range conns {
		hs.fb.write(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	}
	hs.until("three requests", func() bool { return len(seen) == 3 })
	hs.fb.write(conns[0], "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	hs.until("a fourth request", func() bool { return len(seen) == 4 })
	if want := []int{3, 3, 3, 1}; !slices.Equal(seen, want) {
		t.Fatalf("PassReceives per request %v, want %v", seen, want)
	}
}
