package pybridge

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// A thousand requests, each awaiting asyncio.sleep(0.2), all complete on
// the executor's one thread: they wait together, not one after another.
// Completion is asserted, never timing.
func TestASGIThousandConcurrent(t *testing.T) {
	eachLoop(t, func(t *testing.T, loop Loop) {
		s := startASGI(t, "asgi_spec_app:app", ASGIOptions{Loop: loop})
		const n = 1000
		jobs := make([]*Job, n)
		chans := make([]chan struct{}, n)
		for i := range jobs {
			jobs[i] = s.job(t, "GET /sleep HTTP/1.1\r\nHost: x\r\n\r\n")
			chans[i] = waiting.add(jobs[i])
		}
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, j := range jobs {
				s.queue.Push(j)
			}
		}()
		threads := map[string]int{}
		for i, ch := range chans {
			<-ch
			r := jobs[i].Response
			if r.Status() != 200 {
				t.Fatalf("job %d: %d %q", i, r.Status(), r.Body())
			}
			threads[string(r.Body())]++
		}
		wg.Wait()
		if len(threads) != 1 {
			t.Errorf("served on %d threads, want 1: %v", len(threads), threads)
		}
	})
}

// Stop cancels a task still running: the app's finally runs, and its job
// completes with a 503 (nothing was sent) that is not the app's error.
func TestASGIStopCancels(t *testing.T) {
	eachLoop(t, func(t *testing.T, loop Loop) {
		app := loadApp(t, "asgi_spec_app:app")
		q := NewQueue(8)
		ex, err := interp.StartASGI(app, ASGIOptions{Loop: loop}, q, waiting)
		skipWithoutUvloop(t, err)
		if err != nil {
			t.Fatal(err)
		}
		marker := filepath.Join(t.TempDir(), "finally")
		j := newJob(t, app, "GET /forever?"+marker+" HTTP/1.1\r\nHost: x\r\n\r\n")
		done := waiting.add(j)
		q.Push(j)
		// Wait until the task is running: a /hello request that the
		// executor answers after /forever was spawned (FIFO spawn order).
		probe := &asgiServer{ex: ex, queue: q, app: app}
		probe.get(t, "/hello")
		q.Close()
		if err := ex.Stop(); err != nil {
			t.Fatal(err)
		}
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatal("the cancelled job never completed")
		}
		if r := j.Response; r.Outcome() != Complete || r.Status() != 503 || r.AppError() {
			t.Errorf("outcome %d status %d app error %v", r.Outcome(), r.Status(), r.AppError())
		}
		if b, err := os.ReadFile(marker); err != nil || string(b) != "finally ran" {
			t.Errorf("the app's finally: %q %v", b, err)
		}
	})
}

