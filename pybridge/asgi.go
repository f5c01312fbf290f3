package pybridge

/*
#include "asgi.h"
#include <stdlib.h>
*/
import "C"

import (
	_ "embed"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/m0serve/m0serve/internal/threadsched"
)

//go:embed asgi_executor.py
var asgiPythonHalf string

// StartupError is a lifespan startup that failed: Message is the app's
// (lifespan.startup.failed) or says that the app raised (its traceback
// went to stderr).
type StartupError struct {
	Message string
}

func (e *StartupError) Error() string {
	return "ASGI lifespan startup failed: " + e.Message
}

// ASGIExecutor is one handler thread running an event loop that serves
// an ASGI app's requests as tasks.
type ASGIExecutor struct {
	ip   *Interpreter
	id   int
	app  *App
	opt  ASGIOptions
	src  NotifySource
	done Completer
	c    *C.m0_asgi
	loop string

	readFD, writeFD C.int

	mu       sync.Mutex
	events   []asgiEvent
	eventsTo []asgiEvent
	stopping bool
	// fdClosed: the wake descriptor is closed (the thread has ended).
	// Written under both mu and fdMu; read under either.
	fdClosed bool
	fdMu     sync.RWMutex
	// signaled: the wake descriptor was written and not yet drained, so
	// the next signal need not write it. An atomic rather than mu's: the
	// loop thread used to hold mu across the write, and the executor's
	// thread, meeting it held, parked in the Go scheduler (stoplockedm: a
	// hand-off of its P and two futex calls).
	signaled atomic.Bool

	// The executor thread's (and Stop's, once the thread has ended):
	batch    []*Job
	inFlight int  // jobs taken and not yet complete
	full     bool // take stopped at MaxInFlight; complete wakes it again

	readBufs [][]byte // body read buffers not lent out (executor thread)
	creq     C.m0_request
	tid      int // the executor thread's, for the per-part instruments
	// measure makes wake add its spawns' thread CPU time to spawnCPU
	// (two getrusage calls per wake, not per job), for the benchmarks.
	measure  atomic.Bool
	spawnCPU time.Duration
	wakes    atomic.Int64 // wakes so far, for the tests
	yielder  threadsched.Yielder
	started  chan error
	finished chan struct{}
	runErr   error
	stopOnce sync.Once
	// panicked: what a callback panicked with (catch), raised again
	// once out of C (raise).
	panicked any

	drivenState // Driven only
}

var (
	asgiExecutors   [C.M0_ASGI_MAX_EXECUTORS]*ASGIExecutor
	asgiExecutorsMu sync.Mutex
)

// StartASGI starts the executor of app: one thread with its own Python
// thread state runs an event loop (opt.Loop) and, unless opt.Lifespan is
// off, the lifespan startup, and returns once startup is over, so a
// server accepts only after it. A failed startup is a *StartupError.
// Then the executor takes jobs from src on its own thread (batch by
// batch, up to MaxInFlight at once; src's notification wakes it when it
// has run out), runs each as a task, and hands each to done when its
// response is final. done runs with the GIL held, and for a Driven
// executor on the caller's loop thread: it must not block, nor wait for
// anything that thread does (the loop's outbox). Stop ends it.
func (ip *Interpreter) StartASGI(app *App, opt ASGIOptions, src NotifySource, done Completer) (*ASGIExecutor, error) {
	if opt.URLScheme == "" {
		opt.URLScheme = "http"
	}
	if opt.MaxInFlight <= 0 {
		opt.MaxInFlight = DefaultMaxInFlight
	}
	opt.MaxInFlight = min(opt.MaxInFlight, C.M0_ASGI_MAX_SLOTS)
	if opt.Batch <= 0 {
		opt.Batch = 64
	}
	if opt.CancelTimeout <= 0 {
		opt.CancelTimeout = 5 * time.Second
	}
	if opt.Driven {
		if opt.Loop == LoopUvloop {
			return nil, errors.New("pybridge: a driven ASGI event loop is asyncio's, not uvloop")
		}
		opt.Loop = LoopAsyncio
	}
	if err := ip.handlerStarted(); err != nil {
		return nil, err
	}
	if len(opt.Mounted) >= C.M0_ASGI_MAX_APPS {
		return nil, fmt.Errorf("pybridge: more than %d ASGI apps on one executor", C.M0_ASGI_MAX_APPS)
	}
	ex := &ASGIExecutor{ip: ip, app: app, opt: opt, src: src, done: done,
		batch: make([]*Job, opt.Batch), started: make(chan error, 1), finished: make(chan struct{})}
	if err := ex.register(); err != nil {
		ip.handlerEnded()
		return nil, err
	}
	if rc := C.m0_wakefd_new(&ex.readFD, &ex.writeFD); rc < 0 {
		ex.unregister()
		ip.handlerEnded()
		return nil, fmt.Errorf("pybridge: the ASGI wake descriptor: errno %d", -rc)
	}
	ex.driven = opt.Driven
	go ex.run()
	if err := <-ex.started; err != nil {
		<-ex.finished
		ex.release()
		return nil, err
	}
	if ex.driven {
		// The loop thread takes from the source every pass.
		ex.watchStop = make(chan struct{})
		ex.ioTaken = make(chan struct{}, 1)
		return ex, nil
	}
	// The source calls the loop thread's notification; the first wake
	// takes what is queued already and arms it.
	src.SetNotify(ex.signal)
	ex.signal()
	return ex, nil
}

