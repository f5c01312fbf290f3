package loop

import "golang.org/x/sys/unix"

// bytesAcked is how many bytes of what was sent on fd the peer has
// acknowledged (TCP_INFO's tcpi_bytes_acked, Linux 4.1 and later).
func bytesAcked(fd int) (uint64, bool) {
	info, err := unix.GetsockoptTCPInfo(fd, unix.IPPROTO_TCP, unix.TCP_INFO)
	if err != nil {
		return 0, false
	}
	return info.Bytes_acked, true
}
