//go:build darwin || dragonfly || freebsd || netbsd || openbsd

// Package kq is loop.Backend on kqueue, for macOS and the BSDs. Like the
// epoll backend it turns readiness into completions by doing the accept,
// recv or send once a socket is ready (package loop/readiness).
//
// Each socket gets EVFILT_READ and EVFILT_WRITE with EV_CLEAR once, in one
// kevent call, and keeps them: EV_CLEAR is kqueue's edge trigger, so a
// readable socket with no recv queued (the loop applying back-pressure)
// raises no further events, and no filter is re-armed per request (a
// re-arm per keep-alive request measured ~10% of throughput on epoll).
package kq

import (
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"

	"github.com/m0serve/m0serve/loop"
	"github.com/m0serve/m0serve/loop/readiness"
)

// eventBatch is how many events one kevent call takes.
const eventBatch = 256

// Backend is loop.Backend on kqueue. All methods but Wake belong to the
// loop thread.
type Backend struct {
	kqueueFD int
	// The wake pipe: EVFILT_USER would save the pipe, but OpenBSD lacks
	// it, and a pipe behaves the same on every kqueue system.
	wakeRead         int
	wakeWrite        int
	*readiness.Table // QueueAccept, StopAccept, QueueRecv, QueueSend, QueueSendFile, QueueClose
	poller           *poller
	events           []unix.Kevent_t
	timeout          unix.Timespec
	drain            [64]byte
	one              [1]byte // what Wake writes; never modified
}

var _ loop.Backend = (*Backend)(nil)

// New creates the kqueue and its wake pipe.
func New() (*Backend, error) {
	kqueueFD, err := unix.Kqueue()
	if err != nil {
		return nil, fmt.Errorf("kq: kqueue: %w", err)
	}
	unix.CloseOnExec(kqueueFD)
	var pipe [2]int
	if err := unix.Pipe(pipe[:]); err != nil {
		unix.Close(kqueueFD)
		return nil, fmt.Errorf("kq: wake pipe: %w", err)
	}
	b := &Backend{
		kqueueFD:  kqueueFD,
		wakeRead:  pipe[0],
		wakeWrite: pipe[1],
		events:    make([]unix.Kevent_t, eventBatch),
		poller:    &poller{kqueueFD: kqueueFD},
	}
	for _, fd := range pipe {
		unix.CloseOnExec(fd)
		if err := unix.SetNonblock(fd, true); err != nil {
			b.Close()
			return nil, fmt.Errorf("kq: wake pipe: %w", err)
		}
	}
	// Level-triggered: Wait drains the pipe each time it reports, which is
	// what coalesces Wakes.
	unix.SetKevent(&b.poller.changes[0], b.wakeRead, unix.EVFILT_READ, unix.EV_ADD)
	if _, err := unix.Kevent(kqueueFD, b.poller.changes[:1], nil, nil); err != nil {
		b.Close()
		return nil, fmt.Errorf("kq: register wake pipe: %w", err)
	}
	b.Table = readiness.NewTable(b.poller)
	return b, nil
}

// Name implements loop.Backend.
func (b *Backend) Name() string { return "kqueue (EV_CLEAR, persistent filters)" }

// Wake implements loop.Backend.
func (b *Backend) Wake() error {
	if err := readiness.SignalWake(b.wakeWrite, b.one[:]); err != nil {
		return fmt.Errorf("kq: wake: %w", err)
	}
	return nil
}

// Wait implements loop.Backend: kevent only when nothing queued is
// completable from readiness already known (readiness.Table.Wait).
func (b *Backend) Wait(out []loop.Completion, timeout time.Duration) (int, error) {
	return b.Table.Wait(out, timeout, b.poll)
}

// poll runs one kevent wait (negative: no limit) and records what it
// reports.
func (b *Backend) poll(wait time.Duration) error {
	var timeout *unix.Timespec
	if wait >= 0 {
		b.timeout = unix.NsecToTimespec(int64(wait))
		timeout = &b.timeout
	}
	count, err := unix.Kevent(b.kqueueFD, nil, b.events, timeout)
	if err != nil {
		if errors.Is(err, unix.EINTR) {
			return nil
		}
		return fmt.Errorf("kq: kevent: %w", err)
	}
	for i := 0; i < count; i++ {
		event := &b.events[i]
		fd := int(event.Ident)
		switch {
		case fd == b.wakeRead:
			b.drainWake()
		case event.Flags&unix.EV_ERROR != 0:
			b.Table.Failed(fd)
		case event.Filter == unix.EVFILT_READ && event.Flags&unix.EV_EOF != 0:
			// The peer shut down writing (bytes may still be waiting).
			b.Table.PeerClosed(fd)
		case event.Filter == unix.EVFILT_READ:
			b.Table.Readable(fd)
		case event.Filter == unix.EVFILT_WRITE:
			// With EV_EOF the send reports the error itself.
			b.Table.Writable(fd)
		}
	}
	return nil
}

// drainWake empties the wake pipe and records one OpWake for every Wake
// since the last drain. The completion follows the reads, so a Wake racing
// with them is either absorbed into this completion or raises the next
// one: never lost.
func (b *Backend) drainWake() {
	drained := false
	for {
		n, err := unix.Read(b.wakeRead, b.drain[:])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n == 0 {
			break
		}
		drained = true
	}
	if drained {
		b.Table.Finish(loop.Completion{Op: loop.OpWake})
	}
}

// Close implements loop.Backend.
func (b *Backend) Close() error {
	err := errors.Join(unix.Close(b.wakeRead), unix.Close(b.wakeWrite), unix.Close(b.kqueueFD))
	if err != nil {
		return fmt.Errorf("kq: close: %w", err)
	}
	return nil
}

// poller registers sockets with the kqueue.
type poller struct {
	kqueueFD int
	changes  [2]unix.Kevent_t
}

// Register adds both filters in one kevent call.
func (p *poller) Register(fd int) error {
	unix.SetKevent(&p.changes[0], fd, unix.EVFILT_READ, unix.EV_ADD|unix.EV_CLEAR)
	unix.SetKevent(&p.changes[1], fd, unix.EVFILT_WRITE, unix.EV_ADD|unix.EV_CLEAR)
	_, err := unix.Kevent(p.kqueueFD, p.changes[:], nil, nil)
	return err
}

// RegisterListener adds the read filter of a listening socket.
func (p *poller) RegisterListener(fd int) error {
	unix.SetKevent(&p.changes[0], fd, unix.EVFILT_READ, unix.EV_ADD|unix.EV_CLEAR)
	_, err := unix.Kevent(p.kqueueFD, p.changes[:1], nil, nil)
	return err
}

// Unregister does nothing: close(2) removes every knote of the descriptor,
// so deleting the filters first would be two wasted changes.
func (p *poller) Unregister(fd int) {}
