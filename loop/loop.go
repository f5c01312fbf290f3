package loop

import (
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/m0serve/m0serve/http1"
	"github.com/m0serve/m0serve/internal/threadsched"
	"github.com/m0serve/m0serve/ws"
	"golang.org/x/net/http2/hpack"
)

// Loop is one event loop: one locked OS thread that owns every socket, the
// slot table, parsing and encoding.
type Loop struct {
	cfg     Config
	backend Backend

	slots     []*slot // index 0 is unused: backends report accept and wake as slot 0
	freeSlots []uint32
	active    int
	// busy counts open connections with a request under way, from its
	// first byte until the connection waits for the next one with
	// nothing received (slot.busy): active less the idle ones, what
	// LimitConcurrency weighs.
	busy int

	accepting     bool // accept is armed (or being re-armed)
	acceptStopped bool // stopped at --max-connections or on accept errors
	// acceptStops counts StopAccept calls the backend has not answered
	// with OpAcceptStopped: until then a stopped accept may still bring a
	// connection, or hold the wake-up of one (Backend.StopAccept).
	acceptStops int
	// queueSwept: a gentle drain took what was left in the listener's
	// queue once its accept had ended (sweepAcceptQueue).
	queueSwept bool
	// acceptRetryAt is when accept is tried again after it failed for
	// lack of descriptors or memory (unix ns; 0: no retry due), and
	// acceptBackoff the wait before it, doubled per failure.
	acceptRetryAt int64
	acceptBackoff time.Duration

	// perIP counts open connections by client address (only with
	// Config.MaxConnectionsPerIP).
	perIP map[netip.Addr]int32
	// atLimit and perIPRefused throttle the log lines of both limits.
	atLimit, perIPRefused, sendTimeouts, slowBodies, overload, clientWaitsShed throttledLog
	// clientWaits counts handlers blocked on their clients (waitClient);
	// shedScratch is shedClientWaits' list, kept between ticks.
	clientWaits atomic.Int32
	shedScratch []*slot

	// completions is the batch Wait fills.
	completions [256]Completion
	// touched lists slots whose sends, receives or closes must be queued
	// at the end of the pass.
	touched []*slot

	// notes carries jobs with news from handler threads (and from the
	// loop thread itself, in a driven Step) to the loop.
	notes noteQueue[*Job]
	// wsNotes does the same for WebSocket connections (websocket_remote.go).
	wsNotes noteQueue[*WebSocketRemote]
	// tlsNotes does the same for TLS handshakes and the file bodies read
	// on goroutines: sealed ones (tls_file.go) and HTTP/2 ones
	// (http2_job.go); fileNotes says it is in use.
	tlsNotes  noteQueue[tlsNote]
	fileNotes bool
	// parked is set while the loop is about to wait or waiting: only then
	// does a handler thread pay for a Wake.
	parked atomic.Bool
	// holds are the held connections (hold.go); nil without Config.Realtime.
	holds *holds
	// heldJobs are deferred jobs the full JobQueue could not take yet.
	heldJobs []*Job
	freeJobs []*Job
	jobsOut  int // jobs taken and not yet released: deferred requests in flight
	// adopted holds the connections other processes passed here (Adopt).
	adopted adoptQueue
	// passReceives counts this pass's receive completions: about how
	// many requests it will dispatch (Request.PassReceives).
	passReceives int
	// otherQueues are the queues besides Config.Jobs handlers deferred to
	// (ResponseWriter.DeferTo): each is signalled at the end of a pass.
	otherQueues []*JobQueue

	buffers bufferPool

	request Request
	writer  ResponseWriter

	// WebSocket state shared by the loop's connections (websocket.go).
	wsRequest  ws.Request
	wsInflater *ws.Inflater
	wsDeflater *ws.Deflater

	// HTTP/2 scratch shared by the loop's connections (http2_job.go): a
	// head's fields as lines, then as the codec's list; a name in lower
	// case; interned field strings; an error's body.
	h2Block   []byte
	h2List    []hpack.HeaderField
	h2Lower   []byte
	h2Strings map[string]string
	h2Reason  []byte
	// h2Malformed throttles the log line of a malformed HTTP/2 request.
	h2Malformed throttledLog

	date     http1.DateCache
	defaults []defaultField // Config.Headers
	now      int64
	nextTick int64
	// stepDue is when Config.Stepper wants its next Step (unix ns); 0:
	// at no time of its own.
	stepDue int64

	started      atomic.Bool  // the backend exists: Shutdown may wake it
	exited       atomic.Bool  // Run returned: notes are no longer read
	wakeMu       sync.Mutex   // orders Wake from other threads before the backend's Close
	shutdown     atomic.Int64 // graceful deadline (unix ns) once requested
	draining     bool
	drainByNanos int64
	stopped      bool

	// gentle is set by Drain: keep-alive connections are kept until
	// their next request, which is answered with Connection: close.
	gentle atomic.Bool
	// gentleDrain is gentle as the loop thread saw it when draining began.
	gentleDrain bool

	yielder threadsched.Yielder
	// timeNow replaces the clock in tests (unix nanoseconds).
	timeNow func() int64
	// ackNow acknowledges what a socket received, now (quickAck; tests
	// record it).
	ackNow func(fd int)
}

