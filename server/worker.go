package server

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/m0serve/m0serve/loop"
	"golang.org/x/sys/unix"
)

// A worker is one process of several that package supervisor's master
// started: the same binary, re-executed with these variables set and
// these files open (exec.Cmd.ExtraFiles start at descriptor 3).
const (
	// WorkerSlotEnv holds the worker's slot number; its presence is what
	// makes the process a worker.
	WorkerSlotEnv = "M0_WORKER_SLOT"
	// WorkerMaxRequestsEnv holds the requests the worker serves before it
	// asks to be replaced (0: no limit); the master adds the jitter.
	WorkerMaxRequestsEnv = "M0_WORKER_MAX_REQUESTS"

	WorkerListenFD    = 3 // the listening socket, owned by the master
	WorkerControlFD   = 4 // one end of a socketpair: lines both ways
	WorkerHeartbeatFD = 5 // a file of 8 bytes, mapped by both processes
)

// The control lines. A worker says ready once the app is imported, ASGI
// lifespan startup has completed and the loop is about to arm accept;
// limit once it has served its --max-requests and started draining. The
// master says drain (stop accepting, finish, exit: a replacement takes
// over the socket) or reopen (the log files); it stops a worker with
// SIGTERM, as a single process is stopped.
const (
	WorkerReady  = "ready"
	WorkerLimit  = "limit"
	WorkerDrain  = "drain"
	WorkerReopen = "reopen"
)

// HeartbeatSize is the size of the heartbeat file: one int64, the unix
// nanoseconds the worker's loop last stamped, then the loop's Stats
// (WorkerStats) for the master's metrics.
const HeartbeatSize = 8 + int(unsafe.Sizeof(loop.Stats{}))

// WorkerStats is the loop's Stats in a mapped heartbeat file.
func WorkerStats(mem []byte) *loop.Stats { return (*loop.Stats)(unsafe.Pointer(&mem[8])) }

// Worker is the worker side of the master's supervision. Its methods do
// nothing on a nil Worker (the single process of today).
type Worker struct {
	Slot        int
	MaxRequests int

	control   *os.File
	heartbeat *atomic.Int64
	stats     *loop.Stats
	loop      *loop.Loop
	grace     time.Duration
	served    int // on the loop thread
	cfg       *Config
	logf      func(string, ...any)
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
	return &Worker{
		Slot:        slot,
		MaxRequests: limit,
		control:     os.NewFile(WorkerControlFD, "control"),
		heartbeat:   (*atomic.Int64)(unsafe.Pointer(&mem[0])),
		stats:       WorkerStats(mem),
	}, nil
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

func (w *Worker) loopStats() *loop.Stats {
	if w == nil {
		return nil
	}
	return w.stats
}

func (w *Worker) heartbeatStamp() *atomic.Int64 {
	if w == nil {
		return nil
	}
	return w.heartbeat
}

// started runs on the loop thread as accept is armed.
func (w *Worker) started() {
	if w != nil {
		w.send(WorkerReady)
	}
}

func (w *Worker) send(line string) {
	// A master that is gone is seen by the reader (EOF); nothing to do
	// here about a failed write.
	w.control.Write([]byte(line + "\n"))
}

// attach hands the worker its loop and follows the master's lines until
// the control socket closes: a master that is gone (EOF) stops the
// worker, as its death signal does where there is one.
func (w *Worker) attach(l *loop.Loop, cfg *Config, logf func(string, ...any)) {
	if w == nil {
		return
	}
	w.loop, w.grace, w.cfg, w.logf = l, cfg.GracefulTimeout, cfg, logf
	go w.follow()
}

func (w *Worker) follow() {
	lines := bufio.NewScanner(w.control)
	for lines.Scan() {
		switch lines.Text() {
		case WorkerDrain:
			w.logf("m0serve: draining: a new worker serves this slot (up to %v)", w.grace)
			w.loop.Drain(w.grace)
		case WorkerReopen:
			if err := ReopenLogFiles(w.cfg); err != nil {
				w.logf("m0serve: error: reopening log files: %v", err)
			}
		}
	}
	w.logf("m0serve: the master is gone: draining")
	w.loop.Shutdown(w.grace)
}
