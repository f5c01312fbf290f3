//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package readiness

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// acceptSocket takes one connection and makes it non-blocking and
// close-on-exec. Darwin has no accept4, and x/sys reaches the other BSDs'
// accept4 only through a wrapper that allocates the peer address, so one
// code path serves all; this runs once per connection, not per request.
// The fd is marked close-on-exec under ForkLock so a concurrent fork+exec
// cannot inherit it.
func acceptSocket(listenFD int) (int, unix.Errno) {
	syscall.ForkLock.RLock()
	fd, _, err := unix.Accept(listenFD)
	if err == nil {
		unix.CloseOnExec(fd)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return -1, Errno(err)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return -1, Errno(err)
	}
	return fd, 0
}

func recvBytes(fd int, buf []byte) (int, unix.Errno) {
	if len(buf) == 0 {
		return 0, 0
	}
	n, err := unix.Read(fd, buf)
	if err != nil {
		return 0, Errno(err)
	}
	return n, 0
}

// sendBytes writes with plain write(2): Darwin has no MSG_NOSIGNAL, and the
// Go runtime turns SIGPIPE on descriptors other than 1 and 2 into an EPIPE
// error, which is what the completion reports.
func sendBytes(fd int, data []byte) (int, unix.Errno) {
	n, err := unix.Write(fd, data)
	if err != nil {
		return 0, Errno(err)
	}
	return n, 0
}
