package server

import (
	"bufio"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/m0serve/m0serve/loop"
	"golang.org/x/sys/unix"
)

// A worker is one process of several that package supervisor's master
// started: the same binary, re-executed with these variables set and
// these files open as descriptors 3 to 5 (supervisor/spawn.go passes
// them to syscall.ForkExec; os/exec's ExtraFiles would make the
// listener blocking).
const (
	// WorkerSlotEnv holds the worker's slot number; its presence is what
	// makes the process a worker.
	WorkerSlotEnv = "M0_WORKER_SLOT"
	// WorkerMaxRequestsEnv holds the requests the worker serves before it
	// asks to be replaced (0: no limit); the master adds the jitter.
	WorkerMaxRequestsEnv = "M0_WORKER_MAX_REQUESTS"

	WorkerListenFD    = 3 // the listening socket, owned by the master
	WorkerControlFD   = 4 // one end of a socketpair: lines both ways
	WorkerHeartbeatFD = 5 // a file of HeartbeatSize bytes, mapped by both processes
)

// The control lines. A worker says ready once the app is imported, ASGI
// lifespan startup has completed and the loop is about to arm accept;
// limit once it has served its --max-requests and started draining. The
// master says drain (stop accepting, finish, exit: a replacement takes
// over the socket), stop (shut down as at a first SIGTERM) or reopen (the
// log files). It stops a ready worker with a line rather than SIGTERM:
// where the operator signals every process (systemd's default
// KillMode=control-group), the master's SIGTERM would be the worker's
// second, "exit now"; a booting worker, which reads no line yet, gets
// SIGTERM.
const (
	WorkerReady = "ready"
	WorkerLimit = "limit"
	// WorkerStuck: a request outlived --request-timeout; the worker has
	// started draining and wants a replacement.
	WorkerStuck  = "stuck"
	WorkerDrain  = "drain"
	WorkerStop   = "stop"
	WorkerReopen = "reopen"
	// WorkerBackend, then a space and the loop's backend description,
	// goes before ready: the master's metrics name the backend in use.
	WorkerBackend = "backend"
	// WorkerCapacity, then a space and a number, goes before ready from a
	// worker whose app serves that many requests at once (WSGI's handler
	// threads): the master steers new connections away from it while
	// that many have been in the app for a while.
	WorkerCapacity = "capacity"
	// WorkerStopping: the worker has begun its shutdown (a signal, or the
	// master gone) and accepts no more; a stopping master ends the
	// listening of a socket once every worker holding it has said so.
	WorkerStopping = "stopping"
)

// WorkerStats is the loop's Stats in a mapped heartbeat file
// (inflight.go has the layout).
func WorkerStats(mem []byte) *loop.Stats { return (*loop.Stats)(unsafe.Pointer(&mem[statsOffset])) }

// Worker is the worker side of the master's supervision. Its methods do
// nothing on a nil Worker (the single process of today).
type Worker struct {
	Slot        int
	MaxRequests int

	control   *os.File
	heartbeat *atomic.Int64
	inFlight  *inFlight   // in the heartbeat file (inflight.go)
	stats     *loop.Stats // in the heartbeat file
	appStats  *AppStats   // in the heartbeat file
	loop      *loop.Loop
	grace     time.Duration
	served    int  // on the loop thread
	stuck     bool // a request timed out (on the loop thread)
	cfg       *Config
	logf      func(string, ...any)

	// told gets, once, why the master wants the worker to shut down: it
	// stops (WorkerStop), or it is gone (its death signal or the end of
	// the control socket, whichever comes first). The stopper drains the
	// loop once, however many times and ways it is told.
	told     chan string
	toldOnce sync.Once
	attached atomic.Bool // attach has run: a stopper will read told
}

