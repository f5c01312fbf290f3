package loop

import (
	"errors"
	"fmt"
	"net/netip"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/m0serve/m0serve/http1"
	"github.com/m0serve/m0serve/internal/threadsched"
	"github.com/m0serve/m0serve/ws"
	"golang.org/x/net/http2/hpack"
	"golang.org/x/sys/unix"
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

// Shutdown asks the loop to drain: stop accepting, finish requests in
// flight, close idle connections, and return from Run once every
// connection is closed or grace has passed. Safe from any goroutine.
// A later call with a sooner deadline brings it forward (a second
// SIGTERM: stop now).
func (l *Loop) Shutdown(grace time.Duration) {
	now := time.Now().UnixNano()
	if l.timeNow != nil {
		now = l.timeNow()
	}
	deadline := now + int64(grace)
	for {
		current := l.shutdown.Load()
		if current != 0 && current <= deadline {
			return
		}
		if l.shutdown.CompareAndSwap(current, deadline) {
			break
		}
	}
	if l.started.Load() {
		l.wake()
	}
}

// Drain is Shutdown for a worker being replaced while its listening
// socket lives on in another process: stop accepting (what is queued in
// the socket stays there for the replacement), answer each keep-alive
// connection's next request with Connection: close instead of closing it
// idle (its client may be sending that request right now), accept what
// was already accepted, and return from Run once every connection is
// closed or grace has passed.
func (l *Loop) Drain(grace time.Duration) {
	l.gentle.Store(true)
	l.Shutdown(grace)
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

// pass is one turn of the loop: submit and wait in one backend call,
// handle the batch, then queue one send per slot with output.
func (l *Loop) pass() error {
	timeout := time.Duration(l.nextTick - l.now)
	if l.draining {
		// Wake at the drain deadline itself, not at the next tick: the
		// graceful budget is the operator's. Past it, the next wake is
		// when drain gives up on closes that never completed.
		wakeAt := l.drainByNanos
		if l.now >= wakeAt {
			wakeAt += int64(closeGiveUp)
		}
		timeout = min(timeout, time.Duration(wakeAt-l.now))
	}
	if l.stepDue != 0 {
		timeout = min(timeout, time.Duration(l.stepDue-l.now))
	}
	if l.acceptRetryAt != 0 {
		timeout = min(timeout, time.Duration(l.acceptRetryAt-l.now))
	}
	if timeout < 0 {
		timeout = 0
	}
	if timeout > 0 {
		l.parked.Store(true)
		// A note posted before the flag was up found it down and did not
		// wake us: look once more now that it is up.
		if !l.notes.empty() || !l.wsNotes.empty() || l.fileNotes && !l.tlsNotes.empty() || l.shutdown.Load() != 0 && !l.draining ||
			l.adopted.pending.Load() ||
			l.cfg.Stepper != nil && l.cfg.Stepper.Pending() || l.holdNews() {
			timeout = 0
		}
	}
	n, err := l.backend.Wait(l.completions[:], timeout)
	l.parked.Store(false)
	if err != nil && !errors.Is(err, syscall.EINTR) {
		return fmt.Errorf("loop: wait: %w", err)
	}
	l.clock()
	l.yielder.Maybe(l.now) // threadsched.Yielder says why
	l.passReceives = 0
	for i := 0; i < n; i++ {
		if l.completions[i].Op == OpRecv {
			l.passReceives++
		}
	}
	for i := 0; i < n; i++ {
		l.handle(&l.completions[i])
		l.completions[i].Data = nil
	}
	if l.adopted.pending.Load() {
		l.adoptPassed()
	}
	// Before the Step: a handshake that ended on its goroutine brings the
	// request its client sent with the last flight, and the Step must see
	// that job in this pass (after it, nothing woke the loop until the
	// next tick: TLS requests to a driven ASGI app waited up to 1 s).
	if l.fileNotes {
		l.drainTLSNotes()
	}
	if l.cfg.Stepper != nil {
		l.stepDue = l.cfg.Stepper.Step(l.now)
	}
	l.drainNotes()
	l.drainWebSocketNotes()
	l.serveHolds()
	l.pushHeldJobs()
	if l.acceptRetryAt != 0 && l.now >= l.acceptRetryAt {
		l.acceptRetryAt = 0
		l.resumeAccept()
	}
	if l.now >= l.nextTick {
		l.tick()
	}
	if deadline := l.shutdown.Load(); deadline != 0 {
		l.drain(deadline)
	}
	l.flush()
	if l.cfg.OnPassEnd != nil {
		l.cfg.OnPassEnd()
	}
	if st := l.cfg.Stats; st != nil {
		st.gauges(l.active, l.jobsOut)
	}
	// Last, with no job's lock held: a handler woken on this core may
	// preempt the loop at once, and finding a job's lock held by the
	// preempted loop it would park in the Go scheduler (a locked thread's
	// hand-off: two more switches and a futex pair).
	if l.cfg.Jobs != nil {
		l.cfg.Jobs.signal()
	}
	for _, q := range l.otherQueues {
		q.signal()
	}
	// Not before the stopped accept has ended: a connection it accepted
	// meanwhile is served (closed, in a Shutdown), not left in the backend.
	if l.draining && l.active == 0 && l.acceptStops == 0 && !l.adopted.pending.Load() {
		l.stopped = true
	}
	return nil
}

func (l *Loop) handle(c *Completion) {
	switch c.Op {
	case OpAccept:
		l.onAccept(c)
	case OpWake:
		// Notes are drained after every batch.
	case OpAcceptStopped:
		if l.acceptStops > 0 {
			l.acceptStops--
		}
	default:
		if c.Slot == 0 || int(c.Slot) >= len(l.slots) {
			return
		}
		s := l.slots[c.Slot]
		if s == nil || !s.open || s.gen != c.Gen {
			return // a completion for an earlier connection in this slot
		}
		switch c.Op {
		case OpRecv:
			l.onRecv(s, c)
		case OpSend:
			l.onSend(s, c)
		case OpClose:
			s.closed = true
			l.maybeFree(s)
		}
	}
}

func (l *Loop) onAccept(c *Completion) {
	if !c.More {
		l.accepting = false
	}
	if c.Res < 0 {
		errno := syscall.Errno(-c.Res)
		if errno == syscall.EMFILE || errno == syscall.ENFILE || errno == syscall.ENOBUFS || errno == syscall.ENOMEM {
			l.pauseAccept(errno)
			return
		}
		if !l.accepting && !l.acceptStopped && !l.draining {
			l.backend.QueueAccept(l.cfg.ListenFD)
			l.accepting = true
		}
		return
	}
	fd := int(c.Res)
	if l.acceptBackoff != 0 {
		l.acceptBackoff, l.acceptRetryAt = 0, 0
		l.cfg.Logf("m0serve: accepting connections again")
	}
	if l.draining && !l.gentleDrain {
		unix.Close(fd)
		return
	}
	if l.cfg.PassOn != nil && l.cfg.PassOn(fd, l.jobsOut) {
		l.rearmAccept()
		return
	}
	if !l.open(fd) {
		l.rearmAccept()
		return
	}
	l.acceptOrPause()
}

// open makes an accepted (or adopted) connection a slot, unless the
// client's address is over its limit.
func (l *Loop) open(fd int) bool {
	var peer netip.AddrPort
	var counted bool
	if l.cfg.MaxConnectionsPerIP > 0 {
		var admitted bool
		if peer, counted, admitted = l.admitPerIP(fd); !admitted {
			return false
		}
	}
	// Responses leave in one send each; Nagle would only hold one back
	// behind the previous one's ACK (measured: +5% and a lower p50).
	unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	s := l.newSlot(fd)
	if l.cfg.TLS != nil {
		l.newTLS(s)
	}
	if counted {
		s.remote, s.remoteKnown, s.countedPerIP = peer, true, true
	}
	s.deadline, s.deadlineKind = l.now+int64(l.cfg.HeaderTimeout), deadlineHeader
	s.recvWanted = true
	l.touch(s)
	return true
}

// acceptOrPause arms the next accept, or stops accepting at
// --max-connections.
func (l *Loop) acceptOrPause() {
	if l.active >= l.cfg.MaxConnections {
		if n, ok := l.atLimit.allow(l.now); ok {
			l.cfg.Logf("m0serve: %d connections open, the --max-connections limit: new connections wait in the listen backlog (hit %d times since the last report)", l.active, n)
		}
		l.stopAccept()
	} else {
		l.rearmAccept()
	}
}

// rearmAccept queues the next accept unless one is armed or accepting is
// stopped.
func (l *Loop) rearmAccept() {
	if !l.accepting && !l.acceptStopped {
		l.backend.QueueAccept(l.cfg.ListenFD)
		l.accepting = true
	}
}

func (l *Loop) stopAccept() {
	if l.accepting {
		l.backend.StopAccept()
		l.acceptStops++
		l.accepting = false
	}
	l.acceptStopped = true
}

// Accept's retry after running out of descriptors or memory: what
// net/http's Server.Serve waits, 5 ms doubling up to 1 s.
const (
	acceptRetryFirst = 5 * time.Millisecond
	acceptRetryMax   = time.Second
)

// pauseAccept stops accepting after errno (EMFILE and its kind): retrying
// at once would spin. Accept resumes when one of the loop's connections
// closes or on a timer, whichever comes first: the descriptors may be
// held elsewhere (the app's threads, a database pool), and a loop that
// waited only for its own connections could stay deaf for good. One line
// when it starts failing, one when it accepts again.
func (l *Loop) pauseAccept(errno syscall.Errno) {
	if l.acceptBackoff == 0 {
		l.acceptBackoff = acceptRetryFirst
		l.cfg.Logf("m0serve: accept: %v; accepting pauses, retried from every %v up to every %v until it succeeds", errno, acceptRetryFirst, acceptRetryMax)
	} else {
		l.acceptBackoff = min(2*l.acceptBackoff, acceptRetryMax)
	}
	l.acceptRetryAt = l.now + int64(l.acceptBackoff)
	l.stopAccept()
}

func (l *Loop) resumeAccept() {
	if l.acceptStopped && !l.draining && l.active < l.cfg.MaxConnections {
		l.acceptStopped = false
		l.backend.QueueAccept(l.cfg.ListenFD)
		l.accepting = true
	}
}

// newSlot takes a free slot (or grows the table: slots are allocated on
// first use, never for every possible connection).
func (l *Loop) newSlot(fd int) *slot {
	var s *slot
	if n := len(l.freeSlots); n > 0 {
		s = l.slots[l.freeSlots[n-1]]
		l.freeSlots = l.freeSlots[:n-1]
	} else {
		s = &slot{index: uint32(len(l.slots))}
		s.parser.Limits = l.cfg.Limits
		// A chunk size past the limit is refused on sight (consumeBody);
		// a negative MaxBodySize is no limit, the decoder's 0.
		s.chunked.MaxBodyBytes = max(l.cfg.MaxBodySize, 0)
		l.slots = append(l.slots, s)
	}
	s.fd, s.open = fd, true
	s.state = stateHead
	s.keepAlive = true
	l.active++
	return s
}

// maybeFree recycles a closed slot once nothing of the backend's refers to
// its buffers any more (backend.go: ownership).
func (l *Loop) maybeFree(s *slot) {
	if !s.closed || s.recvPending || s.sending {
		return
	}
	l.buffers.putRecv(s.recv)
	l.buffers.putSend(s.send)
	if s.countedPerIP {
		l.releasePerIP(s.remote.Addr())
	}
	l.setIdle(s)
	gen := s.gen + 1
	index := s.index
	limits := s.parser.Limits
	req, chunked := s.req, s.chunked
	// The parsed request's spans point into the receive buffer just
	// given back (or dropped): a free slot must not hold it, or every slot
	// a peak of connections left behind pins a buffer for good.
	req.Rebase(nil)
	*s = slot{index: index, gen: gen}
	s.parser.Limits = limits
	s.req = req
	s.chunked = chunked
	l.freeSlots = append(l.freeSlots, index)
	l.active--
	l.resumeAccept()
}

// touch puts s on the list flushed at the end of the pass.
func (l *Loop) touch(s *slot) {
	if !s.touched {
		s.touched = true
		l.touched = append(l.touched, s)
	}
}

// flush queues, per touched slot, at most one send carrying every response
// it has ready, the receive it is waiting for, or its close.
func (l *Loop) flush() {
	for i, s := range l.touched {
		l.touched[i] = nil
		s.touched = false
		if !s.open || s.closing {
			continue
		}
		if s.tls != nil && !s.sending {
			l.sendSealed(s)
		} else if len(s.send) > 0 && !s.sending {
			s.sending = true
			l.sendQueued(s)
			l.backend.QueueSend(s.fd, s.index, s.gen, s.send)
		}
		if s.closeAfter && !s.sending && s.tls != nil && l.closeNotify(s) {
			continue // the close follows the alert's send
		}
		if s.closeAfter && !s.sending {
			if s.linger && !s.peerEOF {
				l.lingerClose(s)
			} else {
				l.closeSlot(s)
			}
			continue
		}
		if s.recvWanted && !s.recvPending && !s.peerEOF && !s.closeAfter {
			l.queueRecv(s)
		}
		// An HTTP/2 slot keeps its buffer, sized for a whole frame.
		if !s.recvOwnBuf && s.recv != nil && s.recvStart == s.recvEnd && s.provided == nil && s.h2 == nil {
			l.buffers.putRecv(s.recv)
			s.recv, s.recvStart, s.recvEnd = nil, 0, 0
		}
	}
	l.touched = l.touched[:0]
}

func (l *Loop) queueRecv(s *slot) {
	s.recvWanted = false
	if s.recv == nil {
		s.recv = l.buffers.getRecv()
	}
	if s.recvStart == s.recvEnd {
		s.recvStart, s.recvEnd = 0, 0
	} else if s.recvEnd == len(s.recv) && s.recvStart > 0 {
		// Keep the parser's view: the same bytes from the request's start.
		n := copy(s.recv, s.recv[s.recvStart:s.recvEnd])
		s.recvStart, s.recvEnd = 0, n
	}
	if s.tls != nil && !s.lingering {
		if buf := l.tlsRecvBuffer(s); buf != nil {
			s.recvPending = true
			l.backend.QueueRecv(s.fd, s.index, s.gen, buf)
		}
		return
	}
	if s.recvEnd == len(s.recv) {
		// Full of bytes nobody can take yet (a handler behind on its
		// body): wait until some are consumed.
		return
	}
	s.recvPending, s.recvOwnBuf = true, true
	l.backend.QueueRecv(s.fd, s.index, s.gen, s.recv[s.recvEnd:])
}

func (l *Loop) onRecv(s *slot, c *Completion) {
	pausing := s.recvPausing
	if !c.More {
		s.recvPending, s.recvOwnBuf, s.recvPausing = false, false, false
	} else if c.Provided {
		// An armed receive that delivers in backend buffers never writes
		// the one it was queued with: an idle connection need not hold it.
		s.recvOwnBuf = false
	}
	if s.closing {
		l.maybeFree(s)
		return
	}
	if s.lingering {
		switch {
		case c.Res == 0 || c.Res < 0 && c.Res != -int32(syscall.ENOBUFS):
			l.closeSlot(s)
		default:
			// Drop what the client still sends after the error response.
			s.recvStart, s.recvEnd = 0, 0
			l.touch(s)
		}
		return
	}
	switch {
	case c.Res == -int32(syscall.ENOBUFS):
		// The provided-buffer ring ran dry; ask again.
		s.recvWanted = true
		l.touch(s)
		return
	case c.Res == -int32(syscall.ECANCELED) && pausing:
		// Paused for back-pressure: a new receive is queued once the
		// handler has taken what is buffered (recvWanted).
		l.touch(s)
		return
	case c.Res < 0:
		l.closeSlot(s)
		return
	case c.Res == 0:
		s.peerEOF = true
		if s.tls != nil && !s.tlsReady {
			l.closeSlot(s)
			return
		}
		if s.job != nil {
			l.jobPeerEOF(s.job)
		}
	case s.tls != nil:
		var data []byte
		if c.Provided {
			data = c.Data[:c.Res]
		}
		if s.deadlineKind == deadlineBody {
			s.deadline = l.now + int64(l.cfg.BodyTimeout)
		}
		// The idle deadline turns into the header one once a record
		// opens into the input (readHead), not at a bare record.
		if !l.tlsReceived(s, data, int(c.Res)) {
			l.touch(s)
			return
		}
	default:
		n := int(c.Res)
		if c.Provided {
			if s.recvStart == s.recvEnd {
				// Parse in place; what is left over is copied below,
				// before the backend reuses its buffer at the next Wait.
				s.provided = c.Data[:n]
			} else {
				l.appendRecv(s, c.Data[:n])
			}
		} else {
			s.recvEnd += n
		}
		l.setBusy(s)
		if s.deadlineKind == deadlineIdle {
			s.deadline, s.deadlineKind = l.now+int64(l.cfg.HeaderTimeout), deadlineHeader
		} else if s.deadlineKind == deadlineBody {
			s.deadline = l.now + int64(l.cfg.BodyTimeout)
		}
	}
	l.advance(s)
	if len(s.provided) > 0 {
		rest := s.provided
		s.provided = nil
		l.appendRecv(s, rest)
	}
	s.provided = nil
	l.touch(s)
}

// appendRecv copies bytes delivered in a backend buffer into the slot's
// own receive buffer, growing it if a handler is behind on its body.
func (l *Loop) appendRecv(s *slot, data []byte) {
	if s.recv == nil {
		s.recv = l.buffers.getRecv()
	}
	if s.recvStart == s.recvEnd {
		s.recvStart, s.recvEnd = 0, 0
	}
	if len(s.recv)-s.recvEnd < len(data) && s.recvStart > 0 {
		n := copy(s.recv, s.recv[s.recvStart:s.recvEnd])
		s.recvStart, s.recvEnd = 0, n
	}
	if len(s.recv)-s.recvEnd < len(data) {
		grown := make([]byte, max(2*len(s.recv), s.recvEnd+len(data)))
		copy(grown, s.recv[:s.recvEnd])
		l.buffers.putRecv(s.recv)
		s.recv = grown
	}
	s.recvEnd += copy(s.recv[s.recvEnd:], data)
	l.pauseRecvIfFull(s)
}

func (l *Loop) onSend(s *slot, c *Completion) {
	s.sending = false
	s.tlsSent()
	if s.closing {
		l.maybeFree(s)
		return
	}
	if c.Res < 0 {
		// The client went away mid-response (EPIPE, ECONNRESET).
		l.closeSlot(s)
		return
	}
	s.send = s.send[:0]
	if s.ws != nil {
		l.wsSent(s)
	}
	if s.closeAfter {
		l.touch(s)
		return
	}
	l.advance(s)
	if len(s.send) == 0 && s.state == stateHead {
		l.buffers.putSend(s.send)
		s.send = nil
		if s.tls != nil {
			s.tls.Idle()
		}
	}
	l.touch(s)
}

// lingerTime bounds how long a connection closed after an error response
// keeps draining what its client still sends.
const lingerTime = 2 * time.Second

// lingerClose closes a connection after an error response without
// losing that response: closing a socket with unread input makes the
// kernel send RST, and a client still sending (a body over the limit,
// pipelined requests after a bad one) may then see the reset instead of
// the status. So: shut down our side, read and drop until the client's
// EOF or lingerTime, then close (as nginx's lingering_close does).
func (l *Loop) lingerClose(s *slot) {
	if !s.lingering {
		s.lingering = true
		unix.Shutdown(s.fd, unix.SHUT_WR)
		s.deadline, s.deadlineKind = l.now+int64(lingerTime), deadlineLinger
		s.recvStart, s.recvEnd = 0, 0
	}
	if !s.recvPending {
		l.queueRecv(s)
	}
}

// closeSlot cancels what is pending on the connection and closes it; the
// slot is recycled at OpClose once its pending operations completed.
func (l *Loop) closeSlot(s *slot) {
	if s.closing {
		return
	}
	s.closing = true
	s.deadline, s.deadlineKind = 0, deadlineNone
	s.closeTLS()
	l.closeHTTP2(s)
	if s.hold != nil {
		l.unhold(s)
	}
	if s.ws != nil {
		l.wsEnd(s.ws, ws.CloseAbnormal, nil)
	}
	if j := s.job; j != nil {
		s.job = nil
		l.detachJob(j, ErrAborted)
	}
	l.backend.QueueClose(s.fd, s.index, s.gen)
}

// tick runs once a second: the Date value and the deadline sweep. No timer
// syscall per request: each slot only stamps a deadline (a timerfd re-arm
// per request would cost a syscall each).
func (l *Loop) tick() {
	l.date.Tick(time.Unix(0, l.now))
	l.nextTick = l.now + int64(time.Second)
	l.stampHeartbeat()
	if l.cfg.RequestTimeout > 0 {
		l.timeOutJobs()
	}
	if limit := l.cfg.ClientWaitLimit; limit > 0 && int(l.clientWaits.Load()) >= limit {
		l.shedClientWaits()
	}
	if l.buffers.trim() {
		// Off the loop thread: it collects garbage and returns the
		// dropped buffers' pages at once, rather than minutes later.
		go debug.FreeOSMemory()
	}
	for _, s := range l.slots[1:] {
		if s == nil || !s.open || s.closing {
			continue
		}
		if s.ws != nil {
			l.wsTick(s.ws)
		}
		if s.h2 != nil {
			if l.tickHTTP2(s); s.closing {
				continue
			}
		}
		if l.checkSend(s); !s.closing && l.cfg.BodyMinRate > 0 {
			l.checkBodyRate(s)
		}
		if s.closing || s.deadline == 0 || l.now < s.deadline {
			continue
		}
		if s.deadlineKind == deadlineIdle && (s.sending || len(s.send) > 0) {
			// Not idle: a response is still going out to a client that
			// reads slowly, which --send-timeout (checkSend) judges. The
			// idle time counts from when it has gone.
			s.deadline = l.now + int64(l.cfg.KeepAliveTimeout)
			continue
		}
		if s.h2 != nil && s.deadlineKind == deadlineIdle {
			l.idleHTTP2(s)
			continue
		}
		switch s.deadlineKind {
		case deadlineHeader:
			if !s.sending && len(s.send) == 0 && len(s.input()) > 0 {
				l.answerError(s, nil, 408, "request header read timeout")
				l.touch(s)
			} else {
				l.closeSlot(s)
			}
		default:
			l.closeSlot(s)
		}
	}
}

// closeGiveUp is how long past the shutdown deadline the loop waits for
// the backend to complete the closes it queued.
const closeGiveUp = time.Second

// drain runs every pass once a shutdown was requested: idle connections
// close now, busy ones after their response, everything at the deadline.
func (l *Loop) drain(deadline int64) {
	if !l.draining {
		l.draining = true
		l.gentleDrain = l.gentle.Load()
		l.stopAccept()
	}
	l.drainByNanos = deadline
	force := l.now >= l.drainByNanos
	for _, s := range l.slots[1:] {
		if s == nil || !s.open || s.closing {
			continue
		}
		if s.ws != nil && !force {
			l.wsGoingAway(s.ws)
			continue
		}
		if s.hold != nil {
			l.drainHold(s, force)
			continue
		}
		if s.h2 != nil && !force {
			l.drainHTTP2(s)
			continue
		}
		idle := s.state == stateHead && s.job == nil && !s.sending && len(s.send) == 0 && len(s.input()) == 0
		// Drain (gentle) closes nothing early: a response already on its
		// way may have said keep-alive, so a connection waits for its next
		// request (answered with Connection: close) or its idle timeout.
		switch {
		case force || idle && !l.gentleDrain:
			if !idle && s.job != nil {
				l.logCutOff(s.job)
			}
			l.closeSlot(s)
		case !l.gentleDrain:
			s.keepAlive = false
		}
	}
	if l.gentleDrain && l.acceptStops == 0 && !l.queueSwept && !force {
		l.queueSwept = true
		l.sweepAcceptQueue()
	}
	if force && l.now >= l.drainByNanos+int64(closeGiveUp) {
		// Closes the backend never completed: give up on them.
		l.stopped = true
	}
}

// logCutOff names a request whose handler had not finished when the
// shutdown deadline closed its connection: the operator sees which
// requests the graceful timeout cost.
func (l *Loop) logCutOff(j *Job) {
	req := &j.Request
	line := string(req.Bytes(req.Method)) + " " + string(req.Bytes(req.Target))
	l.cfg.Logf("m0serve: shutdown deadline: cut off %q from %v", line, j.RemoteAddr)
}
