//go:build !linux

package server

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// acceptNonblock takes a connection from a listening socket, non-blocking
// and close-on-exec; errno 0 when one was taken. BSD kernels have no
// accept4 in x/sys here: the flags are set after.
func acceptNonblock(listenFD int) (int, unix.Errno) {
	syscall.ForkLock.RLock()
	fd, _, err := unix.Accept(listenFD)
	if err == nil {
		unix.CloseOnExec(fd)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		if errno, ok := err.(unix.Errno); ok {
			return -1, errno
		}
		return -1, unix.EINVAL
	}
	unix.SetNonblock(fd, true)
	return fd, 0
}

// recvCloexec: no MSG_CMSG_CLOEXEC; receive sets close-on-exec after.
const recvCloexec = 0
