package pybridge

import (
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/m0serve/m0serve/http1"
)

// asgiLoops are the event loops every spec test runs on.
var asgiLoops = []Loop{LoopAsyncio, LoopUvloop}

// drivenTests: M0_TEST_ASGI_THREAD=loop runs the tests that start their
// executor through startASGI on asyncio stepped by a stand-in for the
// server's loop thread (drive), as --asgi-thread loop does.
var drivenTests = os.Getenv("M0_TEST_ASGI_THREAD") == "loop"

func init() {
	if drivenTests {
		asgiLoops = []Loop{LoopAsyncio}
	}
}

// driver is the server's loop thread as a driven executor sees it: one
// locked thread calling Step, waiting for a kick or the step's deadline.
type driver struct {
	kick, stop, done chan struct{}
	steps            atomic.Int64 // Steps returned
}

func drive(ex *ASGIExecutor) *driver {
	d := &driver{kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	ex.SetKick(func() {
		select {
		case d.kick <- struct{}{}:
		default:
		}
	})
	go func() {
		runtime.LockOSThread()
		defer close(d.done)
		timer := time.NewTimer(time.Hour)
		for {
			now := time.Now().UnixNano()
			due := ex.Step(now)
			d.steps.Add(1)
			wait := time.Millisecond // jobs pushed from other goroutines kick nothing: look often
			if due != 0 {
				wait = min(wait, time.Duration(due-now))
			}
			if ex.Pending() {
				wait = 0
			}
			if wait > 0 {
				timer.Reset(wait)
				select {
				case <-d.kick:
				case <-timer.C:
				case <-d.stop:
					ex.LeaveLoop()
					return
				}
				timer.Stop()
				continue
			}
			select {
			case <-d.stop:
				ex.LeaveLoop()
				return
			default:
			}
		}
	}()
	return d
}

// end leaves the loop on the driver's thread, as the server's loop does
// before Stop.
func (d *driver) end() {
	close(d.stop)
	<-d.done
}

// asgiServer is an executor of its own per test, fed by its own queue.
type asgiServer struct {
	ex    *ASGIExecutor
	queue *Queue
	app   *App
	jobs  []*Job
	stop  func() // what the test's end runs before it frees the jobs; once
}

// startASGI starts target's executor on loop; Stop runs at the test's end.
func startASGI(t testing.TB, target string, opt ASGIOptions) *asgiServer {
	t.Helper()
	app := loadApp(t, target)
	q := NewQueue(1024)
	opt.Driven = drivenTests
	ex, err := interp.StartASGI(app, opt, q, waiting)
	skipWithoutUvloop(t, err)
	if err != nil {
		t.Fatal(err)
	}
	var d *driver
	if opt.Driven {
		d = drive(ex)
	}
	s := &asgiServer{ex: ex, queue: q, app: app}
	s.stop = sync.OnceFunc(func() {
		q.Close()
		if d != nil {
			d.end()
		}
		if err := ex.Stop(); err != nil {
			t.Error(err)
		}
	})
	t.Cleanup(func() {
		s.stop()
		// After Stop: a test that failed may leave a job in flight.
		for _, j := range s.jobs {
			if j.Response != nil {
				j.Response.Free()
				j.Response = nil
			}
		}
	})
	return s
}

// job is newJob for this executor, its arena freed after Stop.
func (s *asgiServer) job(t testing.TB, raw string) *Job {
	t.Helper()
	var p http1.Parser
	var req http1.Request
	head := []byte(raw)
	if _, err := p.Parse(head, &req); err != nil {
		t.Fatalf("parse %q: %v", raw, err)
	}
	j := &Job{App: s.app, Response: NewResponse()}
	j.Request.FromHTTP1(&req, head)
	j.Request.RemoteAddr = []byte("127.0.0.1")
	j.Request.RemotePort = 54321
	s.jobs = append(s.jobs, j)
	return j
}

// run hands the job to the executor and waits for its completion.
func (s *asgiServer) run(j *Job) {
	ch := waiting.add(j)
	s.queue.Push(j)
	<-ch
}

func (s *asgiServer) get(t testing.TB, path string) *Job {
	t.Helper()
	j := s.job(t, "GET "+path+" HTTP/1.1\r\nHost: x\r\n\r\n")
	s.run(j)
	return j
}

// eachLoop runs fn once per event loop, as a subtest.
func eachLoop(t *testing.T, fn func(t *testing.T, loop Loop)) {
	for _, loop := range asgiLoops {
		t.Run(loop.String(), func(t *testing.T) { fn(t, loop) })
	}
}

// skipWithoutUvloop handles a uvloop case where the embedded Python has
// no uvloop (see missingModule); the asyncio case still runs.
func skipWithoutUvloop(t testing.TB, err error) {
	t.Helper()
	missingModule(t, err, "uvloop")
}
