package loop

import "time"

// Op names the kind of operation a Completion finishes.
type Op uint8

const (
	// OpAccept: Res is the accepted socket's fd, or -errno.
	OpAccept Op = iota + 1
	// OpRecv: Res is the byte count (0 is end of stream), or -errno.
	// -ENOBUFS from a backend with provided buffers means they ran dry:
	// nothing was lost, and the loop queues the receive again.
	OpRecv
	// OpSend: Res is the byte count sent (all of the queued data on
	// success), or -errno.
	OpSend
	// OpClose: the socket is closed; no completion for this slot and
	// generation follows it.
	OpClose
	// OpWake: another thread called Wake. Wakes coalesce: one completion
	// may stand for many calls.
	OpWake
	// OpAcceptStopped: the accept a StopAccept call disarmed has ended:
	// no OpAccept of it follows. One per StopAccept call.
	OpAcceptStopped
)

// Completion is one finished operation, as a completion-style backend
// reports it. A readiness backend (epoll, kqueue) makes the same record by
// doing the syscall itself once the descriptor is ready.
type Completion struct {
	Op   Op
	Slot uint32 // the slot the operation was queued for (0 for accept and wake)
	Gen  uint32 // the slot's generation when the operation was queued
	Res  int32  // see Op; negative values are -errno

	// More says the operation stays armed (multishot accept or receive):
	// more completions will follow without another Queue call. When a
	// completion arrives with More false the loop must queue again to go on.
	More bool

	// Data holds the received bytes of an OpRecv. When Provided is false it
	// is the front of the buffer passed to QueueRecv; when Provided is true
	// it is a backend-owned buffer (an io_uring provided buffer ring) that
	// is valid only until the next call to Wait: copy what must outlive it.
	Data     []byte
	Provided bool
}

// Backend is the I/O engine under the loop: completion-style, driven by one
// thread. Every method but Wake is called only from the loop thread.
//
// Ownership: a buffer passed to QueueRecv or QueueSend belongs to the
// backend until that operation's completion has been returned by Wait, even
// after QueueClose for the same slot. QueueClose cancels what is pending on
// the socket; each pending operation still completes (typically with
// -ECANCELED), so the loop can count them down before it reuses the slot's
// buffers. That is what makes reuse of slot buffers safe on io_uring, where
// the kernel may still be writing into a buffer when the cancel is queued.
type Backend interface {
	// Name is the one-line description logged at start: the backend and
	// the optional features in use.
	Name() string

	// QueueAccept arms accepting on a listening socket. Accepted sockets
	// are non-blocking. Multishot backends keep it armed (More true).
	QueueAccept(listenFD int)
	// StopAccept disarms accepting. Completions for connections the kernel
	// had already accepted may still arrive and must be served or closed;
	// one OpAcceptStopped follows the last of them. Until it comes, the
	// stopped accept may also hold the wake-up of a connection it never
	// takes (io_uring's accept waits exclusively: the kernel wakes one
	// waiter per connection), which then stays in the listener's queue
	// with no other waiter woken for it.
	StopAccept()

	// QueueRecv asks for bytes from fd into buf (the slot's own buffer).
	// A backend with provided buffers may ignore buf and deliver into its
	// own (Completion.Provided); a multishot receive stays armed while
	// completions report More.
	QueueRecv(fd int, slot, gen uint32, buf []byte)
	// QueueSend sends all of data. The completion comes when every byte is
	// written or an error stopped it; partial writes are the backend's
	// business. At most one send per slot is in flight at a time.
	QueueSend(fd int, slot, gen uint32, data []byte)
	// QueueSendFile sends length bytes of the regular file file, from
	// offset, to the socket fd without copying them through user space
	// (splice through a pipe on io_uring, sendfile(2) on epoll). It takes
	// the file: the backend closes it before the completion is returned,
	// so a descriptor the kernel may still use is never closed under it.
	// It completes as OpSend, with Res 0 once every byte is sent,
	// -FileEnded when the file ends first (bytes before that may have gone
	// out), or another -errno. It is the slot's one send in flight; QueueClose
	// cancels it like a send.
	QueueSendFile(fd int, slot, gen uint32, file int, offset, length int64)
	// QueueClose cancels what is pending on fd, closes it, and completes
	// with OpClose once the socket is closed.
	QueueClose(fd int, slot, gen uint32)

	// Wake makes a concurrent or later Wait return with an OpWake
	// completion. Safe from any thread.
	Wake() error

	// Wait submits everything queued and waits until at least one
	// completion is ready or timeout passes, then fills out with as many
	// completions as are ready (the rest stay for the next call). It
	// returns how many it wrote; zero means the timeout passed.
	Wait(out []Completion, timeout time.Duration) (int, error)

	// Close releases the backend. Sockets still open are not closed.
	Close() error
}
