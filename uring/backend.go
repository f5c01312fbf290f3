//go:build linux

package uring

import (
	"fmt"
	"syscall"
	"unsafe"

	"github.com/m0serve/m0serve/loop"
	"github.com/pawelgaczynski/giouring"
	"golang.org/x/sys/unix"
)

// Backend is loop.Backend on io_uring. See the package comment for the
// thread it must be used from.
type Backend struct {
	ring     *giouring.Ring
	features feature
	name     string
	buffers  *bufferRing // nil when the buffer ring is off

	// slots[slot] holds the generations of that slot the kernel still has
	// business with: usually one; two while a closed generation's
	// cancelled operations drain and the next already runs (the loop may
	// reuse a slot before OpClose of its previous generation).
	slots [][]slotState
	cqes  []*giouring.CompletionQueueEvent
	// held keeps completions that did not fit in Wait's out, oldest
	// first from heldHead; the next Wait returns them before any other.
	held     []heldCompletion
	heldHead int

	// unsubmitted counts SQEs prepared since the last io_uring_enter, so a
	// Wait that need not block skips the syscall when there is nothing to
	// submit.
	unsubmitted uint32
	one         oneSend
	lastBatch   int // completions the last Wait returned
	// err is a failure found where no error can be returned (a Queue call
	// that could not get an SQE); Wait returns it.
	err error

	timeout  syscall.Timespec
	wakeFD   int
	wakeBuf  [8]byte // the eventfd read's target: lives as long as the Backend
	listenFD int
	// acceptGen counts QueueAccept calls; accepting says the current arm
	// has not been stopped or ended.
	acceptGen uint32
	accepting bool
	// stoppedArms counts the accept arms cancelled whose last CQE (one
	// without IORING_CQE_F_MORE) has not come yet; stopReports counts the
	// StopAccept calls owed an OpAcceptStopped, reported once stoppedArms
	// is zero.
	stoppedArms int
	stopReports int
	closed      bool

	// sendResumes counts short sends resubmitted internally (tests read
	// it to prove the path ran).
	sendResumes uint64

	// pipes are the idle pipe pairs file sends splice through; pipesOpen
	// counts every pair open, idle or in use (tests read both to prove
	// none leaks).
	pipes     []pipePair
	pipesOpen int
	// filePolls counts waits for room in a full socket during file
	// sends (tests read it to prove the path ran).
	filePolls uint64
}

type heldCompletion struct {
	completion loop.Completion
	bufferID   int32 // a provided buffer to give back once delivered, or -1
}

var _ loop.Backend = (*Backend)(nil)

// Name is the one line naming the backend and the features in use.
func (b *Backend) Name() string { return b.name }

// sqe returns a cleared submission entry. When the submission queue is
// full it submits what is queued first, an extra io_uring_enter that only a
// pass queueing more than Options.Entries operations pays.
func (b *Backend) sqe() *giouring.SubmissionQueueEntry {
	if b.one.state != nil {
		b.flushOneSend()
	}
	entry := b.ring.GetSQE()
	if entry == nil {
		if _, err := b.ring.Submit(); err != nil && b.err == nil {
			b.err = fmt.Errorf("uring: submit to make room in a full submission queue: %w", err)
		}
		b.unsubmitted = 0
		entry = b.ring.GetSQE()
		if entry == nil {
			if b.err == nil {
				b.err = fmt.Errorf("uring: submission queue still full after submitting")
			}
			return nil
		}
	}
	*entry = giouring.SubmissionQueueEntry{}
	b.unsubmitted++
	return entry
}

// QueueAccept arms accepting on listenFD; accepted sockets are
// non-blocking and close-on-exec. Completions report More true while the
// arm lasts: multishot accept stays armed in the kernel, and without it the
// backend re-arms after each connection. More false means accepting ended
// (an error) and the loop must queue again.
func (b *Backend) QueueAccept(listenFD int) {
	// One arm at a time: an arm left behind would go on accepting after a
	// later StopAccept.
	b.cancelAccept()
	b.listenFD = listenFD
	b.acceptGen++
	b.accepting = true
	b.armAccept()
}

func (b *Backend) armAccept() {
	entry := b.sqe()
	if entry == nil {
		return
	}
	const flags = unix.SOCK_NONBLOCK | unix.SOCK_CLOEXEC
	if b.features&featureMultishotAccept != 0 {
		entry.PrepareMultishotAccept(b.listenFD, 0, 0, flags)
	} else {
		entry.PrepareAccept(b.listenFD, 0, 0, flags)
	}
	entry.UserData = userData(kindAccept, 0, b.acceptGen)
}

// StopAccept cancels the accept arm. The arm's last CQE, not the cancel's,
// says when it has ended: a cancel may complete first, while the arm
// still posts a connection it accepted (or gets -ECANCELED) after it.
// OpAcceptStopped is reported then.
func (b *Backend) StopAccept() {
	b.cancelAccept()
	b.stopReports++
	if b.stoppedArms == 0 {
		b.held = append(b.held, heldCompletion{completion: loop.Completion{Op: loop.OpAcceptStopped}, bufferID: -1})
		b.stopReports--
	}
}

// cancelAccept queues the cancel of the accept arm, if one is armed.
func (b *Backend) cancelAccept() {
	if !b.accepting {
		return
	}
	b.accepting = false
	b.stoppedArms++
	entry := b.sqe()
	if entry == nil {
		return
	}
	entry.PrepareCancel64(userData(kindAccept, 0, b.acceptGen), 0)
	entry.UserData = userData(kindCancel, 0, 0)
}