// WorkerFromEnv returns the Worker this process is, or nil when it was
// not started by a master.
func WorkerFromEnv() (*Worker, error) {
	slotText, ok := os.LookupEnv(WorkerSlotEnv)
	if !ok {
		return nil, nil
	}
	slot, err := strconv.Atoi(slotText)
	if err != nil {
		return nil, fmt.Errorf("%s=%q: not a slot number", WorkerSlotEnv, slotText)
	}
	limit, _ := strconv.Atoi(os.Getenv(WorkerMaxRequestsEnv))
	// Not for the app's subprocesses: they are not workers.
	os.Unsetenv(WorkerSlotEnv)
	os.Unsetenv(WorkerMaxRequestsEnv)
	for _, fd := range []int{WorkerListenFD, WorkerControlFD, WorkerHeartbeatFD} {
		unix.CloseOnExec(fd)
	}
	mem, err := unix.Mmap(WorkerHeartbeatFD, 0, HeartbeatSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("worker %d: mapping the heartbeat: %w", slot, err)
	}
	w := &Worker{
		Slot:        slot,
		MaxRequests: limit,
		control:     os.NewFile(WorkerControlFD, "control"),
		heartbeat:   (*atomic.Int64)(unsafe.Pointer(&mem[0])),
		inFlight:    &inFlight{mem: mem},
		stats:       WorkerStats(mem),
		appStats:    WorkerAppStats(mem),
		told:        make(chan string, 1),
	}
	if MasterGoneSignal != 0 {
		// From the start, before the app's import: unhandled, Go would
		// ignore a realtime signal.
		deaths := make(chan os.Signal, 1)
		signal.Notify(deaths, MasterGoneSignal)
		go func() {
			<-deaths
			w.masterGone()
		}()
	}
	return w, nil
}

// tell passes the master's word to the stopper, the first time only.
func (w *Worker) tell(why string) {
	w.toldOnce.Do(func() { w.told <- why })
}

// masterGone drains the worker once its master is gone, however many
// signals and which of them say so. A worker still booting has nothing to
// finish and nobody to serve for: it exits.
func (w *Worker) masterGone() {
	if !w.attached.Load() {
		fmt.Fprintf(os.Stderr, "m0serve: worker %d: the master is gone while booting: exiting\n", w.Slot)
		os.Exit(1)
	}
	w.tell("the master is gone")
}

// masterSays gets why the master wants the worker shut down; nil (never)
// in a single process.
func (w *Worker) masterSays() <-chan string {
	if w == nil {
		return nil
	}
	return w.told
}

// openListener opens the listening socket, or in a worker takes the one
// its master made.
func (c *Config) openListener() (Listener, error) {
	if c.Worker != nil {
		return c.Worker.listener()
	}
	return c.listen()
}

// listener returns the socket the master made, and what it is bound to.
func (w *Worker) listener() (Listener, error) {
	l, err := describeListener(WorkerListenFD)
	if err != nil {
		return Listener{}, fmt.Errorf("worker %d: the inherited listener: %w", w.Slot, err)
	}
	if err := unix.SetNonblock(WorkerListenFD, true); err != nil {
		return Listener{}, fmt.Errorf("worker %d: non-blocking listener: %w", w.Slot, err)
	}
	return l, nil
}

// handler counts requests for --max-requests on the loop thread: the one
// that reaches the limit is served, and the loop starts draining in the
// same pass, before it could accept another connection.
func (w *Worker) handler(next loop.Handler) loop.Handler {
	if w == nil || w.MaxRequests <= 0 {
		return next
	}
	return loop.HandlerFunc(func(req *loop.Request, rw *loop.ResponseWriter) {
		w.served++
		if w.served == w.MaxRequests {
			w.loop.Drain(w.grace)
			w.send(WorkerLimit)
		}
		next.ServeInline(req, rw)
	})
}

// requests is the worker's table of requests inside the app; nil in a
// single process.
func (w *Worker) requests() *inFlight {
	if w == nil {
		return nil
	}
	return w.inFlight
}

func (w *Worker) heartbeatStamp() *atomic.Int64 {
	if w == nil {
		return nil
	}
	return w.heartbeat
}

