// Package readiness turns readiness notifications (epoll, kqueue) into the
// completions loop.Backend promises: it keeps, per file descriptor, the
// operation the loop queued and what the poller last said about the socket,
// and does the accept, recv or send itself once the socket is ready.
//
// The epoll and kqueue backends share it; each brings only its poller (the
// Poller interface and the event translation in its Wait). The io_uring
// backend borrows only its wake write (SignalWake) and Errno.
package readiness

import (
	"golang.org/x/sys/unix"

	"github.com/m0serve/m0serve/loop"
)

// Poller is the registration half of a readiness API.
type Poller interface {
	// Register adds persistent, edge-triggered read and write interest in
	// fd. It is called once per socket, the first time an operation is
	// queued on it, so steady-state keep-alive costs no registration call.
	Register(fd int) error
	// RegisterListener adds persistent, edge-triggered read interest in a
	// listening socket (write interest means nothing there).
	RegisterListener(fd int) error
	// Unregister drops the interest just before the socket is closed.
	Unregister(fd int)
}

// operation is one queued recv or send.
type operation struct {
	armed bool
	slot  uint32
	gen   uint32
	buf   []byte // recv: the slot buffer; send: the bytes to send
	done  int    // send: bytes already written
	file  fileRange
}

// socketState is what the table knows about one file descriptor.
type socketState struct {
	registered bool
	// readable and writable are the edge-triggered flags: set by an event,
	// cleared when a syscall says the socket is drained (EAGAIN or a short
	// read). With edge triggering a socket nobody reads from raises no
	// further events, so a loop applying back-pressure (no recv queued)
	// does not spin the way it would on level-triggered interest.
	readable bool
	writable bool
	// hangup is sticky: the peer shut down writing or the socket has an
	// error. Every later recv completes at once (0 or -errno); the edge
	// that announced it will not come again.
	hangup bool
	// inReady says fd is on the ready list; it survives a close so the
	// list never holds the same fd twice.
	inReady bool
	recv    operation
	send    operation
}

// Table is the per-descriptor state of one readiness backend. It is used
// from the loop thread only.
type Table struct {
	poller  Poller
	sockets []socketState // indexed by fd

	// ready lists descriptors that may have a completable operation.
	ready     []int32
	readyHead int

	// finished holds completions decided without a syscall to wait for
	// (cancellations, closes, wakes, registration failures), in order.
	finished     []loop.Completion
	finishedHead int

	listenFD       int
	acceptArmed    bool
	listenReadable bool
	listenRegistry bool

	sincePoll int // Waits served from known readiness since the last poll

	files fileSender // the syscall side of QueueSendFile (sendfile_linux.go, sendfile_bsd.go)
}

// NewTable returns an empty table that registers sockets with poller.
func NewTable(poller Poller) *Table {
	return &Table{
		poller:   poller,
		sockets:  make([]socketState, 256),
		ready:    make([]int32, 0, 256),
		finished: make([]loop.Completion, 0, 64),
		listenFD: -1,
	}
}

// state returns fd's record, growing the table when fd is beyond it. The
// pointer is valid until the next call to state.
func (t *Table) state(fd int) *socketState {
	if fd >= len(t.sockets) {
		size := 2 * len(t.sockets)
		for size <= fd {
			size *= 2
		}
		grown := make([]socketState, size)
		copy(grown, t.sockets)
		t.sockets = grown
	}
	return &t.sockets[fd]
}

// Finish records a completion that needs no readiness to wait for; Fill
// hands it out before any other.
func (t *Table) Finish(c loop.Completion) {
	t.finished = append(t.finished, c)
}

func (t *Table) markReady(fd int) {
	st := &t.sockets[fd]
	if st.inReady {
		return
	}
	st.inReady = true
	t.ready = append(t.ready, int32(fd))
}

// register makes sure fd is known to the poller. A fresh connected socket
// has send space, so it starts writable; it starts not readable, since
// registration reports pending bytes as the first edge and an optimistic
// recv would mostly cost an EAGAIN.
func (t *Table) register(fd int) unix.Errno {
	st := t.state(fd)
	if st.registered {
		return 0
	}
	if err := t.poller.Register(fd); err != nil {
		return Errno(err)
	}
	st.registered = true
	st.writable = true
	return 0
}

