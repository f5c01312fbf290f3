package loop

import (
	"sync"
	"syscall"
	"time"
)

// fakeBackend is an in-memory Backend for the loop's unit tests: each
// connection is a pair of byte queues the test writes and reads. It keeps
// the contract's rules (one completion per queued operation, a close
// completes what is pending first, provided buffers valid until the next
// Wait) and allocates nothing in steady state, so the pass benchmark
// measures the loop alone.
type fakeBackend struct {
	mu sync.Mutex

	provided  bool // deliver receives in backend-owned buffers
	multishot bool // receives stay armed (More) like io_uring's multishot

	accepting    bool
	stopAccepts  int // StopAccept calls
	queuedAccept int // QueueAccept calls
	backlog      []*fakeConn
	conns        []*fakeConn
	nextFD       int
	// acceptErr, when set, fails the armed accept with it, as accept(2)
	// fails with EMFILE while a connection waits in the backlog.
	acceptErr syscall.Errno

	ready    []Completion
	spare    []Completion
	woken    bool
	provBuf  [64 << 10]byte
	provUsed int
	closed   bool
	cancels  int // CancelRecv calls that disarmed a receive

	// notify wakes a blocked Wait (Wake, client writes); timer bounds it.
	notify chan struct{}
	timer  *time.Timer
}

// fakeConn is one client connection as the fake sees it.
type fakeConn struct {
	fd       int
	slot     uint32
	gen      uint32
	in       []byte // written by the client, not yet received
	eof      bool   // the client shut down its sending side
	resetIn  bool   // the next receive fails with ECONNRESET
	reset    bool   // the next send fails with ECONNRESET
	stall    bool   // sends never complete (a client that reads nothing) until the close
	stalled  []Completion
	out      []byte // everything the server sent
	sends    int    // sends completed
	recv     []byte // the pending receive's buffer
	recvArm  bool
	closed   bool
	accepted bool
}

// fakeFDBase is far above any real descriptor, so the loop's setsockopt
// and getpeername on a fake fd fail harmlessly with EBADF.
const fakeFDBase = 1 << 24

func newFakeBackend() *fakeBackend {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	return &fakeBackend{nextFD: fakeFDBase, ready: make([]Completion, 0, 64), spare: make([]Completion, 0, 64),
		notify: make(chan struct{}, 1), timer: timer}
}

func (b *fakeBackend) Name() string { return "fake" }

func (b *fakeBackend) QueueAccept(int) {
	b.mu.Lock()
	b.accepting = true
	b.queuedAccept++
	b.mu.Unlock()
}

func (b *fakeBackend) StopAccept() {
	b.mu.Lock()
	b.accepting = false
	b.stopAccepts++
	b.ready = append(b.ready, Completion{Op: OpAcceptStopped})
	b.mu.Unlock()
}

func (b *fakeBackend) conn(fd int) *fakeConn {
	for _, c := range b.conns {
		if c.fd == fd {
			return c
		}
	}
	return nil
}

func (b *fakeBackend) QueueRecv(fd int, slot, gen uint32, buf []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.conn(fd)
	if c.recvArm {
		panic("fake: a second receive queued while one is pending")
	}
	c.slot, c.gen, c.recv, c.recvArm = slot, gen, buf, true
}

func (b *fakeBackend) QueueSend(fd int, slot, gen uint32, data []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.conn(fd)
	res := int32(len(data))
	if c.stall && !c.closed {
		c.stalled = append(c.stalled, Completion{Op: OpSend, Slot: slot, Gen: gen, Res: -int32(syscall.ECANCELED)})
		return
	}
	if c.reset || c.closed {
		res = -int32(syscall.ECONNRESET)
	} else {
		c.out = append(c.out, data...)
		c.sends++
	}
	b.ready = append(b.ready, Completion{Op: OpSend, Slot: slot, Gen: gen, Res: res})
}

// CancelRecv implements RecvCanceler.
func (b *fakeBackend) CancelRecv(fd int, slot, gen uint32) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.conn(fd)
	if c.recvArm {
		c.recvArm = false
		b.cancels++
		b.ready = append(b.ready, Completion{Op: OpRecv, Slot: slot, Gen: gen, Res: -int32(syscall.ECANCELED)})
	}
}

func (b *fakeBackend) QueueClose(fd int, slot, gen uint32) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.conn(fd)
	if c.recvArm {
		c.recvArm = false
		b.ready = append(b.ready, Completion{Op: OpRecv, Slot: slot, Gen: gen, Res: -int32(syscall.ECANCELED)})
	}
	b.ready = append(b.ready, c.stalled...)
	c.stalled = nil
	c.closed = true
	b.ready = append(b.ready, Completion{Op: OpClose, Slot: slot, Gen: gen})
}

func (b *fakeBackend) Wake() error {
	b.mu.Lock()
	b.woken = true
	b.mu.Unlock()
	b.poke()
	return nil
}

// poke wakes a Wait blocked for lack of completions.
func (b *fakeBackend) poke() {
	select {
	case b.notify <- struct{}{}:
	default:
	}
}

