package server

import "golang.org/x/sys/unix"

// acceptNonblock takes a connection from a listening socket, non-blocking
// and close-on-exec; errno 0 when one was taken.
func acceptNonblock(listenFD int) (int, unix.Errno) {
	fd, _, errno := unix.Syscall6(unix.SYS_ACCEPT4, uintptr(listenFD), 0, 0,
		unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0, 0)
	return int(fd), errno
}

// recvCloexec marks descriptors received in SCM_RIGHTS close-on-exec as
// they arrive.
const recvCloexec = unix.MSG_CMSG_CLOEXEC
