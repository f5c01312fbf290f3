//go:build linux

package uring

import (
	"github.com/m0serve/m0serve/loop"
	"github.com/pawelgaczynski/giouring"
	"golang.org/x/sys/unix"
)

// Every operation's generation keeps its state until the operation has
// completed (a busy lane is never reused), so the find calls below always
// succeed; the nil checks only keep a bug from becoming a crash.
func (b *Backend) complete(cqe *giouring.CompletionQueueEvent, out []loop.Completion, n int) int {
	k, slot, gen := splitUserData(cqe.UserData)
	more := cqe.Flags&giouring.CQEFMore != 0
	switch k {
	case kindAccept:
		return b.completeAccept(cqe.Res, gen, more, out, n)
	case kindRecv:
		return b.completeRecv(cqe, slot, gen, more, out, n)
	case kindSend:
		return b.completeSend(cqe.Res, slot, gen, out, n)
	case kindClose:
		state := b.find(slot, gen)
		if state == nil {
			return n
		}
		state.closed = true
		state.closeRes = cqe.Res
		return b.finishClose(state, slot, out, n)
	case kindWake:
		return b.completeWake(cqe.Res, out, n)
	case kindSpliceIn, kindSpliceOut, kindPollOut:
		return b.completeFileStep(k, cqe.Res, slot, gen, out, n)
	}
	// kindCancel: its result (how many it cancelled, or -ENOENT) tells the
	// loop nothing; the cancelled operations report for themselves.
	return n
}

func (b *Backend) completeAccept(res int32, gen uint32, more bool, out []loop.Completion, n int) int {
	current := gen == b.acceptGen && b.accepting
	if !current {
		// An arm StopAccept (or a later QueueAccept) cancelled: its
		// cancellation is not news, but a connection it accepted is the
		// loop's to serve or close. More tells whether accepting is armed
		// now. Its last CQE ends it.
		if res >= 0 {
			n = b.emit(loop.Completion{Op: loop.OpAccept, Res: res, More: b.accepting}, -1, out, n)
		}
		if !more && b.stoppedArms > 0 {
			b.stoppedArms--
		}
		for ; b.stoppedArms == 0 && b.stopReports > 0; b.stopReports-- {
			n = b.emit(loop.Completion{Op: loop.OpAcceptStopped}, -1, out, n)
		}
		return n
	}
	if b.features&featureMultishotAccept == 0 && res >= 0 {
		b.armAccept()
		more = true
	}
	if !more {
		b.accepting = false
	}
	return b.emit(loop.Completion{Op: loop.OpAccept, Res: res, More: more}, -1, out, n)
}

func (b *Backend) completeRecv(cqe *giouring.CompletionQueueEvent, slot, gen uint32, more bool, out []loop.Completion, n int) int {
	state := b.find(slot, gen)
	if state == nil {
		return n
	}
	c := loop.Completion{Op: loop.OpRecv, Slot: slot, Gen: gen, Res: cqe.Res, More: more}
	bufferID := int32(-1)
	if cqe.Flags&giouring.CQEFBuffer != 0 {
		id := uint16(cqe.Flags >> giouring.CQEBufferShift)
		if cqe.Res > 0 {
			c.Data = b.buffers.buffer(id, cqe.Res)
			c.Provided = true
			bufferID = int32(id)
		} else {
			b.buffers.delivered = append(b.buffers.delivered, id)
		}
	} else if cqe.Res > 0 {
		c.Data = state.recvBuf[:cqe.Res]
	}
	if !more {
		state.recvBuf = nil
		state.multishotArmed = false
		state.pending--
	}
	n = b.emit(c, bufferID, out, n)
	return b.finishClose(state, slot, out, n)
}

func (b *Backend) completeSend(res int32, slot, gen uint32, out []loop.Completion, n int) int {
	state := b.find(slot, gen)
	if state == nil {
		return n
	}
	if res > 0 {
		state.sendDone += int(res)
		if state.sendDone < len(state.sendData) && !state.closing {
			b.sendResumes++
			b.submitSend(state, slot, gen)
			return n
		}
	}
	switch {
	case res < 0:
	case state.sendDone == len(state.sendData):
		res = int32(state.sendDone)
	case state.closing:
		res = -int32(unix.ECANCELED)
	default:
		// A stream socket that takes no byte of a non-empty send is
		// broken; stop rather than resubmit for ever.
		res = -int32(unix.EPIPE)
	}
	state.sendData = nil
	state.pending--
	n = b.emit(loop.Completion{Op: loop.OpSend, Slot: slot, Gen: gen, Res: res}, -1, out, n)
	return b.finishClose(state, slot, out, n)
}

// finishClose delivers OpClose once the close has completed and nothing the
// kernel held for the slot is left.
func (b *Backend) finishClose(state *slotState, slot uint32, out []loop.Completion, n int) int {
	if !state.closing || !state.closed || state.pending != 0 {
		return n
	}
	c := loop.Completion{Op: loop.OpClose, Slot: slot, Gen: state.gen, Res: state.closeRes}
	*state = slotState{}
	return b.emit(c, -1, out, n)
}