func (b *fakeBackend) Close() error {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	return nil
}

// collect moves whatever is completable now into b.ready.
func (b *fakeBackend) collect() {
	if b.accepting && len(b.backlog) > 0 && b.acceptErr != 0 {
		b.accepting = false
		b.ready = append(b.ready, Completion{Op: OpAccept, Res: -int32(b.acceptErr)})
	}
	for b.accepting && len(b.backlog) > 0 {
		c := b.backlog[0]
		b.backlog = b.backlog[1:]
		c.accepted = true
		b.conns = append(b.conns, c)
		b.ready = append(b.ready, Completion{Op: OpAccept, Res: int32(c.fd), More: true})
	}
	for _, c := range b.conns {
		if !c.recvArm || c.closed {
			continue
		}
		switch {
		case len(c.in) > 0 && b.provided:
			// Like a buffer ring: 4 KiB per buffer; a multishot receive
			// may post several in one batch.
			for len(c.in) > 0 && c.recvArm && b.provUsed < len(b.provBuf) {
				n := min(len(c.in), 4096, len(b.provBuf)-b.provUsed)
				data := b.provBuf[b.provUsed : b.provUsed+n]
				copy(data, c.in)
				b.provUsed += n
				c.in = append(c.in[:0], c.in[n:]...)
				c.recvArm = b.multishot
				b.ready = append(b.ready, Completion{Op: OpRecv, Slot: c.slot, Gen: c.gen, Res: int32(n), Data: data, Provided: true, More: b.multishot})
			}
		case len(c.in) > 0:
			n := copy(c.recv, c.in)
			c.in = append(c.in[:0], c.in[n:]...)
			c.recvArm = false
			b.ready = append(b.ready, Completion{Op: OpRecv, Slot: c.slot, Gen: c.gen, Res: int32(n), Data: c.recv[:n]})
		case c.resetIn:
			c.recvArm = false
			b.ready = append(b.ready, Completion{Op: OpRecv, Slot: c.slot, Gen: c.gen, Res: -int32(syscall.ECONNRESET)})
		case c.eof:
			c.recvArm = false
			b.ready = append(b.ready, Completion{Op: OpRecv, Slot: c.slot, Gen: c.gen})
		}
	}
	if b.woken {
		b.woken = false
		b.ready = append(b.ready, Completion{Op: OpWake})
	}
}

func (b *fakeBackend) Wait(out []Completion, timeout time.Duration) (int, error) {
	deadline := time.Now().Add(min(timeout, 5*time.Millisecond))
	b.mu.Lock()
	defer b.mu.Unlock()
	// Provided buffers handed out by the last Wait are reused now: poison
	// them so a loop that kept a reference past Wait reads garbage.
	for i := range b.provBuf[:b.provUsed] {
		b.provBuf[i] = '!'
	}
	b.provUsed = 0
	b.collect()
	if len(b.ready) == 0 && timeout > 0 {
		b.mu.Unlock()
		b.timer.Reset(time.Until(deadline))
		select {
		case <-b.notify:
		case <-b.timer.C:
		}
		b.timer.Stop()
		b.mu.Lock()
		b.collect()
	}
	n := copy(out, b.ready)
	b.spare = append(b.spare[:0], b.ready[n:]...)
	b.ready, b.spare = b.spare, b.ready
	return n, nil
}

// failAccept makes accepts fail with errno (0: succeed again).
func (b *fakeBackend) failAccept(errno syscall.Errno) {
	b.mu.Lock()
	b.acceptErr = errno
	b.mu.Unlock()
}

// dial adds a client connection to the accept backlog.
func (b *fakeBackend) dial() *fakeConn {
	b.mu.Lock()
	defer b.poke()
	defer b.mu.Unlock()
	b.nextFD++
	c := &fakeConn{fd: b.nextFD, in: make([]byte, 0, 4096), out: make([]byte, 0, 4096)}
	b.backlog = append(b.backlog, c)
	return c
}

func (b *fakeBackend) write(c *fakeConn, data string) {
	b.mu.Lock()
	c.in = append(c.in, data...)
	b.mu.Unlock()
	b.poke()
}

func (b *fakeBackend) shutdownWrite(c *fakeConn) {
	b.mu.Lock()
	c.eof = true
	b.mu.Unlock()
	b.poke()
}

// resetRecv makes the connection's next receive fail as a client's
// reset does.
func (b *fakeBackend) resetRecv(c *fakeConn) {
	b.mu.Lock()
	c.resetIn = true
	b.mu.Unlock()
	b.poke()
}

// stallSends makes the connection's sends pend until it is closed.
func (b *fakeBackend) stallSends(c *fakeConn) {
	b.mu.Lock()
	c.stall = true
	b.mu.Unlock()
}

func (b *fakeBackend) resetNextSend(c *fakeConn) {
	b.mu.Lock()
	c.reset = true
	b.mu.Unlock()
}

// output returns a copy of what the server sent on c so far.
func (b *fakeBackend) output(c *fakeConn) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(c.out)
}

func (b *fakeBackend) isClosed(c *fakeConn) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return c.closed
}
