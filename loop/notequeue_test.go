package loop

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	h2codec "github.com/m0serve/m0serve/http2"
)

// TestNoteQueueNeverRefuses: a producer with nobody draining pushes far
// past the ring's size without waiting, and every note comes out once.
func TestNoteQueueNeverRefuses(t *testing.T) {
	var q noteQueue[int]
	q.init(4)
	for round := 0; round < 3; round++ { // the overflow's buffers are reused
		const n = 1000
		for i := 0; i < n; i++ {
			q.push(i)
		}
		if q.empty() {
			t.Fatal("empty with notes queued")
		}
		seen := make([]bool, n)
		for i := 0; i < n; i++ {
			v, ok := q.pop()
			if !ok {
				t.Fatalf("round %d: pop %d found nothing", round, i)
			}
			if seen[v] {
				t.Fatalf("round %d: %d popped twice", round, v)
			}
			seen[v] = true
		}
		if _, ok := q.pop(); ok || !q.empty() {
			t.Fatalf("round %d: a note left over", round)
		}
	}
}

// TestNoteQueueManyProducers: producers on other goroutines and one
// consumer, as the loop has them; every note arrives exactly once (run
// with -race).
func TestNoteQueueManyProducers(t *testing.T) {
	var q noteQueue[int]
	q.init(8)
	const producers, each = 4, 20000
	var wg sync.WaitGroup
	for p := 0; p < producers; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				q.push(p*each + i)
			}
		}()
	}
	seen := make([]bool, producers*each)
	var done atomic.Bool
	go func() { wg.Wait(); done.Store(true) }()
	for got := 0; got < producers*each; {
		v, ok := q.pop()
		if !ok {
			if done.Load() && q.empty() {
				t.Fatalf("%d of %d notes arrived", got, producers*each)
			}
			continue
		}
		if seen[v] {
			t.Fatalf("%d popped twice", v)
		}
		seen[v] = true
		got++
	}
}

// TestDrivenStepFinishesMoreJobsThanTheRing: a driven Stepper (the ASGI
// executor's shape) finishes, on the loop thread, the jobs of 200
// concurrent HTTP/2 streams of one connection under MaxConnections 1: more
// notes than the ring holds, produced by the thread that drains it: the
// loop must not spin on the full ring.
func TestDrivenStepFinishesMoreJobsThanTheRing(t *testing.T) {
	const streams = 200
	q := NewJobQueue(256)
	hs := newHarness(t, deferEverything, func(c *Config) {
		c.MaxConnections = 1
		c.Jobs = q
		c.Stepper = &steppedJobs{q: q}
		c.HTTP2 = &HTTP2Config{Conn: h2codec.Config{MaxConcurrentStreams: 256}}
	})
	cl := newH2Client()
	c := hs.connect()
	var frames string
	frames += cl.open()
	for i := 0; i < streams; i++ {
		frames += cl.headers(uint32(2*i+1), "GET", fmt.Sprintf("/%d", i), true)
	}
	hs.fb.write(c, frames)

	// The passes run on a goroutine of their own: one stuck inside the
	// loop thread's own push never returns, and the test must still end.
	var stop atomic.Bool
	passes := make(chan error, 1)
	go func() {
		for !stop.Load() {
			if err := hs.l.pass(); err != nil {
				passes <- err
				return
			}
		}
		passes <- nil
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		out := parseH2Output(t, hs.fb.output(c))
		ended := 0
		for id, s := range out.streams {
			if s.ended && s.fields[":status"] == "200" && string(s.body) == "hello" {
				ended++
			} else if s.ended || s.reset {
				t.Fatalf("stream %d: %+v %q reset %v", id, s.fields, s.body, s.reset)
			}
		}
		if ended == streams {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d streams answered: the loop is stuck", ended, streams)
		}
		time.Sleep(10 * time.Millisecond)
	}
	stop.Store(true)
	hs.l.Kick()
	if err := <-passes; err != nil {
		t.Fatal(err)
	}
}

// BenchmarkNoteQueue: a push and a pop, as a job's note and the loop's
// drain make them, on the noteQueue and on its ring alone.
func BenchmarkNoteQueue(b *testing.B) {
	b.Run("queue", func(b *testing.B) {
		var q noteQueue[*Job]
		q.init(64)
		j := &Job{}
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			q.push(j)
			q.pop()
		}
	})
	b.Run("ring", func(b *testing.B) {
		var r ring[*Job]
		r.init(64)
		j := &Job{}
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			r.push(j)
			r.pop()
		}
	})
}