// handlerStarted counts a handler group (threads, an executor, an inline
// thread) that Close must wait for; it fails once Close has begun.
func (ip *Interpreter) handlerStarted() error {
	ip.mu.Lock()
	defer ip.mu.Unlock()
	if ip.closed {
		return errors.New("pybridge: interpreter closed")
	}
	ip.handlers++
	return nil
}

func (ip *Interpreter) handlerEnded() {
	ip.mu.Lock()
	ip.handlers--
	ip.mu.Unlock()
}

func (ex *ASGIExecutor) register() error {
	asgiExecutorsMu.Lock()
	defer asgiExecutorsMu.Unlock()
	for i := range asgiExecutors {
		if asgiExecutors[i] == nil {
			asgiExecutors[i] = ex
			ex.id = i
			return nil
		}
	}
	return fmt.Errorf("pybridge: more than %d ASGI executors", len(asgiExecutors))
}

func (ex *ASGIExecutor) unregister() {
	asgiExecutorsMu.Lock()
	asgiExecutors[ex.id] = nil
	asgiExecutorsMu.Unlock()
}

func (ex *ASGIExecutor) release() {
	ex.mu.Lock()
	ex.fdMu.Lock()
	ex.fdClosed = true
	ex.fdMu.Unlock()
	// The last wake resumed every op still out (abandonWaits): what came
	// since has nothing left to resume.
	ex.events = nil
	ex.mu.Unlock()
	C.m0_wakefd_close(ex.readFD, ex.writeFD)
	ex.unregister()
	ex.ip.handlerEnded()
}

// LoopName is the event loop the executor runs: "uvloop" or "asyncio".
func (ex *ASGIExecutor) LoopName() string { return ex.loop }

// run is the executor's thread: it holds the GIL except while the event
// loop waits.
func (ex *ASGIExecutor) run() {
	defer func() {
		if !ex.handedOver {
			close(ex.finished)
		}
	}()
	runtime.LockOSThread()
	defer threadsched.Unlock() // attach set SCHED_BATCH
	ex.tid = gettid()
	t, err := attach()
	if err != nil {
		ex.started <- err
		return
	}
	// A callback's panic, once the thread state is gone (defers run
	// last first). Not once a driven executor is handed over: its
	// callbacks then run on the loop thread, whose Step raises.
	defer func() {
		if !ex.handedOver {
			ex.raise()
		}
	}()
	defer t.detach()
	cs := []*C.char{C.CString(asgiPythonHalf), C.CString(ex.opt.Loop.String()),
		C.CString(ex.opt.Lifespan.String()), C.CString(ex.opt.ServerName), C.CString(ex.opt.URLScheme)}
	var cerr *C.char
	driven := C.int(0)
	if ex.driven {
		driven = 1
	}
	apps := ex.appTable()
	ex.c = C.m0_asgi_new(C.int(ex.id), &apps[0], C.int(len(apps)), cs[0], cs[1], cs[2], cs[3],
		C.int(ex.opt.ServerPort), cs[4], C.double(ex.opt.CancelTimeout.Seconds()), ex.readFD, driven, &cerr)
	for _, p := range cs {
		C.free(unsafe.Pointer(p))
	}
	if ex.c == nil {
		ex.started <- startError(ex.opt.Loop, takeText(cerr))
		return
	}
	cerr = C.m0_asgi_run(ex.c)
	if cerr != nil {
		ex.runErr = fmt.Errorf("pybridge: the ASGI event loop ended with an error:\n%s", takeText(cerr))
	}
	if ex.driven {
		// Startup is over and this thread is out of the loop: only now
		// may the loop thread run it.
		if ex.runErr == nil && ex.startErr == nil {
			ex.handedOver = true
			ex.started <- nil
			return // finish ends it (Stop)
		}
		if ex.startErr != nil {
			ex.started <- ex.startErr
		}
	}
	if ex.runErr != nil {
		select {
		case ex.started <- ex.runErr:
		default:
		}
	}
	C.m0_asgi_free(ex.c)
	ex.c = nil
}