// New checks cfg and returns a loop ready to Run.
func New(cfg Config) (*Loop, error) {
	if err := cfg.applyDefaults(); err != nil {
		return nil, err
	}
	defaults, err := encodeDefaults(cfg.Headers)
	if err != nil {
		return nil, err
	}
	l := &Loop{cfg: cfg, defaults: defaults, ackNow: quickAck}
	l.slots = make([]*slot, 1, min(cfg.MaxConnections, 1024)+1)
	// One note per live job at most (Job.queued). The rings hold what
	// HTTP/1.1 connections make (a job each, and jobs outliving their
	// slot); HTTP/2's streams may make more, which the queues' overflow
	// takes (noteQueue).
	l.notes.init(2*cfg.MaxConnections + 64)
	l.wsNotes.init(cfg.MaxConnections + 64)
	if cfg.TLS != nil || cfg.HTTP2 != nil {
		l.fileNotes = true
		l.tlsNotes.init(2*cfg.MaxConnections + 64)
	}
	l.buffers.init(recvBufferSize(cfg.Limits.MaxHeadBytes))
	l.writer.loop = l
	l.request.loop = l
	l.holds = newHolds(cfg.Realtime)
	return l, nil
}

// recvBufferSize leaves room after a maximal head for the next request's
// first bytes, so a head at the limit never fills the buffer.
func recvBufferSize(maxHead int) int {
	size := 16 << 10
	for size < maxHead+4096 {
		size <<= 1
	}
	return size
}

// Run creates the backend on a locked OS thread and serves until a
// graceful shutdown completes. It returns an error only when the backend
// cannot start or fails.
func (l *Loop) Run() error {
	runtime.LockOSThread()
	defer threadsched.Unlock() // not SCHED_BATCH for the thread's next goroutines
	// Best effort: without SCHED_BATCH the loop is as correct, and wakes
	// its handlers at the cost of more switches (threadsched says why).
	_ = threadsched.Batch()
	b, err := l.cfg.NewBackend()
	if err != nil {
		return err
	}
	l.backend = b
	l.started.Store(true)
	defer b.Close()
	if l.cfg.OnStart != nil {
		l.cfg.OnStart(b.Name())
	}
	if l.cfg.OnExit != nil {
		defer l.cfg.OnExit()
	}
	defer func() {
		l.wakeMu.Lock()
		l.exited.Store(true)
		l.wakeMu.Unlock()
		l.closeAdopted()
	}()
	l.start()
	for !l.stopped {
		if err := l.pass(); err != nil {
			return err
		}
	}
	return nil
}

func (l *Loop) start() {
	l.clock()
	l.date.Tick(time.Unix(0, l.now))
	l.nextTick = l.now + int64(time.Second)
	l.stampHeartbeat()
	l.backend.QueueAccept(l.cfg.ListenFD)
	l.accepting = true
}

func (l *Loop) stampHeartbeat() {
	if l.cfg.Heartbeat != nil {
		l.cfg.Heartbeat.Store(l.now)
	}
}

// wake calls the backend's Wake from another thread, unless Run has
// returned (the backend is closed, its eventfd number maybe reused).
func (l *Loop) wake() {
	l.wakeMu.Lock()
	if !l.exited.Load() {
		l.backend.Wake()
	}
	l.wakeMu.Unlock()
}

// enqueue puts a job with news in the loop's queue, without waiting;
// false means the loop has exited and nobody will read it (the job was
// aborted at shutdown).
func (l *Loop) enqueue(j *Job) bool {
	l.notes.push(j)
	return !l.exited.Load()
}

// Kick makes the loop run a pass soon, for news its Stepper has (see
// Stepper.Pending): it wakes the loop only if it is about to wait or
// waiting. Safe from any goroutine.
func (l *Loop) Kick() { l.kick() }

// kick wakes the loop if it is parked, for news enqueued before.
func (l *Loop) kick() {
	if l.parked.Load() && l.parked.CompareAndSwap(true, false) && !l.exited.Load() {
		l.wake()
	}
}

func (l *Loop) clock() {
	if l.timeNow != nil {
		l.now = l.timeNow()
		return
	}
	l.now = time.Now().UnixNano()
}