// While one request's send waits for its Written (the back-pressure of
// a full outbox), the executor serves others: the wait holds no thread,
// and the send awaits (one piece out at a time).
func TestASGIBackPressureDoesNotBlockTheLoop(t *testing.T) {
	s := startASGI(t, "asgi_spec_app:app", ASGIOptions{Loop: LoopAsyncio})
	j := s.job(t, "GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
	w := &postingWriter{pieces: make(chan string, 4)}
	j.Writer = w
	done := waiting.add(j)
	s.queue.Push(j)
	var got []string
	got = append(got, <-w.pieces) // the first piece waits for its Written
	if r := s.get(t, "/hello").Response; string(r.Body()) != "hello" {
		t.Fatalf("while waiting: %q", r.Body())
	}
	if len(w.pieces) != 0 {
		t.Fatalf("a second piece posted before the first's Written")
	}
	for len(got) < 3 {
		w.written(s.ex, j)
		got = append(got, <-w.pieces)
	}
	w.written(s.ex, j)
	<-done
	if j.Response.Outcome() != Streamed || strings.Join(got, "|") != "one;|two;|three" || w.overlapped != 0 {
		t.Errorf("outcome %d pieces %q, %d overlapped", j.Response.Outcome(), got, w.overlapped)
	}
}

// The server's word that the client left reaches a task waiting in
// receive: http.disconnect, then its send raises; the job aborts without
// blaming the app.
func TestASGIClientGone(t *testing.T) {
	eachLoop(t, func(t *testing.T, loop Loop) {
		s := startASGI(t, "asgi_spec_app:app", ASGIOptions{Loop: loop})
		j := s.job(t, "GET /wait-disconnect?gone-"+loop.String()+" HTTP/1.1\r\nHost: x\r\n\r\n")
		w := &postingWriter{pieces: make(chan string, 4)}
		j.Writer = w
		done := waiting.add(j)
		s.queue.Push(j)
		<-w.pieces
		w.written(s.ex, j)
		s.ex.ClientGone(j)
		<-done
		if r := j.Response; r.Outcome() != Aborted || r.AppError() {
			t.Errorf("outcome %d app error %v", r.Outcome(), r.AppError())
		}
		if got := string(s.get(t, "/seen?gone-"+loop.String()).Response.Body()); got != "http.disconnect then ClientDisconnected" {
			t.Errorf("the app saw %q", got)
		}
		s.ex.ClientGone(j) // completed: ignored
		if r := s.get(t, "/hello").Response; string(r.Body()) != "hello" {
			t.Errorf("after: %q", r.Body())
		}
	})
}

// A source closed while the executor runs wakes it once (the armed
// notification); that wake finds nothing to take and nothing to arm, and
// the executor goes back to its event loop: Stop then ends it. (A take
// that kept asking a closed source to arm spun on the executor's thread
// for ever, and Stop never returned.)
func TestASGIClosedSourceWakesOnce(t *testing.T) {
	app := loadApp(t, "asgi_spec_app:app")
	q := NewQueue(8)
	ex, err := interp.StartASGI(app, ASGIOptions{Loop: LoopAsyncio}, q, waiting)
	if err != nil {
		t.Fatal(err)
	}
	probe := &asgiServer{ex: ex, queue: q, app: app}
	if j := probe.get(t, "/hello"); j.Response.Status() != 200 {
		t.Fatalf("probe: status %d", j.Response.Status())
	}
	// Close once the executor has armed the source after the probe, so
	// that the close notifies it.
	for deadline := time.Now().Add(30 * time.Second); !q.armed.Load(); {
		if time.Now().After(deadline) {
			t.Fatal("the executor never armed its source")
		}
		time.Sleep(time.Millisecond)
	}
	before := ex.wakes.Load()
	q.Close()
	for deadline := time.Now().Add(30 * time.Second); ex.wakes.Load() == before; {
		if time.Now().After(deadline) {
			t.Fatal("closing the source did not wake the executor")
		}
		time.Sleep(time.Millisecond)
	}
	stopped := make(chan error, 1)
	go func() { stopped <- ex.Stop() }()
	select {
	case err := <-stopped:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Stop did not return: the executor's thread is stuck after the source closed")
	}
	for _, j := range probe.jobs {
		j.Response.Free()
	}
}

// With MaxInFlight 2 the executor runs at most two requests at once and
// takes the rest as earlier ones complete: every request completes (a
// completion must wake a full executor, which has not armed its source),
// and the app never sees more than two inside.
func TestASGIMaxInFlight(t *testing.T) {
	s := startASGI(t, "asgi_spec_app:app", ASGIOptions{Loop: LoopAsyncio, MaxInFlight: 2})
	const n = 12
	jobs := make([]*Job, n)
	chans := make([]chan struct{}, n)
	for i := range jobs {
		jobs[i] = s.job(t, "GET /counted HTTP/1.1\r\nHost: x\r\n\r\n")
		chans[i] = waiting.add(jobs[i])
	}
	for _, j := range jobs {
		s.queue.Push(j)
	}
	most := 0
	for i, ch := range chans {
		select {
		case <-ch:
		case <-time.After(60 * time.Second):
			t.Fatalf("request %d of %d never completed: the full executor was not woken", i+1, n)
		}
		r := jobs[i].Response
		seen, err := strconv.Atoi(string(r.Body()))
		if r.Status() != 200 || err != nil {
			t.Fatalf("request %d: %d %q", i+1, r.Status(), r.Body())
		}
		most = max(most, seen)
	}
	if most != 2 {
		t.Fatalf("at most %d requests ran at once, want 2 (MaxInFlight)", most)
	}
}
