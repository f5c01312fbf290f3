package pybridge

/*
#include "asgi.h"
*/
import "C"

import (
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// A driven executor (ASGIOptions.Driven) has no thread of its own once
// startup is over: the server's loop thread runs its asyncio loop one
// iteration per pass (Step), between its own I/O. A request is spawned
// as a task right after the pass that parsed it, and a response the app
// gives without suspending is written in that same pass: no eventfd, no
// thread to wake and none to wake the loop back. A streamed piece is
// posted to the loop job on the loop thread too (Port.Post), its send
// over at once, or resumed once the loop has sent a full outbox on.
// What other goroutines post (body news, a WebSocket message, a closed
// connection) raises signaled and kicks the loop (Loop.Kick), as a job's
// news does.
//
// The asyncio loop's own descriptors (the app's outgoing connections, its
// self-pipe for call_soon_threadsafe) are watched by a goroutine that
// polls the selector's epoll descriptor and kicks the loop when it is
// ready; the step then asks the selector, without waiting. Its timers
// become the loop's wait deadline. A slow coroutine holds the loop thread
// for its one step: I/O waits that long, as uvicorn's does.
type drivenState struct {
	driven     bool
	handedOver bool  // startup done; the loop thread may step it
	startErr   error // the startup's failure, sent once the loop returned

	// The loop thread's:
	kick     atomic.Pointer[func()] // Loop.Kick; nil before SetKick and once the loop has left
	loopT    *thread                // the loop thread's Python thread state
	stepping bool                   // entered: Step runs the loop
	failed   bool                   // entering failed: jobs get 503
	due      int64                  // the next timer (unix ns), 0 none
	held     *Job                   // taken by Step's look for work, not yet spawned
	// streamedHere: a task of this Step posted a response body piece with
	// room to spare: it may post the next one in another round.
	streamedHere bool

	// The watcher of the loop's descriptors.
	ioReady   atomic.Bool
	ioTaken   chan struct{}
	watchStop chan struct{}
	watching  chan struct{} // closed when the watcher has ended
}

// Driven reports whether the executor runs on the caller's loop thread.
func (ex *ASGIExecutor) Driven() bool { return ex.driven }

// SetKick gives a driven executor the function that wakes its loop
// thread (the server's Loop.Kick). Call it before the loop runs.
func (ex *ASGIExecutor) SetKick(kick func()) {
	ex.kick.Store(&kick)
}

// Pending reports news for Step posted from other goroutines (the
// loop.Stepper contract).
func (ex *ASGIExecutor) Pending() bool {
	return ex.signaled.Load() || ex.ioReady.Load()
}

// Step runs on the loop thread once per pass: it delivers what other
// goroutines finished, spawns the jobs queued in the pass, and runs one
// iteration of the event loop, holding the GIL only while there is
// something to do. It returns when the next Step is due (unix ns; at or
// before now: at once; 0: no time of its own).
func (ex *ASGIExecutor) Step(now int64) int64 {
	if !ex.stepping {
		if ex.failed || !ex.enter() {
			ex.refuseQueued()
			return 0
		}
	}
	io := ex.ioReady.Load()
	if !io && !ex.signaled.Load() && (ex.due == 0 || now < ex.due) && ex.take1() == 0 {
		return ex.due
	}
	ex.loopT.acquire()
	ex.streamedHere = false
	if ex.wake(false) {
		// Stopping is Stop's, after the loop has ended: nothing to do.
		ex.loopT.release()
		ex.raise()
		return 0
	}
	wait := float64(C.m0_asgi_step(ex.c, cbool(io), cbool(ex.due != 0 && now >= ex.due)))
	// A body piece posted with room ends its send at once; a task that
	// yields to the loop between pieces (anyio's checkpoints, a sleep(0))
	// gets another round here, not a pass later, so the pieces of a
	// streamed response meet in the outbox and leave in one send (a send
	// each, 16 per response in the stream row, was the kernel's time). A
	// post that fills the outbox waits for Written and ends it. Only for
	// pieces: a round for a read or a WebSocket message gathers nothing,
	// and only takes its resume out of the next pass's batch
	// (bench/README.md, "The stream gathered in one Step").
	for rounds := 1; ex.streamedHere && rounds < stepRounds; rounds++ {
		ex.streamedHere = false
		if ex.wake(false) {
			break
		}
		wait = float64(C.m0_asgi_step(ex.c, 0, 0))
	}
	ex.loopT.release()
	ex.raise() // a callback's panic, on the loop thread, out of Python
	if io {
		ex.ioReady.Store(false)
		select {
		case ex.ioTaken <- struct{}{}:
		default:
		}
	}
	switch {
	case wait < 0:
		ex.due = 0
	case wait == 0:
		ex.due = now
	default:
		ex.due = now + int64(wait*float64(time.Second))
	}
	return ex.due
}

// stepRounds bounds the event loop's iterations in one Step: the pass's
// I/O waits no longer than that for tasks that keep finishing their own
// ops.
const stepRounds = 32

// take1 takes one queued job, without the GIL, to learn whether there is
// work; wake spawns it first thing.
func (ex *ASGIExecutor) take1() int {
	if ex.full || ex.held != nil {
		return 0
	}
	if ex.src.TryTake(ex.batch[:1]) == 0 {
		return 0
	}
	ex.held, ex.batch[0] = ex.batch[0], nil
	ex.inFlight++
	return 1
}

func cbool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// enter attaches the loop thread to Python and makes the event loop its
// running one.
func (ex *ASGIExecutor) enter() bool {
	t, err := attach()
	if err != nil {
		ex.failed = true
		logLine("m0serve: error: the ASGI event loop cannot run on the I/O thread: %v; requests get 503", err)
		return false
	}
	fd := C.m0_asgi_enter(ex.c)
	if fd < 0 {
		t.detach()
		ex.failed = true
		logLine("m0serve: error: the ASGI event loop cannot run on the I/O thread; requests get 503")
		return false
	}
	t.release()
	ex.loopT, ex.stepping = t, true
	ex.watching = make(chan struct{})
	go ex.watch(int(fd))
	return true
}

// LeaveLoop runs on the loop thread as it ends (after the last Step): the
// event loop is no longer its, and what still runs in it is Stop's.
func (ex *ASGIExecutor) LeaveLoop() {
	ex.kick.Store(nil)
	if !ex.stepping {
		return
	}
	ex.stepping = false
	// The watcher ends on the wake descriptor, which the finishing loop
	// reads from here on.
	close(ex.watchStop)
	ex.writeWake()
	<-ex.watching
	ex.loopT.acquire()
	if ex.held != nil {
		j := ex.held
		ex.held = nil
		ex.spawn(j)
	}
	C.m0_asgi_leave(ex.c)
	ex.loopT.detach()
	ex.loopT = nil
	ex.raise()
}

// watch waits for the event loop's selector (an epoll or kqueue
// descriptor, readable while it has events) and kicks the loop thread,
// then waits for the step that looked before it polls again: a
// descriptor that stays ready is not reported twice.
func (ex *ASGIExecutor) watch(selectorFD int) {
	defer close(ex.watching)
	fds := []unix.PollFd{
		{Fd: int32(selectorFD), Events: unix.POLLIN},
		{Fd: int32(ex.readFD), Events: unix.POLLIN},
	}
	for {
		_, err := unix.Poll(fds, -1)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			logLine("m0serve: error: watching the ASGI event loop's descriptors: %v", err)
			return
		}
		if fds[1].Revents != 0 {
			return // LeaveLoop
		}
		if fds[0].Revents == 0 {
			continue
		}
		ex.ioReady.Store(true)
		if kick := ex.kick.Load(); kick != nil {
			(*kick)()
		}
		select {
		case <-ex.ioTaken:
		case <-ex.watchStop:
			return
		}
	}
}

