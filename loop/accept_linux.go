package loop

import "golang.org/x/sys/unix"

// sweepAcceptQueue serves, as part of a gentle drain, the connections
// still queued on the listener once this loop's accept has ended. The
// socket lives on in the worker that replaces this one, but io_uring's
// accept waits exclusively: the kernel wakes one waiter per connection,
// and a wake-up that went to this loop's accept just before its cancel
// is lost with it. The replacement's accept, already waiting, is not
// woken for that connection, which would wait in the queue until the
// next one arrives. Taking what is queued now serves it; a connection
// that arrives later wakes the replacement, the only waiter left.
func (l *Loop) sweepAcceptQueue() {
	for l.active < l.cfg.MaxConnections {
		fd, _, errno := unix.Syscall6(unix.SYS_ACCEPT4, uintptr(l.cfg.ListenFD), 0, 0,
			unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0, 0)
		switch errno {
		case 0:
			l.onAccept(&Completion{Op: OpAccept, Res: int32(fd)})
		case unix.EINTR, unix.ECONNABORTED:
		default:
			return // EAGAIN: the queue is empty; anything else ends it too
		}
	}
}