// startedFrom is the Python half's word that startup is over.
func (ex *ASGIExecutor) startedFrom(errText *C.char, loop *C.char) {
	ex.loop = C.GoString(loop)
	var err error
	if errText != nil {
		err = &StartupError{Message: C.GoString(errText)}
	}
	if ex.driven {
		ex.startErr = err // run sends it once the loop has returned
		return
	}
	ex.started <- err
}

// signal wakes the executor's thread (from any thread): it writes the
// wake descriptor unless a write is pending already or the descriptor is
// closed.
func (ex *ASGIExecutor) signal() {
	if ex.signaled.Load() || !ex.signaled.CompareAndSwap(false, true) {
		return
	}
	if kick := ex.kick.Load(); kick != nil {
		(*kick)() // driven: the loop thread's next pass delivers
		return
	}
	ex.writeWake()
}

func (ex *ASGIExecutor) writeWake() {
	ex.fdMu.RLock()
	if !ex.fdClosed {
		C.m0_wakefd_signal(ex.writeFD)
	}
	ex.fdMu.RUnlock()
}

// post hands an event (a read or write that finished) to the executor's
// thread.
func (ex *ASGIExecutor) post(e asgiEvent) {
	ex.mu.Lock()
	if ex.fdClosed {
		ex.mu.Unlock()
		return
	}
	ex.events = append(ex.events, e)
	ex.mu.Unlock()
	ex.signal()
}

// abandonWaits is the last wake's: every op still waiting on the server
// (a read for Readable, a posted piece for Written) resumes as failed, as
// it would for a client that left, so no op outlives the executor's
// thread and every job goes back through C's settle while Python still
// runs. Without it a job whose task was cancelled mid-wait would go back
// only if its event came, after the thread had ended.
func (ex *ASGIExecutor) abandonWaits() {
	var waiting []*asgiSlot
	asgiSlotsMu.Lock()
	for _, s := range asgiSlots[:asgiSlotCount] {
		if s.ex == ex && (s.readWaits || s.writeWaits) {
			waiting = append(waiting, s)
		}
	}
	asgiSlotsMu.Unlock()
	for _, s := range waiting {
		// Each resume may free s, or settle the other wait's slot: look
		// again at each.
		if s.ex == ex && s.readWaits {
			s.readWaits = false
			ex.resumeRead(s, 0, errExecutorStopped)
		}
		if s.ex == ex {
			s.endWriteWait(true)
		}
	}
}

// wake runs on the executor's thread with the GIL held: deliver what
// finished, then take and spawn what the source has. It reports whether
// the executor is stopping. last: the Python half's final call, its
// tasks cancelled and the event loop about to close.
func (ex *ASGIExecutor) wake(last bool) bool {
	// Down after the drain: a signal that came between the two wrote
	// nothing, and what it signals (an event, a job) is looked for below;
	// a signal after this writes. Lowered before the drain, a signal in
	// between would leave it up with the descriptor drained: the next
	// signal would write nothing, and its event would wait forever.
	if ex.stepping {
		// Driven: nothing was written; lowered before the events are
		// read, so one posted after it raises it again.
		ex.signaled.Store(false)
	} else {
		C.m0_wakefd_drain(ex.readFD)
		ex.signaled.Store(false)
		// The executor's goroutine stays in one cgo call for its life:
		// only here can it pass through the scheduler
		// (threadsched.Yielder).
		ex.yielder.Maybe(time.Now().UnixNano())
	}
	ex.wakes.Add(1)
	ex.mu.Lock()
	events := ex.events
	ex.events = ex.eventsTo[:0]
	stopping := ex.stopping
	ex.mu.Unlock()
	for i := range events {
		ex.deliver(&events[i])
	}
	clear(events)
	ex.eventsTo = events[:0]
	if j := ex.held; j != nil {
		// Taken by Step to see whether there was work.
		ex.held = nil
		if stopping {
			C.m0_asgi_unavailable(j.Response.c)
			ex.complete(j)
		} else {
			ex.spawn(j)
		}
	}
	if stopping || last {
		ex.refuseQueued()
		if last {
			ex.abandonWaits()
		}
		return true
	}
	var cpu time.Duration
	measure := ex.measure.Load()
	if measure {
		cpu = callingThreadCPU()
	}
	ex.take()
	if measure {
		ex.spawnCPU += callingThreadCPU() - cpu
	}
	return false
}