// QueueRecv receives from fd. With the buffer ring the kernel picks a
// provided buffer and buf is not used (Completion.Provided); with
// multishot receive the arm stays while completions report More, and
// QueueRecv while it is armed does nothing (a loop that queues a receive
// after every completion works unchanged). Without the buffer ring buf must
// not be empty: a zero-length receive completes with 0, which reads as end
// of stream.
func (b *Backend) QueueRecv(fd int, slot, gen uint32, buf []byte) {
	state := b.state(slot, gen)
	if state.multishotArmed {
		return
	}
	entry := b.sqe()
	if entry == nil {
		return
	}
	state.fd = int32(fd)
	switch {
	case b.features&featureMultishotRecv != 0:
		entry.PrepareRecvMultishot(fd, 0, 0, 0)
		entry.Flags |= giouring.SqeBufferSelect
		entry.BufIG = bufferGroup
		state.multishotArmed = true
	case b.buffers != nil:
		entry.PrepareRecv(fd, 0, b.buffers.size, 0)
		entry.Flags |= giouring.SqeBufferSelect
		entry.BufIG = bufferGroup
	default:
		state.recvBuf = buf
		entry.PrepareRecv(fd, bufferAddress(buf), uint32(len(buf)), 0)
	}
	entry.UserData = userData(kindRecv, slot, gen)
	state.pending++
}

// CancelRecv disarms an armed multishot receive (loop.RecvCanceler): the
// loop's back-pressure on a slot whose handler lags. The receive then
// completes with More false, -ECANCELED or bytes already on their way, and
// QueueRecv arms it again. A single-shot receive ends by itself after one
// completion, so there is nothing to cancel.
func (b *Backend) CancelRecv(fd int, slot, gen uint32) {
	state := b.find(slot, gen)
	if state == nil || !state.multishotArmed {
		return
	}
	entry := b.sqe()
	if entry == nil {
		return
	}
	entry.PrepareCancel64(userData(kindRecv, slot, gen), 0)
	entry.UserData = userData(kindCancel, slot, gen)
}

// QueueSend sends all of data, resubmitting the rest after a short send.
// The completion's Res is len(data) on success, so data must be shorter
// than 2 GiB.
func (b *Backend) QueueSend(fd int, slot, gen uint32, data []byte) {
	state := b.state(slot, gen)
	state.fd = int32(fd)
	state.sendData = data
	state.sendDone = 0
	state.pending++
	if b.holdSend(state, slot, gen) {
		return
	}
	b.submitSend(state, slot, gen)
}

func (b *Backend) submitSend(state *slotState, slot, gen uint32) {
	entry := b.sqe()
	if entry == nil {
		return
	}
	rest := state.sendData[state.sendDone:]
	// MSG_NOSIGNAL: a send to a reset peer must come back as -EPIPE, not
	// kill the process with SIGPIPE.
	entry.PrepareSend(int(state.fd), bufferAddress(rest), uint32(len(rest)), unix.MSG_NOSIGNAL)
	entry.UserData = userData(kindSend, slot, gen)
}

// QueueClose cancels what the kernel holds for fd, then closes it. Each
// cancelled operation delivers its own completion (-ECANCELED, or what it
// had done), and OpClose follows the last of them.
func (b *Backend) QueueClose(fd int, slot, gen uint32) {
	state := b.state(slot, gen)
	state.closing = true
	state.closed = false
	// The cancels are hard-linked to the close so the close runs after
	// them even when there was nothing to cancel (-ENOENT breaks a soft
	// link). The cancelled completions themselves may still come later, as
	// task work: the pending count, not the order of CQEs, decides when
	// OpClose is delivered.
	if b.features&featureCancelFD != 0 {
		entry := b.sqe()
		if entry == nil {
			return
		}
		entry.PrepareCancelFd(fd, giouring.AsyncCancelAll)
		entry.Flags |= giouring.SqeIOHardlink
		entry.UserData = userData(kindCancel, slot, gen)
	} else {
		for _, k := range [...]kind{kindRecv, kindSend, kindSpliceOut, kindPollOut} {
			entry := b.sqe()
			if entry == nil {
				return
			}
			entry.PrepareCancel64(userData(k, slot, gen), 0)
			entry.Flags |= giouring.SqeIOHardlink
			entry.UserData = userData(kindCancel, slot, gen)
		}
	}
	entry := b.sqe()
	if entry == nil {
		return
	}
	entry.PrepareClose(fd)
	entry.UserData = userData(kindClose, slot, gen)
}

// Close releases the ring, the buffer ring and the wake eventfd. Sockets
// still open are not closed.
func (b *Backend) Close() error {
	if b.closed {
		return nil
	}
	b.closed = true
	// Closing the ring cancels everything still armed; only then can the
	// memory the kernel might write into go.
	b.ring.QueueExit()
	b.closeFiles()
	if b.buffers != nil {
		b.buffers.unmap()
		b.buffers = nil
	}
	if b.wakeFD >= 0 {
		if err := unix.Close(b.wakeFD); err != nil {
			return fmt.Errorf("uring: close wake eventfd: %w", err)
		}
		b.wakeFD = -1
	}
	return nil
}

func bufferAddress(buf []byte) uintptr {
	if len(buf) == 0 {
		return 0
	}
	return uintptr(unsafe.Pointer(&buf[0]))
}