// finishDriven is Stop for a driven executor, after the loop thread has
// left: a thread of its own cancels what runs, runs lifespan shutdown and
// closes the loop, with the wake descriptor as the executor's.
func (ex *ASGIExecutor) finishDriven() {
	ex.signaled.Store(true)
	go func() {
		defer close(ex.finished)
		runtime.LockOSThread() // ends with the goroutine
		t, err := attach()
		if err != nil {
			ex.runErr = fmt.Errorf("pybridge: stopping the ASGI event loop: %w", err)
			return
		}
		if cerr := C.m0_asgi_finish(ex.c); cerr != nil {
			ex.runErr = fmt.Errorf("pybridge: the ASGI event loop ended with an error:\n%s", takeText(cerr))
		}
		C.m0_asgi_free(ex.c)
		ex.c = nil
		t.detach()
		ex.raise()
	}()
	<-ex.finished
	ex.release()
	ex.refuseQueued()
}

// postOwn posts an event from the thread that runs the event loop (a
// callback's): the loop thread of a driven executor needs nothing woken
// (postHere); the executor's own thread signals its descriptor, read at
// its next turn.
func (ex *ASGIExecutor) postOwn(e asgiEvent) {
	if ex.stepping {
		ex.postHere(e)
		return
	}
	ex.post(e)
}

// postHere is post from the loop thread itself: the pass's Pending sees
// the flag, and nothing needs waking.
func (ex *ASGIExecutor) postHere(e asgiEvent) {
	ex.mu.Lock()
	ex.events = append(ex.events, e)
	ex.mu.Unlock()
	ex.signaled.Store(true)
}

// logLine is a line through the server's logger (SetLog), or stderr.
func logLine(format string, args ...any) {
	if f := logf.Load(); f != nil {
		(*f)(format, args...)
		return
	}
	fmt.Fprintf(os.Stderr, format+"\n", args...)
}
