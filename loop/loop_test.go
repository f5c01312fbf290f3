package loop

import (
	"fmt"
	"slices"
	"strings"
	"testing"
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

var deferEverything = HandlerFunc(func(_ *Request, w *ResponseWriter) { w.Defer() })

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
