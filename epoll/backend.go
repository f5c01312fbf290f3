//go:build linux

// Package epoll is loop.Backend on epoll: the automatic fallback where
// io_uring is refused (Docker's default seccomp profile,
// kernel.io_uring_disabled, old kernels). Readiness is turned into
// completions by doing the accept, recv or send once a socket is ready
// (package loop/readiness).
//
// Interest is edge-triggered and persistent: each socket is added once with
// EPOLLIN|EPOLLOUT|EPOLLRDHUP|EPOLLET and never modified. Level-triggered
// interest would make a readable socket with no recv queued (the loop
// applying back-pressure) report on every epoll_wait; re-arming instead
// costs an epoll_ctl per request (bench/README.md, Figures behind the
// comments).
package epoll

import (
	"errors"
	"fmt"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/m0serve/m0serve/loop"
	"github.com/m0serve/m0serve/loop/readiness"
)

// eventBatch is how many readiness events one epoll_wait takes.
const eventBatch = 256

// Backend is loop.Backend on epoll. All methods but Wake belong to the
// loop thread.
type Backend struct {
	epollFD          int
	wakeFD           int // eventfd
	*readiness.Table     // QueueAccept, StopAccept, QueueRecv, QueueSend, QueueSendFile, QueueClose
	events           []unix.EpollEvent
	polls            uint64  // epoll_wait calls, for tests and benchmarks
	wakeWord         [8]byte // read buffer for the eventfd counter
	one              [8]byte // the eventfd increment Wake writes; never modified
}

var _ loop.Backend = (*Backend)(nil)

// New creates the epoll instance and its wake eventfd.
func New() (*Backend, error) {
	epollFD, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll: epoll_create1: %w", err)
	}
	wakeFD, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		unix.Close(epollFD)
		return nil, fmt.Errorf("epoll: eventfd: %w", err)
	}
	// The wake eventfd is level-triggered: Wait reads it (resetting the
	// counter) each time it reports, which is what coalesces Wakes.
	wakeEvent := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(wakeFD)}
	if err := unix.EpollCtl(epollFD, unix.EPOLL_CTL_ADD, wakeFD, &wakeEvent); err != nil {
		unix.Close(wakeFD)
		unix.Close(epollFD)
		return nil, fmt.Errorf("epoll: register wake eventfd: %w", err)
	}
	b := &Backend{
		epollFD: epollFD,
		wakeFD:  wakeFD,
		events:  make([]unix.EpollEvent, eventBatch),
	}
	*(*uint64)(unsafe.Pointer(&b.one)) = 1
	b.Table = readiness.NewTable(poller{epollFD: epollFD})
	return b, nil
}

// Name implements loop.Backend.
func (b *Backend) Name() string { return "epoll (edge-triggered, persistent interest)" }

// Wake implements loop.Backend.
func (b *Backend) Wake() error {
	if err := readiness.SignalWake(b.wakeFD, b.one[:]); err != nil {
		return fmt.Errorf("epoll: wake: %w", err)
	}
	return nil
}

// Wait implements loop.Backend: epoll_wait only when nothing queued is
// completable from readiness already known (readiness.Table.Wait).
func (b *Backend) Wait(out []loop.Completion, timeout time.Duration) (int, error) {
	return b.Table.Wait(out, timeout, b.poll)
}

// poll runs one epoll_wait (negative wait: no limit) and records what it
// reports.
func (b *Backend) poll(wait time.Duration) error {
	milliseconds := -1
	if wait >= 0 {
		// Round up: a sub-millisecond remainder must not turn into a busy
		// poll.
		milliseconds = int((wait + time.Millisecond - 1) / time.Millisecond)
	}
	b.polls++
	count, err := unix.EpollWait(b.epollFD, b.events, milliseconds)
	if err != nil {
		if errors.Is(err, unix.EINTR) {
			return nil
		}
		return fmt.Errorf("epoll: epoll_wait: %w", err)
	}
	for i := 0; i < count; i++ {
		event := &b.events[i]
		fd := int(event.Fd)
		if fd == b.wakeFD {
			b.drainWake()
			continue
		}
		if event.Events&(unix.EPOLLERR|unix.EPOLLHUP) != 0 {
			b.Table.Failed(fd)
			continue
		}
		if event.Events&unix.EPOLLRDHUP != 0 {
			b.Table.PeerClosed(fd)
		}
		if event.Events&unix.EPOLLIN != 0 {
			b.Table.Readable(fd)
		}
		if event.Events&unix.EPOLLOUT != 0 {
			b.Table.Writable(fd)
		}
	}
	return nil
}

// drainWake resets the eventfd counter and records one OpWake for every
// Wake since the last drain. The completion follows the read, so a Wake
// racing with it is either absorbed into this completion or raises the
// next one: never lost.
func (b *Backend) drainWake() {
	for {
		_, err := unix.Read(b.wakeFD, b.wakeWord[:])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err == nil {
			b.Table.Finish(loop.Completion{Op: loop.OpWake})
		}
		return
	}
}

// Close implements loop.Backend.
func (b *Backend) Close() error {
	errWake := unix.Close(b.wakeFD)
	errEpoll := unix.Close(b.epollFD)
	if err := errors.Join(errWake, errEpoll); err != nil {
		return fmt.Errorf("epoll: close: %w", err)
	}
	return nil
}

// poller registers sockets with the epoll instance.
type poller struct {
	epollFD int
}

// Register adds fd once for good. EPOLLRDHUP (Linux 2.6.17) tells a peer's
// shutdown apart from data, which is what lets a short read clear the
// readable flag safely.
func (p poller) Register(fd int) error {
	event := unix.EpollEvent{
		Events: unix.EPOLLIN | unix.EPOLLOUT | unix.EPOLLRDHUP | unix.EPOLLET,
		Fd:     int32(fd),
	}
	return unix.EpollCtl(p.epollFD, unix.EPOLL_CTL_ADD, fd, &event)
}

// RegisterListener adds a listening socket once for good.
func (p poller) RegisterListener(fd int) error {
	event := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLET, Fd: int32(fd)}
	return unix.EpollCtl(p.epollFD, unix.EPOLL_CTL_ADD, fd, &event)
}

// Unregister deletes fd before it is closed. close(2) alone leaves the
// registration alive while another descriptor shares the open file (a dup,
// a fork), and its events would then arrive for a recycled fd number.
func (p poller) Unregister(fd int) {
	unix.EpollCtl(p.epollFD, unix.EPOLL_CTL_DEL, fd, nil)
}
