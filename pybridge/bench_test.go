package pybridge

import (
	"syscall"
	"testing"
	"time"
)

// threadCPU is this OS thread's CPU time: on a loaded machine wall time
// per op counts the time others ran, CPU time per op does not.
func threadCPU() time.Duration {
	const rusageThread = 1 // RUSAGE_THREAD, Linux
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func reportCPU(b *testing.B, since time.Duration) {
	b.ReportMetric(float64(threadCPU()-since)/float64(b.N), "cpu-ns/op")
}

// A browser-like GET with twelve header fields.
const benchHead = "GET /api/items?page=2&sort=name HTTP/1.1\r\n" +
	"Host: example.com\r\n" +
	"User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0\r\n" +
	"Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8\r\n" +
	"Accept-Language: en-US,en;q=0.5\r\n" +
	"Accept-Encoding: gzip, deflate, br\r\n" +
	"Connection: keep-alive\r\n" +
	"Cookie: session=abc123; theme=dark\r\n" +
	"Upgrade-Insecure-Requests: 1\r\n" +
	"Sec-Fetch-Dest: document\r\n" +
	"Sec-Fetch-Mode: navigate\r\n" +
	"Sec-Fetch-Site: none\r\n" +
	"Cache-Control: max-age=0\r\n\r\n"

func benchPart(b *testing.B, target string, part int) {
	j := newJob(b, loadApp(b, target), benchHead)
	err := onThread(func(t *thread) {
		t.serve(j, partFull) // warm the key cache and the arena
		b.ReportAllocs()
		b.ResetTimer()
		cpu := threadCPU()
		for i := 0; i < b.N; i++ {
			t.serve(j, cPart(part))
		}
		b.StopTimer()
		reportCPU(b, cpu)
	})
	if err != nil {
		b.Fatal(err)
	}
	if part == partFull && j.Response.Status() != 200 {
		b.Fatalf("status %d", j.Response.Status())
	}
}

// BenchmarkEnviron: template copy, twelve headers and the per-request
// keys, as latin-1 str; the dict dropped.
func BenchmarkEnviron(b *testing.B) { benchPart(b, "bench_app:app", partEnviron) }

// BenchmarkAppCall: the environ, the call of a two-header list app,
// close(); the response not read.
func BenchmarkAppCall(b *testing.B) { benchPart(b, "bench_app:app", partCall) }

// BenchmarkRequest: the whole request in its one cgo call, the response
// read into the arena.
func BenchmarkRequest(b *testing.B) { benchPart(b, "bench_app:app", partFull) }

// BenchmarkRequestFlask: the same request routed by Flask.
func BenchmarkRequestFlask(b *testing.B) {
	j := newJob(b, loadApp(b, "flask_app:app"), "GET /hello/bench HTTP/1.1\r\nHost: x\r\n\r\n")
	err := onThread(func(t *thread) {
		b.ReportAllocs()
		b.ResetTimer()
		cpu := threadCPU()
		for i := 0; i < b.N; i++ {
			t.serve(j, partFull)
		}
		b.StopTimer()
		reportCPU(b, cpu)
	})
	if err != nil {
		b.Fatal(err)
	}
}

// BenchmarkResponseRead: the Go side reading the arena, as an encoder
// would: status, reason, every header, the body.
func BenchmarkResponseRead(b *testing.B) {
	j := get(b, "body_app:app", "/list")
	r := j.Response
	b.ReportAllocs()
	b.ResetTimer()
	n := 0
	for i := 0; i < b.N; i++ {
		n += r.Status() + len(r.Reason())
		for k := 0; k < r.HeaderLen(); k++ {
			name, value := r.Header(k)
			n += len(name) + len(value)
		}
		n += len(r.Body())
	}
	if n == 0 {
		b.Fatal("nothing read")
	}
}

// BenchmarkHandoff: whole requests through the Queue and two handler
// threads, batches as they come, one waiter per job.
func BenchmarkHandoff(b *testing.B) {
	app := loadApp(b, "bench_app:app")
	const inFlight = 64
	jobs := make([]*Job, inFlight)
	for i := range jobs {
		jobs[i] = newJob(b, app, benchHead)
	}
	q := NewQueue(inFlight)
	done := make(chan *Job, inFlight)
	h, err := interp.StartHandlers(2, 16, q, chanCompleter(done))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	sent := 0
	for ; sent < inFlight && sent < b.N; sent++ {
		q.Push(jobs[sent])
	}
	for got := 0; got < b.N; got++ {
		j := <-done
		if sent < b.N {
			q.Push(j)
			sent++
		}
	}
	b.StopTimer()
	q.Close()
	h.Wait()
}

type chanCompleter chan *Job

func (c chanCompleter) Complete(j *Job) { c <- j }

// The request path allocates nothing on the Go side in steady state: not
// the buffered list, not a streamed generator, not a body read.
func TestServeAllocatesNothing(t *testing.T) {
	cases := []struct {
		name, target, raw string
		body, stream      bool
	}{
		{"list", "bench_app:app", benchHead, false, false},
		{"generator streamed", "body_app:app", "GET /generator HTTP/1.1\r\nHost: x\r\n\r\n", false, true},
		{"body read", "input_app:app", "POST /readline HTTP/1.1\r\nHost: x\r\nContent-Length: 8\r\n\r\n", true, false},
	}
	for _, c := range cases {
		j := newJob(t, loadApp(t, c.target), c.raw)
		body := &pieces{}
		piece := []byte("ab\ncd\nef")
		if c.body {
			j.Body = body
		}
		w := &discard{}
		if c.stream {
			j.Writer = w
		}
		var allocs float64
		err := onThread(func(th *thread) {
			allocs = testing.AllocsPerRun(500, func() {
				if c.body {
					body.list = append(body.list[:0], piece)
				}
				th.serve(j, partFull)
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		if j.Response.Status() != 200 {
			t.Errorf("%s: status %d", c.name, j.Response.Status())
		}
		if allocs != 0 {
			t.Errorf("%s: %.1f allocations per request, want 0", c.name, allocs)
		}
	}
}

type discard struct{}

func (discard) WriteHead(*Response) error   { return nil }
func (discard) Write(p []byte) (int, error) { return len(p), nil }
