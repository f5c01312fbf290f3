package loop

import "golang.org/x/sys/unix"

// quickAck sends the ACK the kernel is holding back for what fd received
// (TCP_QUICKACK, tcp(7)): setting it acknowledges at once if an ACK is
// due. Best effort: a socket that refuses it keeps its delayed ACK.
func quickAck(fd int) {
	unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_QUICKACK, 1)
}