// started runs on the loop thread as accept is armed; backend is the
// loop's backend description, capacity the requests the app serves at
// once (0: not bounded by threads).
func (w *Worker) started(backend string, capacity int) {
	if w != nil {
		w.send(WorkerBackend + " " + backend)
		if capacity > 0 {
			w.send(WorkerCapacity + " " + strconv.Itoa(capacity))
		}
		w.send(WorkerReady)
	}
}

// stoppedAccepting runs once the loop has been told to shut down: it
// will not arm accept again.
func (w *Worker) stoppedAccepting() {
	if w != nil {
		w.send(WorkerStopping)
	}
}

func (w *Worker) send(line string) {
	// A master that is gone is seen by the reader (EOF); nothing to do
	// here about a failed write.
	w.control.Write([]byte(line + "\n"))
}

// attach hands the worker its loop and follows the master's lines until
// the control socket closes: a master that is gone (EOF) drains the
// worker, as its death signal does where there is one (masterGone).
func (w *Worker) attach(l *loop.Loop, cfg *Config, logf func(string, ...any)) {
	if w == nil {
		return
	}
	w.loop, w.grace, w.cfg, w.logf = l, cfg.GracefulTimeout, cfg, logf
	w.attached.Store(true)
	go w.follow()
}

func (w *Worker) follow() {
	lines := bufio.NewScanner(w.control)
	for lines.Scan() {
		switch lines.Text() {
		case WorkerDrain:
			w.logf("m0serve: draining: a new worker serves this slot (up to %v)", w.grace)
			w.loop.Drain(w.grace)
		case WorkerStop:
			w.tell("the master stops")
		case WorkerReopen:
			if err := ReopenLogFiles(w.cfg); err != nil {
				w.logf("m0serve: error: reopening log files: %v", err)
			}
		}
	}
	w.masterGone()
}

// stackDumpSignal makes faulthandler write Python's stacks (--request-
// timeout). The Go side neither uses it nor is notified of it.
const stackDumpSignal = unix.SIGUSR2

// watchStacks sets up the stack dump of --request-timeout, once Python
// runs: to fd 2, which is the error log.
func (w *Worker) watchStacks(cfg *Config, py *python) error {
	if w == nil || cfg.RequestTimeout <= 0 || py == nil {
		return nil
	}
	return py.interp.DumpStacksOn(stackDumpSignal, 2)
}

// requestTimedOut runs on the loop thread before the loop answers 504 to
// a job past --request-timeout. A Python thread cannot be stopped safely,
// so the worker is replaced: the first time, Python's stacks go to the
// log (the stuck request's among them), the worker stops accepting and
// asks the master for a replacement; the requests queued behind the stuck
// one time out too, without a second dump.
func (w *Worker) requestTimedOut(j *loop.Job) {
	req := &j.Request
	where := "in the app"
	if !j.Taken() {
		where = "queued"
	}
	w.logf("m0serve: error: %q from %v: %s for more than %v (--request-timeout): 504",
		string(req.Bytes(req.Method))+" "+string(req.Bytes(req.Target)), j.RemoteAddr, where, w.cfg.RequestTimeout)
	if w.stuck {
		return
	}
	w.stuck = true
	w.logf("m0serve: error: Python's threads follow; this worker is to be replaced")
	if err := dumpStacks(); err != nil {
		w.logf("m0serve: error: dumping Python's stacks: %v", err)
	}
	w.loop.Drain(w.grace)
	w.send(WorkerStuck)
}

// stuckInApp: a request timed out. Read on the loop's goroutine once its
// Run has returned.
func (w *Worker) stuckInApp() bool { return w != nil && w.stuck }

// requestTimeout is the loop's hook for --request-timeout, nil when off.
func (w *Worker) requestTimeout(cfg *Config) func(*loop.Job) {
	if w == nil || cfg.RequestTimeout <= 0 || cfg.App == "" {
		return nil
	}
	return w.requestTimedOut
}
