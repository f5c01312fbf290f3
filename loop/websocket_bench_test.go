package loop

import (
	"strings"
	"testing"

	"github.com/m0serve/m0serve/ws"
)

// wsEcho is the inline echo handler of --native ws-echo.
type wsEcho struct{}

func (wsEcho) ServeInline(req *Request, w *ResponseWriter) {
	if req.IsWebSocket() {
		w.AcceptWebSocket(wsEcho{}, nil)
		return
	}
	w.Respond(200, nil)
}

func (wsEcho) OnMessage(c *WebSocket, op ws.Opcode, payload []byte) bool {
	c.Send(op, payload)
	return false
}

func (wsEcho) OnClose(*WebSocket, ws.CloseCode, []byte) {}

// wsRig is one upgraded connection on the fake backend, echoing.
type wsRig struct {
	hs    *harness
	c     *fakeConn
	frame string
}

func newWSRig(tb testing.TB, provided, multishot bool, extra, message string) *wsRig {
	hs := newHarness(tb, wsEcho{}, nil)
	hs.fb.provided, hs.fb.multishot = provided, multishot
	c := hs.fb.dial()
	for !c.accepted {
		hs.l.pass()
	}
	r := &wsRig{hs: hs, c: c, frame: clientFrame(ws.OpText, true, message)}
	hs.fb.write(c, upgradeRequest+extra+"\r\n")
	for !strings.HasPrefix(hs.fb.output(c), "HTTP/1.1 101 ") {
		hs.l.pass()
	}
	for i := 0; i < 100; i++ {
		r.round()
	}
	return r
}

// round sends one message and runs passes until it is echoed.
func (r *wsRig) round() {
	fb := r.hs.fb
	fb.mu.Lock()
	r.c.in = append(r.c.in, r.frame...)
	r.c.out = r.c.out[:0]
	fb.mu.Unlock()
	for {
		r.hs.l.pass()
		fb.mu.Lock()
		done := len(r.c.in) == 0 && len(r.c.out) > 0
		fb.mu.Unlock()
		if done {
			return
		}
	}
}

var wsBenchCases = []struct {
	name, extra, message string
}{
	{"64B", "", strings.Repeat("m", 64)},
	{"4KiB-deflate", "Sec-WebSocket-Extensions: permessage-deflate\r\n", strings.Repeat("compressible ", 4096/13)},
}

func TestWebSocketEchoAllocatesNothing(t *testing.T) {
	for _, mode := range fakeModes {
		for _, tc := range wsBenchCases {
			t.Run(mode.name+"/"+tc.name, func(t *testing.T) {
				r := newWSRig(t, mode.provided, mode.multishot, tc.extra, tc.message)
				// Under -race, deflate's pooled state is dropped at random.
				if allocs := testing.AllocsPerRun(500, r.round); allocs != 0 && !(raceEnabled && tc.extra != "") {
					t.Fatalf("%v allocations per echoed message, want 0", allocs)
				}
				out := r.hs.fb.output(r.c)
				if compressed := out[0]&0x40 != 0; out[0]&0x0f != byte(ws.OpText) || compressed != (tc.extra != "") {
					t.Fatalf("echo starts %#x; want text, compressed only with deflate", out[0])
				}
			})
		}
	}
}

func BenchmarkWebSocketEcho(b *testing.B) {
	for _, mode := range fakeModes {
		for _, tc := range wsBenchCases {
			b.Run(mode.name+"/"+tc.name, func(b *testing.B) {
				r := newWSRig(b, mode.provided, mode.multishot, tc.extra, tc.message)
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					r.round()
				}
			})
		}
	}
}
