package pybridge

import (
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// countDown is a Completer that signals when a batch is complete; it
// allocates nothing.
type countDown struct {
	left atomic.Int64
	done chan struct{}
}

func newCountDown() *countDown { return &countDown{done: make(chan struct{}, 1)} }

func (c *countDown) Complete(*Job) {
	if c.left.Add(-1) == 0 {
		c.done <- struct{}{}
	}
}

// batchServer pushes prebuilt jobs through an executor a batch at a time.
type batchServer struct {
	ex    *ASGIExecutor
	queue *Queue
	cd    *countDown
	jobs  []*Job
}

func newBatchServer(tb testing.TB, target string, loop Loop, batch int) *batchServer {
	tb.Helper()
	app := loadApp(tb, target)
	bs := &batchServer{queue: NewQueue(batch), cd: newCountDown()}
	ex, err := interp.StartASGI(app, ASGIOptions{Loop: loop, Lifespan: LifespanOff}, bs.queue, bs.cd)
	skipWithoutUvloop(tb, err)
	if err != nil {
		tb.Fatal(err)
	}
	bs.ex = ex
	tb.Cleanup(func() {
		bs.queue.Close()
		if err := ex.Stop(); err != nil {
			tb.Error(err)
		}
	})
	for i := 0; i < batch; i++ {
		bs.jobs = append(bs.jobs, newJob(tb, app, benchHead))
	}
	return bs
}

// serve runs n of the jobs and waits for all of them.
func (bs *batchServer) serve(n int) {
	bs.cd.left.Store(int64(n))
	for _, j := range bs.jobs[:n] {
		bs.queue.Push(j)
	}
	<-bs.cd.done
}

// The Go side of an ASGI request allocates nothing in steady state: the
// feed, the wake's batch, the slot, the spawn, the completion.
func TestASGIZeroAllocs(t *testing.T) {
	bs := newBatchServer(t, "asgi_bench_app:app", LoopAsyncio, 64)
	bs.serve(64)
	bs.serve(64)
	allocs := testing.AllocsPerRun(50, func() { bs.serve(64) })
	if allocs != 0 {
		t.Errorf("%.1f Go allocations per batch of 64 requests, want 0", allocs)
	}
	if r := bs.jobs[0].Response; r.Status() != 200 || string(r.Body()) != "Hello, World!" {
		t.Fatalf("%d %q", r.Status(), r.Body())
	}
}

// replay is a BodyReader of fixed pieces that can start over.
type replay struct {
	list [][]byte
	next int
}

func (r *replay) TryRead(p []byte) (int, bool, error) {
	n, err := r.Read(p)
	return n, false, err
}

func (r *replay) Read(p []byte) (int, error) {
	if r.next == len(r.list) {
		return 0, errEOF
	}
	n := copy(p, r.list[r.next])
	r.next++
	return n, nil
}

// counter is a Port that counts what it is sent and keeps nothing.
type counter struct {
	recorder
	bytes int
}

func (d *counter) WriteHead(*Response) error   { return nil }
func (d *counter) Write(p []byte) (int, error) { d.bytes += len(p); return len(p), nil }
func (d *counter) Post(p []byte) (bool, error) { d.bytes += len(p); return false, nil }

// A request body read in pieces and a streamed response allocate nothing
// on the Go side either: the read and write goroutines are the slot's,
// the read buffer is pooled, the events reuse their slice.
func TestASGIZeroAllocsStreaming(t *testing.T) {
	const batch = 32
	bs := newBatchServer(t, "asgi_bench_app:echo", LoopAsyncio, batch)
	readers := make([]*replay, batch)
	writers := make([]*counter, batch)
	for i, j := range bs.jobs {
		readers[i] = &replay{list: [][]byte{[]byte("abc"), []byte("defg")}}
		writers[i] = &counter{}
		j.Body, j.Writer = readers[i], writers[i]
		j.Request.ContentLength = 7
	}
	serve := func() {
		for i, r := range readers {
			r.next, writers[i].bytes = 0, 0
		}
		bs.serve(batch)
	}
	serve()
	serve()
	allocs := testing.AllocsPerRun(30, serve)
	if allocs != 0 {
		t.Errorf("%.1f Go allocations per batch of %d streamed requests, want 0", allocs, batch)
	}
	if r := bs.jobs[0].Response; r.Outcome() != Streamed || writers[0].bytes != 7 {
		t.Fatalf("outcome %d, %d bytes written", r.Outcome(), writers[0].bytes)
	}
}

// Python objects stay flat across many requests of several shapes: the
// executor keeps no reference per request.
func TestASGINoObjectGrowth(t *testing.T) {
	s := startASGI(t, "asgi_spec_app:app", ASGIOptions{Loop: LoopAsyncio, Lifespan: LifespanOff})
	counter := startASGI(t, "asgi_bench_app:objects", ASGIOptions{Loop: LoopAsyncio, Lifespan: LifespanOff})
	count := func() (int, int) {
		f := strings.Fields(string(counter.get(t, "/").Response.Body()))
		a, _ := strconv.Atoi(f[0])
		b, _ := strconv.Atoi(f[1])
		return a, b
	}
	serve := func(n int) {
		for i := 0; i < n; i++ {
			var j *Job
			switch i % 7 {
			case 4:
				j = newJob(t, s.app, "GET /raise-before HTTP/1.1\r\nHost: x\r\n\r\n")
			case 5:
				j = newJob(t, s.app, "GET /raise-after HTTP/1.1\r\nHost: x\r\n\r\n")
				j.Writer = &trailerRecorder{}
			case 6:
				j = newJob(t, s.app, "GET /body-first HTTP/1.1\r\nHost: x\r\n\r\n")
			case 0:
				j = newJob(t, s.app, "GET /scope?q=1 HTTP/1.1\r\nHost: x\r\nX-Rare: v\r\n\r\n")
			case 1:
				j = newJob(t, s.app, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\n")
				j.Body = &pieces{list: [][]byte{[]byte("ab"), []byte("cd")}}
			case 2:
				j = newJob(t, s.app, "GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
				j.Writer = &trailerRecorder{}
			case 3:
				j = newJob(t, s.app, "GET /trailers HTTP/1.1\r\nHost: x\r\n\r\n")
				j.Writer = &trailerRecorder{}
			}
			s.run(j)
			j.Response.Free()
			j.Response = nil
		}
	}
	get(t, "bench_app:quiet", "/on") // a traceback per failing request
	defer get(t, "bench_app:quiet", "/off")
	serve(2000)
	objects, blocks := count()
	serve(10000)
	objects2, blocks2 := count()
	t.Logf("gc objects %d -> %d, allocated blocks %d -> %d over 10000 requests", objects, objects2, blocks, blocks2)
	if objects2-objects > 50 || blocks2-blocks > 500 {
		t.Errorf("growth over 10000 requests: %d gc objects, %d blocks", objects2-objects, blocks2-blocks)
	}
}

// BenchmarkASGIScope: the scope of the twelve-header GET, built from the
// template and dropped.
func BenchmarkASGIScope(b *testing.B) {
	bs := newBatchServer(b, "asgi_bench_app:app", LoopAsyncio, 1)
	err := onThread(func(t *thread) {
		if err := bs.ex.partsScope(bs.jobs[0], 100); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		cpu := threadCPU()
		if err := bs.ex.partsScope(bs.jobs[0], b.N); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		reportCPU(b, cpu)
	})
	if err != nil {
		b.Fatal(err)
	}
}

// BenchmarkASGIHeadRead: a six-field http.response.start read into the
// arena through the C API.
func BenchmarkASGIHeadRead(b *testing.B) {
	resp := NewResponse()
	defer resp.Free()
	err := onThread(func(t *thread) {
		b.ReportAllocs()
		b.ResetTimer()
		cpu := threadCPU()
		if err := partsHead(resp, b.N); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		reportCPU(b, cpu)
	})
	if err != nil {
		b.Fatal(err)
	}
	if resp.HeaderLen() != 6 || resp.Status() != 200 {
		b.Fatalf("%d headers, status %d", resp.HeaderLen(), resp.Status())
	}
}

// benchRequests drives whole requests through the executor in batches of
// a thousand (the wake carries a batch) and reports the executor thread's
// CPU per request, split into spawn (slot, scope, task) and the rest
// (the task's run to its completion, the wake).
func benchRequests(b *testing.B, loop Loop) {
	const batch = 1000
	bs := newBatchServer(b, "asgi_bench_app:app", loop, batch)
	bs.serve(batch)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0, err := bs.ex.threadCPU()
	if err != nil {
		b.Skip("no per-thread CPU time:", err)
	}
	bs.ex.spawnCPU = 0
	bs.ex.measure.Store(true)
	for done := 0; done < b.N; {
		n := min(batch, b.N-done)
		bs.serve(n)
		done += n
	}
	b.StopTimer()
	bs.ex.measure.Store(false)
	cpu1, _ := bs.ex.threadCPU()
	total := float64(cpu1-cpu0) / float64(b.N)
	spawn := float64(bs.ex.spawnCPU) / float64(b.N)
	b.ReportMetric(total, "cpu-ns/op")
	b.ReportMetric(spawn, "spawn-ns/op")
	b.ReportMetric(total-spawn, "run-ns/op")
	if r := bs.jobs[0].Response; r.Status() != 200 || r.Outcome() != Complete {
		b.Fatalf("%d outcome %d", r.Status(), r.Outcome())
	}
}

func BenchmarkASGIRequestAsyncio(b *testing.B) { benchRequests(b, LoopAsyncio) }
func BenchmarkASGIRequestUvloop(b *testing.B)  { benchRequests(b, LoopUvloop) }

// BenchmarkASGIStreamedUvloop is benchRequests for a request whose body
// comes in two pieces and goes back streamed piece by piece: the paths
// that wait on the Go side (reads, writes) and their resumes.
func BenchmarkASGIStreamedUvloop(b *testing.B) {
	const batch = 256
	bs := newBatchServer(b, "asgi_bench_app:echo", LoopUvloop, batch)
	readers := make([]*replay, batch)
	writers := make([]*counter, batch)
	for i, j := range bs.jobs {
		readers[i] = &replay{list: [][]byte{[]byte("abc"), []byte("defg")}}
		writers[i] = &counter{}
		j.Body, j.Writer = readers[i], writers[i]
		j.Request.ContentLength = 7
	}
	serve := func(n int) {
		for i, r := range readers[:n] {
			r.next, writers[i].bytes = 0, 0
		}
		bs.serve(n)
	}
	serve(batch)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0, err := bs.ex.threadCPU()
	if err != nil {
		b.Skip("no per-thread CPU time:", err)
	}
	for done := 0; done < b.N; {
		n := min(batch, b.N-done)
		serve(n)
		done += n
	}
	b.StopTimer()
	cpu1, _ := bs.ex.threadCPU()
	b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
	if r := bs.jobs[0].Response; r.Outcome() != Streamed || writers[0].bytes != 7 {
		b.Fatalf("outcome %d, %d bytes written", r.Outcome(), writers[0].bytes)
	}
}
