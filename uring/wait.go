//go:build linux

package uring

import (
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/m0serve/m0serve/loop"
	"golang.org/x/sys/unix"
)

// Wait gives back the provided buffers delivered by the previous Wait,
// submits everything queued and, when nothing is ready yet, waits for one
// completion or the timeout, all in one io_uring_enter; then it takes every
// ready CQE it has room for in one batch and advances the completion queue
// once. A timeout of zero does not block; a negative one waits for ever;
// an empty out only submits.
func (b *Backend) Wait(out []loop.Completion, timeout time.Duration) (int, error) {
	n, err := b.wait(out, timeout)
	b.lastBatch = n
	return n, err
}

func (b *Backend) wait(out []loop.Completion, timeout time.Duration) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.buffers != nil {
		b.buffers.recycle()
	}
	n := b.takeHeld(out)
	if b.one.state != nil {
		n = b.sendHeld(out, n)
	}

	// With no room in out there is nothing to wait for: submit only.
	if n > 0 || timeout == 0 || len(out) == 0 || b.ring.CQReady() > 0 {
		// Something to return already: submit (and run deferred task work,
		// which with DEFER_TASKRUN is what posts completions) only if there
		// is something to submit.
		if b.unsubmitted > 0 || (timeout == 0 && n == 0 && len(out) > 0) {
			if _, err := b.ring.SubmitAndGetEvents(); err != nil && !transient(err) {
				return n, b.enterError(err)
			}
			b.unsubmitted = 0
		}
		return n + b.reap(out[n:]), nil
	}

	var start time.Time
	if timeout > 0 {
		start = time.Now()
	}
	remaining := timeout
	for {
		var ts *syscall.Timespec
		if remaining > 0 {
			b.timeout = syscall.NsecToTimespec(int64(remaining))
			ts = &b.timeout
		}
		if _, err := b.ring.SubmitAndWaitTimeout(1, ts, nil); err != nil && !transient(err) {
			return 0, b.enterError(err)
		}
		b.unsubmitted = 0
		if got := b.reap(out); got > 0 {
			return got, nil
		}
		// The wait ended with nothing to report: a signal (the Go runtime
		// preempts with SIGURG), task work that posted no completion, or
		// the timeout. Zero must mean the timeout passed, so wait out the
		// rest of it.
		if timeout > 0 {
			remaining = timeout - time.Since(start)
			if remaining <= 0 {
				return 0, nil
			}
		}
	}
}

// transient errors from io_uring_enter end the wait without completions:
// the timeout passed (ETIME), a signal arrived (EINTR), or the completion
// queue overflowed and must be drained first (EBUSY, EAGAIN).
func transient(err error) bool {
	return errors.Is(err, unix.ETIME) || errors.Is(err, unix.EINTR) ||
		errors.Is(err, unix.EBUSY) || errors.Is(err, unix.EAGAIN)
}

func (b *Backend) enterError(err error) error {
	if errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("uring: io_uring_enter from a thread other than the one that called New (the ring is SINGLE_ISSUER: lock the loop's OS thread before New): %w", err)
	}
	return fmt.Errorf("uring: io_uring_enter: %w", err)
}

// reap turns ready CQEs into completions, as many CQEs as out has room
// for; a CQE that yields two completions (a receive and the OpClose waiting
// for it) parks the second in held if out is full.
func (b *Backend) reap(out []loop.Completion) int {
	n := 0
	for n < len(out) {
		want := min(uint32(len(out)-n), uint32(len(b.cqes)))
		if ready := b.ring.CQReady(); ready > 0 {
			want = min(want, ready)
		} else {
			// One entry is enough to let giouring flush an overflowed
			// completion queue into the ring.
			want = 1
		}
		got := b.ring.PeekBatchCQE(b.cqes[:want])
		if got == 0 {
			break
		}
		for _, cqe := range b.cqes[:got] {
			n = b.complete(cqe, out, n)
		}
		b.ring.CQAdvance(got)
		if got < want {
			break
		}
	}
	return n
}

// emit puts c in out[n] when there is room, else in held; bufferID is a
// provided buffer c's Data points into (or -1), given back after c is
// delivered.
func (b *Backend) emit(c loop.Completion, bufferID int32, out []loop.Completion, n int) int {
	if n < len(out) {
		out[n] = c
		if bufferID >= 0 {
			b.buffers.delivered = append(b.buffers.delivered, uint16(bufferID))
		}
		return n + 1
	}
	b.held = append(b.held, heldCompletion{completion: c, bufferID: bufferID})
	return n
}

func (b *Backend) takeHeld(out []loop.Completion) int {
	n := 0
	for b.heldHead < len(b.held) && n < len(out) {
		h := b.held[b.heldHead]
		b.heldHead++
		n = b.emit(h.completion, h.bufferID, out, n)
	}
	if b.heldHead == len(b.held) {
		b.held = b.held[:0]
		b.heldHead = 0
	}
	return n
}