// QueueAccept arms accepting on listenFD until StopAccept or an error.
func (t *Table) QueueAccept(listenFD int) {
	if listenFD != t.listenFD {
		t.listenFD = listenFD
		t.listenRegistry = false
	}
	if !t.listenRegistry {
		if err := t.poller.RegisterListener(listenFD); err != nil {
			t.Finish(loop.Completion{Op: loop.OpAccept, Res: -int32(Errno(err))})
			return
		}
		t.listenRegistry = true
		// A backlog that filled before registration raises no new edge
		// until the next connection arrives: look once.
		t.listenReadable = true
	}
	t.acceptArmed = true
}

// StopAccept disarms accepting. The listener stays registered: an edge
// while disarmed only sets a flag. Nothing of the arm is in flight (the
// table accepts in Fill), so it has ended at once.
func (t *Table) StopAccept() {
	t.acceptArmed = false
	t.Finish(loop.Completion{Op: loop.OpAcceptStopped})
}

// QueueRecv arms a receive into buf.
func (t *Table) QueueRecv(fd int, slot, gen uint32, buf []byte) {
	if errno := t.register(fd); errno != 0 {
		t.Finish(loop.Completion{Op: loop.OpRecv, Slot: slot, Gen: gen, Res: -int32(errno)})
		return
	}
	st := &t.sockets[fd]
	st.recv = operation{armed: true, slot: slot, gen: gen, buf: buf}
	if st.readable || st.hangup {
		t.markReady(fd)
	}
}

// QueueSend arms sending all of data.
func (t *Table) QueueSend(fd int, slot, gen uint32, data []byte) {
	if errno := t.register(fd); errno != 0 {
		t.Finish(loop.Completion{Op: loop.OpSend, Slot: slot, Gen: gen, Res: -int32(errno)})
		return
	}
	st := &t.sockets[fd]
	st.send = operation{armed: true, slot: slot, gen: gen, buf: data}
	if st.writable {
		t.markReady(fd)
	}
}

// QueueClose cancels what is pending on fd (each pending operation
// completes with -ECANCELED), closes it, and finishes with OpClose.
func (t *Table) QueueClose(fd int, slot, gen uint32) {
	st := t.state(fd)
	if st.recv.armed {
		t.Finish(loop.Completion{Op: loop.OpRecv, Slot: st.recv.slot, Gen: st.recv.gen, Res: -int32(unix.ECANCELED)})
	}
	if st.send.armed {
		t.Finish(loop.Completion{Op: loop.OpSend, Slot: st.send.slot, Gen: st.send.gen, Res: -int32(unix.ECANCELED)})
		st.send.file.close()
	}
	if st.registered {
		t.poller.Unregister(fd)
	}
	*st = socketState{inReady: st.inReady}
	res := int32(0)
	if err := unix.Close(fd); err != nil {
		res = -int32(Errno(err))
	}
	t.Finish(loop.Completion{Op: loop.OpClose, Slot: slot, Gen: gen, Res: res})
}

// Readable records a read edge on fd.
func (t *Table) Readable(fd int) {
	if fd == t.listenFD {
		t.listenReadable = true
		return
	}
	if fd < 0 || fd >= len(t.sockets) {
		return
	}
	st := &t.sockets[fd]
	st.readable = true
	if st.recv.armed {
		t.markReady(fd)
	}
}

// Writable records a write edge on fd.
func (t *Table) Writable(fd int) {
	if fd < 0 || fd >= len(t.sockets) || fd == t.listenFD {
		return
	}
	st := &t.sockets[fd]
	st.writable = true
	if st.send.armed {
		t.markReady(fd)
	}
}

// PeerClosed records that the peer shut down writing: recvs from now on
// complete at once (the remaining bytes, then 0).
func (t *Table) PeerClosed(fd int) {
	if fd >= 0 && fd < len(t.sockets) && fd != t.listenFD {
		t.sockets[fd].hangup = true
	}
	t.Readable(fd)
}

// Failed records an error or a hangup in both directions: the next recv
// and send report it instead of waiting.
func (t *Table) Failed(fd int) {
	t.PeerClosed(fd)
	t.Writable(fd)
}

// Completable says whether Fill would produce a completion without waiting.
func (t *Table) Completable() bool {
	return t.finishedHead < len(t.finished) ||
		t.readyHead < len(t.ready) ||
		(t.acceptArmed && t.listenReadable)
}

// Errno is err's errno for a completion's Res: the syscall's own, EIO for
// an error that carries none. Every backend's completions use it.
func Errno(err error) unix.Errno {
	if errno, ok := err.(unix.Errno); ok {
		return errno
	}
	return unix.EIO
}