// take spawns jobs from the source until it is empty, then arms its
// notification; or until MaxInFlight, when complete wakes it again. The
// executor's own thread takes (no feeder goroutine between the loop and
// it): at 16 connections on one core the feeder's futex sleep and the
// scheduler's hand-offs around it were 8% of the server's CPU.
func (ex *ASGIExecutor) take() {
	for {
		free := ex.opt.MaxInFlight - ex.inFlight
		if free <= 0 {
			ex.full = true
			return
		}
		want := min(free, len(ex.batch))
		n := ex.src.TryTake(ex.batch[:want])
		ex.inFlight += n
		for i, j := range ex.batch[:n] {
			ex.batch[i] = nil
			ex.spawn(j)
		}
		if n < want && ex.stepping {
			return // the loop thread looks again next pass
		}
		if n < want && (ex.src.Arm() || n == 0 && ex.src.Closed()) {
			return // armed; or closed and drained, with nothing to arm
		}
	}
}

// refuseQueued answers every job still queued with a 503: the executor is
// stopping.
func (ex *ASGIExecutor) refuseQueued() {
	for {
		n := ex.src.TryTake(ex.batch)
		if n == 0 {
			return
		}
		for i, j := range ex.batch[:n] {
			ex.batch[i] = nil
			C.m0_asgi_unavailable(j.Response.c)
			ex.done.Complete(j)
		}
	}
}

// complete hands a job back and makes room for another.
func (ex *ASGIExecutor) complete(j *Job) {
	ex.done.Complete(j)
	ex.inFlight--
	if ex.full {
		ex.full = false
		ex.signal()
	}
}

// spawn starts one job as a task.
func (ex *ASGIExecutor) spawn(j *Job) {
	s := newASGISlot(ex, j)
	if s == nil {
		C.m0_asgi_unavailable(j.Response.c)
		ex.complete(j)
		return
	}
	fillRequest(&ex.creq, j)
	r := &j.Request
	writer := 0
	if j.Writer != nil {
		writer = 1
	}
	// As in serve: every pointer passed points at memory holding no Go
	// pointer, and C copies what it keeps.
	C.m0_asgi_spawn(ex.c, C.int(ex.appIndex(j)), C.int(s.id), &ex.creq,
		(*C.char)(unsafe.Pointer(unsafe.SliceData(r.cHead()))),
		(*C.m0_field)(unsafe.Pointer(unsafe.SliceData(r.Fields))),
		(*C.char)(unsafe.Pointer(unsafe.SliceData(r.RemoteAddr))),
		j.Response.c, C.int(writer), &s.conn)
	// The task may have ended inside the call (an app that raised when
	// called, or one that answered in an eager first step): then the job
	// has gone back (j.slot is no longer s, which only this thread
	// changes) and is not the executor's to read.
	if j.slot != s {
		return
	}
	if s.port != nil {
		switch closed, inputEnded := s.port.ClientGoneAtStart(); {
		case closed:
			C.m0_asgi_client_gone(s.conn)
		case inputEnded:
			C.m0_asgi_input_ended(s.conn)
		}
	}
}

// Stop ends the executor: jobs it has not started end with a 503, the
// tasks still running are cancelled (their finally clauses run, for up
// to CancelTimeout; a response with nothing sent yet becomes a 503, one
// under way aborts), lifespan shutdown runs, and the thread ends; jobs
// still queued in the source then get a 503 too. Stop the producer
// first: nothing takes a job queued after Stop returns. Stop returns the error that ended the event loop, if one did.
func (ex *ASGIExecutor) Stop() error {
	ex.stopOnce.Do(func() {
		ex.mu.Lock()
		ex.stopping = true
		ex.mu.Unlock()
		if ex.handedOver {
			ex.finishDriven()
			return
		}
		ex.signaled.Store(true)
		ex.writeWake() // whatever signaled says: the stop must be seen
		<-ex.finished
		ex.release()
		// Jobs queued after the thread's last look.
		ex.refuseQueued()
	})
	return ex.runErr
}
