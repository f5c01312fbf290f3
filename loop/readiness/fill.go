package readiness

import (
	"golang.org/x/sys/unix"

	"github.com/m0serve/m0serve/loop"
)

// Fill writes into out the completions available without waiting: first
// those already decided, then new connections, then the recvs and sends of
// ready sockets, doing each syscall now. It returns how many it wrote;
// what does not fit stays for the next call.
func (t *Table) Fill(out []loop.Completion) int {
	n := 0
	for n < len(out) && t.finishedHead < len(t.finished) {
		out[n] = t.finished[t.finishedHead]
		t.finished[t.finishedHead] = loop.Completion{}
		t.finishedHead++
		n++
	}
	if t.finishedHead == len(t.finished) {
		t.finished = t.finished[:0]
		t.finishedHead = 0
	}
	n = t.accept(out, n)
	for n < len(out) && t.readyHead < len(t.ready) {
		fd := int(t.ready[t.readyHead])
		n = t.serve(fd, out, n)
		if t.pending(fd) {
			break // out is full; fd keeps its place at the head
		}
		t.sockets[fd].inReady = false
		t.readyHead++
	}
	if t.readyHead == len(t.ready) {
		t.ready = t.ready[:0]
		t.readyHead = 0
	}
	return n
}

// pending says whether fd still has an operation that can complete now.
func (t *Table) pending(fd int) bool {
	st := &t.sockets[fd]
	return (st.recv.armed && (st.readable || st.hangup)) ||
		(st.send.armed && st.writable)
}

// accept takes connections off the listener while accepting is armed, the
// listener has not said EAGAIN, and out has room.
func (t *Table) accept(out []loop.Completion, n int) int {
	for n < len(out) && t.acceptArmed && t.listenReadable {
		fd, errno := acceptSocket(t.listenFD)
		switch errno {
		case 0:
			out[n] = loop.Completion{Op: loop.OpAccept, Res: int32(fd), More: true}
			n++
		case unix.EAGAIN:
			t.listenReadable = false
		case unix.EINTR, unix.ECONNABORTED:
			// The connection went away in the backlog; take the next.
		default:
			// EMFILE and its kind would fail again at once: disarm, so a
			// readable listener does not spin, and let the loop decide
			// when to queue accept again (More false).
			t.acceptArmed = false
			out[n] = loop.Completion{Op: loop.OpAccept, Res: -int32(errno)}
			n++
		}
	}
	return n
}

// serve runs fd's completable send, then its completable recv, as far as
// out has room.
func (t *Table) serve(fd int, out []loop.Completion, n int) int {
	st := &t.sockets[fd]
	if n < len(out) && st.send.armed && st.writable {
		var c loop.Completion
		var ok bool
		if st.send.file.open {
			c, ok = t.sendFileSome(fd, st)
		} else {
			c, ok = t.sendSome(fd, st)
		}
		if ok {
			out[n] = c
			n++
		}
	}
	if n < len(out) && st.recv.armed && (st.readable || st.hangup) {
		if c, ok := t.recvOnce(fd, st); ok {
			out[n] = c
			n++
		}
	}
	return n
}

// sendSome writes until the data is all sent, the socket is full (the
// operation stays armed and resumes at the next write edge) or an error.
func (t *Table) sendSome(fd int, st *socketState) (loop.Completion, bool) {
	op := &st.send
	for op.done < len(op.buf) {
		written, errno := sendBytes(fd, op.buf[op.done:])
		switch errno {
		case 0:
			op.done += written
		case unix.EINTR:
		case unix.EAGAIN:
			st.writable = false
			return loop.Completion{}, false
		default:
			return t.endSend(st, -int32(errno)), true
		}
	}
	return t.endSend(st, int32(op.done)), true
}

func (t *Table) endSend(st *socketState, res int32) loop.Completion {
	c := loop.Completion{Op: loop.OpSend, Slot: st.send.slot, Gen: st.send.gen, Res: res}
	st.send = operation{}
	return c
}

// recvOnce does one receive into the slot buffer.
func (t *Table) recvOnce(fd int, st *socketState) (loop.Completion, bool) {
	op := &st.recv
	for {
		got, errno := recvBytes(fd, op.buf)
		switch errno {
		case 0:
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			// Also clears hangup, so no flag can keep a drained socket
			// on the ready list.
			st.readable = false
			st.hangup = false
			return loop.Completion{}, false
		default:
			c := loop.Completion{Op: loop.OpRecv, Slot: op.slot, Gen: op.gen, Res: -int32(errno)}
			st.recv = operation{}
			return c, true
		}
		switch {
		case got == 0 && len(op.buf) > 0:
			st.hangup = true
		case got < len(op.buf) && !st.hangup:
			// A short read drained the socket. Both epoll (with
			// EPOLLRDHUP, which tells end of stream apart) and kqueue
			// raise a new edge for every arrival after it, so waiting for
			// that edge is safe and saves the EAGAIN recv a greedy reader
			// pays on every keep-alive request (nginx does the same).
			st.readable = false
		}
		c := loop.Completion{Op: loop.OpRecv, Slot: op.slot, Gen: op.gen, Res: int32(got), Data: op.buf[:got]}
		st.recv = operation{}
		return c, true
	}
}
