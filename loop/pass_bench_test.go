package loop

import (
	"strings"
	"testing"
)

// browserRequest is a typical keep-alive GET with browser-like fields.
const browserRequest = "GET /plaintext HTTP/1.1\r\n" +
	"Host: localhost:8000\r\n" +
	"User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0\r\n" +
	"Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8\r\n" +
	"Accept-Language: en-US,en;q=0.5\r\n" +
	"Accept-Encoding: gzip, deflate, br\r\n" +
	"Connection: keep-alive\r\n" +
	"Cookie: session=4f2a9c; theme=dark\r\n\r\n"

var plainHello = HandlerFunc(func(_ *Request, w *ResponseWriter) {
	w.AddHeader("Content-Type", "text/plain")
	w.Respond(200, []byte("Hello, World!"))
})

// passRig is one connection on the fake backend, warmed up, ready to time
// request-response passes.
type passRig struct {
	hs      *harness
	c       *fakeConn
	request string
}

func newPassRig(tb testing.TB, provided, multishot bool, pipeline int) *passRig {
	hs := newHarness(tb, plainHello, nil)
	hs.fb.provided, hs.fb.multishot = provided, multishot
	c := hs.fb.dial()
	for !c.accepted {
		hs.l.pass()
	}
	r := &passRig{hs: hs, c: c}
	r.request = strings.Repeat(browserRequest, pipeline)
	for i := 0; i < 100; i++ {
		r.round()
	}
	return r
}

// round writes one batch of requests and runs passes until the fake has
// delivered it: the receive completes, every request is parsed and
// answered, and the send is queued (its completion arrives with the next
// round's receive). A batch larger than one provided buffer takes more
// than one pass when the receive is single-shot.
func (r *passRig) round() {
	fb := r.hs.fb
	fb.mu.Lock()
	r.c.in = append(r.c.in, r.request...)
	r.c.out = r.c.out[:0]
	fb.mu.Unlock()
	for {
		r.hs.l.pass()
		fb.mu.Lock()
		drained := len(r.c.in) == 0
		fb.mu.Unlock()
		if drained {
			return
		}
	}
}

func TestPassAllocatesNothing(t *testing.T) {
	for _, mode := range fakeModes {
		t.Run(mode.name, func(t *testing.T) {
			r := newPassRig(t, mode.provided, mode.multishot, 1)
			allocs := testing.AllocsPerRun(1000, r.round)
			if allocs != 0 {
				t.Fatalf("%v allocations per keep-alive request, want 0", allocs)
			}
			if out := r.hs.fb.output(r.c); !strings.HasPrefix(out, "HTTP/1.1 200 OK\r\n") {
				t.Fatalf("rig is not serving: %q", out)
			}
		})
	}
}

func BenchmarkPass(b *testing.B) {
	for _, mode := range fakeModes {
		for _, depth := range []int{1, 16} {
			name := mode.name + "/pipeline=1"
			if depth == 16 {
				name = mode.name + "/pipeline=16"
			}
			b.Run(name, func(b *testing.B) {
				r := newPassRig(b, mode.provided, mode.multishot, depth)
				b.ReportAllocs()
				b.SetBytes(int64(len(r.request)))
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					r.round()
				}
				b.StopTimer()
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*depth), "ns/request")
			})
		}
	}
}
