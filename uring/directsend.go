//go:build linux

package uring

import (
	"unsafe"

	"github.com/m0serve/m0serve/loop"
	"golang.org/x/sys/unix"
)

// A pass that answers one request queues one send and nothing else. As an
// SQE, that send is submitted by the io_uring_enter that would wait for
// the next request, completes inline and so ends the wait at once: a
// second enter does the sleeping, two per request. Sent with send(2) on
// the non-blocking socket instead, the pass's only enter is the one that
// sleeps: one enter per request instead of two at one connection
// (bench/README.md, Low concurrency against the floor).
// With more than one completion in the last batch, sends stay SQEs: one
// enter submits them all.

// oneSend is a pass's only send, held back from the submission queue
// (none while state is nil).
type oneSend struct {
	state     *slotState
	slot, gen uint32
}

// holdSend keeps a send for Wait to make directly, when it is the only
// operation queued since a Wait that returned one completion or none.
func (b *Backend) holdSend(state *slotState, slot, gen uint32) bool {
	if b.features&featureDirectSend == 0 || b.one.state != nil || b.unsubmitted != 0 || b.lastBatch > 1 {
		return false
	}
	b.one = oneSend{state: state, slot: slot, gen: gen}
	return true
}

// flushOneSend turns the held send into an SQE ahead of the one being
// made, so that the kernel sees operations in the order they were queued.
func (b *Backend) flushOneSend() {
	s := b.one
	b.one = oneSend{}
	b.submitSend(s.state, s.slot, s.gen)
}

// sendHeld makes the held send with send(2) and reports its completion
// in out as the CQE would have; what the socket does not take goes on as
// an SQE, resubmitted as after a short send.
func (b *Backend) sendHeld(out []loop.Completion, n int) int {
	s := b.one
	b.one = oneSend{}
	rest := s.state.sendData[s.state.sendDone:]
	if n >= len(out) || len(rest) == 0 {
		b.submitSend(s.state, s.slot, s.gen)
		return n
	}
	// Raw: a non-blocking send does not park the thread.
	sent, _, errno := unix.RawSyscall6(unix.SYS_SENDTO, uintptr(s.state.fd),
		uintptr(unsafe.Pointer(&rest[0])), uintptr(len(rest)),
		unix.MSG_NOSIGNAL|unix.MSG_DONTWAIT, 0, 0)
	switch errno {
	case 0:
		return b.completeSend(int32(sent), s.slot, s.gen, out, n)
	case unix.EAGAIN, unix.EINTR:
		b.submitSend(s.state, s.slot, s.gen)
		return n
	default:
		return b.completeSend(-int32(errno), s.slot, s.gen, out, n)
	}
}
