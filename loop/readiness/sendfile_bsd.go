//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package readiness

import "golang.org/x/sys/unix"

// fileChunk is what the copying fallback reads per write.
const fileChunk = 64 << 10

// fileSender holds the buffer the copying fallback reads into.
type fileSender struct {
	buf []byte
}

// send reads from file at offset into the sender's buffer and
// writes that: a copy through user space. Darwin's and FreeBSD's sendfile
// differ from each other and from Linux (argument order, headers, the
// count of a partial send on a non-blocking socket), OpenBSD and NetBSD
// have none, and this path is only cross-compiled here, so the one plain
// fallback serves all of them. Bytes the socket did not take are read
// again from the file at the next write edge.
func (s *fileSender) send(socket, file int, offset, count int64) (int, unix.Errno) {
	if s.buf == nil {
		s.buf = make([]byte, fileChunk)
	}
	for {
		n, err := unix.Pread(file, s.buf[:min(count, fileChunk)], offset)
		if err != nil {
			if Errno(err) == unix.EINTR {
				continue
			}
			return 0, Errno(err)
		}
		if n == 0 {
			return 0, 0
		}
		return sendBytes(socket, s.buf[:n])
	}
}
