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

// formBody is a small form submission, the body of the POSTs below.
const formBody = "name=m0serve&kind=http1&ok=1"

// postByLength and postChunked are keep-alive POSTs carrying formBody,
// framed by Content-Length and by the chunked coding (in two chunks).
const (
	postHead = "POST /submit HTTP/1.1\r\n" +
		"Host: localhost:8000\r\n" +
		"Content-Type: application/x-www-form-urlencoded\r\n"
	postByLength = postHead + "Content-Length: 28\r\n\r\n" + formBody
	postChunked  = postHead + "Transfer-Encoding: chunked\r\n\r\n" +
		"10\r\nname=m0serve&kin\r\nc\r\nd=http1&ok=1\r\n0\r\n\r\n"
)

// bodyRequests are the requests with a body the rigs are timed on.
var bodyRequests = []struct{ name, request string }{
	{"length", postByLength},
	{"chunked", postChunked},
}

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

func newPassRig(tb testing.TB, provided, multishot bool, request string, pipeline int) *passRig {
	hs := newHarness(tb, plainHello, nil)
	hs.fb.provided, hs.fb.multishot = provided, multishot
	c := hs.fb.dial()
	for !c.accepted {
		hs.l.pass()
	}
	r := &passRig{hs: hs, c: c}
	r.request = strings.Repeat(request, pipeline)
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
			r := newPassRig(t, mode.provided, mode.multishot, browserRequest, 1)
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

// TestPassWithBodyAllocatesNothing: an inline answer to a POST, whose
// body the loop then reads past, allocates nothing either.
func TestPassWithBodyAllocatesNothing(t *testing.T) {
	for _, mode := range fakeModes {
		for _, body := range bodyRequests {
			t.Run(mode.name+"/"+body.name, func(t *testing.T) {
				r := newPassRig(t, mode.provided, mode.multishot, body.request, 2)
				if allocs := testing.AllocsPerRun(500, r.round); allocs != 0 {
					t.Fatalf("%v allocations per two pipelined POSTs, want 0", allocs)
				}
				if got, ok := splitResponses(r.hs.fb.output(r.c), 2); !ok || !strings.HasPrefix(got[1], "HTTP/1.1 200 OK\r\n") {
					t.Fatalf("rig is not serving: %q", r.hs.fb.output(r.c))
				}
			})
		}
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
				benchmarkPass(b, newPassRig(b, mode.provided, mode.multishot, browserRequest, depth), depth)
			})
		}
	}
}

// BenchmarkPassWithBody: inline answers to pipelined POSTs, the loop
// reading past each body to the next request.
func BenchmarkPassWithBody(b *testing.B) {
	const depth = 16
	for _, mode := range fakeModes {
		for _, body := range bodyRequests {
			b.Run(mode.name+"/"+body.name, func(b *testing.B) {
				benchmarkPass(b, newPassRig(b, mode.provided, mode.multishot, body.request, depth), depth)
			})
		}
	}
}

// benchmarkPass measures r's rounds of depth pipelined requests, per
// byte and per request.
func benchmarkPass(b *testing.B, r *passRig, depth int) {
	b.ReportAllocs()
	b.SetBytes(int64(len(r.request)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r.round()
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*depth), "ns/request")
}

var okBody = []byte("ok")

// fixedAnswer is a deferred handler that allocates nothing itself, so the
// allocation count below is the handoff's own.
func fixedAnswer(j *Job) {
	j.WriteHeader(200, int64(len(okBody)))
	j.Write(okBody)
	j.Finish()
}

// deferredRig serves one keep-alive connection through the deferred path.
type deferredRig struct {
	hs      *harness
	c       *fakeConn
	q       *JobQueue
	request string
}

// readAndAnswer reads the request body into a fixed buffer, then answers
// as fixedAnswer does.
func readAndAnswer(j *Job) {
	var buf [256]byte
	for {
		if _, err := j.Read(buf[:]); err != nil {
			break
		}
	}
	fixedAnswer(j)
}

func newDeferredRig(tb testing.TB, request string) *deferredRig {
	q := NewJobQueue(16)
	hs := newHarness(tb, deferEverything, func(c *Config) { c.Jobs = q })
	go func() {
		for j := q.Take(); j != nil; j = q.Take() {
			readAndAnswer(j)
		}
	}()
	c := hs.fb.dial()
	for !c.accepted {
		hs.l.pass()
	}
	r := &deferredRig{hs: hs, c: c, q: q, request: request}
	for i := 0; i < 100; i++ {
		r.round()
	}
	return r
}

// round sends one request and runs passes until its response is out.
func (r *deferredRig) round() {
	fb := r.hs.fb
	fb.mu.Lock()
	r.c.in = append(r.c.in, r.request...)
	r.c.out = r.c.out[:0]
	fb.mu.Unlock()
	for {
		r.hs.l.pass()
		fb.mu.Lock()
		done := len(r.c.out) > 0 && r.c.out[len(r.c.out)-1] == 'k'
		fb.mu.Unlock()
		if done {
			return
		}
	}
}

func TestDeferredPathAllocatesNothing(t *testing.T) {
	requests := append([]struct{ name, request string }{{"get", browserRequest}}, bodyRequests...)
	for _, req := range requests {
		t.Run(req.name, func(t *testing.T) {
			r := newDeferredRig(t, req.request)
			defer r.q.Close()
			if allocs := testing.AllocsPerRun(500, r.round); allocs != 0 {
				t.Fatalf("%v allocations per deferred keep-alive request, want 0", allocs)
			}
		})
	}
}

func BenchmarkDeferredRoundTrip(b *testing.B) {
	r := newDeferredRig(b, browserRequest)
	defer r.q.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r.round()
	}
}

// BenchmarkDeferredRoundTripWithBody: the handler reads the body the
// loop delivers to its job.
func BenchmarkDeferredRoundTripWithBody(b *testing.B) {
	for _, body := range bodyRequests {
		b.Run(body.name, func(b *testing.B) {
			r := newDeferredRig(b, body.request)
			defer r.q.Close()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r.round()
			}
		})
	}
}
