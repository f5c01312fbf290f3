//go:build linux

package readiness

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// acceptSocket takes one connection, non-blocking and close-on-exec in the
// same syscall (accept4, Linux 2.6.28), so no fcntl follows per connection.
func acceptSocket(listenFD int) (int, unix.Errno) {
	fd, _, errno := unix.Syscall6(unix.SYS_ACCEPT4, uintptr(listenFD), 0, 0,
		unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0, 0)
	return int(fd), errno
}

func recvBytes(fd int, buf []byte) (int, unix.Errno) {
	if len(buf) == 0 {
		return 0, 0
	}
	n, _, errno := unix.Syscall6(unix.SYS_RECVFROM, uintptr(fd),
		uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), 0, 0, 0)
	return int(n), errno
}

// sendBytes passes MSG_NOSIGNAL: a peer that went away must cost an EPIPE
// completion, never a SIGPIPE to a process that embeds Python.
func sendBytes(fd int, data []byte) (int, unix.Errno) {
	n, _, errno := unix.Syscall6(unix.SYS_SENDTO, uintptr(fd),
		uintptr(unsafe.Pointer(&data[0])), uintptr(len(data)), unix.MSG_NOSIGNAL, 0, 0)
	return int(n), errno
}
