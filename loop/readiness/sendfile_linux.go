//go:build linux

package readiness

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// maxSendfile bounds one sendfile(2) call: Linux moves at most 0x7ffff000
// bytes per call anyway, and a non-blocking socket takes what fits.
const maxSendfile = 1 << 30

// fileSender needs no state on Linux: the kernel sends from the page
// cache.
type fileSender struct{}

// send sends from file at offset straight from the page cache
// (sendfile(2), Linux 2.6.33 for any socket). On a non-blocking socket
// it returns what fit, or EAGAIN; 0 means the file ended. sendfile takes
// no MSG_NOSIGNAL: a reset peer raises SIGPIPE, which the Go runtime
// turns into the EPIPE returned here for descriptors other than 1 and 2.
func (fileSender) send(socket, file int, offset, count int64) (int, unix.Errno) {
	n, _, errno := unix.Syscall6(unix.SYS_SENDFILE, uintptr(socket), uintptr(file),
		uintptr(unsafe.Pointer(&offset)), uintptr(min(count, maxSendfile)), 0, 0)
	return int(n), errno
}
