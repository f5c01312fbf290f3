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

	"github.com/m0serve/m0serve/internal/workerproto"
	"github.com/m0serve/m0serve/loop"
	"golang.org/x/sys/unix"
)

// A worker is one process of several that package supervisor's master
// started: the same binary, re-executed with workerproto's variables set
// and its descriptors open (package workerproto has the protocol).

// Worker is the worker side of the master's supervision. Its methods do
// nothing on a nil Worker (the single process of today).
type Worker struct {
	Slot        int
	MaxRequests int

	control   *os.File
	heartbeat *atomic.Int64
	inFlight  *workerproto.InFlight // in the heartbeat file
	stats     *loop.Stats           // in the heartbeat file
	appStats  *AppStats             // in the heartbeat file
	handoff   *handoff              // nil: no board (handoff.go)
	loop      *loop.Loop
	grace     time.Duration
	served    int  // on the loop thread
	stuck     bool // a request timed out (on the loop thread)
	cfg       *Config
	logf      func(string, ...any)

	// told gets, once, why the master wants the worker to shut down: it
	// stops (workerproto.Stop), or it is gone (its death signal or the end of
	// the control socket, whichever comes first). The stopper drains the
	// loop once, however many times and ways it is told.
	told     chan string
	toldOnce sync.Once
	attached atomic.Bool // attach has run: a stopper will read told
}

// WorkerFromEnv returns the Worker this process is, or nil when it was
// not started by a master.
func WorkerFromEnv() (*Worker, error) {
	slotText, ok := os.LookupEnv(workerproto.SlotEnv)
	if !ok {
		return nil, nil
	}
	slot, err := strconv.Atoi(slotText)
	if err != nil {
		return nil, fmt.Errorf("%s=%q: not a slot number", workerproto.SlotEnv, slotText)
	}
	limit, _ := strconv.Atoi(os.Getenv(workerproto.MaxRequestsEnv))
	// Not for the app's subprocesses: they are not workers.
	os.Unsetenv(workerproto.SlotEnv)
	os.Unsetenv(workerproto.MaxRequestsEnv)
	for _, fd := range []int{workerproto.ListenFD, workerproto.ControlFD, workerproto.HeartbeatFD} {
		unix.CloseOnExec(fd)
	}
	mem, err := unix.Mmap(workerproto.HeartbeatFD, 0, workerproto.HeartbeatSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("worker %d: mapping the heartbeat: %w", slot, err)
	}
	// First: the master reads nothing else before it has checked this.
	workerproto.WriteLayout(mem)
	handoff, err := handoffFromEnv(slot)
	if err != nil {
		return nil, err
	}
	w := &Worker{
		Slot:        slot,
		MaxRequests: limit,
		control:     os.NewFile(workerproto.ControlFD, "control"),
		heartbeat:   workerproto.Stamp(mem),
		inFlight:    workerproto.NewInFlight(mem),
		stats:       (*loop.Stats)(workerproto.LoopWords(mem)),
		appStats:    workerproto.AppStatsIn(mem),
		handoff:     handoff,
		told:        make(chan string, 1),
	}
	if workerproto.MasterGoneSignal != 0 {
		// From the start, before the app's import: unhandled, Go would
		// ignore a realtime signal.
		deaths := make(chan os.Signal, 1)
		signal.Notify(deaths, workerproto.MasterGoneSignal)
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
	l, err := describeListener(workerproto.ListenFD)
	if err != nil {
		return Listener{}, fmt.Errorf("worker %d: the inherited listener: %w", w.Slot, err)
	}
	if err := unix.SetNonblock(workerproto.ListenFD, true); err != nil {
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
			w.handoff.leave()
			w.loop.Drain(w.grace)
			w.send(workerproto.Limit)
		}
		next.ServeInline(req, rw)
	})
}

// requests is the worker's table of requests inside the app; nil in a
// single process.
func (w *Worker) requests() *workerproto.InFlight {
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
func (w *Worker) started(backend string, capacity int, handoffCapacity int) {
	if w != nil {
		if handoffCapacity >= 0 {
			w.handoff.join(w.loop, handoffCapacity)
		}
		w.send(workerproto.Backend + " " + backend)
		if capacity > 0 {
			w.send(workerproto.Capacity + " " + strconv.Itoa(capacity))
		}
		w.send(workerproto.Ready)
	}
}

// stoppedAccepting runs once the loop has been told to shut down: it
// will not arm accept again.
func (w *Worker) stoppedAccepting() {
	if w != nil {
		w.handoff.leave()
		w.send(workerproto.Stopping)
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
		case workerproto.Drain:
			w.logf("m0serve: draining: a new worker serves this slot (up to %v)", w.grace)
			w.handoff.leave()
			w.loop.Drain(w.grace)
		case workerproto.Stop:
			w.tell("the master stops")
		case workerproto.Reopen:
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
	w.handoff.leave()
	w.logf("m0serve: error: Python's threads follow; this worker is to be replaced")
	if err := dumpStacks(); err != nil {
		w.logf("m0serve: error: dumping Python's stacks: %v", err)
	}
	w.loop.Drain(w.grace)
	w.send(workerproto.Stuck)
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

// passOn is the loop's Config.PassOn (nil: keep every connection), for
// an app that serves capacity requests at once (0: not bounded).
func (w *Worker) passOn(capacity int) func(int, int) bool {
	if w == nil {
		return nil
	}
	return w.handoff.passOnHook(capacity)
}

// inApp is the board's count of requests inside the app (nil: none).
func (w *Worker) inApp() *atomic.Int32 {
	if w == nil {
		return nil
	}
	return w.handoff.inApp()
}

// passesOn: the worker has siblings to pass connections to.
func (w *Worker) passesOn() bool {
	return w != nil && w.handoff != nil && w.handoff.slots >= 2
}
